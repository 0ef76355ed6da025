// SPDX-License-Identifier: GPL-2.0
/*
 * SIMPLE, unmodified DCCP's policy and the baseline of every SBPN
 * comparison, decides admission without looking at the new packet, so
 * sendmsg() refuses a packet for a full queue before it allocates and
 * copies it, and before it would wait for send buffer space: EAGAIN,
 * counted as refused, also on a blocking socket.
 *
 * The queue (tx_qlen 16) fills behind a closed CCID 2 window (sbpn_test.h);
 * then SO_SNDBUF drops to its minimum, below what the queued packets hold
 * (SIOCOUTQ), so a sendmsg() that allocated first would fail (MSG_DONTWAIT)
 * or wait out SO_SNDTIMEO (blocking) in sock_alloc_send_skb(), without the
 * policy ever being asked and without counting the refusal.
 */
#include "sbpn_test.h"

#include <linux/sockios.h>
#include <sys/ioctl.h>

#define QLEN	16

SBPN_TOPOLOGY(NULL, NULL, "netem delay 1000ms limit 10000", NULL)

FIXTURE(early) {
	struct sbpn_conn c;
};

FIXTURE_SETUP(early)
{
	sbpn_connect(_metadata, &self->c, 1, 2, DCCPQ_POLICY_SIMPLE, QLEN);
}

FIXTURE_TEARDOWN(early)
{
}

TEST_F(early, refused_before_allocation)
{
	struct timeval timeo = { .tv_sec = 1 };
	int fd = self->c.cfd, zero = 0, sndbuf, outq, fill;
	socklen_t len = sizeof(sndbuf);
	struct dccp_qpolicy_stats s;

	fill = sbpn_block(_metadata, &self->c, 0);
	for (int i = 1; i < QLEN; i++)
		ASSERT_EQ(0, dt_send(fd, i, 0, 0, 0, 0, MSG_DONTWAIT));
	s = sbpn_stats(_metadata, fd);
	ASSERT_EQ(QLEN, s.qlen);

	/* the send buffer is exhausted: allocating first would fail */
	ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &zero, sizeof(zero)));
	ASSERT_EQ(0, getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &len));
	ASSERT_EQ(0, ioctl(fd, SIOCOUTQ, &outq));
	TH_LOG("SO_SNDBUF %d, SIOCOUTQ %d with %d packets queued",
	       sndbuf, outq, QLEN);
	ASSERT_LE(sndbuf, outq);

	EXPECT_EQ(-EAGAIN, dt_send(fd, 100, 0, 0, 0, 0, MSG_DONTWAIT));
	s = sbpn_stats(_metadata, fd);
	sbpn_stats_log(_metadata, "non-blocking", &s);
	EXPECT_EQ(1, s.refused);

	ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeo, sizeof(timeo)));
	EXPECT_EQ(-EAGAIN, dt_send(fd, 101, 0, 0, 0, 0, 0));
	s = sbpn_stats(_metadata, fd);
	sbpn_stats_log(_metadata, "blocking", &s);
	EXPECT_EQ(2, s.refused);
	EXPECT_EQ(QLEN, s.qlen);
	sbpn_check_invariant(_metadata, &s);

	s = sbpn_drain(_metadata, fd);
	/* the fillers before the one left queued, then the whole queue */
	EXPECT_EQ(fill - 1 + QLEN, s.sent);
}

TEST_HARNESS_MAIN
