// SPDX-License-Identifier: GPL-2.0
/*
 * The SBPN policies keep emptied per-priority bands for reuse instead of
 * allocating one per packet.  An interactive sender's queue drains after
 * nearly every packet: here 200 packets of alternating priorities 1 and 2,
 * each sent (over CCID 2 on a path without delay) before the next one is
 * queued, so every packet finds its band gone.  Allocations from the band
 * cache (dccp_qpolicy_band) are counted with the kmem:kmem_cache_alloc
 * tracepoint, filtered by the cache's object size and this process: there
 * must be at least one (the first band, so the count is real) and at most
 * as many as priorities in use at once plus the spares' bound, not one per
 * packet.
 */
#include "sbpn_test.h"

#define EVENT_DIR	SBPN_TRACING "/events/kmem/kmem_cache_alloc"
#define BAND_CACHE	"/sys/kernel/slab/dccp_qpolicy_band"
#define PACKETS		200
#define MAX_ALLOCS	4

SBPN_TOPOLOGY(NULL, NULL, NULL, NULL)

FIXTURE(bands) {
	struct sbpn_conn c;
};

FIXTURE_VARIANT(bands) {
	int policy;
};

FIXTURE_VARIANT_ADD(bands, sbpn1) { .policy = DCCPQ_POLICY_SBPN1 };
FIXTURE_VARIANT_ADD(bands, sbpn2) { .policy = DCCPQ_POLICY_SBPN2 };
FIXTURE_VARIANT_ADD(bands, sbpn3) { .policy = DCCPQ_POLICY_SBPN3 };

FIXTURE_SETUP(bands)
{
	sbpn_connect(_metadata, &self->c, 1, 2, variant->policy, 0);
}

FIXTURE_TEARDOWN(bands)
{
}

static long read_long(struct __test_metadata *_metadata, const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	ASSERT_NE(NULL, f) {
		TH_LOG("%s: %s", path, strerror(errno));
	}
	EXPECT_EQ(1, fscanf(f, "%ld", &v));
	fclose(f);
	return v;
}

/* Wait until the sender's queue is empty, i.e. the last packet has left */
static void wait_empty(struct __test_metadata *_metadata, int fd)
{
	for (int ms = 0; ms < SBPN_WAIT_MS; ms += 5) {
		if (!sbpn_stats(_metadata, fd).qlen)
			return;
		dt_sleep_ms(5);
	}
	ASSERT_EQ(0, sbpn_stats(_metadata, fd).qlen);
}

TEST_F(bands, reused_not_reallocated)
{
	uint32_t got[SBPN_MAX_TAGS];
	int fd = self->c.cfd, allocs = 0;
	struct dccp_qpolicy_stats s;
	char filter[128], line[512];
	long size;
	FILE *f;

	size = read_long(_metadata, BAND_CACHE "/object_size");
	ASSERT_LT(0, size);
	snprintf(filter, sizeof(filter), "bytes_req == %ld && common_pid == %d",
		 size, getpid());
	sbpn_write_file(_metadata, EVENT_DIR "/filter", filter);
	sbpn_write_file(_metadata, SBPN_TRACING "/trace", "");
	sbpn_write_file(_metadata, EVENT_DIR "/enable", "1");

	for (uint32_t i = 0; i < PACKETS; i++) {
		ASSERT_EQ(0, dt_send(fd, i, 1, 1 + i % 2, 0, 0, 0));
		wait_empty(_metadata, fd);
	}
	sbpn_write_file(_metadata, EVENT_DIR "/enable", "0");
	sbpn_write_file(_metadata, EVENT_DIR "/filter", "0");

	f = fopen(SBPN_TRACING "/trace", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "kmem_cache_alloc:"))
			allocs++;
	fclose(f);
	TH_LOG("%d band allocations for %d packets (object size %ld)",
	       allocs, PACKETS, size);
	EXPECT_LE(1, allocs);
	EXPECT_GE(MAX_ALLOCS, allocs);

	EXPECT_EQ(PACKETS, sbpn_recv(self->c.afd, got, PACKETS, 0));
	s = sbpn_stats(_metadata, fd);
	sbpn_check_invariant(_metadata, &s);
	EXPECT_EQ(PACKETS, s.sent);
}

TEST_HARNESS_MAIN
