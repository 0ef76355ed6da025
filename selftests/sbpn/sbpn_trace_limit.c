// SPDX-License-Identifier: GPL-2.0
/*
 * The drop tracepoint explains an expiry decision: for a packet discarded
 * as expired it records the limit its expiry was judged against, limit_ns,
 * and what the limit is made of, limit_ns = now_ns + wait_ns + owd_us * 1000,
 * with owd_us = rtt_us / 2, or rtt_us - min_rtt_us / 2 when min_rtt_us is
 * not 0.  Each case is one where the RTT/2 rule alone does not explain the
 * discard (expiry_ns >= now_ns + rtt_us * 1000 / 2):
 *
 *  predict  DCCP_QPOLICY_F_PREDICT, the scenario of sbpn_predict: over
 *           CCID 3 with feedback delayed 2 s, tx_qlen 4, a packet due in
 *           1.2 s queued behind three others is discarded as predicted late
 *           when a new packet finds the queue full; the CCID has no RTT yet,
 *           so only wait_ns (its predicted wait, three 500 ms intervals)
 *           explains it.
 *  owd      DCCP_QPOLICY_F_OWD, the scenario of sbpn_owd: once CCID 3's
 *           RTT has grown from 100 ms to 300 ms or more, a packet due
 *           halfway between R/2 and R - 60 ms is discarded; only
 *           rtt_us - min_rtt_us / 2 explains it.
 *
 * Before the fix the event had no limit, wait, one-way delay or minimum:
 * the events are found (their common fields parse), but "judged" is 0 and
 * limit_ns reads 0, so the checks on them fail, and the line logged shows
 * expiry_ns past now_ns + rtt_us / 2.
 */
#include "sbpn_test.h"

#define SHORT	"netem delay 100ms limit 10000"
#define LONG	"netem delay 500ms limit 10000"

SBPN_TOPOLOGY(NULL, NULL, "netem delay 2000ms limit 10000", SHORT)

/* Start recording drop events (the trace buffer emptied first) */
static void trace_on(struct __test_metadata *_metadata)
{
	sbpn_write_file(_metadata, SBPN_TRACING "/trace", "");
	sbpn_write_file(_metadata, SBPN_DROP_EVENT, "1");
}

/*
 * Stop recording and find the drop events of @fd's local port for the
 * packet due at @expiry_ns, which must be "expired"; returns how many there
 * are, the last in @found.
 */
static int trace_find(struct __test_metadata *_metadata, int fd,
		      uint64_t expiry_ns, struct sbpn_drop_event *found)
{
	struct sockaddr_in local;
	socklen_t len = sizeof(local);
	struct sbpn_drop_event e;
	unsigned int port;
	char line[1024];
	int n = 0;
	FILE *f;

	sbpn_write_file(_metadata, SBPN_DROP_EVENT, "0");
	EXPECT_EQ(0, getsockname(fd, (struct sockaddr *)&local, &len));
	port = ntohs(local.sin_port);
	f = fopen(SBPN_TRACING "/trace", "r");
	EXPECT_NE(NULL, f);
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sbpn_parse_drop(line, port, &e) || e.expiry_ns != expiry_ns)
			continue;
		TH_LOG("%s", line);
		EXPECT_STREQ("expired", e.reason);
		*found = e;
		n++;
	}
	fclose(f);
	return n;
}

/* The checks common to both cases: the limit is recorded and adds up */
static void check_limit(struct __test_metadata *_metadata,
			const struct sbpn_drop_event *e)
{
	TH_LOG("now + RTT/2 = %llu ns, expiry %llu ns: %s",
	       e->now_ns + e->rtt_us * 1000ULL / 2, e->expiry_ns,
	       e->expiry_ns >= e->now_ns + e->rtt_us * 1000ULL / 2 ?
	       "RTT/2 alone does not explain the discard" : "explained by RTT/2");
	EXPECT_GE(e->expiry_ns, e->now_ns + e->rtt_us * 1000ULL / 2);
	EXPECT_TRUE(e->judged);
	EXPECT_LT(e->expiry_ns, e->limit_ns);
	EXPECT_EQ(e->limit_ns, e->now_ns + e->wait_ns + e->owd_us * 1000ULL);
	EXPECT_EQ(e->owd_us, e->min_rtt_us ? e->rtt_us - e->min_rtt_us / 2
					   : e->rtt_us / 2);
}

