// SPDX-License-Identifier: GPL-2.0
/*
 * Lowering tx_qlen below the queue length: PRIO and the SBPN policies
 * evict, at once, the packets they would send last until the queue fits;
 * SIMPLE never drops a packet it accepted and refuses new ones instead.
 *
 * Behind a full CCID 2 window (sbpn_test.h) the queue holds the filler F
 * (priority 0) and packets 1-7 with priorities 1-7 (SIMPLE: no priority).
 * tx_qlen then goes from 8 to 3.
 */
#include "sbpn_test.h"

#define QLEN	8
#define NEWLEN	3

SBPN_TOPOLOGY(NULL, NULL, "netem delay 1000ms limit 10000", NULL)

FIXTURE(txqlen) {
	struct sbpn_conn c;
};

FIXTURE_VARIANT(txqlen) {
	int policy;
};

FIXTURE_VARIANT_ADD(txqlen, simple) { .policy = DCCPQ_POLICY_SIMPLE };
FIXTURE_VARIANT_ADD(txqlen, prio) { .policy = DCCPQ_POLICY_PRIO };
FIXTURE_VARIANT_ADD(txqlen, sbpn1) { .policy = DCCPQ_POLICY_SBPN1 };
FIXTURE_VARIANT_ADD(txqlen, sbpn2) { .policy = DCCPQ_POLICY_SBPN2 };
FIXTURE_VARIANT_ADD(txqlen, sbpn3) { .policy = DCCPQ_POLICY_SBPN3 };

FIXTURE_SETUP(txqlen)
{
	sbpn_connect(_metadata, &self->c, 1, 2, variant->policy, QLEN);
}

FIXTURE_TEARDOWN(txqlen)
{
}

TEST_F(txqlen, lowered)
{
	int fd = self->c.cfd, simple = variant->policy == DCCPQ_POLICY_SIMPLE;
	uint32_t want[40], got[SBPN_MAX_TAGS];
	int fill, n_want, n_got;
	struct dccp_qpolicy_stats s;

	fill = sbpn_block(_metadata, &self->c, 0);
	for (uint32_t tag = 1; tag < QLEN; tag++)
		ASSERT_EQ(0, sbpn_send(fd, variant->policy, tag, tag, 0, MSG_DONTWAIT));
	s = sbpn_stats(_metadata, fd);
	ASSERT_EQ(QLEN, s.qlen);

	ASSERT_EQ(0, dt_setopt(fd, DCCP_SOCKOPT_QPOLICY_TXQLEN, NEWLEN));
	s = sbpn_stats(_metadata, fd);
	sbpn_stats_log(_metadata, "tx_qlen lowered", &s);
	sbpn_check_invariant(_metadata, &s);
	if (simple) {
		EXPECT_EQ(QLEN, s.qlen);
		EXPECT_EQ(0, s.evicted);
		EXPECT_EQ(-EAGAIN, sbpn_send(fd, variant->policy, 100, 0, 0,
					     MSG_DONTWAIT));
		s = sbpn_stats(_metadata, fd);
		EXPECT_EQ(1, s.refused);
	} else {
		EXPECT_EQ(NEWLEN, s.qlen);
		EXPECT_EQ(QLEN - NEWLEN, s.evicted);
	}

	/* the fillers sent before; then what stayed, in the policy's order */
	n_want = sbpn_fillers(want, fill - 1);
	if (simple) {
		want[n_want++] = SBPN_FILLER | (fill - 1);
		for (uint32_t tag = 1; tag < QLEN; tag++)
			want[n_want++] = tag;
	} else {
		for (uint32_t tag = QLEN - 1; tag >= QLEN - NEWLEN; tag--)
			want[n_want++] = tag;
	}
	s = sbpn_drain(_metadata, fd);
	n_got = sbpn_recv(self->c.afd, got, n_want, 1);
	sbpn_expect_tags(_metadata, got, n_got, want, n_want);
	sbpn_stats_log(_metadata, "drained", &s);
	sbpn_check_invariant(_metadata, &s);
}

TEST_HARNESS_MAIN
