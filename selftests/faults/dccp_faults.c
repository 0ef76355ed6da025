// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation failures injected into DCCP's socket calls, the way syzkaller
 * injects them, on the debug kernel (CONFIG_FAULT_INJECTION, FAILSLAB,
 * FAIL_PAGE_ALLOC, FAULT_INJECTION_DEBUG_FS; `make faults` boots it).
 *
 * Phase 1, one test per operation (connect and accept under each policy,
 * sendmsg with each cmsg and option, the SBPN full-queue admission, a drop
 * notice, a sock_diag dump, setsockopt of each option, and of the policy's
 * flags and order and the TX CCID's flags also with a value they refuse
 * (EINVAL), close with a full queue).  For n = 1, 2, ...: set the socket(s)
 * up without fault, write n to /proc/thread-self/fail-nth, run the
 * operation, read fail-nth back: 0 means its nth allocation failed,
 * anything else that it made fewer than n, which ends the loop (that last,
 * fault-free run must give the operation's normal result).  After each
 * run: the result is the normal one or a clear error (ENOBUFS, ENOMEM,
 * EAGAIN, ...), the policy's counters obey
 * queued = sent + expired + evicted + frame + purged + ccid_err + qlen, and
 * the socket still works (a packet sent without fault arrives, or the
 * listener takes a new connection) or reports an error.  Two scopes:
 * "all" counts every slab and page allocation of the calling task (the
 * system call as a whole), "dccp" only those from the slab caches of our
 * modules (failslab's cache-filter; the kernel marks them when booted with
 * slub_debug=A,<caches>, see FI_CACHES), which reaches our own allocations
 * in a few runs.  Each operation's count of failure points in each scope is
 * printed as "# failure points: <op> all=<n> dccp=<n>".
 *
 * The SBPN admission test fails the band allocation of a new priority on a
 * full queue (the first allocation from our caches in that sendmsg) and
 * expects ENOBUFS with every counter and the queue unchanged: push() must
 * not retry an allocation that full() could not make and admit the packet
 * unjudged (fixed on branch v3fix; without the fix the packet is admitted
 * and evicted, and this test fails).
 *
 * Phase 2 (test traffic.probability): failslab in probability mode
 * (DCCP_FAULTS_PERCENT, default 3 %), confined to the same caches, while
 * connections of every policy and both CCIDs send, expire, evict, report and
 * close over a lossy path for DCCP_FAULTS_SECONDS (default 20 s): that
 * reaches the allocations made in softirq and timers (child sockets at
 * the handshake, CCID 3's feedback and loss history, SBPN3's pool bands),
 * which fail-nth, counting the calling task only, never sees.  Then the
 * faults stop and fresh connections of every policy must carry packets.
 *
 * Requires root, DCCP, /proc/thread-self/fail-nth and debugfs' failslab and
 * fail_page_alloc; skips (4) without them.  DCCP_FAULTS_ONLY=TEXT runs only
 * the operations whose name contains TEXT.  KASAN, lockdep and kmemleak
 * judge the kernel's side (scripts/debug-check.sh --faults).
 */
#include "sbpn_test.h"
#include "dccp_diag.h"
#include "dccp_fault.h"

#include <sys/mman.h>

/* Path 1 carries everything at once; path 2 delays the receiver's Acks by
 * 1 s, so that a CCID 2 sender's queue stays full for that long.
 */
SBPN_TOPOLOGY(NULL, NULL, NULL, "netem delay 1000ms limit 10000")

#define FI_MAX_POINTS	2000	/* a loop that long has gone wrong */
#define FI_WAIT_MS	5000	/* longest wait for a packet or a connection */
#define FI_QLEN		3	/* tx_qlen of the full-queue operations */
#define FI_FILL_PRIO	10	/* priority of the packets that fill it */
#define FI_FOLLOW	0x20000000u	/* tag bit of the follow-up packets */

/*
 * The slab caches of our modules (slub_debug's list syntax: a trailing *
 * matches a prefix).  `make faults` boots the kernel with slub_debug=A and
 * this list; failslab's cache-filter then fails only these.
 */
#define FI_CACHES	"DCCP*,request_sock_DCCP*,tw_sock_DCCP*,dccp_*,ccid*,tfrc_*"
/* caches the tests rely on being marked */
static const char * const fi_marked[] = { "DCCP", "dccp_qpolicy_band" };

/* Whether the test has failed so far: the harness's record of it changed
 * in 6.9 (passed -> exit_code), and XFAIL_ADD came with that change.
 */
#ifdef XFAIL_ADD
#define fi_failed(md)	(!__test_passed(md))
#else
#define fi_failed(md)	(!(md)->passed)
#endif

enum fi_scope { FI_ALL, FI_DCCP };
static const char * const fi_scope_name[] = { "all", "dccp" };

/* ---- the fault-injection knobs (lib/dccp_fault.h) -------------------- */

static void fi_knob(struct __test_metadata *_metadata, const char *attr,
		    const char *val)
{
	ASSERT_EQ(0, dccp_fault_write(attr, val)) TH_LOG("%s <- %s", attr, val);
}

/* Only fail-nth injects, in every allocation or in our caches only. */
static void fi_scope_set(struct __test_metadata *_metadata, enum fi_scope s)
{
	const char *knob = NULL;

	ASSERT_EQ(0, dccp_fault_quiet(s == FI_DCCP, &knob)) TH_LOG("%s", knob);
}

static void fi_defaults(void)
{
	dccp_fault_defaults();
}

/* fail-nth of this thread, opened once (lib/dccp_fault.h says why) */
static int fi_nth_fd = -1;

static int fi_nth_set(unsigned int n)
{
	return dccp_fault_nth_set(fi_nth_fd, n);
}

static long fi_nth_left(void)
{
	return dccp_fault_nth_left(fi_nth_fd);
}

/*
 * Before the harness: without fault injection or DCCP there is nothing to
 * test; say which is missing and skip (before SBPN_TOPOLOGY's constructor,
 * which fails without DCCP).
 */
static void __attribute__((constructor(101))) fi_require(void)
{
	const char *why = NULL;
	int fd;

	if (geteuid())
		why = "needs root";
	else
		why = dccp_fault_missing();
	if (!why) {
		if (system("modprobe -a dccp_ipv4 dccp_ipv6 dccp_diag 2>/dev/null"))
			why = "cannot load dccp_ipv4, dccp_ipv6, dccp_diag";
		fd = socket(AF_INET, SOCK_DCCP, IPPROTO_DCCP);
		if (fd < 0)
			why = "no DCCP sockets in this kernel";
		else
			close(fd);
	}
	if (why) {
		printf("TAP version 13\n1..0 # SKIP %s\n", why);
		fflush(stdout);
		/* not exit(): SBPN_TOPOLOGY's destructor has nothing to remove */
		_exit(KSFT_SKIP);
	}
	atexit(fi_defaults);
}

/* ---- operations ------------------------------------------------------- */

struct fi_ctx;

/*
 * One operation.  setup() builds the sockets without fault; run() is the
 * operation itself, system calls only, and returns 0 (or a count) or
 * -errno; check() judges the result and the sockets after it.
 */
struct fi_op {
	const char *name;
	void (*setup)(struct fi_ctx *c);
	int (*run)(struct fi_ctx *c);
	void (*check)(struct fi_ctx *c);
	int path;	/* 1: no delay, 2: the receiver's Acks 1 s late */
	int ccid;
	int policy;
	int opt;	/* the socket option the operation sets, or 0 */
	int val;	/* its value */
	int set_opt;	/* an option set on the sender before it connects */
	int set_val;
	int prio;	/* sendmsg: attach DCCP_SCM_PRIORITY */
	int expiry;	/* sendmsg: attach DCCP_SCM_EXPIRY */
	int expect;	/* run()'s result without fault: 0 or -errno */
};

struct fi_ctx {
	struct __test_metadata *md;
	const struct fi_op *op;
	enum fi_scope scope;
	unsigned int n;		/* the allocation failed, from 1 */
	int injected;		/* it was reached and failed */
	int rc;			/* run()'s result */
	int lfd, cfd, afd, nlfd;
	int port;		/* the listener's */
	uint16_t sport;		/* the sender's */
	uint64_t expiry;	/* absolute, for sendmsg */
	struct dccp_qpolicy_stats before;
	/* the notice read by run(), if any */
	struct sock_extended_err ee;
	ssize_t notice;
	/* the diag dump of run() */
	struct dccp_qpolicy_diag diag;
	int diag_found;
};

/*
 * Errors that say an allocation failed, or what followed from it: a socket
 * whose inode could not be allocated is ENFILE (sock_alloc()), a
 * connection whose handshake lost a packet times out or is reset.  DCCP
 * has two of its own: a client that cannot activate the negotiated
 * features (its CCID among them) ends the handshake with ECOMM
 * (dccp_rcv_request_sent_state_process()), and an end that cannot
 * allocate what a handshake packet's options need resets it with "too
 * busy" (feat.c), EUSERS at the other end.  A bind() or listen() whose
 * bind bucket (dccp_bind_bucket, dccp_bind2_bucket) cannot be allocated
 * fails in inet_csk_get_port(), which __inet_bind() and
 * inet_csk_listen_start() report as EADDRINUSE.
 */
static int fi_errno_ok(int rc)
{
	switch (-rc) {
	case ENOMEM: case ENOBUFS: case ENFILE: case EAGAIN: case EINTR:
	case ECONNREFUSED: case ECONNRESET: case ETIMEDOUT: case EINPROGRESS:
	case EPIPE: case ENOTCONN: case ECONNABORTED: case EHOSTUNREACH:
	case EADDRNOTAVAIL: case EADDRINUSE: case ECOMM: case EUSERS:
		return 1;
	}
	return 0;
}

static void fi_set_timeouts(int fd)
{
	struct timeval tv = { FI_WAIT_MS / 1000, 0 };

	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* A listener in B on path @path, port chosen by the kernel, not listening yet. */
static void fi_listener(struct fi_ctx *c, int policy)
{
	struct __test_metadata *_metadata = c->md;
	struct sockaddr_in a = dt_addr(sbpn_ip_b[c->op->path], 0);
	socklen_t len = sizeof(a);

	sbpn_switch(_metadata, sbpn_ns_b);
	c->lfd = dt_socket(_metadata, c->op->ccid, policy, FI_QLEN);
	ASSERT_EQ(0, bind(c->lfd, (struct sockaddr *)&a, sizeof(a)));
	ASSERT_EQ(0, getsockname(c->lfd, (struct sockaddr *)&a, &len));
	c->port = ntohs(a.sin_port);
	fi_set_timeouts(c->lfd);
	sbpn_switch(_metadata, sbpn_ns_a);
}

/* A sender in A with the operation's policy, CCID and option. */
static void fi_client(struct fi_ctx *c, int qlen)
{
	struct __test_metadata *_metadata = c->md;

	sbpn_switch(_metadata, sbpn_ns_a);
	c->cfd = dt_socket(_metadata, c->op->ccid, c->op->policy, qlen);
	fi_set_timeouts(c->cfd);
	if (c->op->set_opt)
		ASSERT_EQ(0, dt_setopt(c->cfd, c->op->set_opt, c->op->set_val));
}

static int fi_connect_fd(struct fi_ctx *c, int fd)
{
	struct sockaddr_in a = dt_addr(sbpn_ip_b[c->op->path], c->port);

	return connect(fd, (struct sockaddr *)&a, sizeof(a)) ? -errno : 0;
}

static uint16_t fi_local_port(int fd)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);

	return getsockname(fd, (struct sockaddr *)&a, &len) ? 0 : ntohs(a.sin_port);
}

