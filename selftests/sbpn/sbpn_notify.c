// SPDX-License-Identifier: GPL-2.0
/*
 * DCCP_QPOLICY_F_NOTIFY: a packet the policy discards after admitting
 * it comes back on the error queue with its payload, an extended error of
 * origin SO_EE_ORIGIN_DCCP_QPOLICY, errno ECANCELED, the reason as ee_code and
 * the expiry in ee_data:ee_info; poll() reports EPOLLERR meanwhile.
 *
 * As in sbpn_full: tx_qlen 4 behind a full CCID 2 window on a path with a
 * 1 s RTT.  D evicts the filler F; X (due in 700 ms) is found expired when
 * R arrives 450 ms later.  Without the flag nothing is queued.
 */
#include "sbpn_test.h"

SBPN_TOPOLOGY(NULL, NULL, "netem delay 1000ms limit 10000", NULL)

FIXTURE(notify) {
	struct sbpn_conn c;
};

FIXTURE_VARIANT(notify) {
	int on;
};

FIXTURE_VARIANT_ADD(notify, on) { .on = 1 };
FIXTURE_VARIANT_ADD(notify, off) { .on = 0 };

FIXTURE_SETUP(notify)
{
	sbpn_connect(_metadata, &self->c, 1, 2, DCCPQ_POLICY_SBPN1, 4);
	sbpn_measure_rtt(_metadata, &self->c, 1000);
}

FIXTURE_TEARDOWN(notify)
{
}

enum { A = 1, B, D, R, X };	/* test packet tags */

TEST_F(notify, discarded_packets_come_back)
{
	struct pollfd p = { .fd = self->c.cfd, .events = 0 };
	uint32_t want[40], got[SBPN_MAX_TAGS];
	int fd = self->c.cfd, fill, n_want, n_got;
	struct dccp_qpolicy_stats s;
	struct sbpn_notice n;
	uint64_t t_x;

	sbpn_set_flag(_metadata, fd, DCCP_SOCKOPT_QPOLICY_FLAGS,
		      DCCP_QPOLICY_F_NOTIFY, variant->on);

	fill = sbpn_block(_metadata, &self->c, 0);
	t_x = dt_now_ns() + 700 * NSEC_PER_MSEC;
	ASSERT_EQ(0, dt_send(fd, A, 1, 2, 1, sbpn_in_ms(10000), MSG_DONTWAIT));
	ASSERT_EQ(0, dt_send(fd, X, 1, 1, 1, t_x, MSG_DONTWAIT));
	ASSERT_EQ(0, dt_send(fd, B, 1, 1, 1, sbpn_in_ms(10000), MSG_DONTWAIT));
	EXPECT_EQ(-EAGAIN, sbpn_read_notice(fd, &n));
	ASSERT_EQ(0, poll(&p, 1, 0));

	/* D evicts F; 450 ms later X is expired and makes room for R */
	ASSERT_EQ(0, dt_send(fd, D, 1, 1, 1, sbpn_in_ms(5000), MSG_DONTWAIT));
	dt_sleep_ms(450);
	ASSERT_EQ(0, dt_send(fd, R, 1, 0, 0, 0, MSG_DONTWAIT));
	s = sbpn_stats(_metadata, fd);
	sbpn_stats_log(_metadata, "after R", &s);
	EXPECT_EQ(1, s.evicted);
	EXPECT_EQ(1, s.expired);

	if (variant->on) {
		ASSERT_EQ(1, poll(&p, 1, 0));
		EXPECT_TRUE(p.revents & POLLERR);

		ASSERT_EQ(0, sbpn_read_notice(fd, &n));
		EXPECT_EQ(SBPN_FILLER | (fill - 1), n.tag);
		EXPECT_EQ(SO_EE_ORIGIN_DCCP_QPOLICY, n.ee.ee_origin);
		EXPECT_EQ(ECANCELED, n.ee.ee_errno);
		EXPECT_EQ(DCCP_QPOLICY_EE_EVICTED, n.ee.ee_code);
		EXPECT_EQ(0, sbpn_notice_expiry(&n));

		ASSERT_EQ(0, sbpn_read_notice(fd, &n));
		EXPECT_EQ(X, n.tag);
		EXPECT_EQ(SO_EE_ORIGIN_DCCP_QPOLICY, n.ee.ee_origin);
		EXPECT_EQ(ECANCELED, n.ee.ee_errno);
		EXPECT_EQ(DCCP_QPOLICY_EE_EXPIRED, n.ee.ee_code);
		EXPECT_EQ(t_x, sbpn_notice_expiry(&n));
	}
	EXPECT_EQ(-EAGAIN, sbpn_read_notice(fd, &n));
	p.revents = 0;
	EXPECT_EQ(0, poll(&p, 1, 0));

	n_want = sbpn_fillers(want, fill - 1);
	want[n_want++] = A;
	want[n_want++] = D;
	want[n_want++] = B;
	want[n_want++] = R;
	s = sbpn_drain(_metadata, fd);
	n_got = sbpn_recv(self->c.afd, got, n_want, 1);
	sbpn_expect_tags(_metadata, got, n_got, want, n_want);
	sbpn_check_invariant(_metadata, &s);
}

TEST_HARNESS_MAIN
