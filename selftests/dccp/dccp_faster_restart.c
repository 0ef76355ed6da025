// SPDX-License-Identifier: GPL-2.0
/*
 * CCID3 Faster Restart (DCCP_TX_CCID_F_FASTER_RESTART of
 * DCCP_SOCKOPT_TX_CCID_FLAGS, patch "dccp: ccid3: add optional TFRC Faster
 * Restart").
 *
 * sockopt: the TX CCID's flags are 0 by default, a set replaces every bit,
 * a bit the kernel does not know (alone or with known ones, INT_MIN, -1)
 * and a short optlen are refused (EINVAL) and leave the bits in force, an
 * accepted socket inherits the listener's flags, and a flag can be switched
 * during the connection.
 *
 * quiet: a CCID3 sender in namespace A (20 ms of netem delay each way, no
 * loss) sends 1 MB/s for BULK_MS, a rate the VM carries without loss (at
 * full speed a packet can be lost, which would lower X_fast_max), then one
 * message every QUIET_GAP_MS for QUIET_MS: it is data-limited, but never
 * idle (it sends more often than once per two RTTs).  On each feedback,
 * RFC 5348 limits X to twice the receive rate X_recv; Faster Restart doubles
 * that limit while it is below X_fast_max, here the bulk phase's receive
 * rate, so X settles at 2 * X_recv without it and 4 * X_recv with it.  The
 * variant "decayed" sets DecayTime to DECAY_MS: X_fast_max is zero
 * 3 * DECAY_MS after the bulk phase, long before the samples start, and
 * from then on follows the quiet phase's own receive rate, so X is back at
 * 2 * X_recv.  The test takes X / X_recv after every message of the quiet
 * phase from SKIP_MS on and asserts that their median is in [3, 5) with
 * Faster Restart and below 3 without it: the expected values are 2 and 4
 * whatever the machine's speed.  Should a packet be lost (p > 0), X_calc
 * bounds X too; samples where it is below 3 * X_recv cannot tell the two
 * apart and are left out.
 */
#include "dccp_test.h"

#define MSG_LEN		1000
#define BULK_MS		2000
#define BULK_RATE	1000	/* messages per second: 1 MB/s */
#define QUIET_MS	2000
#define QUIET_GAP_MS	20
#define SKIP_MS		500
#define DECAY_MS	100
#define DECAY_PARAM	"/sys/module/dccp/parameters/ccid3_fr_decay_ms"

/* The TX CCID's flags of @fd, or -errno */
static int get_flags(int fd)
{
	return dt_getopt(fd, DCCP_SOCKOPT_TX_CCID_FLAGS);
}

TEST(sockopt)
{
	const int opt = DCCP_SOCKOPT_TX_CCID_FLAGS;
	const int fr = DCCP_TX_CCID_F_FASTER_RESTART;
	short shorty = 1;
	int lfd, cfd, afd;

	dt_netns_enter(_metadata);
	cfd = dt_socket(_metadata, 3, DCCPQ_POLICY_SIMPLE, 0);
	ASSERT_EQ(0, get_flags(cfd));
	ASSERT_EQ(0, dt_set_txflag(cfd, fr, 1));
	ASSERT_EQ(fr, get_flags(cfd));
	ASSERT_EQ(-1, dt_setopt(cfd, opt, DCCP_TX_CCID_F_UNKNOWN));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, dt_setopt(cfd, opt, fr | DCCP_TX_CCID_F_UNKNOWN));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, dt_setopt(cfd, opt, INT_MIN));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, dt_setopt(cfd, opt, -1));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, setsockopt(cfd, SOL_DCCP, opt, &shorty, sizeof(shorty)));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(fr, get_flags(cfd));
	/* a set replaces every bit */
	ASSERT_EQ(0, dt_setopt(cfd, opt, DCCP_TX_CCID_F_SIZE_PACING));
	ASSERT_EQ(DCCP_TX_CCID_F_SIZE_PACING, get_flags(cfd));
	ASSERT_EQ(0, dt_setopt(cfd, opt, DCCP_TX_CCID_F_KNOWN));
	ASSERT_EQ(DCCP_TX_CCID_F_KNOWN, get_flags(cfd));
	ASSERT_EQ(0, dt_setopt(cfd, opt, 0));
	ASSERT_EQ(0, get_flags(cfd));

	lfd = dt_listen(_metadata, 3, "127.0.0.1", 4000);
	ASSERT_EQ(0, dt_setopt(lfd, opt, DCCP_TX_CCID_F_KNOWN));
	afd = dt_connect(_metadata, cfd, lfd, "127.0.0.1", 4000);
	ASSERT_EQ(DCCP_TX_CCID_F_KNOWN, get_flags(afd));
	ASSERT_EQ(0, get_flags(cfd));
	/* and a flag can be switched during the connection */
	ASSERT_EQ(0, dt_set_txflag(cfd, fr, 1));
	ASSERT_EQ(fr, get_flags(cfd));
	ASSERT_EQ(0, dt_set_txflag(afd, fr, 0));
	ASSERT_EQ(DCCP_TX_CCID_F_SIZE_PACING, get_flags(afd));
	close(afd);
	close(cfd);
	close(lfd);
}

