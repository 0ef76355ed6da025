// SPDX-License-Identifier: GPL-2.0
/*
 * The tracepoint dccp:dccp_qpolicy_drop fires once for every packet the
 * policy discards or refuses, with the reason, and its fields are those of
 * the packet: one event per unit of the expired, evicted, refused and
 * purged counters, the expired packet's priority and exact expiry, an RTT
 * of at least the path's 1 s, and expiry < now + RTT/2 for that packet;
 * every event names the socket's addresses and ports.
 *
 * Behind a full CCID 2 window, once CCID 2 has measured the RTT, with
 * tx_qlen 3: X (due in 50 ms) expires, G (no better than anything queued)
 * is refused, C evicts the filler, and a disconnect purges the three
 * packets left.
 */
#include "sbpn_test.h"

SBPN_TOPOLOGY(NULL, NULL, "netem delay 1000ms limit 10000", NULL)

FIXTURE(trace) {
	struct sbpn_conn c;
};

FIXTURE_VARIANT(trace) {
	int policy;
};

FIXTURE_VARIANT_ADD(trace, sbpn1) { .policy = DCCPQ_POLICY_SBPN1 };
FIXTURE_VARIANT_ADD(trace, sbpn3) { .policy = DCCPQ_POLICY_SBPN3 };

FIXTURE_SETUP(trace)
{
}

FIXTURE_TEARDOWN(trace)
{
}

enum { A = 1, B, C, G, X };	/* test packet tags */

TEST_F(trace, one_event_per_drop)
{
	struct sockaddr unspec = { .sa_family = AF_UNSPEC };
	struct sockaddr_in local;
	socklen_t len = sizeof(local);
	int n_expired = 0, n_evicted = 0, n_refused = 0, n_purged = 0, n_other = 0;
	struct dccp_qpolicy_stats s;
	uint64_t x_expiry;
	char line[1024], src[64], dest[64];
	FILE *f;
	int fd;

	if (access(SBPN_TRACING "/trace", W_OK))
		SKIP(return, "no tracefs at " SBPN_TRACING);
	sbpn_connect(_metadata, &self->c, 1, 2, variant->policy, 3);
	sbpn_measure_rtt(_metadata, &self->c, 1000);
	fd = self->c.cfd;
	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&local, &len));
	snprintf(src, sizeof(src), "%s:%u", sbpn_ip_a[1], ntohs(local.sin_port));
	snprintf(dest, sizeof(dest), "%s:%u", sbpn_ip_b[1], self->c.port);
	sbpn_write_file(_metadata, SBPN_TRACING "/trace", "");
	sbpn_write_file(_metadata, SBPN_DROP_EVENT, "1");

	sbpn_block(_metadata, &self->c, 0);
	x_expiry = sbpn_in_ms(50);
	ASSERT_EQ(0, dt_send(fd, X, 1, 1, 1, x_expiry, MSG_DONTWAIT));
	ASSERT_EQ(0, dt_send(fd, A, 1, 2, 1, sbpn_in_ms(10000), MSG_DONTWAIT));
	ASSERT_EQ(0, dt_send(fd, B, 1, 1, 1, sbpn_in_ms(10000), MSG_DONTWAIT));
	EXPECT_EQ(-EAGAIN, dt_send(fd, G, 1, 0, 0, 0, MSG_DONTWAIT));
	ASSERT_EQ(0, dt_send(fd, C, 1, 2, 1, sbpn_in_ms(5000), MSG_DONTWAIT));
	ASSERT_EQ(0, connect(fd, &unspec, sizeof(unspec)));
	sbpn_write_file(_metadata, SBPN_DROP_EVENT, "0");

	s = sbpn_stats(_metadata, fd);
	sbpn_stats_log(_metadata, "sender", &s);
	EXPECT_EQ(1, s.expired);
	EXPECT_EQ(1, s.refused);
	EXPECT_EQ(1, s.evicted);
	EXPECT_EQ(3, s.purged);

	f = fopen(SBPN_TRACING "/trace", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		struct sbpn_drop_event e;

		if (sbpn_parse_drop(line, ntohs(local.sin_port), &e))
			continue;
		TH_LOG("%s", line);
		EXPECT_STREQ(src, e.src);
		EXPECT_STREQ(dest, e.dest);
		if (!strcmp(e.reason, "expired")) {
			n_expired++;
			EXPECT_EQ(1, e.priority);
			EXPECT_EQ(x_expiry, e.expiry_ns);
			EXPECT_LE(900000, e.rtt_us);
			EXPECT_LT(e.expiry_ns, e.now_ns + e.rtt_us * 1000ULL / 2);
		} else if (!strcmp(e.reason, "evicted")) {
			n_evicted++;
			EXPECT_EQ(0, e.priority);
			EXPECT_EQ(0, e.expiry_ns);
		} else if (!strcmp(e.reason, "refused")) {
			n_refused++;
			EXPECT_EQ(0, e.priority);
		} else if (!strcmp(e.reason, "purged")) {
			n_purged++;
		} else {
			n_other++;
		}
	}
	fclose(f);
	EXPECT_EQ(s.expired, n_expired);
	EXPECT_EQ(s.evicted, n_evicted);
	EXPECT_EQ(s.refused, n_refused);
	EXPECT_EQ(s.purged, n_purged);
	EXPECT_EQ(0, n_other);
}

TEST_HARNESS_MAIN
