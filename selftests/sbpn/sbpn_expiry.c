// SPDX-License-Identifier: GPL-2.0
/*
 * What each SBPN policy does with expired packets (qpolicy_sbpn.c):
 *   SBPN1 discards them and never sends one;
 *   SBPN2 discards them too, but sends one that is alone in the queue, and
 *         counts it in expired_sent;
 *   SBPN3 keeps them aside, sends them (best first) only when nothing
 *         unexpired is queued, and discards them only to make room.
 *
 * Packets wait behind a full CCID 2 window (sbpn_test.h) on a path with a
 * 400 ms RTT, which CCID 2 has measured first, so every deadline below is
 * clearly before or clearly after now + RTT/2 when it is judged: "due in
 * 50 ms" is expired when sent, "due in 350 ms" is not when sent but is when
 * the next Ack returns (at least 400 ms later), "due in 10 s" never is.
 */
#include "sbpn_test.h"

SBPN_TOPOLOGY(NULL, NULL, "netem delay 400ms limit 10000", NULL)

FIXTURE(expiry) {
	struct sbpn_conn c;
};

FIXTURE_VARIANT(expiry) {
	int policy;
	int family;	/* 0: AF_INET */
};

FIXTURE_VARIANT_ADD(expiry, sbpn1) { .policy = DCCPQ_POLICY_SBPN1 };

FIXTURE_VARIANT_ADD(expiry, sbpn2) { .policy = DCCPQ_POLICY_SBPN2 };

FIXTURE_VARIANT_ADD(expiry, sbpn3) { .policy = DCCPQ_POLICY_SBPN3 };

FIXTURE_VARIANT_ADD(expiry, sbpn1_ipv6) {
	.policy = DCCPQ_POLICY_SBPN1, .family = AF_INET6
};

FIXTURE_VARIANT_ADD(expiry, sbpn2_ipv6) {
	.policy = DCCPQ_POLICY_SBPN2, .family = AF_INET6
};

FIXTURE_VARIANT_ADD(expiry, sbpn3_ipv6) {
	.policy = DCCPQ_POLICY_SBPN3, .family = AF_INET6
};

FIXTURE_SETUP(expiry)
{
	sbpn_connect_af(_metadata, &self->c, variant->family ?: AF_INET, 1, 2,
			variant->policy, 4);
	sbpn_measure_rtt(_metadata, &self->c, 400);
}

FIXTURE_TEARDOWN(expiry)
{
}

enum { E = 1, X1, X2, U, V };	/* test packet tags */

/*
 * The queued filler F and a better packet E both expire while they wait.
 * SBPN1 sends neither; SBPN2 discards E, then sends F, alone by then;
 * SBPN3 sends both, E first.
 */
TEST_F(expiry, expired_while_queued)
{
	uint32_t want[40], got[SBPN_MAX_TAGS];
	struct dccp_qpolicy_stats s;
	int fill, n_want, n_got;
	uint32_t f;

	fill = sbpn_block(_metadata, &self->c, 350);
	f = SBPN_FILLER | (fill - 1);
	ASSERT_EQ(0, dt_send(self->c.cfd, E, 1, 5, 1, sbpn_in_ms(350), MSG_DONTWAIT));
	s = sbpn_stats(_metadata, self->c.cfd);
	EXPECT_EQ(2, s.qlen);
	EXPECT_EQ(0, s.expired);

	n_want = sbpn_fillers(want, fill - 1);
	if (variant->policy == DCCPQ_POLICY_SBPN3)
		want[n_want++] = E;
	if (variant->policy != DCCPQ_POLICY_SBPN1)
		want[n_want++] = f;
	s = sbpn_drain(_metadata, self->c.cfd);
	n_got = sbpn_recv(self->c.afd, got, n_want, 1);
	sbpn_expect_tags(_metadata, got, n_got, want, n_want);

	sbpn_stats_log(_metadata, "sender", &s);
	sbpn_check_invariant(_metadata, &s);
	switch (variant->policy) {
	case DCCPQ_POLICY_SBPN1:
		EXPECT_EQ(2, s.expired);
		EXPECT_EQ(0, s.expired_sent);
		break;
	case DCCPQ_POLICY_SBPN2:
		EXPECT_EQ(1, s.expired);
		EXPECT_EQ(1, s.expired_sent);
		break;
	case DCCPQ_POLICY_SBPN3:
		EXPECT_EQ(0, s.expired);
		EXPECT_EQ(2, s.expired_sent);
		break;
	}
}