FIXTURE(path) {
	char a[32], b[32];
	int decay_ms;		/* DecayTime to restore, or -1 */
};

FIXTURE_VARIANT(path) {
	int faster_restart;
	int decay_ms;		/* DecayTime to set, or 0 for the default */
	int quadruples;		/* X settles at 4 * X_recv, not 2 * X_recv */
};

FIXTURE_VARIANT_ADD(path, stock) { .faster_restart = 0, .quadruples = 0 };
FIXTURE_VARIANT_ADD(path, faster_restart) { .faster_restart = 1, .quadruples = 1 };
FIXTURE_VARIANT_ADD(path, decayed) {
	.faster_restart = 1, .decay_ms = DECAY_MS, .quadruples = 0
};

FIXTURE_SETUP(path)
{
	self->decay_ms = -1;
	if (variant->decay_ms) {
		self->decay_ms = dt_read_int(DECAY_PARAM);
		ASSERT_LT(0, self->decay_ms);
		dt_sh(_metadata, "echo %d > " DECAY_PARAM, variant->decay_ms);
		ASSERT_EQ(variant->decay_ms, dt_read_int(DECAY_PARAM));
	}
	snprintf(self->a, sizeof(self->a), "frA-%d", getpid());
	snprintf(self->b, sizeof(self->b), "frB-%d", getpid());
	dt_veth_pair(_metadata, self->a, self->b);
	dt_sh(_metadata, "ip netns exec %s tc qdisc add dev va root netem delay 20ms limit 100000",
	      self->a);
	dt_sh(_metadata, "ip netns exec %s tc qdisc add dev vb root netem delay 20ms limit 100000",
	      self->b);
	/* no reordering, which CCID3 would count as loss */
	dt_one_backlog(_metadata, self->a, "va");
	dt_one_backlog(_metadata, self->b, "vb");
}

FIXTURE_TEARDOWN(path)
{
	dt_veth_pair_del(_metadata, self->a, self->b);
	if (self->decay_ms > 0)
		dt_sh(_metadata, "echo %d > " DECAY_PARAM, self->decay_ms);
}

static int tx_info(int fd, struct dt_tfrc_tx_info *ti)
{
	socklen_t len = sizeof(*ti);

	return getsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_CCID_TX_INFO, ti, &len);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Read and discard from @fd until the peer closes @peer. */
static pid_t drain(int fd, int peer)
{
	static char buf[MSG_LEN];
	pid_t pid = fork();

	if (pid)
		return pid;
	close(peer);
	while (recv(fd, buf, sizeof(buf), 0) > 0)
		;
	_exit(0);
}

