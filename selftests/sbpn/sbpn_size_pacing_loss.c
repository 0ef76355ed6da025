// SPDX-License-Identifier: GPL-2.0
/*
 * DCCP_TX_CCID_F_SIZE_PACING over CCID 3: s, the segment size of the
 * throughput equation, is the average size of the packets sent over the
 * last four loss intervals (RFC 5348, 4.1), and X_calc is the equation's
 * rate for that s, the RTT and the receiver's p (3.1), as without the
 * flag.  s is read with DCCP_SOCKOPT_CCID_TX_INFO as t_ipi times X.
 *
 * x_calc: SBPN1 with an unbounded queue, fed every 5 ms with a 100-byte
 * packet of priority 1 and a 1000-byte packet of priority 0 that is due
 * 1 ms before it is queued: the large ones are discarded as expired, so
 * every packet sent is a 100-byte one.  netem drops 5 % of the data
 * packets; once the receiver reports p, s must be 100, with the flag or
 * without, and X_calc the equation's X for 100 bytes, R and p.  An s taken
 * from the packets queued (about 550) fails, and so does an X_calc with p
 * scaled by the sizes queued over those sent or bounded by another rate.
 *
 * window: SIMPLE, a clean path: 100 packets of 1000 bytes, then 300 of
 * 100, one per 5 ms.  With the flag, once all have left, s must be the
 * mean of all of them, 325: there was no loss, so they are all in the open
 * loss interval; CCID 3's moving average of the last packets, which an s
 * of the last few packets or a span restarted on every feedback gives,
 * is 100.  Then netem drops 5 % and 100-byte packets go on until p has
 * risen six times: each rise begins a loss interval, so after five the
 * 1000-byte packets are out of the span and s must be 100; a span that
 * never forgets gives about 200.  Without the flag s is 100 throughout.
 */
#include "sbpn_test.h"

#include <math.h>

#define SMALL		100	/* bytes */
#define LARGE		1000
#define PERIOD_MS	5
#define WAIT_MS		20000	/* longest wait for the case's premise */
#define SETTLE_MS	1000	/* feedback after the first one with p > 0 */
#define N_LARGE		100
#define N_SMALL		300
#define RISES		6	/* of p, to be sure of five new loss intervals */
#define CLEAN		"netem delay 10ms limit 10000"

SBPN_TOPOLOGY("netem delay 10ms loss 5% limit 10000", CLEAN, CLEAN, CLEAN)

FIXTURE(size_pacing_loss) {
	struct sbpn_conn c;
};

FIXTURE_VARIANT(size_pacing_loss) {
	int on;
};

FIXTURE_VARIANT_ADD(size_pacing_loss, off) { .on = 0 };
FIXTURE_VARIANT_ADD(size_pacing_loss, on) { .on = 1 };

