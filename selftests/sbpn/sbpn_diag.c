// SPDX-License-Identifier: GPL-2.0
/*
 * sock_diag reports a DCCP socket's queueing policy, tx_qlen and counters
 * (INET_DIAG_DCCP_QPOLICY, with INET_DIAG_INFO), the same as the socket
 * option gives its owner; and the project's dccp-qstat (libnl) prints them.
 *
 * As in sbpn_full (tx_qlen 4 behind a full CCID 2 window, 1 s RTT), the
 * counters first get a refusal, an eviction and an expiry; then a raw
 * sock_diag dump of this namespace's DCCP sockets must hold the sender with
 * exactly DCCP_SOCKOPT_QPOLICY_STATS's numbers, and dccp-qstat --sport
 * must print them in its line.
 */
#include "sbpn_test.h"
#include "dccp_diag.h"

SBPN_TOPOLOGY(NULL, NULL, "netem delay 1000ms limit 10000", NULL)

FIXTURE(diag) {
	struct sbpn_conn c;
};

FIXTURE_SETUP(diag)
{
	sbpn_connect(_metadata, &self->c, 1, 2, DCCPQ_POLICY_SBPN2, 4);
	sbpn_measure_rtt(_metadata, &self->c, 1000);
}

FIXTURE_TEARDOWN(diag)
{
}

struct diag_find {
	uint16_t port;
	int found;
	struct dccp_qpolicy_diag d;
};

static void diag_match(const struct inet_diag_msg *m,
		       const struct dccp_qpolicy_diag *d, void *arg)
{
	struct diag_find *f = arg;

	if (d && ntohs(m->id.idiag_sport) == f->port) {
		memcpy(&f->d, d, sizeof(f->d));
		f->found = 1;
	}
}

/* The INET_DIAG_DCCP_QPOLICY attribute of the DCCP socket on local @port:
 * 1 found, 0 socket or attribute missing, -errno on failure.
 */
static int diag_lookup(uint16_t port, struct dccp_qpolicy_diag *d)
{
	static char buf[1 << 16];
	struct diag_find f = { .port = port };
	int fd, rc;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -errno;
	rc = dccp_diag_dump(fd, AF_INET, buf, sizeof(buf), diag_match, &f);
	close(fd);
	if (rc)
		return rc;
	if (f.found)
		memcpy(d, &f.d, sizeof(*d));
	return f.found;
}

enum { A = 1, B, C, D, G, X };	/* test packet tags */

TEST_F(diag, counters_reported)
{
	struct sockaddr_in local;
	socklen_t len = sizeof(local);
	struct dccp_qpolicy_diag d;
	struct dccp_qpolicy_stats s;
	char cmd[256], line[512], want[256];
	int fd = self->c.cfd, found = 0;
	FILE *p;

	sbpn_block(_metadata, &self->c, 0);
	ASSERT_EQ(0, dt_send(fd, A, 1, 2, 1, sbpn_in_ms(10000), MSG_DONTWAIT));
	ASSERT_EQ(0, dt_send(fd, X, 1, 1, 1, sbpn_in_ms(700), MSG_DONTWAIT));
	ASSERT_EQ(0, dt_send(fd, B, 1, 1, 1, sbpn_in_ms(10000), MSG_DONTWAIT));
	EXPECT_EQ(-EAGAIN, dt_send(fd, G, 1, 0, 0, 0, MSG_DONTWAIT));
	ASSERT_EQ(0, dt_send(fd, D, 1, 1, 1, sbpn_in_ms(5000), MSG_DONTWAIT));
	dt_sleep_ms(450);
	ASSERT_EQ(0, dt_send(fd, C, 1, 0, 0, 0, MSG_DONTWAIT));

	s = sbpn_stats(_metadata, fd);
	sbpn_stats_log(_metadata, "socket option", &s);
	ASSERT_EQ(1, s.refused);
	ASSERT_EQ(1, s.evicted);
	ASSERT_EQ(1, s.expired);

	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&local, &len));
	ASSERT_EQ(1, diag_lookup(ntohs(local.sin_port), &d));
	TH_LOG("sock_diag: policy %u tx_qlen %u queued %llu sent %llu expired %llu evicted %llu refused %llu qlen %llu",
	       d.policy, d.tx_qlen, d.stats.queued, d.stats.sent, d.stats.expired,
	       d.stats.evicted, d.stats.refused, d.stats.qlen);
	EXPECT_EQ(DCCPQ_POLICY_SBPN2, d.policy);
	EXPECT_EQ(4, d.tx_qlen);
	EXPECT_EQ(0, memcmp(&s, &d.stats, sizeof(s)));

	snprintf(cmd, sizeof(cmd), "%s -4 --sport %u 2>&1", QSTAT_BIN, ntohs(local.sin_port));
	snprintf(want, sizeof(want), "\tsbpn2\t4\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\n",
		 s.qlen, s.queued, s.sent, s.expired, s.expired_sent, s.evicted,
		 s.refused, s.purged, s.ccid_err, s.xmit_err, s.frame);
	p = popen(cmd, "r");
	ASSERT_NE(NULL, p);
	while (fgets(line, sizeof(line), p)) {
		TH_LOG("dccp-qstat: %.*s", (int)strcspn(line, "\n"), line);
		if (strstr(line, "\tOPEN\t") && strstr(line, want))
			found++;
	}
	EXPECT_EQ(0, pclose(p));
	EXPECT_EQ(1, found);

	sbpn_drain(_metadata, fd);
}

TEST_HARNESS_MAIN
