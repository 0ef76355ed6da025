// SPDX-License-Identifier: GPL-2.0
/*
 * DCCP_QPOLICY_ORDER_NEWEST over CCID 3: in that order, the SBPN policies
 * send the packets of a priority newest first (latest expiry first),
 * priorities still highest first, and a full queue gives up the oldest
 * packet of the lowest priority; in the default order
 * (DCCP_QPOLICY_ORDER_PRIORITY), the earliest expiry goes first and a full
 * queue refuses a new packet that would be sent last.  With the predicted
 * departure as well, a band's oldest packet is judged after all the others
 * of its band.  NEWEST and EDF are two values of DCCP_SOCKOPT_QPOLICY_ORDER:
 * a socket has one of them at a time.
 *
 * SBPN1 on a path whose feedback takes 2 s (netem on the receiver's side),
 * as in sbpn_predict: until the first feedback CCID 3 sends one 100-byte
 * packet per 500 ms and the policies judge with an RTT of 0, so after the
 * first packet, which leaves at once, the others wait in the queue and
 * leave in the order the policy picks.
 */
#include "sbpn_test.h"

SBPN_TOPOLOGY(NULL, NULL, "netem delay 2000ms limit 10000", NULL)

FIXTURE(newest) {
	struct sbpn_conn c;
};

FIXTURE_VARIANT(newest) {
	int on;
};

FIXTURE_VARIANT_ADD(newest, off) { .on = 0 };
FIXTURE_VARIANT_ADD(newest, on) { .on = 1 };

FIXTURE_SETUP(newest)
{
	sbpn_connect(_metadata, &self->c, 1, 3, DCCPQ_POLICY_SBPN1, 4);
}

FIXTURE_TEARDOWN(newest)
{
}

/* Two priorities, each in order of arrival and expiry: within a priority,
 * earliest or latest expiry first; the higher priority first either way.
 */
TEST_F(newest, order)
{
	static const struct sbpn_pkt p[] = {
		{ 1, 1, 10000 }, { 2, 0, 15000 }, { 3, 1, 20000 }, { 4, 0, 25000 },
	};
	static const uint32_t oldest_first[] = { 0, 1, 3, 2, 4 };
	static const uint32_t newest_first[] = { 0, 3, 1, 4, 2 };
	struct dccp_qpolicy_stats s;
	int refused;

	sbpn_set_order(_metadata, self->c.cfd, variant->on ?
		       DCCP_QPOLICY_ORDER_NEWEST : DCCP_QPOLICY_ORDER_PRIORITY);
	sbpn_send_pkts(_metadata, self->c.cfd, p, ARRAY_SIZE(p), &refused);
	ASSERT_EQ(0, refused);
	s = sbpn_expect_order(_metadata, &self->c,
			      variant->on ? newest_first : oldest_first,
			      ARRAY_SIZE(oldest_first));
	EXPECT_EQ(0, s.expired + s.expired_sent + s.evicted);
}

/*
 * A full queue (tx_qlen 4) of one priority.  A packet due after all of them
 * would be sent last in the default order (refused) and first in NEWEST's
 * (the oldest is evicted); one due before all of them the other way round.
 */
TEST_F(newest, full_queue)
{
	static const struct sbpn_pkt p[] = {
		{ 1, 1, 10000 }, { 2, 1, 20000 }, { 3, 1, 30000 }, { 4, 1, 40000 },
		{ 5, 1, 50000 }, { 6, 1, 5000 },
	};
	static const uint32_t off[] = { 0, 6, 1, 2, 3 };
	static const uint32_t on[] = { 0, 5, 4, 3, 2 };
	struct dccp_qpolicy_stats s;
	int refused;

	sbpn_set_order(_metadata, self->c.cfd, variant->on ?
		       DCCP_QPOLICY_ORDER_NEWEST : DCCP_QPOLICY_ORDER_PRIORITY);
	s = sbpn_send_pkts(_metadata, self->c.cfd, p, ARRAY_SIZE(p), &refused);
	EXPECT_EQ(1, refused);
	EXPECT_EQ(1, s.refused);
	EXPECT_EQ(1, s.evicted);
	EXPECT_EQ(4, s.qlen);
	s = sbpn_expect_order(_metadata, &self->c, variant->on ? on : off,
			      ARRAY_SIZE(off));
	EXPECT_EQ(0, s.expired + s.expired_sent);
}