FIXTURE_SETUP(size_pacing_loss)
{
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

/* The segment size CCID 3 uses: t_ipi = s / X */
static double s_of(const struct dt_tfrc_tx_info *ti)
{
	return (double)ti->ipi_us * (double)(ti->x >> 6) / 1e6;
}

TEST_F(size_pacing_loss, x_calc)
{
	struct dt_tfrc_tx_info ti = { 0 };
	int fd, settle = -1, ms;
	struct dccp_qpolicy_stats st;
	uint32_t tag = 0;
	double s, want;

	sbpn_connect(_metadata, &self->c, 1, 3, DCCPQ_POLICY_SBPN1, 0);
	fd = self->c.cfd;
	ASSERT_EQ(0, dt_set_txflag(fd, DCCP_TX_CCID_F_SIZE_PACING, variant->on));
	for (ms = 0; ms < WAIT_MS && settle; ms += PERIOD_MS) {
		ASSERT_EQ(0, dt_send_len(fd, SMALL, tag++, 1, 1, 1,
					 sbpn_in_ms(5000), MSG_DONTWAIT));
		ASSERT_EQ(0, dt_send_len(fd, LARGE, tag++, 1, 0, 1,
					 dt_now_ns() - NSEC_PER_MSEC,
					 MSG_DONTWAIT));
		dt_sleep_ms(PERIOD_MS);
		dt_recv_drop(self->c.afd);
		if (settle > 0) {
			settle -= PERIOD_MS;
			continue;
		}
		ti = sbpn_tx_info(_metadata, fd);
		if (ti.p)
			settle = SETTLE_MS;
	}
	ti = sbpn_tx_info(_metadata, fd);
	st = sbpn_stats(_metadata, fd);
	sbpn_stats_log(_metadata, "at the check", &st);
	sbpn_check_invariant(_metadata, &st);
	s = s_of(&ti);
	want = tfrc_x(SMALL, ti.rtt_us, ti.p / 1e6);
	TH_LOG("after %d ms: s %.1f B, R %u us, p %.6f: X_calc %u B/s, equation %.0f",
	       ms, s, ti.rtt_us, ti.p / 1e6, ti.x_calc, want);
	ASSERT_EQ(0, settle);	/* a loss event was reported */
	ASSERT_LT(0, ti.rtt_us);

	/* every packet was admitted, and no large one was sent: each is
	 * expired on arrival, and SBPN1 sends no expired packet
	 */
	EXPECT_EQ(tag, st.queued);
	EXPECT_EQ(0, st.expired_sent);
	EXPECT_LT(SMALL * 0.97, s);
	EXPECT_GT(SMALL * 1.03, s);
	EXPECT_LT(0.8 * want, ti.x_calc);
	EXPECT_GT(1.2 * want, ti.x_calc);
}

TEST_F(size_pacing_loss, window)
{
	double mean = (N_LARGE * LARGE + N_SMALL * SMALL) /
		      (double)(N_LARGE + N_SMALL);
	struct dt_tfrc_tx_info ti;
	struct dccp_qpolicy_stats st;
	int fd, ms, rises = 0;
	uint32_t tag = 0, p;
	double s;

	/* the path is shared: an earlier case may have left its loss on */
	dt_sh(_metadata, "ip netns exec %s tc qdisc change dev va2 root %s",
	      sbpn_ns_a, CLEAN);
	sbpn_connect(_metadata, &self->c, 2, 3, DCCPQ_POLICY_SIMPLE, 0);
	fd = self->c.cfd;
	ASSERT_EQ(0, dt_set_txflag(fd, DCCP_TX_CCID_F_SIZE_PACING, variant->on));
	for (int i = 0; i < N_LARGE + N_SMALL; i++) {
		ASSERT_EQ(0, dt_send_len(fd, i < N_LARGE ? LARGE : SMALL, tag++,
					 0, 0, 0, 0, MSG_DONTWAIT));
		dt_sleep_ms(PERIOD_MS);
		dt_recv_drop(self->c.afd);
	}
	for (ms = 0; ms < WAIT_MS; ms += PERIOD_MS) {
		st = sbpn_stats(_metadata, fd);
		if (!st.qlen)
			break;
		dt_sleep_ms(PERIOD_MS);
		dt_recv_drop(self->c.afd);
	}
	ASSERT_EQ(0, st.qlen);
	ti = sbpn_tx_info(_metadata, fd);
	s = s_of(&ti);
	TH_LOG("all %u sent, p %.6f: s %.1f B (their mean %.1f)", tag,
	       ti.p / 1e6, s, mean);
	EXPECT_LT((variant->on ? mean : SMALL) * 0.95, s);
	EXPECT_GT((variant->on ? mean : SMALL) * 1.05, s);

	dt_sh(_metadata, "ip netns exec %s tc qdisc change dev va2 root %s loss 5%%",
	      sbpn_ns_a, CLEAN);
	p = ti.p;
	for (ms = 0; ms < WAIT_MS && rises < RISES; ms += PERIOD_MS) {
		int rc = dt_send_len(fd, SMALL, tag++, 0, 0, 0, 0, MSG_DONTWAIT);

		if (rc != -EAGAIN)	/* X may be below what is offered */
			ASSERT_EQ(0, rc);
		dt_sleep_ms(PERIOD_MS);
		dt_recv_drop(self->c.afd);
		ti = sbpn_tx_info(_metadata, fd);
		rises += ti.p > p;
		p = ti.p;
	}
	s = s_of(&ti);
	TH_LOG("after %d ms of loss, p rose %d times, now %.6f: s %.1f B",
	       ms, rises, ti.p / 1e6, s);
	ASSERT_EQ(RISES, rises);
	EXPECT_LT(SMALL * 0.95, s);
	EXPECT_GT(SMALL * 1.05, s);
}

TEST_HARNESS_MAIN
