// SPDX-License-Identifier: GPL-2.0
/*
 * DCCP_SOCKOPT_QPOLICY_EDF over CCID 3: with it, the SBPN policies send the
 * earliest expiry first whatever its priority, and a full queue still gives
 * up the packet of lowest priority and latest expiry; without it, the
 * highest priority goes first.
 *
 * SBPN2 on a path whose feedback takes 2 s (netem on the receiver's side),
 * as in sbpn_predict: until the first feedback CCID 3 sends one 100-byte
 * packet per 500 ms, so after the first packet, which leaves at once, the
 * others wait in the queue and leave in the order the policy picks.  Every
 * deadline is 10 s or more away: nothing expires.
 */
#include "sbpn_test.h"

SBPN_TOPOLOGY(NULL, NULL, "netem delay 2000ms limit 10000", NULL)

struct pkt {
	uint32_t tag, prio;
	unsigned int due_ms;
};

FIXTURE(edf) {
	struct sbpn_conn c;
};

FIXTURE_VARIANT(edf) {
	int on;
};

FIXTURE_VARIANT_ADD(edf, off) { .on = 0 };
FIXTURE_VARIANT_ADD(edf, on) { .on = 1 };

FIXTURE_SETUP(edf)
{
	sbpn_connect(_metadata, &self->c, 1, 3, DCCPQ_POLICY_SBPN2, 4);
}

FIXTURE_TEARDOWN(edf)
{
}

/* Set the option (checking its default and range), send @n packets after
 * one that leaves at once (tag 0), and return the stats with them queued.
 */
static struct dccp_qpolicy_stats send_all(struct __test_metadata *_metadata,
					  int fd, int on, const struct pkt *p,
					  int n, int *refused)
{
	struct dccp_qpolicy_stats s;
	int val = -1;
	socklen_t len = sizeof(val);

	ASSERT_EQ(0, getsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_QPOLICY_EDF, &val, &len));
	ASSERT_EQ(0, val);
	ASSERT_EQ(-1, dt_setopt(fd, DCCP_SOCKOPT_QPOLICY_EDF, 2));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(0, dt_setopt(fd, DCCP_SOCKOPT_QPOLICY_EDF, on));
	ASSERT_EQ(0, getsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_QPOLICY_EDF, &val, &len));
	ASSERT_EQ(on, val);

	ASSERT_EQ(0, dt_send(fd, 0, 1, 1, 0, 0, MSG_DONTWAIT));
	*refused = 0;
	for (int i = 0; i < n; i++) {
		int rc = dt_send(fd, p[i].tag, 1, p[i].prio, 1,
				 sbpn_in_ms(p[i].due_ms), MSG_DONTWAIT);

		if (rc == -EAGAIN)
			(*refused)++;
		else
			ASSERT_EQ(0, rc);
	}
	s = sbpn_stats(_metadata, fd);
	sbpn_stats_log(_metadata, "queued", &s);
	/* the first packet has left, the others wait for CCID 3 */
	ASSERT_EQ(1, s.sent);
	return s;
}

static void expect_order(struct __test_metadata *_metadata,
			 struct sbpn_conn *c, const uint32_t *want, int n)
{
	uint32_t got[SBPN_MAX_TAGS];
	struct dccp_qpolicy_stats s;
	int n_got;

	n_got = sbpn_recv(c->afd, got, n, 0);
	sbpn_expect_tags(_metadata, got, n_got, want, n);
	s = sbpn_drain(_metadata, c->cfd);
	sbpn_stats_log(_metadata, "drained", &s);
	sbpn_check_invariant(_metadata, &s);
	EXPECT_EQ(0, s.expired + s.expired_sent);
}

/* Two priorities whose deadlines interleave: by priority, or by deadline. */
TEST_F(edf, order)
{
	static const struct pkt p[] = {
		{ 1, 1, 20000 }, { 2, 0, 10000 }, { 3, 1, 30000 }, { 4, 0, 15000 },
	};
	static const uint32_t by_prio[] = { 0, 1, 3, 2, 4 };
	static const uint32_t by_expiry[] = { 0, 2, 4, 1, 3 };
	int refused;

	send_all(_metadata, self->c.cfd, variant->on, p, ARRAY_SIZE(p), &refused);
	ASSERT_EQ(0, refused);
	expect_order(_metadata, &self->c, variant->on ? by_expiry : by_prio,
		     ARRAY_SIZE(by_prio));
}

/*
 * A full queue (tx_qlen 4) decides by priority either way: a priority-1
 * packet due last evicts the priority-0 packet due first, and a priority-0
 * packet due before everything is refused.
 */
TEST_F(edf, full_queue)
{
	static const struct pkt p[] = {
		{ 1, 0, 10000 }, { 2, 1, 20000 }, { 3, 1, 30000 }, { 4, 1, 35000 },
		{ 5, 1, 40000 }, { 6, 0, 5000 },
	};
	static const uint32_t want[] = { 0, 2, 3, 4, 5 };
	struct dccp_qpolicy_stats s;
	int refused;

	s = send_all(_metadata, self->c.cfd, variant->on, p, ARRAY_SIZE(p),
		     &refused);
	EXPECT_EQ(1, refused);
	EXPECT_EQ(1, s.refused);
	EXPECT_EQ(1, s.evicted);
	EXPECT_EQ(4, s.qlen);
	expect_order(_metadata, &self->c, want, ARRAY_SIZE(want));
}

TEST_HARNESS_MAIN