/*
 * Accept the connection of c->cfd: one whose connect() failed may have
 * left another in the listener's queue.  The new descriptor, or -errno.
 */
static int fi_accept_peer(struct fi_ctx *c)
{
	uint16_t want = fi_local_port(c->cfd);

	for (int i = 0; i < 4; i++) {
		struct sockaddr_in a;
		socklen_t len = sizeof(a);
		int fd = accept(c->lfd, (struct sockaddr *)&a, &len);

		if (fd < 0)
			return -errno;
		if (ntohs(a.sin_port) == want)
			return fd;
		close(fd);
	}
	return -ESRCH;
}

/* Connect c->cfd to the listener and accept it, without fault. */
static void fi_establish(struct fi_ctx *c)
{
	struct __test_metadata *_metadata = c->md;
	int rcvbuf = 4 << 20;

	ASSERT_EQ(0, fi_connect_fd(c, c->cfd));
	c->afd = fi_accept_peer(c);
	ASSERT_LE(0, c->afd) TH_LOG("accept: %s", strerror(-c->afd));
	fi_set_timeouts(c->afd);
	ASSERT_EQ(0, setsockopt(c->afd, SOL_SOCKET, SO_RCVBUFFORCE,
				&rcvbuf, sizeof(rcvbuf)));
}

