// SPDX-License-Identifier: GPL-2.0
/*
 * The sendmsg() example of Documentation/networking/dccp.rst, as it stands
 * in the patched tree, does what the document says: the Makefile extracts
 * its literal block into dccp_rst_example.h at build time, so document and
 * test cannot drift apart.  Behind a full CCID 2 window (1 s RTT) under
 * SBPN1, send_with_expiry() returns the length, its priority orders the
 * packets, and a packet with no time budget left is discarded as expired.
 */
#include "sbpn_test.h"
#include "dccp_rst_example.h"

SBPN_TOPOLOGY(NULL, NULL, "netem delay 1000ms limit 10000", NULL)

FIXTURE(doc) {
	struct sbpn_conn c;
};

FIXTURE_SETUP(doc)
{
	sbpn_connect(_metadata, &self->c, 1, 2, DCCPQ_POLICY_SBPN1, 0);
}

FIXTURE_TEARDOWN(doc)
{
}

/* Call the document's function with a tagged payload. */
static ssize_t send_tagged(int fd, uint32_t tag, uint32_t prio, uint64_t budget_ns)
{
	char buf[DT_PAYLOAD] = { 0 };

	memcpy(buf, &tag, sizeof(tag));
	return send_with_expiry(fd, buf, sizeof(buf), prio, budget_ns);
}

TEST_F(doc, send_with_expiry)
{
	uint32_t want[40], got[SBPN_MAX_TAGS];
	struct dccp_qpolicy_stats s;
	int fill, n_want, n_got;

	fill = sbpn_block(_metadata, &self->c, 0);
	EXPECT_EQ(DT_PAYLOAD, send_tagged(self->c.cfd, 1, 1, 10000 * NSEC_PER_MSEC));
	EXPECT_EQ(DT_PAYLOAD, send_tagged(self->c.cfd, 2, 7, 10000 * NSEC_PER_MSEC));
	EXPECT_EQ(DT_PAYLOAD, send_tagged(self->c.cfd, 3, 9, 0));

	n_want = sbpn_fillers(want, fill - 1);
	want[n_want++] = 2;
	want[n_want++] = 1;
	want[n_want++] = SBPN_FILLER | (fill - 1);
	s = sbpn_drain(_metadata, self->c.cfd);
	n_got = sbpn_recv(self->c.afd, got, n_want, 1);
	sbpn_expect_tags(_metadata, got, n_got, want, n_want);
	sbpn_stats_log(_metadata, "sender", &s);
	EXPECT_EQ(1, s.expired);
	EXPECT_EQ(fill + 2, s.sent);
}

TEST_HARNESS_MAIN
