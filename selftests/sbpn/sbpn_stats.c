// SPDX-License-Identifier: GPL-2.0
/*
 * DCCP_SOCKOPT_QPOLICY_STATS agrees with the application and the receiver,
 * for all five policies:
 *   - queued counts the successful sendmsg() calls, refused the EAGAINs;
 *   - queued == sent + expired + evicted + frame + purged + ccid_err + qlen
 *     after every call (the invariant of DCCP_SOCKOPT_QPOLICY_STATS);
 *   - the receiver gets exactly `sent` packets, each one sent once;
 *   - expired_sent only under SBPN2/3, expiry and eviction only where the
 *     policy has them;
 *   - a disconnect (connect(AF_UNSPEC)) counts the queued packets as purged
 *     and does not reset the counters.
 * The workload overloads a short queue (tx_qlen 5) on a 50 ms RTT path
 * with mixed priorities and deadlines.
 */
#include "sbpn_test.h"

#define N_SEND	300

SBPN_TOPOLOGY(NULL, NULL, "netem delay 50ms limit 10000",
	      "netem delay 1000ms limit 10000")

FIXTURE(stats) {
	struct sbpn_conn c;
};

FIXTURE_VARIANT(stats) {
	int policy;
};

FIXTURE_VARIANT_ADD(stats, simple) { .policy = DCCPQ_POLICY_SIMPLE };
FIXTURE_VARIANT_ADD(stats, prio) { .policy = DCCPQ_POLICY_PRIO };
FIXTURE_VARIANT_ADD(stats, sbpn1) { .policy = DCCPQ_POLICY_SBPN1 };
FIXTURE_VARIANT_ADD(stats, sbpn2) { .policy = DCCPQ_POLICY_SBPN2 };
FIXTURE_VARIANT_ADD(stats, sbpn3) { .policy = DCCPQ_POLICY_SBPN3 };

FIXTURE_SETUP(stats)
{
}

FIXTURE_TEARDOWN(stats)
{
}

static int invariant_holds(const struct dccp_qpolicy_stats *s)
{
	return s->queued == s->sent + s->expired + s->evicted + s->frame +
			    s->purged + s->ccid_err + s->qlen &&
	       s->expired_sent <= s->sent;
}

TEST_F(stats, agree_with_receiver)
{
	static const uint64_t due_ms[] = { 20, 100, 1000, 0 };	/* 0: none */
	static uint8_t sent_ok[N_SEND], seen[N_SEND];
	int n_ok = 0, n_eagain = 0, broken = 0, n_got, dup = 0, stray = 0;
	uint32_t got[SBPN_MAX_TAGS], x = 777;
	struct dccp_qpolicy_stats s;

	sbpn_connect(_metadata, &self->c, 1, 2, variant->policy, 5);
	for (int i = 0; i < N_SEND; i++) {
		int err;

		x = x * 1103515245 + 12345;
		err = sbpn_send(self->c.cfd, variant->policy, i, (x >> 16) % 4,
				due_ms[(x >> 20) % 4] ?
				sbpn_in_ms(due_ms[(x >> 20) % 4]) : 0,
				MSG_DONTWAIT);
		if (err == 0) {
			sent_ok[i] = 1;
			n_ok++;
		} else if (err == -EAGAIN) {
			n_eagain++;
		} else {
			TH_LOG("packet %d: %s", i, strerror(-err));
			broken++;
		}
		s = sbpn_stats(_metadata, self->c.cfd);
		if (!invariant_holds(&s) && !broken++)
			sbpn_stats_log(_metadata, "invariant broken", &s);
		if (i % 4 == 0)
			dt_sleep_ms(1);
	}
	EXPECT_EQ(0, broken);

	s = sbpn_drain(_metadata, self->c.cfd);
	n_got = sbpn_recv(self->c.afd, got, s.sent, 1);
	sbpn_stats_log(_metadata, "sender", &s);
	TH_LOG("application: %d queued, %d EAGAIN; receiver: %d", n_ok, n_eagain, n_got);
	sbpn_check_invariant(_metadata, &s);
	EXPECT_EQ(n_ok, s.queued);
	EXPECT_EQ(n_eagain, s.refused);
	EXPECT_EQ(s.sent, n_got);
	for (int i = 0; i < n_got; i++) {
		if (got[i] >= N_SEND || !sent_ok[got[i]])
			stray++;
		else if (seen[got[i]]++)
			dup++;
	}
	EXPECT_EQ(0, stray);
	EXPECT_EQ(0, dup);
	EXPECT_EQ(0, s.purged + s.ccid_err);
	/* the queue did overflow, or this tested little */
	EXPECT_LT(0, s.refused + s.evicted);

	switch (variant->policy) {
	case DCCPQ_POLICY_SIMPLE:
		EXPECT_EQ(0, s.evicted);
		EXPECT_EQ(0, s.expired + s.expired_sent);
		break;
	case DCCPQ_POLICY_PRIO:
		EXPECT_EQ(0, s.expired + s.expired_sent);
		break;
	case DCCPQ_POLICY_SBPN1:
		EXPECT_EQ(0, s.expired_sent);
		break;
	}
}

/* Packets queued behind a full window (1 s RTT) are purged on disconnect. */
TEST_F(stats, purged_on_disconnect)
{
	struct sockaddr unspec = { .sa_family = AF_UNSPEC };
	struct dccp_qpolicy_stats before, s;
	int fill;

	sbpn_connect(_metadata, &self->c, 2, 2, variant->policy, 0);
	fill = sbpn_block(_metadata, &self->c, 0);
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(0, sbpn_send(self->c.cfd, variant->policy, i, 1,
				       sbpn_in_ms(10000), MSG_DONTWAIT));
	before = sbpn_stats(_metadata, self->c.cfd);
	sbpn_stats_log(_metadata, "before", &before);
	EXPECT_EQ(4, before.qlen);

	ASSERT_EQ(0, connect(self->c.cfd, &unspec, sizeof(unspec)));
	s = sbpn_stats(_metadata, self->c.cfd);
	sbpn_stats_log(_metadata, "after disconnect", &s);
	sbpn_check_invariant(_metadata, &s);
	EXPECT_EQ(0, s.qlen);
	EXPECT_EQ(4, s.purged);
	EXPECT_EQ(fill + 3, s.queued);
	EXPECT_EQ(fill - 1, s.sent);
}

TEST_HARNESS_MAIN
