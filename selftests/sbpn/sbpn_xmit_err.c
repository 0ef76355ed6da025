// SPDX-License-Identifier: GPL-2.0
/*
 * A packet the local network layer drops after the policy handed it out
 * is counted as sent and as xmit_err.  Once the connection is up, a
 * "prohibit" route to the peer makes dccp_transmit_skb() fail: two
 * packets (within CCID 2's initial window) count as sent and xmit_err
 * and never arrive.  With the route gone, the next packet arrives and
 * xmit_err stays.
 */
#include "sbpn_test.h"

SBPN_TOPOLOGY(NULL, NULL, NULL, NULL)

FIXTURE(xmit) {
	struct sbpn_conn c;
};

FIXTURE_SETUP(xmit)
{
	sbpn_connect(_metadata, &self->c, 1, 2, DCCPQ_POLICY_SBPN1, 0);
}

FIXTURE_TEARDOWN(xmit)
{
}

TEST_F(xmit, local_drop_counted)
{
	int fd = self->c.cfd;
	struct dccp_qpolicy_stats s;
	uint32_t got[SBPN_MAX_TAGS];
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "route add prohibit %s/32\n", sbpn_ip_b[1]);
	ASSERT_EQ(0, sbpn_batch("ip", cmd));
	ASSERT_EQ(0, dt_send(fd, 1, 1, 1, 0, 0, MSG_DONTWAIT));
	ASSERT_EQ(0, dt_send(fd, 2, 1, 1, 0, 0, MSG_DONTWAIT));
	s = sbpn_stats(_metadata, fd);
	sbpn_stats_log(_metadata, "no route", &s);
	sbpn_check_invariant(_metadata, &s);
	EXPECT_EQ(2, s.sent);
	EXPECT_EQ(2, s.xmit_err);
	EXPECT_EQ(0, dt_recv_tags(self->c.afd, got, 1, SBPN_QUIET_MS));

	snprintf(cmd, sizeof(cmd), "route del prohibit %s/32\n", sbpn_ip_b[1]);
	ASSERT_EQ(0, sbpn_batch("ip", cmd));
	ASSERT_EQ(0, dt_send(fd, 3, 1, 1, 0, 0, MSG_DONTWAIT));
	ASSERT_EQ(1, sbpn_recv(self->c.afd, got, 1, 0));
	EXPECT_EQ(3, got[0]);
	s = sbpn_drain(_metadata, fd);
	sbpn_stats_log(_metadata, "route back", &s);
	sbpn_check_invariant(_metadata, &s);
	EXPECT_EQ(3, s.sent);
	EXPECT_EQ(2, s.xmit_err);
}

TEST_HARNESS_MAIN
