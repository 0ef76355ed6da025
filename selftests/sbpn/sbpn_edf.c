// SPDX-License-Identifier: GPL-2.0
/*
 * DCCP_QPOLICY_ORDER_EDF over CCID 3: in that order, the SBPN policies send
 * the earliest expiry first whatever its priority, and a full queue still
 * gives up the packet of lowest priority and latest expiry; in the default
 * order (DCCP_QPOLICY_ORDER_PRIORITY), the highest priority goes first.
 *
 * SBPN2 on a path whose feedback takes 2 s (netem on the receiver's side),
 * as in sbpn_predict: until the first feedback CCID 3 sends one 100-byte
 * packet per 500 ms, so after the first packet, which leaves at once, the
 * others wait in the queue and leave in the order the policy picks.  Every
 * deadline is 10 s or more away: nothing expires.
 */
#include "sbpn_test.h"

SBPN_TOPOLOGY(NULL, NULL, "netem delay 2000ms limit 10000", NULL)

FIXTURE(edf) {
	struct sbpn_conn c;
};

FIXTURE_VARIANT(edf) {
	int on;
};

FIXTURE_VARIANT_ADD(edf, off) { .on = 0 };
FIXTURE_VARIANT_ADD(edf, on) { .on = 1 };

FIXTURE_SETUP(edf)
{
	sbpn_connect(_metadata, &self->c, 1, 3, DCCPQ_POLICY_SBPN2, 4);
}

FIXTURE_TEARDOWN(edf)
{
}

/* Two priorities whose deadlines interleave: by priority, or by deadline. */
TEST_F(edf, order)
{
	static const struct sbpn_pkt p[] = {
		{ 1, 1, 20000 }, { 2, 0, 10000 }, { 3, 1, 30000 }, { 4, 0, 15000 },
	};
	static const uint32_t by_prio[] = { 0, 1, 3, 2, 4 };
	static const uint32_t by_expiry[] = { 0, 2, 4, 1, 3 };
	struct dccp_qpolicy_stats s;
	int refused;

	sbpn_set_order(_metadata, self->c.cfd, variant->on ?
		       DCCP_QPOLICY_ORDER_EDF : DCCP_QPOLICY_ORDER_PRIORITY);
	sbpn_send_pkts(_metadata, self->c.cfd, p, ARRAY_SIZE(p), &refused);
	ASSERT_EQ(0, refused);
	s = sbpn_expect_order(_metadata, &self->c,
			      variant->on ? by_expiry : by_prio, ARRAY_SIZE(by_prio));
	EXPECT_EQ(0, s.expired + s.expired_sent);
}

/*
 * A full queue (tx_qlen 4) decides by priority either way: a priority-1
 * packet due last evicts the priority-0 packet due first, and a priority-0
 * packet due before everything is refused.
 */
TEST_F(edf, full_queue)
{
	static const struct sbpn_pkt p[] = {
		{ 1, 0, 10000 }, { 2, 1, 20000 }, { 3, 1, 30000 }, { 4, 1, 35000 },
		{ 5, 1, 40000 }, { 6, 0, 5000 },
	};
	static const uint32_t want[] = { 0, 2, 3, 4, 5 };
	struct dccp_qpolicy_stats s;
	int refused;

	sbpn_set_order(_metadata, self->c.cfd, variant->on ?
		       DCCP_QPOLICY_ORDER_EDF : DCCP_QPOLICY_ORDER_PRIORITY);
	s = sbpn_send_pkts(_metadata, self->c.cfd, p, ARRAY_SIZE(p), &refused);
	EXPECT_EQ(1, refused);
	EXPECT_EQ(1, s.refused);
	EXPECT_EQ(1, s.evicted);
	EXPECT_EQ(4, s.qlen);
	s = sbpn_expect_order(_metadata, &self->c, want, ARRAY_SIZE(want));
	EXPECT_EQ(0, s.expired + s.expired_sent);
}

TEST_HARNESS_MAIN
