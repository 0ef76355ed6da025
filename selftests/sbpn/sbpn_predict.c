// SPDX-License-Identifier: GPL-2.0
/*
 * DCCP_QPOLICY_F_PREDICT over CCID 3: with it, a full queue discards
 * the packet predicted to arrive late where it stands in send order and
 * admits a new packet that can still arrive in time; without it, the late
 * packet stays and the new one is refused.
 *
 * SBPN1, tx_qlen 4, on a path whose feedback takes 2 s (netem on the
 * receiver's side).  Until the first feedback CCID 3 sends at its initial
 * rate, one packet per RTT/4 = 500 ms for these 100-byte packets (RFC 5348,
 * 4.2, with the handshake's RTT), and the policies judge with an RTT of 0.
 * One packet leaves at once; three of priority 1 without expiry then wait
 * for the next send times, 500 ms apart, and a priority-0 packet due in
 * 1.2 s would leave after them, about 2 s from now: it passes the "now"
 * test but not the predicted one.  Then a priority-0 packet due in 10 s
 * finds the queue full.  With notices on, the late packet comes back as
 * DCCP_QPOLICY_EE_LATE, not _EXPIRED: it would have been in time had it
 * been sent when it was judged.
 */
#include "sbpn_test.h"

SBPN_TOPOLOGY(NULL, NULL, "netem delay 2000ms limit 10000", NULL)

FIXTURE(predict) {
	struct sbpn_conn c;
};

FIXTURE_VARIANT(predict) {
	int on;
};

FIXTURE_VARIANT_ADD(predict, off) { .on = 0 };
FIXTURE_VARIANT_ADD(predict, on) { .on = 1 };

FIXTURE_SETUP(predict)
{
	sbpn_connect(_metadata, &self->c, 1, 3, DCCPQ_POLICY_SBPN1, 4);
}

FIXTURE_TEARDOWN(predict)
{
}

TEST_F(predict, full_queue)
{
	int fd = self->c.cfd;
	struct dccp_qpolicy_stats s0, s;
	struct sbpn_notice n;
	uint64_t t_5;

	sbpn_set_flag(_metadata, fd, DCCP_SOCKOPT_QPOLICY_FLAGS,
		      DCCP_QPOLICY_F_PREDICT, variant->on);
	sbpn_set_flag(_metadata, fd, DCCP_SOCKOPT_QPOLICY_FLAGS,
		      DCCP_QPOLICY_F_NOTIFY, 1);

	for (uint32_t tag = 1; tag <= 4; tag++)
		ASSERT_EQ(0, dt_send(fd, tag, 1, 1, 0, 0, MSG_DONTWAIT));
	t_5 = sbpn_in_ms(1200);
	ASSERT_EQ(0, dt_send(fd, 5, 1, 0, 1, t_5, MSG_DONTWAIT));
	s0 = sbpn_stats(_metadata, fd);
	sbpn_stats_log(_metadata, "queue full", &s0);
	/* the first packet has left, the next one waits for CCID 3 */
	ASSERT_EQ(1, s0.sent);
	ASSERT_EQ(4, s0.qlen);

	EXPECT_EQ(variant->on ? 0 : -EAGAIN,
		  dt_send(fd, 6, 1, 0, 1, sbpn_in_ms(10000), MSG_DONTWAIT));
	s = sbpn_stats(_metadata, fd);
	sbpn_stats_log(_metadata, "after the packet due in 10 s", &s);
	sbpn_check_invariant(_metadata, &s);
	EXPECT_EQ(1, s.sent);
	EXPECT_EQ(variant->on, s.expired);
	EXPECT_EQ(!variant->on, s.refused);
	EXPECT_EQ(4, s.qlen);

	if (variant->on) {
		ASSERT_EQ(0, sbpn_read_notice(fd, &n));
		EXPECT_EQ(5, n.tag);
		EXPECT_EQ(SO_EE_ORIGIN_DCCP_QPOLICY, n.ee.ee_origin);
		EXPECT_EQ(ECANCELED, n.ee.ee_errno);
		EXPECT_EQ(DCCP_QPOLICY_EE_LATE, n.ee.ee_code);
		EXPECT_EQ(t_5, sbpn_notice_expiry(&n));
	}
	EXPECT_EQ(-EAGAIN, sbpn_read_notice(fd, &n));
}

TEST_HARNESS_MAIN
