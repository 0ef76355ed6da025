// SPDX-License-Identifier: GPL-2.0
/*
 * SBPN1/2/3 send the best packet next: the highest priority first, then the
 * earliest expiry (packets without one last), ties in sendmsg() order.
 *
 * The sender's CCID 2 window is filled first (sbpn_test.h), so that every
 * test packet waits in the queue until the first Ack returns 400 ms later;
 * the receiver then checks the order in which they arrived against the
 * order the rule gives.  No deadline comes anywhere near now + RTT/2.
 */
#include "sbpn_test.h"

#define N_RANDOM	60

SBPN_TOPOLOGY(NULL, NULL, "netem delay 400ms limit 10000", NULL)

struct pkt {
	uint32_t prio;
	int64_t expiry_ms;	/* from the start of the test; <0: none */
};

FIXTURE(order) {
	struct sbpn_conn c;
};

FIXTURE_VARIANT(order) {
	int policy;
	int family;	/* 0: AF_INET */
};

FIXTURE_VARIANT_ADD(order, sbpn1) { .policy = DCCPQ_POLICY_SBPN1 };
FIXTURE_VARIANT_ADD(order, sbpn2) { .policy = DCCPQ_POLICY_SBPN2 };
FIXTURE_VARIANT_ADD(order, sbpn3) { .policy = DCCPQ_POLICY_SBPN3 };
FIXTURE_VARIANT_ADD(order, sbpn2_ipv6) {
	.policy = DCCPQ_POLICY_SBPN2, .family = AF_INET6
};

FIXTURE_SETUP(order)
{
	sbpn_connect_af(_metadata, &self->c, variant->family ?: AF_INET, 1, 2,
			variant->policy, 0);
}

FIXTURE_TEARDOWN(order)
{
}

static uint64_t key_expiry(const struct pkt *p)
{
	return p->expiry_ms < 0 ? UINT64_MAX : (uint64_t)p->expiry_ms;
}

/* true if packet @i (sent before @j when i < j) must be sent before @j */
static int before(const struct pkt *p, int i, int j)
{
	if (p[i].prio != p[j].prio)
		return p[i].prio > p[j].prio;
	if (key_expiry(&p[i]) != key_expiry(&p[j]))
		return key_expiry(&p[i]) < key_expiry(&p[j]);
	return i < j;
}

/* The order the rule gives, as tags (= index in @p); insertion sort. */
static void expected_order(const struct pkt *p, int n, uint32_t *want)
{
	for (int i = 0; i < n; i++) {
		int k = i;

		while (k > 0 && before(p, i, want[k - 1])) {
			want[k] = want[k - 1];
			k--;
		}
		want[k] = i;
	}
}

/* Queue @p behind a full window, then compare the order of arrival. */
static void run_order(struct __test_metadata *_metadata, struct sbpn_conn *c,
		      const struct pkt *p, int n)
{
	uint32_t want[N_RANDOM], got[SBPN_MAX_TAGS];
	struct dccp_qpolicy_stats s;
	uint64_t t0;
	int n_got, fillers;

	fillers = sbpn_block(_metadata, c, 0);
	t0 = dt_now_ns();
	for (int i = 0; i < n; i++)
		ASSERT_EQ(0, dt_send(c->cfd, i, 1, p[i].prio, p[i].expiry_ms >= 0,
				     t0 + p[i].expiry_ms * NSEC_PER_MSEC,
				     MSG_DONTWAIT));
	/* all still queued: the window had not opened yet */
	s = sbpn_stats(_metadata, c->cfd);
	ASSERT_EQ(n + 1, s.qlen);

	expected_order(p, n, want);
	n_got = sbpn_recv(c->afd, got, n, 0);
	sbpn_expect_tags(_metadata, got, n_got, want, n);

	s = sbpn_drain(_metadata, c->cfd);
	sbpn_stats_log(_metadata, "sender", &s);
	EXPECT_EQ(fillers + n, s.sent);
	EXPECT_EQ(0, s.expired + s.evicted + s.refused + s.expired_sent);
	sbpn_check_invariant(_metadata, &s);
}

/*
 * A hand-made case: ties on expiry, packets without expiry, and a band whose
 * packets arrive out of expiry order (sbpn_band_add()'s tree path).
 */
TEST_F(order, fixed)
{
	static const struct pkt p[] = {
		{ 1, 20000 }, { 3, -1 }, { 1, 10000 }, { 3, 30000 },
		{ 2, 15000 }, { 3, 30000 }, { 1, 10000 }, { 2, -1 },
		{ 3, 5000 }, { 1, -1 }, { 2, 15000 }, { 1, 5000 },
	};
	static const uint32_t by_hand[] = { 8, 3, 5, 1, 4, 10, 7, 11, 2, 6, 0, 9 };
	uint32_t want[ARRAY_SIZE(p)];

	/* the oracle itself agrees with the rule worked out by hand */
	expected_order(p, ARRAY_SIZE(p), want);
	ASSERT_EQ(0, memcmp(want, by_hand, sizeof(want)));
	run_order(_metadata, &self->c, p, ARRAY_SIZE(p));
}

/* Many packets over few priorities and expiries, from a fixed seed. */
TEST_F(order, random)
{
	struct pkt p[N_RANDOM];
	uint32_t x = 12345;

	for (int i = 0; i < N_RANDOM; i++) {
		x = x * 1103515245 + 12345;
		p[i].prio = 1 + (x >> 16) % 4;
		x = x * 1103515245 + 12345;
		p[i].expiry_ms = (x >> 16) % 6 == 0 ? -1 :
				 10000 + 1000 * (int64_t)((x >> 16) % 5);
	}
	run_order(_metadata, &self->c, p, N_RANDOM);
}

/*
 * An expiry of 0, and one of 2^63 - 1 ns or more (UINT64_MAX included),
 * mean "never", as if no DCCP_SCM_EXPIRY had been given: such packets
 * neither expire nor sort before packets without an expiry.
 */
TEST_F(order, never_values)
{
	static const uint64_t never[] = { 0, INT64_MAX, UINT64_MAX };
	uint32_t got[SBPN_MAX_TAGS], want[5];
	int fd = self->c.cfd, n = 0, n_got, fillers;
	struct dccp_qpolicy_stats s;

	fillers = sbpn_block(_metadata, &self->c, 0);
	ASSERT_EQ(0, dt_send(fd, n++, 1, 1, 0, 0, MSG_DONTWAIT));
	for (unsigned int i = 0; i < ARRAY_SIZE(never); i++)
		ASSERT_EQ(0, dt_send(fd, n++, 1, 1, 1, never[i], MSG_DONTWAIT));
	ASSERT_EQ(0, dt_send(fd, n++, 1, 1, 1, sbpn_in_ms(10000), MSG_DONTWAIT));
	s = sbpn_stats(_metadata, fd);
	ASSERT_EQ(n + 1, s.qlen);

	/* the one real deadline first, then the others in sendmsg() order */
	want[0] = n - 1;
	for (int i = 0; i < n - 1; i++)
		want[i + 1] = i;
	n_got = sbpn_recv(self->c.afd, got, n, 0);
	sbpn_expect_tags(_metadata, got, n_got, want, n);

	s = sbpn_drain(_metadata, fd);
	sbpn_stats_log(_metadata, "sender", &s);
	EXPECT_EQ(fillers + n, s.sent);
	EXPECT_EQ(0, s.expired + s.evicted + s.refused + s.expired_sent);
	sbpn_check_invariant(_metadata, &s);
}

TEST_HARNESS_MAIN
