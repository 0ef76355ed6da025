// SPDX-License-Identifier: GPL-2.0
/*
 * The RTT/2 rule: a packet is expired when its deadline is before
 * now + RTT/2, with the RTT the sender's CCID measured.  Path 1 has 400 ms
 * of netem delay (on the Acks), path 2 none.
 *
 * half_rtt: each round sends, into an open window, two packets due in
 * 50 ms, one due in 350 ms (past RTT/2 = 200 ms but before the full RTT, so
 * a kernel that used the whole RTT fails) and one due in 2 s.  Over 400 ms
 * the two early ones are expired: SBPN1 discards them, SBPN2 and SBPN3 send
 * them, each alone in the queue, as expired_sent.  Over path 2 nothing is
 * expired.  Round 0 goes out before the first Ack, when the CCID has no
 * estimate yet: nothing is expired then, although the handshake took
 * 400 ms.  Rounds send an even number of packets so that the receiver
 * (Ack Ratio 2) acknowledges every round at once and no delayed Ack
 * inflates the RTT.
 *
 * handshake: a connection over path 1 whose Acks are delayed only during
 * the handshake, so the handshake RTT (400 ms) is long and the path's RTT
 * afterwards is short.  SBPN1 over CCID 3 then sends packets due in 150 ms,
 * one every 25 ms.  Judged against the handshake RTT, every one is expired
 * and, since SBPN1 never sends an expired packet, no feedback ever corrects
 * it: nothing arrives.  The same happens when CCID 3 averages its first
 * feedback into the handshake RTT (0.9 * 400 ms / 2 > 150 ms).
 */
#include "sbpn_test.h"

#define ROUNDS		4
#define ACK_DELAY	"netem delay 400ms limit 10000"
#define HS_PACKETS	40

SBPN_TOPOLOGY(NULL, NULL, ACK_DELAY, NULL)

FIXTURE(rtt) {
	struct sbpn_conn c;
};

FIXTURE_VARIANT(rtt) {
	int policy;
	int path;
	int early_expired;	/* the 50 ms packets count as expired */
};

FIXTURE_VARIANT_ADD(rtt, sbpn1_400ms) { DCCPQ_POLICY_SBPN1, 1, 1 };
FIXTURE_VARIANT_ADD(rtt, sbpn2_400ms) { DCCPQ_POLICY_SBPN2, 1, 1 };
FIXTURE_VARIANT_ADD(rtt, sbpn3_400ms) { DCCPQ_POLICY_SBPN3, 1, 1 };
FIXTURE_VARIANT_ADD(rtt, sbpn1_0ms) { DCCPQ_POLICY_SBPN1, 2, 0 };

FIXTURE_SETUP(rtt)
{
	sbpn_connect(_metadata, &self->c, variant->path, 2, variant->policy, 0);
}

FIXTURE_TEARDOWN(rtt)
{
}

TEST_F(rtt, half_rtt)
{
	static const uint64_t due_ms[] = { 50, 50, 350, 2000 };
	const int per_round = ARRAY_SIZE(due_ms);
	const int judged = 2 * (ROUNDS - 1);	/* 50 ms packets after round 0 */
	uint32_t want[ROUNDS * 4], got[SBPN_MAX_TAGS];
	int discard = variant->early_expired &&
		      variant->policy == DCCPQ_POLICY_SBPN1;
	struct dccp_qpolicy_stats s;
	int n_want = 0, n_got = 0;

	for (int r = 0; r < ROUNDS; r++) {
		int before = n_want;

		for (int i = 0; i < per_round; i++) {
			uint32_t tag = r * per_round + i;

			ASSERT_EQ(0, dt_send(self->c.cfd, tag, 1, 1, 1,
					     sbpn_in_ms(due_ms[i]), MSG_DONTWAIT));
			if (!(discard && r > 0 && due_ms[i] == 50))
				want[n_want++] = tag;
		}
		/* the round arrived; let its Ack return before the next */
		n_got += sbpn_recv(self->c.afd, got + n_got, n_want - before, 0);
		dt_sleep_ms(variant->path == 1 ? 600 : 50);
	}
	sbpn_expect_tags(_metadata, got, n_got, want, n_want);

	s = sbpn_drain(_metadata, self->c.cfd);
	sbpn_stats_log(_metadata, "sender", &s);
	sbpn_check_invariant(_metadata, &s);
	EXPECT_EQ(discard ? judged : 0, s.expired);
	EXPECT_EQ(variant->early_expired && !discard ? judged : 0,
		  s.expired_sent);
	EXPECT_EQ(n_want, s.sent);
}

FIXTURE(handshake) {
	struct sbpn_conn c;
};

FIXTURE_SETUP(handshake)
{
	sbpn_connect(_metadata, &self->c, 1, 3, DCCPQ_POLICY_SBPN1, 0);
	sbpn_set_ack_qdisc(_metadata, "netem delay 0ms limit 10000");
}

FIXTURE_TEARDOWN(handshake)
{
	sbpn_set_ack_qdisc(_metadata, ACK_DELAY);
}

TEST_F(handshake, long_handshake_rtt_does_not_starve_sbpn1)
{
	uint32_t got[SBPN_MAX_TAGS];
	struct dccp_qpolicy_stats s;
	int n_got;

	for (uint32_t tag = 0; tag < HS_PACKETS; tag++) {
		ASSERT_EQ(0, dt_send(self->c.cfd, tag, 1, 1, 1,
				     sbpn_in_ms(150), MSG_DONTWAIT));
		dt_sleep_ms(25);
	}
	n_got = sbpn_recv(self->c.afd, got, HS_PACKETS, 0);
	s = sbpn_drain(_metadata, self->c.cfd);
	sbpn_stats_log(_metadata, "sender", &s);
	sbpn_check_invariant(_metadata, &s);
	EXPECT_EQ(s.sent, n_got);
	/* the path is fast: packets expire only if the sender stalls */
	EXPECT_GE(n_got, HS_PACKETS / 2);
}

TEST_HARNESS_MAIN
