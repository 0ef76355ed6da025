// SPDX-License-Identifier: GPL-2.0
/*
 * poll() honours tx_qlen: no EPOLLOUT while the queue holds tx_qlen
 * packets, and a waiting poll() wakes with EPOLLOUT once a packet leaves.
 *
 * tx_qlen 2 behind a full CCID 2 window on a path with a 1 s RTT
 * (sbpn_test.h): the filler and one more packet fill the queue; nothing
 * leaves it until the first Ack returns, about a second later.
 */
#include "sbpn_test.h"

SBPN_TOPOLOGY(NULL, NULL, "netem delay 1000ms limit 10000", NULL)

FIXTURE(pollq) {
	struct sbpn_conn c;
};

FIXTURE_VARIANT(pollq) {
	int policy;
};

FIXTURE_VARIANT_ADD(pollq, simple) { .policy = DCCPQ_POLICY_SIMPLE };
FIXTURE_VARIANT_ADD(pollq, prio) { .policy = DCCPQ_POLICY_PRIO };
FIXTURE_VARIANT_ADD(pollq, sbpn1) { .policy = DCCPQ_POLICY_SBPN1 };

FIXTURE_SETUP(pollq)
{
	sbpn_connect(_metadata, &self->c, 1, 2, variant->policy, 2);
}

FIXTURE_TEARDOWN(pollq)
{
}

TEST_F(pollq, writable_when_room)
{
	struct pollfd p = { .fd = self->c.cfd, .events = POLLOUT };
	struct dccp_qpolicy_stats s;
	uint64_t t0;

	/* room: writable */
	ASSERT_EQ(1, poll(&p, 1, 0));
	ASSERT_TRUE(p.revents & POLLOUT);

	sbpn_block(_metadata, &self->c, 0);
	ASSERT_EQ(0, sbpn_send(self->c.cfd, variant->policy, 1, 1, 0, MSG_DONTWAIT));
	s = sbpn_stats(_metadata, self->c.cfd);
	ASSERT_EQ(2, s.qlen);

	/* full: not writable, until the Ack lets a packet out */
	p.revents = 0;
	EXPECT_EQ(0, poll(&p, 1, 0));
	t0 = dt_now_ns();
	ASSERT_EQ(1, poll(&p, 1, SBPN_WAIT_MS));
	EXPECT_TRUE(p.revents & POLLOUT);
	s = sbpn_stats(_metadata, self->c.cfd);
	TH_LOG("EPOLLOUT after %llu ms, qlen %llu",
	       (unsigned long long)(dt_now_ns() - t0) / NSEC_PER_MSEC, s.qlen);
	EXPECT_GT(2, s.qlen);
	sbpn_drain(_metadata, self->c.cfd);
}

TEST_HARNESS_MAIN
