// SPDX-License-Identifier: GPL-2.0
/*
 * DCCP_QPOLICY_F_LAST_RTT, over CCID 3: after the nofeedback timer
 * has expired, expiry is judged with an RTT of 0 by default and with the
 * last RTT measured when the flag is on.
 *
 * SBPN1 on a path whose feedback takes 400 ms (netem on the receiver's
 * side).  Once CCID 3 has measured the RTT, all feedback is dropped until
 * the nofeedback timer has fired (X halves).  Then a packet due in 100 ms
 * is queued: by the last RTT (RTT/2 >= 200 ms) it cannot arrive in time
 * and is discarded as expired; by an RTT of 0 it is not expired and sent.
 */
#include "sbpn_test.h"

#define DELAY	"netem delay 400ms limit 10000"

SBPN_TOPOLOGY(NULL, NULL, DELAY, NULL)

FIXTURE(last_rtt) {
	struct sbpn_conn c;
};

FIXTURE_VARIANT(last_rtt) {
	int on;
};

FIXTURE_VARIANT_ADD(last_rtt, off) { .on = 0 };
FIXTURE_VARIANT_ADD(last_rtt, on) { .on = 1 };

FIXTURE_SETUP(last_rtt)
{
	sbpn_connect(_metadata, &self->c, 1, 3, DCCPQ_POLICY_SBPN1, 0);
}

FIXTURE_TEARDOWN(last_rtt)
{
	sbpn_set_ack_qdisc(_metadata, DELAY);
}

TEST_F(last_rtt, after_nofeedback)
{
	int fd = self->c.cfd;
	struct dccp_qpolicy_stats s0, s;
	struct dt_tfrc_tx_info before, after;

	sbpn_set_flag(_metadata, fd, DCCP_SOCKOPT_QPOLICY_FLAGS,
		      DCCP_QPOLICY_F_LAST_RTT, variant->on);

	/* CCID 3 measures the RTT from the probes' feedback */
	sbpn_measure_rtt(_metadata, &self->c, 400);
	before = sbpn_tx_info(_metadata, fd);
	ASSERT_LE(350000, before.rtt_us);

	/* no feedback until the nofeedback timer has fired */
	sbpn_set_ack_qdisc(_metadata, DELAY " loss 100%");
	for (int ms = 0; ms < 10000; ms += 100) {
		after = sbpn_tx_info(_metadata, fd);
		if (after.x < before.x)
			break;
		dt_sleep_ms(100);
	}
	TH_LOG("X %llu -> %llu B/s, RTT %u us", (unsigned long long)before.x >> 6,
	       (unsigned long long)after.x >> 6, after.rtt_us);
	ASSERT_GT(before.x, after.x);

	s0 = sbpn_stats(_metadata, fd);
	ASSERT_EQ(0, dt_send(fd, 7, 1, 1, 1, sbpn_in_ms(100), MSG_DONTWAIT));
	s = sbpn_stats(_metadata, fd);
	sbpn_stats_log(_metadata, "after the packet due in 100 ms", &s);
	sbpn_check_invariant(_metadata, &s);
	EXPECT_EQ(variant->on, s.expired - s0.expired);
	EXPECT_EQ(!variant->on, s.sent - s0.sent);
}

TEST_HARNESS_MAIN
