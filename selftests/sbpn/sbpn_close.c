// SPDX-License-Identifier: GPL-2.0
/*
 * Closing SBPN sockets with long queues frees every packet and every
 * per-priority band, and then the DCCP modules can be unloaded (which
 * "dccp: do not pin dccp_ipv4 and dccp_ipv6 with their control sockets"
 * makes possible) and are loaded again for whatever runs next.
 *
 * A worker process, in a namespace of its own with 1 s of RTT on lo, fills
 * one queue per SBPN policy behind a full CCID 2 window: N_PKT packets over
 * 2 * N_PRIO priorities, half of them already expired (SBPN3 keeps those in
 * its pool).
 * The test reads the slab usage of skbuff_head_cache and of the bands' own
 * cache, dccp_qpolicy_band, before, while the queues are full (so a leak
 * would be plain to see) and after the worker closed everything and exited.
 * The band cache must have grown by at least N_PRIO and be back exactly
 * where it was (nothing else allocates from it, and purge frees the bands
 * a socket keeps for reuse); the skbs within SLACK, since other traffic and
 * other CPUs' caches share skbuff_head_cache.  Run last: it unloads the modules,
 * and then no slab cache of theirs may be left (vm-run boots with
 * slab_nomerge, so a cache a module forgets to destroy stays in
 * /proc/slabinfo under its own name).
 */
#include "sbpn_test.h"

#define N_PKT	1000
#define N_PRIO	150
#define SLACK	200	/* skbs: caches on other CPUs, other traffic */

enum { SKBS, BANDS, N_CACHES };

static const char * const caches[N_CACHES] = {
	[SKBS] = "skbuff_head_cache",
	[BANDS] = "dccp_qpolicy_band",
};

/* objects a cache may hold after the test beyond what it held before */
static const long slack[N_CACHES] = { [SKBS] = SLACK, [BANDS] = 0 };

FIXTURE(close) {
};

FIXTURE_SETUP(close)
{
}

FIXTURE_TEARDOWN(close)
{
}

/* Objects in use in slab cache @name, after flushing its per-CPU caches. */
static long slab_active(const char *name)
{
	char path[128], line[512], cache[64];
	long active = -1, n;
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink", name);
	fd = open(path, O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "1", 1) != 1)
			fprintf(stderr, "# %s: %s\n", path, strerror(errno));
		close(fd);
	}
	f = fopen("/proc/slabinfo", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %ld", cache, &n) == 2 && !strcmp(cache, name))
			active = n;
	fclose(f);
	return active;
}

/*
 * The worker: queue N_PKT packets on a socket per SBPN policy, report how
 * many are queued on @report, wait for a byte on @go, close everything.
 */
static int worker(int report, int go)
{
	int sndbuf = 64 << 20, queued = 0, lfd[3], cfd[3], afd[3];
	struct dccp_qpolicy_stats s;
	socklen_t len;
	char c;

	if (unshare(CLONE_NEWNET) || sbpn_batch("ip", "link set lo up\n") ||
	    sbpn_batch("tc", "qdisc add dev lo root netem delay 500ms limit 100000\n"))
		return 1;
	for (int p = 0; p < 3; p++) {
		struct sockaddr_in a = dt_addr("127.0.0.1", 4200 + p);
		int policy = DCCPQ_POLICY_SBPN1 + p, one = 1, zero = 0, i;
		uint8_t ccid = 2;

		lfd[p] = socket(AF_INET, SOCK_DCCP, IPPROTO_DCCP);
		cfd[p] = socket(AF_INET, SOCK_DCCP, IPPROTO_DCCP);
		if (lfd[p] < 0 || cfd[p] < 0 ||
		    setsockopt(lfd[p], SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
		    setsockopt(lfd[p], SOL_DCCP, DCCP_SOCKOPT_CCID, &ccid, 1) ||
		    setsockopt(cfd[p], SOL_DCCP, DCCP_SOCKOPT_CCID, &ccid, 1) ||
		    dt_setopt(cfd[p], DCCP_SOCKOPT_QPOLICY_ID, policy) ||
		    dt_setopt(cfd[p], DCCP_SOCKOPT_QPOLICY_TXQLEN, zero) ||
		    setsockopt(cfd[p], SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf)) ||
		    bind(lfd[p], (struct sockaddr *)&a, sizeof(a)) || listen(lfd[p], 1) ||
		    connect(cfd[p], (struct sockaddr *)&a, sizeof(a)))
			return 2;
		afd[p] = accept(lfd[p], NULL, NULL);
		if (afd[p] < 0)
			return 3;
		/* fillers until the window is full, then the real load */
		for (i = 0; i < 32; i++) {
			len = sizeof(s);
			if (dt_send(cfd[p], SBPN_FILLER | i, 1, 0, 0, 0, MSG_DONTWAIT) ||
			    getsockopt(cfd[p], SOL_DCCP, DCCP_SOCKOPT_QPOLICY_STATS, &s, &len))
				return 4;
			if (s.qlen)
				break;
		}
		/*
		 * Every other packet is expired on arrival and has a higher
		 * priority than all the others, so it is judged at once:
		 * SBPN1/2 discard it, SBPN3 keeps it in its pool.
		 */
		for (i = 0; i < N_PKT; i++)
			if (dt_send(cfd[p], i, 1, i % N_PRIO + (i % 2) * N_PRIO, 1,
				    sbpn_in_ms(i % 2 ? 50 : 60000), MSG_DONTWAIT))
				return 5;
		len = sizeof(s);
		if (getsockopt(cfd[p], SOL_DCCP, DCCP_SOCKOPT_QPOLICY_STATS, &s, &len))
			return 6;
		printf("# SBPN%d: %llu packets queued, %llu expired\n",
		       p + 1, s.qlen, s.expired);
		queued += s.qlen;
	}
	fflush(stdout);
	if (write(report, &queued, sizeof(queued)) != sizeof(queued) ||
	    read(go, &c, 1) != 1)
		return 7;
	for (int p = 0; p < 3; p++) {
		close(cfd[p]);
		close(afd[p]);
		close(lfd[p]);
	}
	return 0;
}

