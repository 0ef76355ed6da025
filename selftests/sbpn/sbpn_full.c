// SPDX-License-Identifier: GPL-2.0
/*
 * Admission to a full queue (tx_qlen 4), the same for SBPN1/2/3: expired
 * packets are discarded first; then the packet that would be sent last is
 * evicted if the new one would be sent before it (strictly), else sendmsg()
 * fails with EAGAIN, also on a blocking socket.  The counters say so, and
 * the receiver gets exactly the packets that stayed.
 *
 * Everything waits behind a full CCID 2 window (sbpn_test.h) on a path with
 * a 1 s RTT, which CCID 2 has measured first; A (priority 2) stays the best
 * packet, so only the admission code ever judges the others' expiry.
 */
#include "sbpn_test.h"

SBPN_TOPOLOGY(NULL, NULL, "netem delay 1000ms limit 10000", NULL)

FIXTURE(full) {
	struct sbpn_conn c;
};

FIXTURE_VARIANT(full) {
	int policy;
};

FIXTURE_VARIANT_ADD(full, sbpn1) { .policy = DCCPQ_POLICY_SBPN1 };
FIXTURE_VARIANT_ADD(full, sbpn2) { .policy = DCCPQ_POLICY_SBPN2 };
FIXTURE_VARIANT_ADD(full, sbpn3) { .policy = DCCPQ_POLICY_SBPN3 };

FIXTURE_SETUP(full)
{
	sbpn_connect(_metadata, &self->c, 1, 2, variant->policy, 4);
	sbpn_measure_rtt(_metadata, &self->c, 1000);
}

FIXTURE_TEARDOWN(full)
{
}

enum { A = 1, B, C, D, G, H, I, Q, R };	/* test packet tags */

static void expect_counts(struct __test_metadata *_metadata, int fd,
			  const char *step, int refused, int evicted, int expired)
{
	struct dccp_qpolicy_stats s = sbpn_stats(_metadata, fd);

	sbpn_stats_log(_metadata, step, &s);
	EXPECT_EQ(4, s.qlen);
	EXPECT_EQ(refused, s.refused);
	EXPECT_EQ(evicted, s.evicted);
	EXPECT_EQ(expired, s.expired);
	sbpn_check_invariant(_metadata, &s);
}

TEST_F(full, admission)
{
	uint32_t want[40], got[SBPN_MAX_TAGS];
	int fd = self->c.cfd, fill, n_want, n_got;
	struct dccp_qpolicy_stats s;
	uint64_t t_q;

	/* queue: F (filler, priority 0, no expiry) */
	fill = sbpn_block(_metadata, &self->c, 0);
	ASSERT_EQ(0, dt_send(fd, A, 1, 2, 1, sbpn_in_ms(10000), MSG_DONTWAIT));
	ASSERT_EQ(0, dt_send(fd, B, 1, 1, 1, sbpn_in_ms(10000), MSG_DONTWAIT));
	ASSERT_EQ(0, dt_send(fd, C, 1, 1, 1, sbpn_in_ms(20000), MSG_DONTWAIT));
	expect_counts(_metadata, fd, "full: F A B C", 0, 0, 0);

	/* no better than F, the worst: refused, although the socket blocks */
	EXPECT_EQ(-EAGAIN, dt_send(fd, G, 1, 0, 0, 0, 0));
	expect_counts(_metadata, fd, "G refused", 1, 0, 0);
	/* better than F: F is evicted */
	ASSERT_EQ(0, dt_send(fd, D, 1, 1, 1, sbpn_in_ms(5000), MSG_DONTWAIT));
	expect_counts(_metadata, fd, "D in, F evicted", 1, 1, 0);
	/* same priority as C, the worst now, but later: refused */
	EXPECT_EQ(-EAGAIN, dt_send(fd, H, 1, 1, 1, sbpn_in_ms(30000), MSG_DONTWAIT));
	expect_counts(_metadata, fd, "H refused", 2, 1, 0);
	/* same priority as C, earlier: C is evicted */
	ASSERT_EQ(0, dt_send(fd, I, 1, 1, 1, sbpn_in_ms(15000), MSG_DONTWAIT));
	expect_counts(_metadata, fd, "I in, C evicted", 2, 2, 0);
	/* Q (due in 700 ms, not expired now: RTT/2 >= 500 ms) evicts I */
	t_q = dt_now_ns();
	ASSERT_EQ(0, dt_send(fd, Q, 1, 1, 1, t_q + 700 * NSEC_PER_MSEC, MSG_DONTWAIT));
	expect_counts(_metadata, fd, "Q in, I evicted", 2, 3, 0);

	/*
	 * 450 ms later Q is expired (now + RTT/2 >= t_q + 950 ms) while the
	 * window is still closed (the next Ack is due 1 s after F's
	 * predecessors).  R, worse than everything, gets Q's place.
	 */
	dt_sleep_ms(450);
	ASSERT_EQ(0, dt_send(fd, R, 1, 0, 0, 0, MSG_DONTWAIT));
	expect_counts(_metadata, fd, "R in, Q expired", 2, 3, 1);
	s = sbpn_stats(_metadata, fd);
	/* nothing sent since the fillers: the window really stayed closed */
	EXPECT_EQ(SBPN_PROBES + fill - 1, s.sent);
	EXPECT_EQ(SBPN_PROBES + fill + 7, s.queued);

	n_want = sbpn_fillers(want, fill - 1);
	want[n_want++] = A;
	want[n_want++] = D;
	want[n_want++] = B;
	want[n_want++] = R;
	s = sbpn_drain(_metadata, fd);
	n_got = sbpn_recv(self->c.afd, got, n_want, 1);
	sbpn_expect_tags(_metadata, got, n_got, want, n_want);
	sbpn_stats_log(_metadata, "drained", &s);
	sbpn_check_invariant(_metadata, &s);
	EXPECT_EQ(SBPN_PROBES + fill + 3, s.sent);
}