FIXTURE(limit) {
	struct sbpn_conn c;
};

FIXTURE_SETUP(limit)
{
}

FIXTURE_TEARDOWN(limit)
{
}

TEST_F(limit, predict)
{
	struct dccp_qpolicy_stats s;
	struct sbpn_drop_event e;
	uint64_t t_late;
	int fd;

	if (access(SBPN_TRACING "/trace", W_OK))
		SKIP(return, "no tracefs at " SBPN_TRACING);
	/* path 1: feedback delayed 2 s */
	sbpn_connect(_metadata, &self->c, 1, 3, DCCPQ_POLICY_SBPN1, 4);
	fd = self->c.cfd;
	ASSERT_EQ(0, sbpn_set_qflag(fd, DCCP_QPOLICY_F_PREDICT, 1));
	for (uint32_t tag = 1; tag <= 4; tag++)
		ASSERT_EQ(0, dt_send(fd, tag, 1, 1, 0, 0, MSG_DONTWAIT));
	t_late = sbpn_in_ms(1200);
	ASSERT_EQ(0, dt_send(fd, 5, 1, 0, 1, t_late, MSG_DONTWAIT));
	s = sbpn_stats(_metadata, fd);
	ASSERT_EQ(1, s.sent);
	ASSERT_EQ(4, s.qlen);

	trace_on(_metadata);
	ASSERT_EQ(0, dt_send(fd, 6, 1, 0, 1, sbpn_in_ms(10000), MSG_DONTWAIT));
	s = sbpn_stats(_metadata, fd);
	sbpn_stats_log(_metadata, "after the packet due in 10 s", &s);
	ASSERT_EQ(1, s.expired);
	ASSERT_EQ(1, trace_find(_metadata, fd, t_late, &e));
	check_limit(_metadata, &e);
	/* before any feedback the RTT is 0: the wait is the whole reason */
	EXPECT_EQ(0, e.rtt_us);
	EXPECT_LT(0, e.wait_ns);
	EXPECT_EQ(0, e.min_rtt_us);
}

TEST_F(limit, owd)
{
	struct dccp_qpolicy_stats s0, s;
	struct sbpn_drop_event e;
	struct dt_tfrc_tx_info ti;
	unsigned int due_ms;
	uint64_t t_due;
	uint32_t tag = 100;
	int fd;

	if (access(SBPN_TRACING "/trace", W_OK))
		SKIP(return, "no tracefs at " SBPN_TRACING);
	/* path 2: feedback delayed 100 ms, then 500 ms */
	sbpn_connect(_metadata, &self->c, 2, 3, DCCPQ_POLICY_SBPN1, 0);
	fd = self->c.cfd;
	ASSERT_EQ(0, sbpn_set_qflag(fd, DCCP_QPOLICY_F_OWD |
				    DCCP_QPOLICY_F_LAST_RTT, 1));
	sbpn_measure_rtt(_metadata, &self->c, 100);
	ti = sbpn_tx_info(_metadata, fd);
	ASSERT_GT(250000, ti.rtt_us);

	s0 = sbpn_grow_rtt(_metadata, fd, 2, LONG, 300000, &tag);

	ti = sbpn_tx_info(_metadata, fd);
	due_ms = (ti.rtt_us / 2 + ti.rtt_us - 60000) / 2 / 1000;
	TH_LOG("R %u us, deadline in %u ms", ti.rtt_us, due_ms);
	trace_on(_metadata);
	t_due = sbpn_in_ms(due_ms);
	ASSERT_EQ(0, dt_send(fd, 7, 1, 1, 1, t_due, MSG_DONTWAIT));
	s = sbpn_stats(_metadata, fd);
	sbpn_stats_log(_metadata, "after the packet", &s);
	sbpn_set_path_ack_qdisc(_metadata, 2, SHORT);
	ASSERT_EQ(1, s.expired - s0.expired);
	ASSERT_EQ(1, trace_find(_metadata, fd, t_due, &e));
	check_limit(_metadata, &e);
	EXPECT_EQ(0, e.wait_ns);
	EXPECT_LT(0, e.min_rtt_us);
	EXPECT_GT(e.rtt_us, e.min_rtt_us);
}

TEST_HARNESS_MAIN