/*
 * EDF and NEWEST are two values of one option: a socket has exactly one of
 * the three orders, each set replaces the one before, the order in force
 * is what reads back, and no other value is taken (EINVAL, the order in
 * force unchanged).  The order is not one of the flags: setting it leaves
 * them alone.
 */
TEST(one_order)
{
	int fd = socket(AF_INET, SOCK_DCCP, IPPROTO_DCCP);
	const int opt = DCCP_SOCKOPT_QPOLICY_ORDER;

	ASSERT_LE(0, fd);
	ASSERT_EQ(DCCP_QPOLICY_ORDER_PRIORITY, dt_getopt(fd, opt));
	ASSERT_EQ(0, sbpn_set_qflag(fd, DCCP_QPOLICY_F_NOTIFY, 1));
	ASSERT_EQ(0, dt_setopt(fd, opt, DCCP_QPOLICY_ORDER_EDF));
	ASSERT_EQ(DCCP_QPOLICY_ORDER_EDF, dt_getopt(fd, opt));
	/* NEWEST after EDF replaces it */
	ASSERT_EQ(0, dt_setopt(fd, opt, DCCP_QPOLICY_ORDER_NEWEST));
	ASSERT_EQ(DCCP_QPOLICY_ORDER_NEWEST, dt_getopt(fd, opt));
	ASSERT_EQ(-1, dt_setopt(fd, opt, DCCP_QPOLICY_ORDER_INVALID));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, dt_setopt(fd, opt, -1));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, dt_setopt(fd, opt, INT_MIN));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(DCCP_QPOLICY_ORDER_NEWEST, dt_getopt(fd, opt));
	/* and EDF after NEWEST replaces it */
	ASSERT_EQ(0, dt_setopt(fd, opt, DCCP_QPOLICY_ORDER_EDF));
	ASSERT_EQ(DCCP_QPOLICY_ORDER_EDF, dt_getopt(fd, opt));
	ASSERT_EQ(DCCP_QPOLICY_F_NOTIFY,
		  dt_getopt(fd, DCCP_SOCKOPT_QPOLICY_FLAGS));
	ASSERT_EQ(0, dt_setopt(fd, opt, DCCP_QPOLICY_ORDER_PRIORITY));
	ASSERT_EQ(DCCP_QPOLICY_ORDER_PRIORITY, dt_getopt(fd, opt));
	close(fd);
}

FIXTURE(newest_predict) {
	struct sbpn_conn c;
};

FIXTURE_VARIANT(newest_predict) {
	int predict;
};

FIXTURE_VARIANT_ADD(newest_predict, off) { .predict = 0 };
FIXTURE_VARIANT_ADD(newest_predict, on) { .predict = 1 };

FIXTURE_SETUP(newest_predict)
{
	sbpn_connect(_metadata, &self->c, 1, 3, DCCPQ_POLICY_SBPN1, 4);
}

FIXTURE_TEARDOWN(newest_predict)
{
}

/*
 * Newest first, a full queue of one priority whose oldest packet is due in
 * 1.2 s: sent next it would be in time, but it leaves after the three
 * others, about 2 s from now.  A new packet finds the queue full.  With
 * the predicted departure the oldest is discarded as predicted late and the
 * new packet takes its place; without it the oldest is evicted.
 */
TEST_F(newest_predict, oldest_judged_last)
{
	static const struct sbpn_pkt p[] = {
		{ 1, 1, 1200 }, { 2, 1, 10000 }, { 3, 1, 11000 }, { 4, 1, 12000 },
		{ 5, 1, 13000 },
	};
	static const uint32_t want[] = { 0, 5, 4, 3, 2 };
	int fd = self->c.cfd, refused;
	struct dccp_qpolicy_stats s;

	ASSERT_EQ(0, dt_setopt(fd, DCCP_SOCKOPT_QPOLICY_ORDER,
			       DCCP_QPOLICY_ORDER_NEWEST));
	ASSERT_EQ(0, sbpn_set_qflag(fd, DCCP_QPOLICY_F_PREDICT,
				    variant->predict));
	s = sbpn_send_pkts(_metadata, fd, p, ARRAY_SIZE(p), &refused);
	EXPECT_EQ(0, refused);
	EXPECT_EQ(4, s.qlen);
	EXPECT_EQ(variant->predict, s.expired);
	EXPECT_EQ(!variant->predict, s.evicted);
	s = sbpn_expect_order(_metadata, &self->c, want, ARRAY_SIZE(want));
	EXPECT_EQ(variant->predict, s.expired);
	EXPECT_EQ(0, s.expired_sent);
}

TEST_HARNESS_MAIN