/*
 * A new packet that is already expired (due before now + RTT/2) is refused
 * on a full queue, even with the highest priority: it must not evict F,
 * which can still arrive in time, only to be discarded at dequeue itself.
 */
TEST_F(full, expired_new)
{
	uint32_t want[40], got[SBPN_MAX_TAGS];
	int fd = self->c.cfd, fill, n_want, n_got;
	struct dccp_qpolicy_stats s;

	fill = sbpn_block(_metadata, &self->c, 0);
	ASSERT_EQ(0, dt_send(fd, A, 1, 2, 1, sbpn_in_ms(10000), MSG_DONTWAIT));
	ASSERT_EQ(0, dt_send(fd, B, 1, 1, 1, sbpn_in_ms(10000), MSG_DONTWAIT));
	ASSERT_EQ(0, dt_send(fd, C, 1, 1, 1, sbpn_in_ms(20000), MSG_DONTWAIT));
	expect_counts(_metadata, fd, "full: F A B C", 0, 0, 0);

	/* due in 100 ms, RTT/2 >= 500 ms: expired on arrival */
	EXPECT_EQ(-EAGAIN, dt_send(fd, Q, 1, 3, 1, sbpn_in_ms(100), MSG_DONTWAIT));
	expect_counts(_metadata, fd, "expired Q refused", 1, 0, 0);
	/* so is one that would otherwise evict C, the last of its band */
	EXPECT_EQ(-EAGAIN, dt_send(fd, R, 1, 1, 1, sbpn_in_ms(100), MSG_DONTWAIT));
	expect_counts(_metadata, fd, "expired R refused", 2, 0, 0);

	n_want = sbpn_fillers(want, fill - 1);
	want[n_want++] = A;
	want[n_want++] = B;
	want[n_want++] = C;
	want[n_want++] = SBPN_FILLER | (fill - 1);
	s = sbpn_drain(_metadata, fd);
	n_got = sbpn_recv(self->c.afd, got, n_want, 1);
	sbpn_expect_tags(_metadata, got, n_got, want, n_want);
	sbpn_stats_log(_metadata, "drained", &s);
	sbpn_check_invariant(_metadata, &s);
	EXPECT_EQ(SBPN_PROBES + fill + 3, s.sent);
}

TEST_HARNESS_MAIN
