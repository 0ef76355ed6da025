// SPDX-License-Identifier: GPL-2.0
/*
 * DCCP_SOCKOPT_SIZE_PACING over CCID 3 under loss: the throughput equation
 * counts loss events per packet of s bytes, where s is the mean size of the
 * packets queued, so that sending the same bytes in smaller packets does not
 * raise X.
 *
 * SBPN1 with an unbounded queue, fed every 5 ms with a 100-byte packet of
 * priority 1 and a 1000-byte packet of priority 0 that is due 1 ms before it
 * is queued: the large packets are queued (s, the mean of the packets
 * queued, alternates around 550 bytes with the option on) and discarded as
 * expired once no small packet is ahead of them, so every packet sent is a
 * 100-byte one.  netem drops 2 % of the data packets at random, and once the
 * receiver reports a loss event rate p the sender's X_calc is read with
 * DCCP_SOCKOPT_CCID_TX_INFO, with the RTT and p it came from and s (t_ipi
 * times X).  It must be the equation's X for s, R and p * s / 100 with the
 * option on, and for p itself with it off (s is then the mean of the packets
 * sent, 100).  The two differ by a factor of more than two; an X_calc that
 * ignored the sent packets' size with the option on fails the "on" case.
 */
#include "sbpn_test.h"

#include <math.h>

#define SMALL		100	/* bytes, the packets sent */
#define LARGE		1000	/* bytes, the packets queued and discarded */
#define PERIOD_MS	5
#define LOSS_WAIT_MS	10000	/* longest wait for a reported loss event */
#define SETTLE_MS	1000	/* feedback after the first one with p > 0 */

SBPN_TOPOLOGY("netem delay 10ms loss 2% limit 10000", NULL,
	      "netem delay 10ms limit 10000", NULL)

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
	sbpn_connect(_metadata, &self->c, 1, 3, DCCPQ_POLICY_SBPN1, 0);
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
	char buf[LARGE];

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

TEST_F(size_pacing_loss, x_calc_per_s_bytes)
{
	int fd = self->c.cfd, settle = -1;
	double s, p, want;
	struct dccp_qpolicy_stats st;
	struct dt_tfrc_tx_info ti;
	uint32_t tag = 0;

	ASSERT_EQ(0, dt_setopt(fd, DCCP_SOCKOPT_SIZE_PACING, variant->on));
	for (int ms = 0; ms < LOSS_WAIT_MS && settle; ms += PERIOD_MS) {
		ASSERT_EQ(0, dt_send_len(fd, SMALL, tag++, 1, 1, 1,
					 sbpn_in_ms(5000), MSG_DONTWAIT));
		ASSERT_EQ(0, dt_send_len(fd, LARGE, tag++, 1, 0, 1,
					 dt_now_ns() - NSEC_PER_MSEC,
					 MSG_DONTWAIT));
		dt_sleep_ms(PERIOD_MS);
		drain(self->c.afd);
		if (settle > 0)
			settle -= PERIOD_MS;
		else if (settle < 0 && sbpn_tx_info(_metadata, fd).p)
			settle = SETTLE_MS;
	}
	ti = sbpn_tx_info(_metadata, fd);
	st = sbpn_stats(_metadata, fd);
	sbpn_stats_log(_metadata, "at the check", &st);
	sbpn_check_invariant(_metadata, &st);
	ASSERT_EQ(0, settle);	/* a loss event was reported in time */
	ASSERT_LT(0, ti.ipi_us);
	ASSERT_LT(0, ti.rtt_us);

	s = (double)ti.ipi_us * (double)(ti.x >> 6) / 1e6;
	p = ti.p / 1e6;
	if (variant->on)
		p = fmin(1, p * s / SMALL);
	want = tfrc_x(s, ti.rtt_us, p);
	TH_LOG("s %.0f B, R %u us, p %u/1e6 -> %.6f: X_calc %u B/s, equation %.0f B/s",
	       s, ti.rtt_us, ti.p, p, ti.x_calc, want);
	/* every packet was admitted, and no large one was sent: each is
	 * expired on arrival, and SBPN1 sends no expired packet
	 */
	EXPECT_EQ(tag, st.queued);
	EXPECT_EQ(0, st.expired_sent);
	if (variant->on) {
		EXPECT_LT(2 * SMALL, s);	/* s follows the queued packets */
	} else {
		EXPECT_EQ(SMALL, round(s));
	}
	EXPECT_LT(0.75 * want, ti.x_calc);
	EXPECT_GT(1.25 * want, ti.x_calc);
}

TEST_HARNESS_MAIN
