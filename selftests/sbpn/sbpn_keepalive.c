// SPDX-License-Identifier: GPL-2.0
/*
 * SBPN2 keeps CCID 3 fed where SBPN1 lets its rate collapse (the reason
 * SBPN2 exists): a sender whose packets all expire in the queue.
 *
 * Two CCID 3 connections on the same path (feedback delayed 200 ms), one
 * SBPN1, one SBPN2, fed the same way at the same time: first a second of
 * packets without expiry (both measure the RTT and reach a rate), then
 * three seconds of one packet every 50 ms that is expired on arrival: due
 * 1 ms ago, so expired whatever RTT the policy judges by (after the
 * nofeedback timer it is 0, see sbpn_last_rtt, and a packet due in 1 ms
 * would be sent).  SBPN1 discards them all, sends nothing, gets no feedback and
 * its nofeedback timer halves X again and again; SBPN2 sends each, alone
 * in its queue, as expired_sent, and feedback keeps its X up.  X is read
 * with DCCP_SOCKOPT_CCID_TX_INFO.
 */
#include "sbpn_test.h"

SBPN_TOPOLOGY(NULL, NULL, "netem delay 200ms limit 10000", NULL)

FIXTURE(keepalive) {
	struct sbpn_conn c1, c2;
};

FIXTURE_SETUP(keepalive)
{
	sbpn_connect(_metadata, &self->c1, 1, 3, DCCPQ_POLICY_SBPN1, 0);
	/* the second connection on the next port */
	self->c2.port = self->c1.port + 1;
	self->c2.policy = DCCPQ_POLICY_SBPN2;
	sbpn_switch(_metadata, sbpn_ns_b);
	self->c2.lfd = dt_listen(_metadata, 3, sbpn_ip_b[1], self->c2.port);
	sbpn_switch(_metadata, sbpn_ns_a);
	self->c2.cfd = dt_socket(_metadata, 3, DCCPQ_POLICY_SBPN2, 0);
	self->c2.afd = dt_connect(_metadata, self->c2.cfd, self->c2.lfd,
				  sbpn_ip_b[1], self->c2.port);
}

FIXTURE_TEARDOWN(keepalive)
{
}

TEST_F(keepalive, sbpn2_keeps_x)
{
	const int fds[2] = { self->c1.cfd, self->c2.cfd };
	uint64_t x_before[2], x_after[2];
	struct dccp_qpolicy_stats s[2];
	uint32_t got[SBPN_MAX_TAGS];

	for (uint32_t i = 0; i < 20; i++) {
		for (int k = 0; k < 2; k++)
			ASSERT_EQ(0, dt_send(fds[k], i, 1, 1, 0, 0, MSG_DONTWAIT));
		dt_sleep_ms(50);
	}
	EXPECT_EQ(20, sbpn_recv(self->c1.afd, got, 20, 0));
	EXPECT_EQ(20, sbpn_recv(self->c2.afd, got, 20, 0));
	for (int k = 0; k < 2; k++)
		x_before[k] = sbpn_tx_info(_metadata, fds[k]).x >> 6;

	for (uint32_t i = 0; i < 60; i++) {
		for (int k = 0; k < 2; k++)
			ASSERT_EQ(0, dt_send(fds[k], 1000 + i, 1, 1, 1,
					     dt_now_ns() - NSEC_PER_MSEC, MSG_DONTWAIT));
		dt_sleep_ms(50);
	}
	for (int k = 0; k < 2; k++) {
		x_after[k] = sbpn_tx_info(_metadata, fds[k]).x >> 6;
		s[k] = sbpn_stats(_metadata, fds[k]);
		sbpn_stats_log(_metadata, k ? "SBPN2" : "SBPN1", &s[k]);
		sbpn_check_invariant(_metadata, &s[k]);
	}
	TH_LOG("X before/after 3 s of expired packets: SBPN1 %llu -> %llu, SBPN2 %llu -> %llu B/s",
	       (unsigned long long)x_before[0], (unsigned long long)x_after[0],
	       (unsigned long long)x_before[1], (unsigned long long)x_after[1]);
	/* SBPN1 sent none of them, SBPN2 (nearly) all, as expired_sent */
	EXPECT_EQ(60, s[0].expired);
	EXPECT_EQ(20, s[0].sent);
	EXPECT_LE(50, s[1].expired_sent);
	/* SBPN1's X fell; SBPN2's stayed well above it */
	EXPECT_GT(x_before[0], 2 * x_after[0]);
	EXPECT_LT(4 * x_after[0], x_after[1]);
}

TEST_HARNESS_MAIN