/* Count the DCCP and CCID slab caches in /proc/slabinfo; @show names them. */
static int dccp_caches(bool show)
{
	char line[512], cache[64];
	int n = 0;
	FILE *f;

	f = fopen("/proc/slabinfo", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s", cache) == 1 &&
		    (strcasestr(cache, "dccp") || !strncmp(cache, "ccid", 4))) {
			if (show)
				fprintf(stderr, "# slab cache %s is left\n", cache);
			n++;
		}
	fclose(f);
	return n;
}

static int modules_unload(void)
{
	return system("modprobe -r dccp_diag dccp_ipv6 dccp_ipv4 dccp 2>/dev/null");
}

TEST_F_TIMEOUT(close, queues_freed_modules_unload, 120)
{
	long before[N_CACHES], during[N_CACHES], after[N_CACHES];
	int report[2], go[2], queued = 0, status, tries;
	unsigned int back;
	pid_t pid;

	ASSERT_EQ(0, system("modprobe -a dccp_ipv4 dccp_ipv6 dccp_diag sch_netem"));
	/* the check after unloading can see the caches at all */
	ASSERT_LT(0, dccp_caches(false));
	/*
	 * The caches can be read.  An idle guest may have no skb in use at
	 * all (the debug kernel, with no NIC, has none): the checks on
	 * "during" below show that the counts see the queued packets.
	 */
	for (unsigned int i = 0; i < N_CACHES; i++) {
		before[i] = slab_active(caches[i]);
		ASSERT_LE(0, before[i]);
	}
	ASSERT_EQ(0, pipe(report));
	ASSERT_EQ(0, pipe(go));
	fflush(stdout);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(worker(report[1], go[0]));

	ASSERT_EQ(sizeof(queued), read(report[0], &queued, sizeof(queued)));
	for (unsigned int i = 0; i < N_CACHES; i++)
		during[i] = slab_active(caches[i]);
	ASSERT_EQ(1, write(go[1], "x", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, status) {
		TH_LOG("worker failed at step %d", WEXITSTATUS(status));
	}

	/* sockets and the namespace go away asynchronously */
	for (tries = 0; tries < 40; tries++) {
		back = 0;
		for (unsigned int i = 0; i < N_CACHES; i++) {
			after[i] = slab_active(caches[i]);
			back += after[i] <= before[i] + slack[i];
		}
		if (back == N_CACHES)
			break;
		dt_sleep_ms(500);
	}
	for (unsigned int i = 0; i < N_CACHES; i++)
		TH_LOG("%s: %ld objects before, %ld with %d packets queued, %ld after",
		       caches[i], before[i], during[i], queued, after[i]);
	/* the queues were really there and really counted */
	EXPECT_LE(3 * N_PKT / 2, queued);
	EXPECT_LE(before[SKBS] + queued / 2, during[SKBS]);
	EXPECT_LE(before[SKBS] + SLACK, during[SKBS]);
	EXPECT_LE(before[BANDS] + N_PRIO, during[BANDS]);
	for (unsigned int i = 0; i < N_CACHES; i++)
		EXPECT_LE(after[i], before[i] + slack[i]);

	for (tries = 0; tries < 30 && modules_unload(); tries++)
		dt_sleep_ms(1000);
	EXPECT_NE(0, access("/sys/module/dccp", F_OK)) {
		system("lsmod | grep -i dccp; cat /sys/module/dccp/refcnt");
	}
	EXPECT_EQ(0, dccp_caches(true));
	EXPECT_EQ(0, system("modprobe -a dccp_ipv4 dccp_ipv6 dccp_diag"));
	EXPECT_EQ(0, access("/sys/module/dccp_ipv4", F_OK));
}

TEST_HARNESS_MAIN
