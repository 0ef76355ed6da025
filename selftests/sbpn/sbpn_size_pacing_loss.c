// SPDX-License-Identifier: GPL-2.0
/*
 * DCCP_SOCKOPT_SIZE_PACING over CCID 3 under loss: the throughput equation
 * counts loss events per packet of s bytes, where s is the mean size of the
 * packets queued, so that sending the same bytes in smaller packets does not
 * raise X; and X_calc is never below the equation's rate for the packets
 * sent and the loss event rate the receiver reports, which is CCID 3's rate
 * without the option.
 *
 * SBPN1 with an unbounded queue, fed every 5 ms with a 100-byte packet of
 * priority 1 and a larger packet of priority 0 that is due 1 ms before it is
 * queued: the large packets are queued (with the option on, s, the mean of
 * the packets queued, is about the mean of the two sizes) and discarded as
 * expired once no small packet is ahead of them, so every packet sent is a
 * 100-byte one.  netem drops data packets at random, and once the receiver
 * reports a loss event rate p, the sender's X_calc is read with
 * DCCP_SOCKOPT_CCID_TX_INFO with the RTT and p it came from and s (t_ipi
 * times X).  With the option off it must be the equation's X for s (the
 * mean of the packets sent, 100), R and p.  With it on, it must be the
 * larger of the equation's X for s, R and p * s / 100 ("scaled") and for
 * 100, R and p ("bound"), read once the side a case is meant to test is the
 * larger by a third:
 *  - scaled: 500-byte packets queued (s about 300) on a path that drops
 *    0.5 %: once p is low, the scaled rate is the larger; an X_calc without
 *    the scaling (p with s: nearly twice as high) or always the bound fails;
 *  - bound: 1400-byte packets queued (s about 750) on a path that drops
 *    5 %: the scaled rate, with p more than seven times as high, is the
 *    smaller; an X_calc without the bound fails.
 */
#include "sbpn_test.h"

#include <math.h>

#define SMALL		100	/* bytes, the packets sent */
#define PERIOD_MS	5
#define WAIT_MS		20000	/* longest wait for the case's premise */
#define SETTLE_MS	1000	/* feedback after the first one with p > 0 */
#define MARGIN		(4.0 / 3)	/* the larger side's lead, at least */

SBPN_TOPOLOGY("netem delay 10ms loss 5% limit 10000",
	      "netem delay 10ms loss 0.5% limit 10000",
	      "netem delay 10ms limit 10000", "netem delay 10ms limit 10000")

enum side { EITHER, SCALED, BOUND };

FIXTURE(size_pacing_loss) {
	struct sbpn_conn c;
};

FIXTURE_VARIANT(size_pacing_loss) {
	int on;
	int path;
	int large;		/* bytes, the packets queued and discarded */
	enum side side;		/* the side of X_calc that must be the larger */
};

FIXTURE_VARIANT_ADD(size_pacing_loss, off) {
	.on = 0, .path = 1, .large = 1000, .side = EITHER,
};
FIXTURE_VARIANT_ADD(size_pacing_loss, scaled) {
	.on = 1, .path = 2, .large = 500, .side = SCALED,
};
FIXTURE_VARIANT_ADD(size_pacing_loss, bound) {
	.on = 1, .path = 1, .large = 1400, .side = BOUND,
};

FIXTURE_SETUP(size_pacing_loss)
{
	sbpn_connect(_metadata, &self->c, variant->path, 3,
		     DCCPQ_POLICY_SBPN1, 0);
}

FIXTURE_TEARDOWN(size_pacing_loss)
{
}

/* RFC 5348, 3.1: X_calc in bytes/s for s bytes, R us and p (0..1]. */
static double tfrc_x(double s, double r_us, double p)
{
	double t_rto = 4 * r_us / 1e6;

	return s / (r_us / 1e6 * sqrt(2 * p / 3) +
		    t_rto * 3 * sqrt(3 * p / 8) * p * (1 + 32 * p * p));
}

/* Read what the receiver has so that it never stops the sender. */
static void drain(int fd)
{
	char buf[2048];

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

/* X_calc's two sides with the option on, from a TX_INFO sample */
struct sides {
	double s, r, p;		/* bytes, us, 0..1 */
	double scaled, bound;	/* bytes/s */
};

static struct sides sides_of(const struct dt_tfrc_tx_info *ti)
{
	struct sides x;

	x.s = (double)ti->ipi_us * (double)(ti->x >> 6) / 1e6;
	x.r = ti->rtt_us;
	x.p = ti->p / 1e6;
	x.scaled = tfrc_x(x.s, x.r, fmin(1, x.p * x.s / SMALL));
	x.bound = tfrc_x(SMALL, x.r, x.p);
	return x;
}

static bool premise(enum side side, const struct sides *x)
{
	switch (side) {
	case SCALED:
		return x->scaled > MARGIN * x->bound;
	case BOUND:
		return x->bound > MARGIN * x->scaled;
	default:
		return true;
	}
}

TEST_F(size_pacing_loss, x_calc)
{
	int fd = self->c.cfd, settle = -1, ms;
	struct dccp_qpolicy_stats st;
	struct dt_tfrc_tx_info ti = { 0 };
	struct sides x = { 0 };
	uint32_t tag = 0;
	double want;

	ASSERT_EQ(0, dt_setopt(fd, DCCP_SOCKOPT_SIZE_PACING, variant->on));
	for (ms = 0; ms < WAIT_MS; ms += PERIOD_MS) {
		ASSERT_EQ(0, dt_send_len(fd, SMALL, tag++, 1, 1, 1,
					 sbpn_in_ms(5000), MSG_DONTWAIT));
		ASSERT_EQ(0, dt_send_len(fd, variant->large, tag++, 1, 0, 1,
					 dt_now_ns() - NSEC_PER_MSEC,
					 MSG_DONTWAIT));
		dt_sleep_ms(PERIOD_MS);
		drain(self->c.afd);
		if (settle > 0) {
			settle -= PERIOD_MS;
			continue;
		}
		ti = sbpn_tx_info(_metadata, fd);
		if (settle < 0) {
			if (ti.p)
				settle = SETTLE_MS;
			continue;
		}
		x = sides_of(&ti);
		if (premise(variant->side, &x))
			break;
	}
	st = sbpn_stats(_metadata, fd);
	sbpn_stats_log(_metadata, "at the check", &st);
	sbpn_check_invariant(_metadata, &st);
	TH_LOG("after %d ms: s %.0f B, R %.0f us, p %.6f: X_calc %u B/s, scaled %.0f, bound %.0f",
	       ms, x.s, x.r, x.p, ti.x_calc, x.scaled, x.bound);
	ASSERT_EQ(0, settle);	/* a loss event was reported */
	ASSERT_LT(0, ti.ipi_us);
	ASSERT_LT(0, ti.rtt_us);
	ASSERT_TRUE(premise(variant->side, &x));	/* in time */

	/* every packet was admitted, and no large one was sent: each is
	 * expired on arrival, and SBPN1 sends no expired packet
	 */
	EXPECT_EQ(tag, st.queued);
	EXPECT_EQ(0, st.expired_sent);
	if (variant->on) {
		EXPECT_LT(1.5 * SMALL, x.s);	/* s follows the queued packets */
		want = fmax(x.scaled, x.bound);
	} else {
		EXPECT_EQ(SMALL, round(x.s));
		want = x.bound;
	}
	EXPECT_LT(0.8 * want, ti.x_calc);
	EXPECT_GT(1.2 * want, ti.x_calc);
}

TEST_HARNESS_MAIN