/*
 * X1 and X2 are expired on arrival, U is not.  SBPN1 and SBPN2 discard the
 * X at once (neither is alone: F is queued).  SBPN3 keeps them, queue not
 * being full, and sends them after U and after F, although F has a lower
 * priority than they have: nothing unexpired may wait for them.
 */
TEST_F(expiry, expired_sent_last)
{
	int sbpn3 = variant->policy == DCCPQ_POLICY_SBPN3;
	uint32_t want[40], got[SBPN_MAX_TAGS];
	struct dccp_qpolicy_stats s;
	int fill, n_want, n_got;

	fill = sbpn_block(_metadata, &self->c, 0);
	ASSERT_EQ(0, dt_send(self->c.cfd, X1, 1, 1, 1, sbpn_in_ms(50), MSG_DONTWAIT));
	ASSERT_EQ(0, dt_send(self->c.cfd, X2, 1, 1, 1, sbpn_in_ms(50), MSG_DONTWAIT));
	ASSERT_EQ(0, dt_send(self->c.cfd, U, 1, 1, 1, sbpn_in_ms(10000), MSG_DONTWAIT));
	s = sbpn_stats(_metadata, self->c.cfd);
	sbpn_stats_log(_metadata, "queued", &s);
	EXPECT_EQ(sbpn3 ? 4 : 2, s.qlen);
	EXPECT_EQ(sbpn3 ? 0 : 2, s.expired);

	n_want = sbpn_fillers(want, fill - 1);
	want[n_want++] = U;
	want[n_want++] = SBPN_FILLER | (fill - 1);
	if (sbpn3) {
		want[n_want++] = X1;
		want[n_want++] = X2;
	}
	s = sbpn_drain(_metadata, self->c.cfd);
	n_got = sbpn_recv(self->c.afd, got, n_want, 1);
	sbpn_expect_tags(_metadata, got, n_got, want, n_want);

	sbpn_stats_log(_metadata, "sender", &s);
	sbpn_check_invariant(_metadata, &s);
	EXPECT_EQ(sbpn3 ? 0 : 2, s.expired);
	EXPECT_EQ(sbpn3 ? 2 : 0, s.expired_sent);
}

/*
 * As above, then V fills the queue (tx_qlen 4) under SBPN3: the two kept
 * expired packets are discarded to admit it, and V is sent before F.
 */
TEST_F(expiry, expired_dropped_when_full)
{
	uint32_t want[40], got[SBPN_MAX_TAGS];
	struct dccp_qpolicy_stats s;
	int fill, n_want, n_got;

	fill = sbpn_block(_metadata, &self->c, 0);
	ASSERT_EQ(0, dt_send(self->c.cfd, X1, 1, 1, 1, sbpn_in_ms(50), MSG_DONTWAIT));
	ASSERT_EQ(0, dt_send(self->c.cfd, X2, 1, 1, 1, sbpn_in_ms(50), MSG_DONTWAIT));
	ASSERT_EQ(0, dt_send(self->c.cfd, U, 1, 1, 1, sbpn_in_ms(10000), MSG_DONTWAIT));
	ASSERT_EQ(0, dt_send(self->c.cfd, V, 1, 1, 1, sbpn_in_ms(10000), MSG_DONTWAIT));
	s = sbpn_stats(_metadata, self->c.cfd);
	sbpn_stats_log(_metadata, "queued", &s);
	EXPECT_EQ(3, s.qlen);
	EXPECT_EQ(2, s.expired);
	EXPECT_EQ(0, s.evicted + s.refused);

	n_want = sbpn_fillers(want, fill - 1);
	want[n_want++] = U;
	want[n_want++] = V;
	want[n_want++] = SBPN_FILLER | (fill - 1);
	s = sbpn_drain(_metadata, self->c.cfd);
	n_got = sbpn_recv(self->c.afd, got, n_want, 1);
	sbpn_expect_tags(_metadata, got, n_got, want, n_want);

	sbpn_stats_log(_metadata, "sender", &s);
	sbpn_check_invariant(_metadata, &s);
	EXPECT_EQ(2, s.expired);
	EXPECT_EQ(0, s.expired_sent);
}

TEST_HARNESS_MAIN
