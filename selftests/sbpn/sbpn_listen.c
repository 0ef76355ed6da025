// SPDX-License-Identifier: GPL-2.0
/*
 * A policy and tx_qlen set on a listening socket are inherited by the
 * sockets it accepts; each accepted socket has its own queue and its own
 * counters, starting at zero.  The listener's own counters are not zero:
 * it first sends a few packets over a connection of its own and
 * disconnects (which keeps the counters).  Two clients then connect to it;
 * each accepted socket sends with the expiry cmsg (which only SBPN takes)
 * and counts only its own packets.
 */
#include "sbpn_test.h"

#define QLEN	7

SBPN_TOPOLOGY(NULL, NULL, NULL, NULL)

FIXTURE(listen) {
};

FIXTURE_VARIANT(listen) {
	int policy;
};

FIXTURE_VARIANT_ADD(listen, sbpn1) { .policy = DCCPQ_POLICY_SBPN1 };
FIXTURE_VARIANT_ADD(listen, sbpn2) { .policy = DCCPQ_POLICY_SBPN2 };
FIXTURE_VARIANT_ADD(listen, sbpn3) { .policy = DCCPQ_POLICY_SBPN3 };

FIXTURE_SETUP(listen)
{
}

FIXTURE_TEARDOWN(listen)
{
}

static void expect_counts(struct __test_metadata *_metadata, int fd,
			  int queued)
{
	struct dccp_qpolicy_stats s = sbpn_stats(_metadata, fd);

	EXPECT_EQ(queued, s.queued);
	EXPECT_EQ(queued, s.sent);
	EXPECT_EQ(0, s.expired + s.expired_sent + s.evicted + s.refused +
		     s.purged + s.ccid_err + s.qlen);
}

/* Send @n packets from @fd with priority and expiry; @peer gets them all. */
static void send_n(struct __test_metadata *_metadata, int fd, int peer, int n)
{
	uint32_t got[SBPN_MAX_TAGS];

	for (int i = 0; i < n; i++)
		ASSERT_EQ(0, dt_send(fd, i, 1, i % 3, 1, sbpn_in_ms(10000), 0));
	EXPECT_EQ(n, sbpn_recv(peer, got, n, 1));
}

TEST_F(listen, inherited)
{
	struct sockaddr_in a = dt_addr(sbpn_ip_b[1], 5000 + getpid() % 30000);
	struct sockaddr unspec = { .sa_family = AF_UNSPEC };
	int lfd, cfd[2], afd[2], val, hfd, peer;
	struct dccp_qpolicy_stats s;
	socklen_t len;

	/* a helper listener in A for the listener-to-be's first connection */
	sbpn_switch(_metadata, sbpn_ns_a);
	hfd = dt_listen(_metadata, 2, sbpn_ip_a[1], ntohs(a.sin_port) + 1);
	sbpn_switch(_metadata, sbpn_ns_b);
	lfd = dt_socket(_metadata, 2, variant->policy, QLEN);
	ASSERT_EQ(0, bind(lfd, (struct sockaddr *)&a, sizeof(a)));
	peer = dt_connect(_metadata, lfd, hfd, sbpn_ip_a[1], ntohs(a.sin_port) + 1);
	send_n(_metadata, lfd, peer, 4);
	ASSERT_EQ(0, connect(lfd, &unspec, sizeof(unspec)));
	ASSERT_EQ(0, listen(lfd, 8));
	s = sbpn_stats(_metadata, lfd);
	EXPECT_EQ(4, s.queued);

	sbpn_switch(_metadata, sbpn_ns_a);
	for (int i = 0; i < 2; i++) {
		cfd[i] = dt_socket(_metadata, 2, DCCPQ_POLICY_SIMPLE, 0);
		afd[i] = dt_connect(_metadata, cfd[i], lfd, sbpn_ip_b[1],
				    ntohs(a.sin_port));
	}

	for (int i = 0; i < 2; i++) {
		len = sizeof(val);
		ASSERT_EQ(0, getsockopt(afd[i], SOL_DCCP, DCCP_SOCKOPT_QPOLICY_ID,
					&val, &len));
		EXPECT_EQ(variant->policy, val);
		len = sizeof(val);
		ASSERT_EQ(0, getsockopt(afd[i], SOL_DCCP, DCCP_SOCKOPT_QPOLICY_TXQLEN,
					&val, &len));
		EXPECT_EQ(QLEN, val);
		expect_counts(_metadata, afd[i], 0);
	}

	send_n(_metadata, afd[0], cfd[0], 5);
	expect_counts(_metadata, afd[0], 5);
	expect_counts(_metadata, afd[1], 0);
	send_n(_metadata, afd[1], cfd[1], 3);
	expect_counts(_metadata, afd[0], 5);
	expect_counts(_metadata, afd[1], 3);
	expect_counts(_metadata, lfd, 4);
}

TEST_HARNESS_MAIN