static void fi_close_all(struct fi_ctx *c)
{
	int *fds[] = { &c->nlfd, &c->afd, &c->cfd, &c->lfd };

	for (unsigned int i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
}

static struct dccp_qpolicy_stats fi_stats(struct fi_ctx *c, int fd)
{
	return sbpn_stats(c->md, fd);
}

/* The counters of @fd obey the identity; returns them. */
static struct dccp_qpolicy_stats fi_identity(struct fi_ctx *c, int fd)
{
	struct __test_metadata *_metadata = c->md;
	struct dccp_qpolicy_stats s = fi_stats(c, fd);

	sbpn_check_invariant(_metadata, &s);
	if (fi_failed(_metadata))
		sbpn_stats_log(_metadata, "counters", &s);
	return s;
}

/* Send one packet the way the policy accepts it; retry while the queue is full. */
static int fi_send_retry(int fd, int policy, uint32_t tag, uint32_t prio)
{
	int rc = -EAGAIN;

	for (int ms = 0; rc == -EAGAIN && ms < FI_WAIT_MS; ms += 20) {
		rc = sbpn_send(fd, policy, tag, prio, 0, MSG_DONTWAIT);
		if (rc == -EAGAIN)
			dt_sleep_ms(20);
	}
	return rc;
}

/* Receive on @fd until @tag arrives or FI_WAIT_MS pass without a packet. */
static int fi_await_tag(int fd, uint32_t tag)
{
	uint32_t t;

	while (dt_recv_tags(fd, &t, 1, FI_WAIT_MS) == 1)
		if (t == tag)
			return 1;
	return 0;
}

/* The connection c->cfd -> c->afd carries a packet sent now. */
static void fi_roundtrip(struct fi_ctx *c)
{
	struct __test_metadata *_metadata = c->md;
	uint32_t tag = FI_FOLLOW | c->n;

	ASSERT_EQ(0, fi_send_retry(c->cfd, c->op->policy, tag, FI_FILL_PRIO + 1));
	EXPECT_TRUE(fi_await_tag(c->afd, tag))
		TH_LOG("%s n=%u: the follow-up packet did not arrive", c->op->name, c->n);
	fi_identity(c, c->cfd);
}

/* The listener still takes a connection that carries a packet. */
static void fi_listener_works(struct fi_ctx *c)
{
	if (c->afd >= 0)
		close(c->afd);
	if (c->cfd >= 0)
		close(c->cfd);
	c->afd = c->cfd = -1;
	fi_client(c, FI_QLEN);
	fi_establish(c);
	fi_roundtrip(c);
}

/* The result is the normal one, or (with a fault) a clear error. */
static void fi_expect_result(struct fi_ctx *c)
{
	struct __test_metadata *_metadata = c->md;

	if (!c->injected) {
		EXPECT_EQ(c->op->expect, c->rc)
			TH_LOG("%s [%s] without fault: %d (%s)", c->op->name,
			       fi_scope_name[c->scope], c->rc, strerror(-c->rc));
	} else if (c->rc != c->op->expect) {
		EXPECT_TRUE(fi_errno_ok(c->rc))
			TH_LOG("%s [%s] n=%u: unexpected result %d (%s)", c->op->name,
			       fi_scope_name[c->scope], c->n, c->rc, strerror(-c->rc));
	}
}

/* -- connect and accept -- */

static void setup_listen(struct fi_ctx *c)
{
	struct __test_metadata *_metadata = c->md;

	fi_listener(c, c->op->policy);
	ASSERT_EQ(0, listen(c->lfd, 8));
	fi_client(c, FI_QLEN);
}

static int run_connect(struct fi_ctx *c)
{
	return fi_connect_fd(c, c->cfd);
}

static void check_connect(struct fi_ctx *c)
{
	struct __test_metadata *_metadata = c->md;

	fi_expect_result(c);
	if (c->rc == 0) {
		c->afd = fi_accept_peer(c);
		ASSERT_LE(0, c->afd) TH_LOG("accept after connect: %s", strerror(-c->afd));
		fi_set_timeouts(c->afd);
		fi_roundtrip(c);
	} else {
		fi_listener_works(c);
	}
}

static void setup_accept(struct fi_ctx *c)
{
	struct __test_metadata *_metadata = c->md;

	setup_listen(c);
	ASSERT_EQ(0, fi_connect_fd(c, c->cfd));
}

static int run_accept(struct fi_ctx *c)
{
	int fd = accept(c->lfd, NULL, NULL);

	if (fd < 0)
		return -errno;
	c->afd = fd;
	return 0;
}

static void check_accept(struct fi_ctx *c)
{
	struct __test_metadata *_metadata = c->md;
	int policy = -1;
	socklen_t len = sizeof(policy);

	fi_expect_result(c);
	if (c->rc == 0) {
		/* the child inherits the listener's policy */
		ASSERT_EQ(0, getsockopt(c->afd, SOL_DCCP, DCCP_SOCKOPT_QPOLICY_ID,
					&policy, &len));
		EXPECT_EQ(c->op->policy, policy);
		fi_set_timeouts(c->afd);
		fi_roundtrip(c);
		fi_identity(c, c->afd);
	} else {
		fi_listener_works(c);
	}
}

/* -- sendmsg -- */

static void setup_connected(struct fi_ctx *c)
{
	struct __test_metadata *_metadata = c->md;

	fi_listener(c, c->op->policy);
	ASSERT_EQ(0, listen(c->lfd, 8));
	fi_client(c, FI_QLEN + 2);
	fi_establish(c);
	c->expiry = sbpn_in_ms(10000);
	c->before = fi_stats(c, c->cfd);
}

static int run_sendmsg(struct fi_ctx *c)
{
	return dt_send(c->cfd, 1, c->op->prio, 5, c->op->expiry, c->expiry,
		       MSG_DONTWAIT);
}

static void check_sendmsg(struct fi_ctx *c)
{
	fi_expect_result(c);
	fi_identity(c, c->cfd);
	fi_roundtrip(c);
}

/* -- the SBPN full-queue admission, a notice, close with a full queue -- */

/*
 * Fill the queue behind CCID 2's window on path 2 with FI_QLEN packets of
 * priority FI_FILL_PRIO (no cmsg under SIMPLE): the fillers go out until
 * one stays, then the queue is topped up.
 */
static void fi_fill(struct fi_ctx *c)
{
	struct __test_metadata *_metadata = c->md;
	struct dccp_qpolicy_stats s = fi_stats(c, c->cfd);
	uint32_t tag = 0;

	while (s.qlen < FI_QLEN && tag < 64) {
		ASSERT_EQ(0, sbpn_send(c->cfd, c->op->policy, SBPN_FILLER | tag++,
				       FI_FILL_PRIO, 0, MSG_DONTWAIT));
		s = fi_stats(c, c->cfd);
	}
	ASSERT_EQ(FI_QLEN, s.qlen);
}

static void setup_full(struct fi_ctx *c)
{
	struct __test_metadata *_metadata = c->md;

	fi_listener(c, c->op->policy);
	ASSERT_EQ(0, listen(c->lfd, 8));
	fi_client(c, FI_QLEN);
	fi_establish(c);
	fi_fill(c);
	c->before = fi_stats(c, c->cfd);
}

/* A packet of priority 3, below every queued one, under a new band. */
static int run_admission(struct fi_ctx *c)
{
	return dt_send(c->cfd, 2, 1, 3, 0, 0, MSG_DONTWAIT);
}

static int fi_stats_equal(const struct dccp_qpolicy_stats *a,
			  const struct dccp_qpolicy_stats *b)
{
	return !memcmp(a, b, sizeof(*a));
}

static void check_admission(struct fi_ctx *c)
{
	struct __test_metadata *_metadata = c->md;
	struct dccp_qpolicy_stats s = fi_identity(c, c->cfd), want = c->before;

	fi_expect_result(c);
	if (c->rc == -EAGAIN)
		want.refused++;		/* judged and refused */
	else
		EXPECT_EQ(-ENOBUFS, c->rc)
			TH_LOG("%s [%s] n=%u: a packet worse than every queued one got %d: admitted unjudged",
			       c->op->name, fi_scope_name[c->scope], c->n, c->rc);
	EXPECT_TRUE(fi_stats_equal(&want, &s)) {
		sbpn_stats_log(_metadata, "before", &c->before);
		sbpn_stats_log(_metadata, "after", &s);
	}
	/*
	 * The first allocation from our caches in this sendmsg is the band of
	 * the new priority, which full() secures before judging (the skb
	 * comes from skbuff_head_cache): failing it must refuse the packet
	 * with ENOBUFS and change nothing (branch v3fix).
	 */
	if (c->scope == FI_DCCP && c->n == 1) {
		EXPECT_TRUE(c->injected)
			TH_LOG("no allocation from our caches in the full-queue sendmsg");
		EXPECT_EQ(-ENOBUFS, c->rc);
	}
	/* still works: a better packet evicts the worst */
	ASSERT_EQ(0, sbpn_send(c->cfd, c->op->policy, 3, FI_FILL_PRIO + 10, 0,
			       MSG_DONTWAIT));
	s = fi_identity(c, c->cfd);
	EXPECT_EQ(want.evicted + 1, s.evicted);
	EXPECT_EQ(FI_QLEN, s.qlen);
}

/* A better packet evicts a queued one, whose notice is read back. */
static int run_notice(struct fi_ctx *c)
{
	char payload[DT_MAX_PAYLOAD];
	int rc = dt_send(c->cfd, 4, 1, FI_FILL_PRIO + 10, 0, 0, MSG_DONTWAIT);

	if (rc)
		return rc;
	c->notice = sbpn_read_errqueue(c->cfd, payload, sizeof(payload), &c->ee);
	return 0;
}

static void check_notice(struct fi_ctx *c)
{
	struct __test_metadata *_metadata = c->md;
	struct dccp_qpolicy_stats s = fi_identity(c, c->cfd);
	char payload[DT_MAX_PAYLOAD];
	struct sock_extended_err ee;

	fi_expect_result(c);
	if (c->rc == 0) {
		/* one packet evicted, one notice of it */
		EXPECT_EQ(c->before.evicted + 1, s.evicted);
		if (c->notice < 0)	/* the read failed: the notice waits */
			c->notice = sbpn_read_errqueue(c->cfd, payload,
						       sizeof(payload), &c->ee);
		EXPECT_LE(0, c->notice) TH_LOG("no notice: %zd", c->notice);
		EXPECT_EQ(ECANCELED, c->ee.ee_errno);
		EXPECT_EQ(SO_EE_ORIGIN_DCCP_QPOLICY, c->ee.ee_origin);
		EXPECT_EQ(DCCP_QPOLICY_EE_EVICTED, c->ee.ee_code);
	} else {
		/* refused: nothing changed, nothing to report */
		EXPECT_TRUE(fi_stats_equal(&c->before, &s));
	}
	EXPECT_EQ(-EAGAIN, sbpn_read_errqueue(c->cfd, payload, sizeof(payload), &ee));
}

static int run_close(struct fi_ctx *c)
{
	int rc = close(c->cfd) ? -errno : 0;

	c->cfd = -1;
	return rc;
}

/* The peer sees the connection end: its reads end in EOF or an error. */
static void check_close(struct fi_ctx *c)
{
	struct __test_metadata *_metadata = c->md;
	struct pollfd p = { .fd = c->afd, .events = POLLIN };
	uint64_t end = dt_now_ns() + 2 * FI_WAIT_MS * NSEC_PER_MSEC;
	int ended = 0;
	char buf[2048];

	fi_expect_result(c);
	/* what was sent before the close, then EOF or a reset */
	while (!ended && dt_now_ns() < end && poll(&p, 1, 2 * FI_WAIT_MS) == 1) {
		ssize_t r = recv(c->afd, buf, sizeof(buf), MSG_DONTWAIT);

		ended = r == 0 || (r < 0 && errno != EAGAIN);
	}
	EXPECT_TRUE(ended) TH_LOG("%s [%s] n=%u: the peer saw no end of the connection",
				  c->op->name, fi_scope_name[c->scope], c->n);
}

/* -- sock_diag -- */

static void setup_diag(struct fi_ctx *c)
{
	struct __test_metadata *_metadata = c->md;

	setup_connected(c);
	for (uint32_t i = 0; i < 3; i++)
		ASSERT_EQ(0, sbpn_send(c->cfd, c->op->policy, i, 1, 0, MSG_DONTWAIT));
	c->sport = fi_local_port(c->cfd);
	ASSERT_NE(0, c->sport);
	c->nlfd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	ASSERT_LE(0, c->nlfd);
	fi_set_timeouts(c->nlfd);
}

struct fi_diag_find {
	uint16_t port;
	int *found;
	struct dccp_qpolicy_diag *d;
};

static void fi_diag_match(const struct inet_diag_msg *m,
			  const struct dccp_qpolicy_diag *d, void *arg)
{
	struct fi_diag_find *f = arg;

	if (d && ntohs(m->id.idiag_sport) == f->port) {
		memcpy(f->d, d, sizeof(*f->d));
		*f->found = 1;
	}
}

/*
 * Dump the DCCP sockets of the current namespace with INET_DIAG_INFO on
 * @fd: 0 when the dump ended, the attribute of local port @port in @d (and
 * *found set); -errno on failure.
 */
static int fi_diag_dump(int fd, uint16_t port, struct dccp_qpolicy_diag *d,
			int *found)
{
	static char buf[1 << 16];
	struct fi_diag_find f = { .port = port, .found = found, .d = d };

	*found = 0;
	return dccp_diag_dump(fd, AF_INET, buf, sizeof(buf), fi_diag_match, &f);
}

static int run_diag(struct fi_ctx *c)
{
	return fi_diag_dump(c->nlfd, c->sport, &c->diag, &c->diag_found);
}

static void check_diag(struct fi_ctx *c)
{
	struct __test_metadata *_metadata = c->md;
	int fd;

	fi_expect_result(c);
	if (c->rc == 0) {
		/* a dump that ended has the sender, its counters right */
		ASSERT_TRUE(c->diag_found) TH_LOG("%s [%s] n=%u: the dump lacks port %u",
						  c->op->name, fi_scope_name[c->scope],
						  c->n, c->sport);
		EXPECT_EQ(c->op->policy, (int)c->diag.policy);
		sbpn_check_invariant(_metadata, &c->diag.stats);
	}
	/* a new dump works */
	close(c->nlfd);
	c->nlfd = -1;
	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	ASSERT_LE(0, fd);
	fi_set_timeouts(fd);
	c->nlfd = fd;
	ASSERT_EQ(0, fi_diag_dump(fd, c->sport, &c->diag, &c->diag_found));
	ASSERT_TRUE(c->diag_found) TH_LOG("the follow-up dump lacks port %u", c->sport);
	EXPECT_EQ(c->op->policy, (int)c->diag.policy);
	sbpn_check_invariant(_metadata, &c->diag.stats);
	fi_roundtrip(c);
}

/* -- setsockopt -- */

/* The option's value bytes: the CCID option takes a list of bytes. */
static int fi_setopt(struct fi_ctx *c, int fd)
{
	uint8_t ccid = c->op->val;
	uint32_t services[2] = { htonl(c->op->val), htonl(c->op->val + 1) };

	switch (c->op->opt) {
	case DCCP_SOCKOPT_CCID:
		return setsockopt(fd, SOL_DCCP, c->op->opt, &ccid, 1) ? -errno : 0;
	case DCCP_SOCKOPT_SERVICE:
		/* a list: the first code, then the others (one allocation) */
		return setsockopt(fd, SOL_DCCP, c->op->opt, services,
				  sizeof(services)) ? -errno : 0;
	}
	return dt_setopt(fd, c->op->opt, c->op->val) ? -errno : 0;
}

/* On a new sender before connect() (the SERVICE list: on the listener). */
static void setup_sockopt(struct fi_ctx *c)
{
	fi_listener(c, c->op->policy);
	fi_client(c, FI_QLEN + 2);
}

static int run_sockopt(struct fi_ctx *c)
{
	return fi_setopt(c, c->op->opt == DCCP_SOCKOPT_SERVICE ? c->lfd : c->cfd);
}

static void check_sockopt(struct fi_ctx *c)
{
	struct __test_metadata *_metadata = c->md;
	int fd = c->op->opt == DCCP_SOCKOPT_SERVICE ? c->lfd : c->cfd;
	int cscov = c->op->opt == DCCP_SOCKOPT_SEND_CSCOV ||
		    c->op->opt == DCCP_SOCKOPT_RECV_CSCOV;
	uint32_t service = htonl(c->op->val);
	int val = -1;
	socklen_t len = sizeof(val);

	fi_expect_result(c);
	/* failed: it can still be set */
	if (c->rc)
		ASSERT_EQ(0, fi_setopt(c, fd));
	/*
	 * The coverage options read the coverage in use, which feature
	 * negotiation sets: compared once the connection is up.
	 */
	if (c->op->opt != DCCP_SOCKOPT_CCID && c->op->opt != DCCP_SOCKOPT_SERVICE &&
	    !cscov) {
		ASSERT_EQ(0, getsockopt(fd, SOL_DCCP, c->op->opt, &val, &len));
		EXPECT_EQ(c->op->val, val);
	}
	if (c->op->opt == DCCP_SOCKOPT_SERVICE)
		ASSERT_EQ(0, setsockopt(c->cfd, SOL_DCCP, DCCP_SOCKOPT_SERVICE,
					&service, sizeof(service)));
	/* partial coverage is only received where the receiver allows it */
	if (c->op->opt == DCCP_SOCKOPT_SEND_CSCOV)
		ASSERT_EQ(0, dt_setopt(c->lfd, DCCP_SOCKOPT_RECV_CSCOV, c->op->val));
	ASSERT_EQ(0, listen(c->lfd, 8));
	fi_establish(c);
	fi_roundtrip(c);
	if (cscov) {
		ASSERT_EQ(0, getsockopt(fd, SOL_DCCP, c->op->opt, &val, &len));
		EXPECT_EQ(c->op->val, val);
	}
}

/*
 * A value the kernel refuses (EINVAL, with a fault or without): the value
 * the sender had before (the operation's set_opt, the same option) is
 * still in force, and the sender still connects and carries packets.
 */
static void check_sockopt_refused(struct fi_ctx *c)
{
	struct __test_metadata *_metadata = c->md;

	fi_expect_result(c);
	EXPECT_EQ(c->op->set_val, dt_getopt(c->cfd, c->op->opt));
	ASSERT_EQ(0, listen(c->lfd, 8));
	fi_establish(c);
	fi_roundtrip(c);
}

/* On the accepted socket (SERVER_TIMEWAIT is for servers). */
static int run_sockopt_accepted(struct fi_ctx *c)
{
	return fi_setopt(c, c->afd);
}

static void check_sockopt_accepted(struct fi_ctx *c)
{
	struct __test_metadata *_metadata = c->md;

	fi_expect_result(c);
	if (c->rc)
		ASSERT_EQ(0, fi_setopt(c, c->afd));
	fi_roundtrip(c);
}

/* tx_qlen lowered under a full queue: the queue is cut to fit. */
static int run_txqlen_full(struct fi_ctx *c)
{
	return fi_setopt(c, c->cfd);
}

static void check_txqlen_full(struct fi_ctx *c)
{
	struct __test_metadata *_metadata = c->md;
	struct dccp_qpolicy_stats s;

	fi_expect_result(c);
	if (c->rc)
		ASSERT_EQ(0, fi_setopt(c, c->cfd));
	s = fi_identity(c, c->cfd);
	EXPECT_GE(c->op->val, (int)s.qlen);
}

/* ---- the operations --------------------------------------------------- */

#define CONNECT(p)	.setup = setup_listen, .run = run_connect,		\
			.check = check_connect, .path = 1, .ccid = 2, .policy = p
#define ACCEPT(p)	.setup = setup_accept, .run = run_accept,		\
			.check = check_accept, .path = 1, .ccid = 2, .policy = p
#define SENDMSG(c, p, pr, ex)	.setup = setup_connected, .run = run_sendmsg,	\
			.check = check_sendmsg, .path = 1, .ccid = c,		\
			.policy = p, .prio = pr, .expiry = ex
#define SBPN		DCCPQ_POLICY_SBPN2
#define ADMISSION(p)	.setup = setup_full, .run = run_admission,		\
			.check = check_admission, .path = 2, .ccid = 2,		\
			.policy = p, .expect = -EAGAIN
#define CLOSE(p)	.setup = setup_full, .run = run_close,			\
			.check = check_close, .path = 2, .ccid = 2, .policy = p
#define SOCKOPT(o, v)	.setup = setup_sockopt, .run = run_sockopt,		\
			.check = check_sockopt, .path = 1, .ccid = 2,		\
			.policy = SBPN, .opt = o, .val = v
/* option @o, set to @before, then to @v, which it refuses */
#define SOCKOPT_EINVAL(o, before, v)						\
			.setup = setup_sockopt, .run = run_sockopt,		\
			.check = check_sockopt_refused, .path = 1, .ccid = 2,	\
			.policy = SBPN, .set_opt = o, .set_val = before,	\
			.opt = o, .val = v, .expect = -EINVAL
#define QFLAGS		DCCP_SOCKOPT_QPOLICY_FLAGS
#define QORDER		DCCP_SOCKOPT_QPOLICY_ORDER
#define TXFLAGS		DCCP_SOCKOPT_TX_CCID_FLAGS

FIXTURE(faults) {
	struct fi_ctx c;
};

FIXTURE_VARIANT(faults) {
	struct fi_op op;
};

#define FI_OP(vname, ...)						\
	FIXTURE_VARIANT_ADD(faults, vname) {				\
		.op = { .name = #vname, __VA_ARGS__ },			\
	}

FI_OP(connect_simple, CONNECT(DCCPQ_POLICY_SIMPLE));
FI_OP(connect_prio, CONNECT(DCCPQ_POLICY_PRIO));
FI_OP(connect_sbpn1, CONNECT(DCCPQ_POLICY_SBPN1));
FI_OP(connect_sbpn2, CONNECT(DCCPQ_POLICY_SBPN2));
FI_OP(connect_sbpn3, CONNECT(DCCPQ_POLICY_SBPN3));
FI_OP(accept_simple, ACCEPT(DCCPQ_POLICY_SIMPLE));
FI_OP(accept_prio, ACCEPT(DCCPQ_POLICY_PRIO));
FI_OP(accept_sbpn1, ACCEPT(DCCPQ_POLICY_SBPN1));
FI_OP(accept_sbpn2, ACCEPT(DCCPQ_POLICY_SBPN2));
FI_OP(accept_sbpn3, ACCEPT(DCCPQ_POLICY_SBPN3));
FI_OP(sendmsg_simple, SENDMSG(2, DCCPQ_POLICY_SIMPLE, 0, 0));
FI_OP(sendmsg_prio, SENDMSG(2, DCCPQ_POLICY_PRIO, 1, 0));
FI_OP(sendmsg_sbpn1, SENDMSG(2, DCCPQ_POLICY_SBPN1, 1, 1));
FI_OP(sendmsg_sbpn2, SENDMSG(2, DCCPQ_POLICY_SBPN2, 1, 1));
FI_OP(sendmsg_sbpn3, SENDMSG(2, DCCPQ_POLICY_SBPN3, 1, 1));
FI_OP(sendmsg_sbpn2_priority_only, SENDMSG(2, SBPN, 1, 0));
FI_OP(sendmsg_sbpn2_expiry_only, SENDMSG(2, SBPN, 0, 1));
FI_OP(sendmsg_sbpn2_notify, SENDMSG(2, SBPN, 1, 1),
      .set_opt = QFLAGS, .set_val = DCCP_QPOLICY_F_NOTIFY);
FI_OP(sendmsg_sbpn2_last_rtt, SENDMSG(2, SBPN, 1, 1),
      .set_opt = QFLAGS, .set_val = DCCP_QPOLICY_F_LAST_RTT);
FI_OP(sendmsg_sbpn2_predict, SENDMSG(2, SBPN, 1, 1),
      .set_opt = QFLAGS, .set_val = DCCP_QPOLICY_F_PREDICT);
FI_OP(sendmsg_sbpn2_owd, SENDMSG(2, SBPN, 1, 1),
      .set_opt = QFLAGS, .set_val = DCCP_QPOLICY_F_OWD);
FI_OP(sendmsg_sbpn2_edf, SENDMSG(2, SBPN, 1, 1),
      .set_opt = QORDER, .set_val = DCCP_QPOLICY_ORDER_EDF);
FI_OP(sendmsg_sbpn2_newest, SENDMSG(2, SBPN, 1, 1),
      .set_opt = QORDER, .set_val = DCCP_QPOLICY_ORDER_NEWEST);
FI_OP(sendmsg_sbpn2_frame, SENDMSG(2, SBPN, 1, 1),
      .set_opt = QFLAGS, .set_val = DCCP_QPOLICY_F_FRAME);
FI_OP(sendmsg_ccid3_sbpn2, SENDMSG(3, SBPN, 1, 1));
FI_OP(sendmsg_ccid3_size_pacing, SENDMSG(3, SBPN, 1, 1),
      .set_opt = TXFLAGS, .set_val = DCCP_TX_CCID_F_SIZE_PACING);
FI_OP(sendmsg_ccid3_faster_restart, SENDMSG(3, SBPN, 1, 1),
      .set_opt = TXFLAGS, .set_val = DCCP_TX_CCID_F_FASTER_RESTART);
FI_OP(admission_sbpn1, ADMISSION(DCCPQ_POLICY_SBPN1));
FI_OP(admission_sbpn2, ADMISSION(DCCPQ_POLICY_SBPN2));
FI_OP(admission_sbpn3, ADMISSION(DCCPQ_POLICY_SBPN3));
FI_OP(notice_evicted, .setup = setup_full, .run = run_notice,
      .check = check_notice, .path = 2, .ccid = 2, .policy = SBPN,
      .set_opt = QFLAGS, .set_val = DCCP_QPOLICY_F_NOTIFY);
FI_OP(diag_dump, .setup = setup_diag, .run = run_diag, .check = check_diag,
      .path = 1, .ccid = 2, .policy = SBPN);
FI_OP(setsockopt_ccid, SOCKOPT(DCCP_SOCKOPT_CCID, 2));
FI_OP(setsockopt_service_list, SOCKOPT(DCCP_SOCKOPT_SERVICE, 42));
FI_OP(setsockopt_send_cscov, SOCKOPT(DCCP_SOCKOPT_SEND_CSCOV, 4));
FI_OP(setsockopt_recv_cscov, SOCKOPT(DCCP_SOCKOPT_RECV_CSCOV, 4));
FI_OP(setsockopt_qpolicy_id, SOCKOPT(DCCP_SOCKOPT_QPOLICY_ID, DCCPQ_POLICY_SBPN3));
FI_OP(setsockopt_txqlen, SOCKOPT(DCCP_SOCKOPT_QPOLICY_TXQLEN, 7));
FI_OP(setsockopt_tx_ccid_flags, SOCKOPT(TXFLAGS, DCCP_TX_CCID_F_KNOWN));
FI_OP(setsockopt_tx_ccid_flags_unknown,
      SOCKOPT_EINVAL(TXFLAGS, DCCP_TX_CCID_F_FASTER_RESTART,
		     DCCP_TX_CCID_F_FASTER_RESTART | DCCP_TX_CCID_F_UNKNOWN));
FI_OP(setsockopt_qpolicy_flags, SOCKOPT(QFLAGS, DCCP_QPOLICY_F_KNOWN));
FI_OP(setsockopt_qpolicy_flags_unknown,
      SOCKOPT_EINVAL(QFLAGS, DCCP_QPOLICY_F_NOTIFY,
		     DCCP_QPOLICY_F_NOTIFY | DCCP_QPOLICY_F_UNKNOWN));
FI_OP(setsockopt_qpolicy_order_edf, SOCKOPT(QORDER, DCCP_QPOLICY_ORDER_EDF));
FI_OP(setsockopt_qpolicy_order_newest, SOCKOPT(QORDER, DCCP_QPOLICY_ORDER_NEWEST));
FI_OP(setsockopt_qpolicy_order_invalid,
      SOCKOPT_EINVAL(QORDER, DCCP_QPOLICY_ORDER_NEWEST,
		     DCCP_QPOLICY_ORDER_INVALID));
FI_OP(setsockopt_server_timewait, .setup = setup_connected,
      .run = run_sockopt_accepted, .check = check_sockopt_accepted,
      .path = 1, .ccid = 2, .policy = SBPN,
      .opt = DCCP_SOCKOPT_SERVER_TIMEWAIT, .val = 1);
FI_OP(setsockopt_txqlen_full, .setup = setup_full, .run = run_txqlen_full,
      .check = check_txqlen_full, .path = 2, .ccid = 2, .policy = SBPN,
      .opt = DCCP_SOCKOPT_QPOLICY_TXQLEN, .val = 1);
FI_OP(close_full_simple, CLOSE(DCCPQ_POLICY_SIMPLE));
FI_OP(close_full_prio, CLOSE(DCCPQ_POLICY_PRIO));
FI_OP(close_full_sbpn1, CLOSE(DCCPQ_POLICY_SBPN1));
FI_OP(close_full_sbpn2, CLOSE(DCCPQ_POLICY_SBPN2));
FI_OP(close_full_sbpn3, CLOSE(DCCPQ_POLICY_SBPN3));

/* The caches the "dccp" scope and phase 2 rely on are marked for failslab. */
static void fi_require_marks(struct __test_metadata *_metadata)
{
	char path[128];

	for (unsigned int i = 0; i < sizeof(fi_marked) / sizeof(fi_marked[0]); i++) {
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/failslab", fi_marked[i]);
		ASSERT_EQ(1, dt_read_int(path))
			TH_LOG("%s: not marked; boot with slub_debug=A," FI_CACHES
			       " (make faults does)", fi_marked[i]);
	}
}

static int fi_selected(const char *name)
{
	const char *only = getenv("DCCP_FAULTS_ONLY");

	return !only || !*only || strstr(name, only);
}

/*
 * Touch the stack well below where the operations reach: its pages, and
 * their page tables, exist before any fault is armed.
 */
static void __attribute__((noinline)) fi_stack_prefault(void)
{
	volatile char buf[256 << 10];

	for (size_t i = 0; i < sizeof(buf); i += 4096)
		buf[i] = 0;
}

FIXTURE_SETUP(faults)
{
	/* no page fault in the test's own memory may allocate mid-operation:
	 * a failed page-table allocation there would kill the test
	 */
	ASSERT_EQ(0, mlockall(MCL_CURRENT | MCL_FUTURE));
	fi_stack_prefault();
	fi_nth_fd = dccp_fault_nth_open();
	ASSERT_LE(0, fi_nth_fd);
	fi_require_marks(_metadata);
}

FIXTURE_TEARDOWN(faults)
{
	if (fi_nth_fd >= 0)
		fi_nth_set(0);
	fi_defaults();
}

/* One run of the operation with its nth allocation failing; 1 if it was. */
static int fi_point(struct __test_metadata *_metadata, struct fi_ctx *c,
		    const struct fi_op *op, enum fi_scope scope, unsigned int n)
{
	long left;

	memset(c, 0, sizeof(*c));
	c->md = _metadata;
	c->op = op;
	c->scope = scope;
	c->n = n;
	c->lfd = c->cfd = c->afd = c->nlfd = -1;
	c->notice = -EAGAIN;
	op->setup(c);
	if (fi_failed(_metadata))
		return 0;
	/* nothing between arming and reading back but the operation */
	ASSERT_EQ(0, fi_nth_set(n));
	c->rc = op->run(c);
	left = fi_nth_left();
	ASSERT_EQ(0, fi_nth_set(0));
	ASSERT_LE(0, left);
	c->injected = left == 0;
	op->check(c);
	fi_close_all(c);
	return c->injected;
}

TEST_F_TIMEOUT(faults, fail_nth, 3600)
{
	const struct fi_op *op = &variant->op;
	unsigned int points[2];

	if (!fi_selected(op->name))
		SKIP(return, "not in DCCP_FAULTS_ONLY");
	for (int s = FI_ALL; s <= FI_DCCP; s++) {
		unsigned int n = 1;

		fi_scope_set(_metadata, s);
		while (n <= FI_MAX_POINTS &&
		       fi_point(_metadata, &self->c, op, s, n) && !fi_failed(_metadata))
			n++;
		ASSERT_FALSE(fi_failed(_metadata))
			TH_LOG("%s [%s]: failed at n=%u", op->name, fi_scope_name[s], n);
		ASSERT_GE(FI_MAX_POINTS, n);
		points[s] = n - 1;
	}
	printf("# failure points: %s all=%u dccp=%u\n", op->name,
	       points[FI_ALL], points[FI_DCCP]);
	fflush(stdout);
}

/* ---- phase 2: probability mode under traffic ------------------------- */

#define FI_CONNS	10	/* connections open at a time */
#define FI_TIMES	1000000	/* failslab's times: what is left counts the failures */

struct fi_conn {
	int lfd, cfd, afd;
	int policy;
};

static unsigned int fi_seed = 1;

static unsigned int fi_rand(unsigned int max)
{
	return rand_r(&fi_seed) % max;
}

/*
 * Open a connection of @policy (-1: a random one) and a random CCID over
 * path 1, with drop notices on; 0, or -errno of a step that failed (it is
 * then closed).
 */
static int fi_conn_open(struct fi_conn *k, int policy)
{
	struct sockaddr_in a = dt_addr(sbpn_ip_b[1], 0);
	socklen_t len = sizeof(a);
	uint8_t ccid = 2 + fi_rand(2);
	int rc = 0;

	k->policy = policy < 0 ? dccp_policy(fi_rand(DCCP_NR_POLICIES)) : policy;
	k->lfd = k->cfd = k->afd = -1;
	if (sbpn_enter(sbpn_ns_b))
		return -errno;
	k->lfd = socket(AF_INET, SOCK_DCCP, IPPROTO_DCCP);
	if (k->lfd < 0 ||
	    setsockopt(k->lfd, SOL_DCCP, DCCP_SOCKOPT_CCID, &ccid, 1) ||
	    dt_setopt(k->lfd, DCCP_SOCKOPT_QPOLICY_ID, k->policy) ||
	    bind(k->lfd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(k->lfd, (struct sockaddr *)&a, &len) ||
	    listen(k->lfd, 4))
		rc = -errno;
	if (!rc)
		fi_set_timeouts(k->lfd);
	if (!rc && sbpn_enter(sbpn_ns_a))
		rc = -errno;
	if (!rc) {
		k->cfd = socket(AF_INET, SOCK_DCCP, IPPROTO_DCCP);
		if (k->cfd < 0 ||
		    setsockopt(k->cfd, SOL_DCCP, DCCP_SOCKOPT_CCID, &ccid, 1) ||
		    dt_setopt(k->cfd, DCCP_SOCKOPT_QPOLICY_ID, k->policy) ||
		    dt_setopt(k->cfd, DCCP_SOCKOPT_QPOLICY_TXQLEN, 4) ||
		    dt_setopt(k->cfd, DCCP_SOCKOPT_QPOLICY_FLAGS,
			      DCCP_QPOLICY_F_NOTIFY))
			rc = -errno;
	}
	if (!rc) {
		fi_set_timeouts(k->cfd);
		if (connect(k->cfd, (struct sockaddr *)&a, sizeof(a)))
			rc = -errno;
	}
	if (!rc) {
		k->afd = accept(k->lfd, NULL, NULL);
		if (k->afd < 0)
			rc = -errno;
	}
	if (rc) {
		if (k->afd >= 0)
			close(k->afd);
		if (k->cfd >= 0)
			close(k->cfd);
		if (k->lfd >= 0)
			close(k->lfd);
		k->lfd = k->cfd = k->afd = -1;
	}
	return rc;
}

static void fi_conn_close(struct fi_conn *k)
{
	if (k->afd >= 0)
		close(k->afd);
	if (k->cfd >= 0)
		close(k->cfd);
	if (k->lfd >= 0)
		close(k->lfd);
	k->lfd = k->cfd = k->afd = -1;
}

/* Counters of a live sender obey the identity whenever they are read. */
static void fi_conn_check(struct __test_metadata *_metadata, struct fi_conn *k,
			  unsigned long *checks)
{
	struct dccp_qpolicy_stats s;
	socklen_t len = sizeof(s);

	if (getsockopt(k->cfd, SOL_DCCP, DCCP_SOCKOPT_QPOLICY_STATS, &s, &len))
		return;
	(*checks)++;
	EXPECT_EQ(s.queued, s.sent + s.expired + s.evicted + s.frame +
			    s.purged + s.ccid_err + s.qlen)
		sbpn_stats_log(_metadata, "phase 2", &s);
}

static long fi_env(const char *name, long def)
{
	const char *v = getenv(name);

	return v && *v ? strtol(v, NULL, 0) : def;
}

FIXTURE(traffic) {
	struct fi_conn k[FI_CONNS];
};

FIXTURE_SETUP(traffic)
{
	for (int i = 0; i < FI_CONNS; i++)
		self->k[i].lfd = self->k[i].cfd = self->k[i].afd = -1;
	fi_seed = fi_env("DCCP_FAULTS_SEED", 1);
	fi_require_marks(_metadata);
}

FIXTURE_TEARDOWN(traffic)
{
	fi_defaults();
	for (int i = 0; i < FI_CONNS; i++)
		fi_conn_close(&self->k[i]);
}

TEST_F_TIMEOUT(traffic, probability, 1800)
{
	long seconds = fi_env("DCCP_FAULTS_SECONDS", 20);
	long percent = fi_env("DCCP_FAULTS_PERCENT", 3);
	unsigned long opened = 0, open_failed = 0, sends = 0, sent = 0, notices = 0;
	unsigned long dumps = 0, checks = 0;
	char pct[16], payload[DT_MAX_PAYLOAD], times[32];
	struct sock_extended_err ee;
	uint64_t end;
	long left;

	if (!fi_selected("traffic"))
		SKIP(return, "not in DCCP_FAULTS_ONLY");
	ASSERT_LT(0, percent);
	ASSERT_GE(100, percent);
	/* loss makes CCID 3 keep loss history; 5 ms lets feedback matter */
	sbpn_switch(_metadata, sbpn_ns_a);
	ASSERT_EQ(0, sbpn_batch("tc", "qdisc replace dev va1 root netem delay 5ms loss 2% limit 1000\n"));

	snprintf(pct, sizeof(pct), "%ld", percent);
	fi_scope_set(_metadata, FI_DCCP);
	fi_knob(_metadata, "failslab/interval", "1");
	snprintf(times, sizeof(times), "%d", FI_TIMES);
	fi_knob(_metadata, "failslab/times", times);
	fi_knob(_metadata, "failslab/probability", pct);

	end = dt_now_ns() + seconds * 1000000000ULL;
	while (dt_now_ns() < end) {
		struct fi_conn *k = &self->k[fi_rand(FI_CONNS)];

		if (k->cfd < 0) {
			int rc = fi_conn_open(k, -1);

			if (rc) {
				EXPECT_TRUE(fi_errno_ok(rc))
					TH_LOG("phase 2: opening a connection: %s", strerror(-rc));
				open_failed++;
			} else {
				opened++;
			}
			continue;
		}
		/* a burst with priorities 0-3 and expiries 0-40 ms ahead,
		 * some of which expire while CCID 3 paces them
		 */
		for (int i = 0; i < 8; i++) {
			uint64_t expiry = sbpn_in_ms(fi_rand(40));
			int rc = sbpn_send(k->cfd, k->policy, i, fi_rand(4),
					   fi_rand(4) ? expiry : 0, MSG_DONTWAIT);

			sends++;
			if (!rc)
				sent++;
			else
				EXPECT_TRUE(fi_errno_ok(rc))
					TH_LOG("phase 2: sendmsg: %s", strerror(-rc));
		}
		dt_recv_drop(k->afd);
		while (sbpn_read_errqueue(k->cfd, payload, sizeof(payload), &ee) >= 0)
			notices++;
		fi_conn_check(_metadata, k, &checks);
		switch (fi_rand(16)) {
		case 0:		/* close with whatever is queued */
			fi_conn_close(k);
			break;
		case 1: {	/* a dump of namespace A's DCCP sockets */
			int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
					NETLINK_SOCK_DIAG);
			struct dccp_qpolicy_diag d;
			int found;

			if (nl < 0)
				break;
			fi_set_timeouts(nl);
			/* a dump that ended with the sender in it: counters right */
			if (!fi_diag_dump(nl, fi_local_port(k->cfd), &d, &found) && found)
				EXPECT_EQ(d.stats.queued, d.stats.sent + d.stats.expired +
					  d.stats.evicted + d.stats.frame + d.stats.purged +
					  d.stats.ccid_err + d.stats.qlen);
			close(nl);
			dumps++;
			break;
		}
		case 2:		/* the queue length changes */
			dt_setopt(k->cfd, DCCP_SOCKOPT_QPOLICY_TXQLEN, 1 + fi_rand(6));
			break;
		}
		dt_sleep_ms(fi_rand(3));
	}

	/* the faults stop; the path stops losing */
	fi_knob(_metadata, "failslab/probability", "0");
	left = dt_read_int(DCCP_FAULT_DEBUGFS "/failslab/times");
	fi_defaults();
	sbpn_switch(_metadata, sbpn_ns_a);
	ASSERT_EQ(0, sbpn_batch("tc", "qdisc del dev va1 root\n"));
	printf("# phase 2: %ld s at %ld %%: %ld allocations failed; %lu connections opened, %lu failed to open; %lu sendmsg, %lu accepted; %lu notices, %lu dumps, %lu counter checks\n",
	       seconds, percent, FI_TIMES - left, opened, open_failed, sends, sent,
	       notices, dumps, checks);
	fflush(stdout);
	EXPECT_LT(0, FI_TIMES - left) TH_LOG("phase 2 failed no allocation");
	EXPECT_LT(0, opened);

	/* what survived reports an error or keeps its counters right */
	for (int i = 0; i < FI_CONNS; i++) {
		struct fi_conn *k = &self->k[i];

		if (k->cfd < 0)
			continue;
		fi_conn_check(_metadata, k, &checks);
		while (sbpn_read_errqueue(k->cfd, payload, sizeof(payload), &ee) >= 0)
			;
		fi_conn_close(k);
	}
	/* and new connections of every policy carry packets */
	for (unsigned int i = 0; i < DCCP_NR_POLICIES; i++) {
		struct fi_conn *k = &self->k[0];
		int p = dccp_policy(i);
		int rc;

		rc = fi_conn_open(k, p);
		ASSERT_EQ(0, rc) TH_LOG("after phase 2: %s", strerror(-rc));
		ASSERT_EQ(0, fi_send_retry(k->cfd, p, FI_FOLLOW | p, 1));
		EXPECT_TRUE(fi_await_tag(k->afd, FI_FOLLOW | p))
			TH_LOG("after phase 2: policy %d carried no packet", p);
		fi_conn_check(_metadata, k, &checks);
		fi_conn_close(k);
	}
}

TEST_HARNESS_MAIN
