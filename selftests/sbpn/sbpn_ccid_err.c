// SPDX-License-Identifier: GPL-2.0
/*
 * A packet the TX CCID refuses is counted as ccid_err, traced with that
 * reason, and reported as a drop notice.  CCID 3 refuses an empty
 * datagram (ccid3_hc_tx_send_packet(): -EBADMSG); sendmsg() has already
 * queued it, so only the counters, the tracepoint and the error queue can
 * tell.  The packets around it go through.
 */
#include "sbpn_test.h"

SBPN_TOPOLOGY(NULL, NULL, NULL, NULL)

FIXTURE(ccid_err) {
	struct sbpn_conn c;
};

FIXTURE_SETUP(ccid_err)
{
	sbpn_connect(_metadata, &self->c, 1, 3, DCCPQ_POLICY_SBPN2, 0);
}

FIXTURE_TEARDOWN(ccid_err)
{
}

TEST_F(ccid_err, empty_packet_over_ccid3)
{
	char line[1024], payload[16];
	struct sock_extended_err ee = { 0 };
	int fd = self->c.cfd, traced = 0, tx_ccid = 0;
	socklen_t len = sizeof(tx_ccid);
	uint32_t got[SBPN_MAX_TAGS];
	struct dccp_qpolicy_stats s;
	FILE *f;

	ASSERT_EQ(0, getsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_TX_CCID, &tx_ccid, &len));
	ASSERT_EQ(3, tx_ccid);
	ASSERT_EQ(0, sbpn_set_qflag(fd, DCCP_QPOLICY_F_NOTIFY, 1));
	sbpn_write_file(_metadata, SBPN_TRACING "/trace", "");
	sbpn_write_file(_metadata, SBPN_DROP_EVENT, "1");

	ASSERT_EQ(0, dt_send(fd, 1, 1, 1, 0, 0, 0));
	ASSERT_EQ(0, send(fd, "", 0, 0));
	ASSERT_EQ(0, dt_send(fd, 2, 1, 1, 0, 0, 0));
	EXPECT_EQ(2, sbpn_recv(self->c.afd, got, 2, 0));
	sbpn_write_file(_metadata, SBPN_DROP_EVENT, "0");

	s = sbpn_drain(_metadata, fd);
	sbpn_stats_log(_metadata, "sender", &s);
	sbpn_check_invariant(_metadata, &s);
	EXPECT_EQ(1, s.ccid_err);
	EXPECT_EQ(2, s.sent);

	f = fopen(SBPN_TRACING "/trace", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "dccp_qpolicy_drop:") && strstr(line, "reason=ccid_err"))
			traced++;
	fclose(f);
	EXPECT_EQ(1, traced);

	/* the empty datagram comes back with no payload */
	ASSERT_EQ(0, sbpn_read_errqueue(fd, payload, sizeof(payload), &ee));
	EXPECT_EQ(SO_EE_ORIGIN_DCCP_QPOLICY, ee.ee_origin);
	EXPECT_EQ(DCCP_QPOLICY_EE_CCID_ERR, ee.ee_code);
}

TEST_HARNESS_MAIN