TEST_F_TIMEOUT(path, quiet, 60)
{
	static unsigned char msg[MSG_LEN];
	static uint64_t ratio[QUIET_MS / QUIET_GAP_MS];
	int rcvbuf = 16 << 20, lfd, cfd, afd, status, n = 0, i;
	struct dt_tfrc_tx_info ti;
	uint64_t start, now, last = 0, max_recv = 0;
	unsigned long sent = 0;
	pid_t pid;

	dt_netns_switch(_metadata, self->b);
	lfd = dt_listen(_metadata, 3, "10.9.0.2", 4000);
	dt_netns_switch(_metadata, self->a);
	cfd = dt_socket(_metadata, 3, DCCPQ_POLICY_SIMPLE, 0);
	ASSERT_EQ(0, dt_set_txflag(cfd, DCCP_TX_CCID_F_FASTER_RESTART,
				   variant->faster_restart));
	afd = dt_connect(_metadata, cfd, lfd, "10.9.0.2", 4000);
	ASSERT_EQ(0, setsockopt(afd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)));
	pid = drain(afd, cfd);
	ASSERT_LE(0, pid);

	/*
	 * Bulk: BULK_RATE messages per second, or as many as CCID3 lets
	 * through if fewer; note the highest X_recv reported.
	 */
	start = dt_now_ns();
	while ((now = dt_now_ns()) - start < BULK_MS * NSEC_PER_MSEC) {
		if (sent * 1000000000ULL / BULK_RATE > now - start) {
			dt_sleep_ms(1);
			continue;
		}
		ASSERT_EQ(MSG_LEN, send(cfd, msg, MSG_LEN, 0));
		sent++;
		if (dt_now_ns() - last >= 20 * NSEC_PER_MSEC) {
			last = dt_now_ns();
			ASSERT_EQ(0, tx_info(cfd, &ti));
			if (ti.x_recv > max_recv)
				max_recv = ti.x_recv;
		}
	}
	ASSERT_EQ(0, tx_info(cfd, &ti));
	TH_LOG("bulk: %lu messages, highest X_recv %llu B/s, X %llu B/s, p %u/1e6",
	       sent, (unsigned long long)max_recv >> 6, (unsigned long long)ti.x >> 6, ti.p);

	/* Data-limited: one message every QUIET_GAP_MS; sample X / X_recv. */
	start = dt_now_ns();
	for (i = 0; i < QUIET_MS / QUIET_GAP_MS; i++) {
		ASSERT_EQ(MSG_LEN, send(cfd, msg, MSG_LEN, 0));
		dt_sleep_ms(QUIET_GAP_MS);
		if (dt_now_ns() - start < SKIP_MS * NSEC_PER_MSEC)
			continue;
		ASSERT_EQ(0, tx_info(cfd, &ti));
		if (!ti.x_recv ||
		    (ti.p && ((uint64_t)ti.x_calc << 6) < 3 * ti.x_recv))
			continue;
		ratio[n++] = ti.x * 100 / ti.x_recv;
	}
	TH_LOG("quiet: X %llu B/s, X_recv %llu B/s, X_calc %u B/s, p %u/1e6, rtt %u us",
	       (unsigned long long)ti.x >> 6, (unsigned long long)ti.x_recv >> 6, ti.x_calc,
	       ti.p, ti.rtt_us);

	close(cfd);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	close(afd);
	close(lfd);

	/* X_fast_max must be far above 4 * X_recv: 8 times the quiet rate */
	ASSERT_LT(4 * 2 * (uint64_t)MSG_LEN * 1000 / QUIET_GAP_MS, max_recv >> 6);
	/* and enough samples must be left to tell 2 from 4 */
	ASSERT_LE(QUIET_MS / QUIET_GAP_MS / 2, n);
	qsort(ratio, n, sizeof(ratio[0]), cmp_u64);
	TH_LOG("X / X_recv over %d samples: min %.2f, median %.2f, max %.2f", n,
	       ratio[0] / 100.0, ratio[n / 2] / 100.0, ratio[n - 1] / 100.0);
	if (variant->quadruples) {
		EXPECT_LE(300, ratio[n / 2]);
		EXPECT_GT(500, ratio[n / 2]);
	} else {
		EXPECT_GT(300, ratio[n / 2]);
	}
}

TEST_HARNESS_MAIN
