// SPDX-License-Identifier: GPL-2.0
/*
 * An unbounded SBPN queue (tx_qlen 0) has no full queue to discard expired
 * packets on, and the packet sent next is the only one judged: SBPN1 and
 * SBPN2 must reclaim the expired packets it does not uncover, up to two per
 * packet queued, earliest expiry first, so that they neither accumulate nor
 * take the send buffer from packets that can still arrive in time.
 *
 * Behind a CCID 2 window that stays closed for 3 s (netem delays the
 * receiver's Acks; the CCID has no RTT sample yet, so a packet is expired
 * once its deadline has passed), the sender queues for 1 s a packet due in
 * 20 ms every 2 ms, non-blocking, into a send buffer of 128 KB (about 55 of
 * these packets).  Then it waits 40 ms and queues 30 packets due in 10 s,
 * each of which reclaims up to two more.  By then every 20 ms packet is
 * expired: each must have been discarded as expired, sendmsg() must never
 * have failed for lack of send buffer space (EAGAIN, the refused counter
 * unmoved: the policy never refuses on an unbounded queue), and the queue
 * must hold only the packets not expired.  The window must still be closed
 * at the end (nothing but the window's fillers sent), or the test means
 * nothing.
 *
 *  newest      SBPN1 with DCCP_QPOLICY_ORDER_NEWEST: top() judges the
 *              newest packet of the highest priority only;
 *  lower_band  SBPN1, default order: one packet of a higher priority, due in
 *              10 s, is the one top() judges; the 20 ms packets wait below;
 *  sbpn2       SBPN2 with NEWEST, as newest (SBPN2 keeps only a last packet);
 *  sbpn3       SBPN3 with NEWEST keeps its expired packets by design: none is
 *              discarded, all stay queued (in the default 16 MB buffer).
 *
 * On the series before the fix, in newest, lower_band and sbpn2 nothing
 * judges the 20 ms packets while the window is closed: expired stays 0, the
 * queue keeps every packet, and after about 55 of them sendmsg() fails with
 * EAGAIN for the rest of the second ("nobuf" hundreds, expired 0).  sbpn3
 * passes either way.
 */
#include "sbpn_test.h"

#define SHORT_MS	20	/* lifetime of the packets that expire */
#define LONG_MS		10000	/* lifetime of those that do not */
#define SEND_MS		1000	/* how long the 20 ms packets are sent */
#define N_LATE		30	/* packets due in 10 s, queued at the end */
#define SNDBUF		65536	/* SO_SNDBUF: the kernel doubles it */

enum { HIGH = 1, SHORT = 0x1000, LATE = 0x2000 };	/* test packet tags */

SBPN_TOPOLOGY(NULL, NULL, "netem delay 3000ms limit 10000", NULL)

FIXTURE(reclaim) {
	struct sbpn_conn c;
};

FIXTURE_VARIANT(reclaim) {
	int policy;
	int order;	/* DCCP_SOCKOPT_QPOLICY_ORDER */
	int high;	/* one packet of a higher priority first */
	int reclaims;	/* the policy discards expired packets */
};

FIXTURE_VARIANT_ADD(reclaim, newest) {
	.policy = DCCPQ_POLICY_SBPN1, .order = DCCP_QPOLICY_ORDER_NEWEST,
	.high = 0, .reclaims = 1,
};

FIXTURE_VARIANT_ADD(reclaim, lower_band) {
	.policy = DCCPQ_POLICY_SBPN1, .order = DCCP_QPOLICY_ORDER_PRIORITY,
	.high = 1, .reclaims = 1,
};

FIXTURE_VARIANT_ADD(reclaim, sbpn2) {
	.policy = DCCPQ_POLICY_SBPN2, .order = DCCP_QPOLICY_ORDER_NEWEST,
	.high = 0, .reclaims = 1,
};

FIXTURE_VARIANT_ADD(reclaim, sbpn3) {
	.policy = DCCPQ_POLICY_SBPN3, .order = DCCP_QPOLICY_ORDER_NEWEST,
	.high = 0, .reclaims = 0,
};

FIXTURE_SETUP(reclaim)
{
	int sndbuf = SNDBUF;

	sbpn_connect(_metadata, &self->c, 1, 2, variant->policy, 0);
	ASSERT_EQ(0, dt_setopt(self->c.cfd, DCCP_SOCKOPT_QPOLICY_ORDER,
			       variant->order));
	if (variant->reclaims)
		ASSERT_EQ(0, setsockopt(self->c.cfd, SOL_SOCKET, SO_SNDBUF,
					&sndbuf, sizeof(sndbuf)));
}

FIXTURE_TEARDOWN(reclaim)
{
}

/* Queue one packet of priority 1; counts a send buffer EAGAIN in @nobuf */
static int send_one(struct __test_metadata *_metadata, int fd, uint32_t tag,
		    uint64_t lifetime_ms, int *nobuf)
{
	int rc = dt_send(fd, tag, 1, 1, 1, sbpn_in_ms(lifetime_ms),
			 MSG_DONTWAIT);

	if (rc == -EAGAIN) {
		(*nobuf)++;
		return 0;
	}
	EXPECT_EQ(0, rc);
	return rc == 0;
}

TEST_F(reclaim, unbounded_queue)
{
	int fd = self->c.cfd, fill, n_short = 0, n_late = 0, nobuf = 0;
	struct dccp_qpolicy_stats s;
	uint64_t end;

	fill = sbpn_block(_metadata, &self->c, 0);
	if (variant->high)
		ASSERT_EQ(0, dt_send(fd, HIGH, 1, 2, 1, sbpn_in_ms(LONG_MS),
				     MSG_DONTWAIT));

	end = dt_now_ns() + SEND_MS * NSEC_PER_MSEC;
	while (dt_now_ns() < end) {
		n_short += send_one(_metadata, fd, SHORT | n_short, SHORT_MS,
				    &nobuf);
		dt_sleep_ms(2);
	}
	/* every 20 ms packet is expired now; these reclaim up to 60 */
	dt_sleep_ms(2 * SHORT_MS);
	for (int i = 0; i < N_LATE; i++)
		n_late += send_one(_metadata, fd, LATE | i, LONG_MS, &nobuf);

	s = sbpn_stats(_metadata, fd);
	sbpn_stats_log(_metadata, "after the last packet", &s);
	TH_LOG("queued %d packets due in %d ms, %d due in %d ms; %d EAGAIN for send buffer",
	       n_short, SHORT_MS, n_late, LONG_MS, nobuf);
	sbpn_check_invariant(_metadata, &s);
	/* the window stayed closed: only the fillers it took have left */
	ASSERT_EQ(fill - 1, s.sent);
	EXPECT_EQ(0, s.refused);
	EXPECT_EQ(0, s.evicted);
	if (variant->reclaims) {
		EXPECT_EQ(0, nobuf);
		EXPECT_EQ(n_short, s.expired);
		/* the queued filler, the high packet, the 10 s ones */
		EXPECT_EQ(1 + variant->high + n_late, s.qlen);
	} else {
		EXPECT_EQ(0, s.expired);
		EXPECT_EQ(1 + n_short + n_late, s.qlen);
	}
}

TEST_HARNESS_MAIN
