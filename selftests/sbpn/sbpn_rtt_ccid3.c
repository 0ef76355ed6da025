// SPDX-License-Identifier: GPL-2.0
/*
 * The RTT/2 rule over CCID 3, with the RTT the policy really used: the
 * tracepoint dccp:dccp_qpolicy_drop records it for each expired packet.
 *
 * SBPN1 on a path whose feedback takes 300 ms (netem on the receiver's
 * side).  After a second of data, CCID 3 has measured the RTT.  Then a
 * packet due in 100 ms is expired (RTT/2 ~ 150 ms): its event must show an
 * RTT within the path's (a CCID 3 RTT getter that returned 0, or
 * milliseconds, would not discard it or would show 300), and its expiry
 * before now + RTT/2.  A packet due in 1 s is sent.
 */
#include "sbpn_test.h"

#define PATH_RTT_MS	300

SBPN_TOPOLOGY(NULL, NULL, "netem delay 300ms limit 10000", NULL)

FIXTURE(rtt3) {
	struct sbpn_conn c;
};

FIXTURE_SETUP(rtt3)
{
	sbpn_connect(_metadata, &self->c, 1, 3, DCCPQ_POLICY_SBPN1, 0);
}

FIXTURE_TEARDOWN(rtt3)
{
}

TEST_F(rtt3, half_rtt_from_ccid3)
{
	struct sockaddr_in local;
	socklen_t len = sizeof(local);
	struct dccp_qpolicy_stats s0, s;
	struct sbpn_drop_event e;
	struct dt_tfrc_tx_info ti;
	uint32_t got[SBPN_MAX_TAGS];
	int fd = self->c.cfd, events = 0;
	unsigned long long t_x;
	char line[1024];
	FILE *f;

	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&local, &len));
	/* a second of data: CCID 3 gets feedback and measures the RTT */
	for (uint32_t i = 0; i < 10; i++) {
		ASSERT_EQ(0, dt_send(fd, 100 + i, 1, 1, 0, 0, MSG_DONTWAIT));
		dt_sleep_ms(100);
	}
	EXPECT_EQ(10, sbpn_recv(self->c.afd, got, 10, 0));
	ti = sbpn_tx_info(_metadata, fd);
	TH_LOG("CCID 3: RTT %u us, X %llu B/s", ti.rtt_us, (unsigned long long)ti.x >> 6);
	ASSERT_LE(PATH_RTT_MS * 800, ti.rtt_us);

	sbpn_write_file(_metadata, SBPN_TRACING "/trace", "");
	sbpn_write_file(_metadata, SBPN_DROP_EVENT, "1");
	s0 = sbpn_stats(_metadata, fd);
	t_x = sbpn_in_ms(100);
	ASSERT_EQ(0, dt_send(fd, 1, 1, 1, 1, t_x, MSG_DONTWAIT));
	ASSERT_EQ(0, dt_send(fd, 2, 1, 1, 1, sbpn_in_ms(1000), MSG_DONTWAIT));
	EXPECT_EQ(1, sbpn_recv(self->c.afd, got, 1, 0));
	EXPECT_EQ(2, got[0]);
	sbpn_write_file(_metadata, SBPN_DROP_EVENT, "0");
	s = sbpn_drain(_metadata, fd);
	sbpn_stats_log(_metadata, "sender", &s);
	EXPECT_EQ(1, s.expired - s0.expired);
	EXPECT_EQ(1, s.sent - s0.sent);

	f = fopen(SBPN_TRACING "/trace", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		if (sbpn_parse_drop(line, ntohs(local.sin_port), &e))
			continue;
		TH_LOG("%s", line);
		events++;
		EXPECT_STREQ("expired", e.reason);
		EXPECT_EQ(t_x, e.expiry_ns);
		/* the path's RTT, give or take what TCG adds */
		EXPECT_LE(PATH_RTT_MS * 800, e.rtt_us);
		EXPECT_GE(PATH_RTT_MS * 2000, e.rtt_us);
		EXPECT_LT(e.expiry_ns, e.now_ns + e.rtt_us * 1000ULL / 2);
	}
	fclose(f);
	EXPECT_EQ(1, events);
}

TEST_HARNESS_MAIN
