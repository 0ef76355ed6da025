// SPDX-License-Identifier: GPL-2.0
/*
 * dccp_stress: a seeded, time-bounded stress test of the DCCP queueing
 * policies, run as root in the test VM.
 *
 * Each round loads the DCCP modules, builds two network namespaces joined by
 * veth with netem delay and loss on both ends, listens in one on every policy
 * (SIMPLE, PRIO, SBPN1/2/3) over IPv4 and IPv6, and opens client sockets in
 * the other with random policies, CCIDs and queue lengths, half of them giving
 * up frames whole (DCCP_QPOLICY_F_FRAME).  Worker threads then share
 * those sockets and send random messages: payloads of every size (some too
 * big), random cmsgs (valid and invalid lengths, levels and types; every
 * priority; expiries of 0, the past, the near and far future, UINT64_MAX,
 * and a few shared by many packets, which make frames), blocking and not;
 * they change DCCP_SOCKOPT_QPOLICY_TXQLEN and set the other per-socket
 * options (the policy's flags: notices, the expiry judgements, frames; its
 * order: EDF, NEWEST; the TX CCID's flags: size pacing, Faster Restart),
 * now and then to a value the kernel must refuse, while sending, read the
 * drop notices from the error queue, and dump the namespace's sockets
 * through sock_diag.
 * Meanwhile sockets are shut down, closed and reopened, the
 * receiver closes some connections and leaves others unread, and the peer
 * vanishes: its link goes down, or its namespace is deleted.  The round ends
 * by closing everything with full queues and unloading the modules as
 * `modprobe -r dccp_diag dccp_ipv6 dccp_ipv4 dccp` would.
 *
 * With -f PERMILLE (the debug kernel's fault injection), that share of the
 * workers' calls, of the connects and closes of the main thread and of the
 * receiver's accepts fails one of its first eight allocations (the
 * thread's fail-nth); such a call may fail with any error, and everything
 * else must hold as without.
 *
 * What fails the test (the VM runner also fails on any oops or WARN):
 *  - a sendmsg whose cmsgs dccp_msghdr_parse() must refuse succeeds, or one
 *    with acceptable cmsgs fails with EINVAL;
 *  - the queueing counters break queued == sent + expired + evicted +
 *    frame + purged + ccid_err + qlen (checked after every operation on a
 *    socket, and for every socket of every sock_diag dump);
 *  - a sock_diag dump without an injected fault fails;
 *  - with -f, no fault was injected at all;
 *  - a setsockopt the test relies on fails (policy, tx_qlen, CCID, frame,
 *    send timeout, linger), or the run never saw a connection of one of the two
 *    CCIDs (DCCP_SOCKOPT_TX_CCID) or never a CCID error (CCID 3 refuses the
 *    empty datagrams the test sends);
 *  - the modules cannot be unloaded, or DCCP slab caches outlive them;
 *  - skbuff_head_cache does not return near its size before the first round;
 *  - with -c or -u, the time budget ran out before the calls or unload
 *    cycles asked for were made.
 *
 * Usage: dccp_stress [-s SEED] [-t SECONDS] [-r ROUND_SECONDS] [-n SOCKETS]
 *                    [-j THREADS] [-c CALLS] [-u CYCLES] [-f PERMILLE]
 * Prints KTAP (one result per round) and the totals: sendmsg calls by result,
 * sockets opened and closed, module unload cycles.  Exit 0 pass, 1 fail,
 * 4 skip (not root, or no DCCP).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/dccp.h>
#include <linux/errqueue.h>

#include "kselftest.h"
#include "dccp_abi.h"
#include "dccp_diag.h"
#include "dccp_fault.h"

#define MAX_SOCKETS	256
#define MAX_ACCEPTED	512
#define MAX_THREADS	16
#define MAX_ERRNO	134
#define BASE_PORT	6000
#define SKB_SLAB	"skbuff_head_cache"
/* Objects skbuff_head_cache may hold above its first size after a round:
 * skbs of the kernel's own (neighbour discovery, the other namespaces).
 */
#define SKB_SLACK	256
#define NSEC_PER_SEC	1000000000ULL
#define DIAG_BUF	(1 << 16)
#define FAULT_NTH_MAX	8	/* an armed call fails one of its first 8 allocations */

static unsigned long cfg_seed = 1;
static unsigned int cfg_duration = 30;	/* seconds, all rounds */
static unsigned int cfg_round = 4;	/* seconds of sending per round */
static unsigned int cfg_sockets = 32;
static unsigned int cfg_threads = 4;
/* With -c and -u, rounds go on until both are reached (or the budget ends) */
static uint64_t cfg_calls;	/* sendmsg and setsockopt calls, all rounds */
static uint64_t cfg_cycles;	/* module unload cycles */
static unsigned int cfg_faults;	/* calls with a fault armed, per thousand */

static char ns_a[32], ns_b[32];	/* sender and receiver namespaces */
static int ns_self = -1, ns_fd_a = -1, ns_fd_b = -1;

struct slot {
	pthread_rwlock_t lock;	/* write-held while the socket changes */
	int fd;			/* -1 when closed */
	int policy;
};

static struct slot slots[MAX_SOCKETS];
static int listeners[DCCP_NR_POLICIES * 2];
static volatile bool round_over, receiver_stop;

struct counts {
	uint64_t send_errno[MAX_ERRNO + 1];	/* [0]: success */
	uint64_t verdict_errors;
	uint64_t stats_errors;
	uint64_t stats_checks;
	uint64_t txqlen_changes;
	uint64_t setopt_errors;
	uint64_t tx_ccid[4];		/* stats checks by the socket's TX CCID */
	uint64_t ccid_err;		/* the largest ccid_err counter seen */
	uint64_t opt_calls, opt_refused;	/* the other per-socket options */
	uint64_t notices;		/* read from the error queue */
	uint64_t dumps, dumped, dump_errors;	/* sock_diag: dumps, sockets */
	uint64_t armed, injected;	/* calls with a fault armed; it struck */
};

/* The calls of one thread under fault injection (-f). */
struct fault {
	int fd;			/* the thread's fail-nth, -1 without -f */
	bool armed;
};

static struct counts worker_counts[MAX_THREADS];
/* the main thread's and the receiver's share of -f */
static struct counts main_counts, receiver_counts;
static struct fault main_fault;
static uint64_t sockets_opened, sockets_closed, unload_cycles, setup_errors;
static unsigned int failures;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* xorshift64*: one generator per thread, all derived from the seed */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static uint64_t rnd_seed(unsigned int round, unsigned int who)
{
	uint64_t s = (cfg_seed + 1) * 0x9E3779B97F4A7C15ULL ^
		     ((uint64_t)round << 32) ^ (who + 1);

	return s ? s : 1;
}

static unsigned int below(uint64_t *s, unsigned int n)
{
	return rnd(s) % n;
}

/* Run a shell command; returns its exit status (or -1). */
static int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	return rc == -1 || !WIFEXITED(rc) ? -1 : WEXITSTATUS(rc);
}

static void fail(const char *fmt, ...)
{
	va_list ap;

	printf("# FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	failures++;
}

static void enter_ns(int fd)
{
	if (setns(fd, CLONE_NEWNET))
		ksft_exit_fail_msg("setns: %s\n", strerror(errno));
}

static int open_ns(const char *name)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		ksft_exit_fail_msg("open %s: %s\n", path, strerror(errno));
	return fd;
}

/* The calling thread's fail-nth for -f; exits if it cannot be opened. */
static void fault_open(struct fault *f)
{
	f->armed = false;
	f->fd = -1;
	if (!cfg_faults)
		return;
	f->fd = dccp_fault_nth_open();
	if (f->fd < 0)
		ksft_exit_fail_msg("%s: %s\n", DCCP_FAULT_NTH, strerror(errno));
}

/* With -f, now and then: the thread's next call fails an allocation. */
static void fault_arm(struct fault *f, uint64_t *s, struct counts *c)
{
	if (f->fd < 0 || below(s, 1000) >= cfg_faults)
		return;
	if (dccp_fault_nth_set(f->fd, 1 + below(s, FAULT_NTH_MAX)))
		ksft_exit_fail_msg("arming %s: %s\n", DCCP_FAULT_NTH, strerror(errno));
	f->armed = true;
	c->armed++;
}

/*
 * Right after the armed call, before anything else allocates: disarm,
 * count a fault that struck.  True if the call may have failed for it.
 */
static bool fault_disarm(struct fault *f, struct counts *c)
{
	long left;

	if (!f->armed)
		return false;
	f->armed = false;
	left = dccp_fault_nth_left(f->fd);
	if (left != 0 && dccp_fault_nth_set(f->fd, 0))
		ksft_exit_fail_msg("disarming %s: %s\n", DCCP_FAULT_NTH, strerror(errno));
	if (left == 0)
		c->injected++;
	return left == 0;
}

static void close_counted(int fd)
{
	if (close(fd) == 0)
		__atomic_add_fetch(&sockets_closed, 1, __ATOMIC_RELAXED);
}

static int socket_counted(int family)
{
	int fd = socket(family, SOCK_DCCP, IPPROTO_DCCP);

	if (fd >= 0)
		__atomic_add_fetch(&sockets_opened, 1, __ATOMIC_RELAXED);
	return fd;
}

static int setopt(int fd, int opt, int val)
{
	return setsockopt(fd, SOL_DCCP, opt, &val, sizeof(val));
}

/* DCCP_SOCKOPT_CCID takes a list of CCIDs, one byte each, not an int */
static int set_ccid(int fd, uint8_t ccid)
{
	return setsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_CCID, &ccid, sizeof(ccid));
}

/* A setsockopt of the setup failed: say which, count it (fails the run) */
static void setup_error(const char *what, int policy)
{
	if (__atomic_fetch_add(&setup_errors, 1, __ATOMIC_RELAXED) < 5)
		printf("# setsockopt %s (policy %d): %s\n", what, policy, strerror(errno));
}

/* A queue length: mostly small, sometimes unbounded (0) or large. */
static int random_txqlen(uint64_t *s)
{
	static const int lens[] = { 0, 1, 2, 3, 5, 8, 16, 64, 1000 };

	return lens[below(s, sizeof(lens) / sizeof(lens[0]))];
}

static socklen_t peer_addr(int family, struct sockaddr_storage *ss, int port)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		inet_pton(AF_INET, "10.77.0.2", &in->sin_addr);
		return sizeof(*in);
	}
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons(port);
	inet_pton(AF_INET6, "fd77::2", &in6->sin6_addr);
	return sizeof(*in6);
}

/*
 * The network: A (senders) and B (receivers), veth, netem on both ends.
 * Batched: every exec of ip or tc costs most of a second under TCG.
 */
static int net_up(void)
{
	return sh("printf 'netns add %1$s\\nnetns add %2$s\\n"
		  "link add va netns %1$s type veth peer name vb netns %2$s\\n' | ip -b - && "
		  "printf 'link set lo up\\naddr add 10.77.0.1/24 dev va\\n"
		  "addr add fd77::1/64 dev va nodad\\nlink set va up\\n' | ip -n %1$s -b - && "
		  "printf 'link set lo up\\naddr add 10.77.0.2/24 dev vb\\n"
		  "addr add fd77::2/64 dev vb nodad\\nlink set vb up\\n' | ip -n %2$s -b - && "
		  "tc -n %1$s qdisc add dev va root netem delay 5ms loss 2%% limit 100 && "
		  "tc -n %2$s qdisc add dev vb root netem delay 5ms loss 2%% limit 100",
		  ns_a, ns_b);
}

static void net_down(void)
{
	sh("ip netns del %s 2>/dev/null; ip netns del %s 2>/dev/null", ns_a, ns_b);
}

static void listen_all(uint64_t *s)
{
	struct sockaddr_storage ss;
	int i, one = 1;

	enter_ns(ns_fd_b);
	for (i = 0; i < DCCP_NR_POLICIES * 2; i++) {
		int family = i % 2 ? AF_INET6 : AF_INET;
		socklen_t len = peer_addr(family, &ss, BASE_PORT + i);
		int fd = socket_counted(family);

		if (fd < 0)
			ksft_exit_fail_msg("socket: %s\n", strerror(errno));
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (setopt(fd, DCCP_SOCKOPT_QPOLICY_ID, dccp_policy(i / 2)) ||
		    setopt(fd, DCCP_SOCKOPT_QPOLICY_TXQLEN, random_txqlen(s)) ||
		    bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 64) ||
		    fcntl(fd, F_SETFL, O_NONBLOCK))
			ksft_exit_fail_msg("listener %d: %s\n", i, strerror(errno));
		listeners[i] = fd;
	}
	enter_ns(ns_self);
}

/*
 * A client socket in A with a random policy, CCID and queue length, a short
 * send timeout so a blocking sendmsg cannot hold a worker for long, and now
 * and then a linger time, so that close waits for the queue.  Its connect
 * completes (or not) in the background.  Called from the main thread only.
 */
static void slot_open(struct slot *sl, uint64_t *s)
{
	struct timeval tv = { 0, 50000 };
	struct linger lg = { 1, below(s, 2) };
	struct sockaddr_storage ss;
	int pi = below(s, DCCP_NR_POLICIES);
	int policy = dccp_policy(pi);
	int family = below(s, 2) ? AF_INET6 : AF_INET;
	int idx = pi * 2 + (family == AF_INET6);
	socklen_t len = peer_addr(family, &ss, BASE_PORT + idx);
	int fd;

	enter_ns(ns_fd_a);
	fd = socket_counted(family);
	enter_ns(ns_self);
	sl->fd = fd;
	sl->policy = policy;
	if (fd < 0)
		return;
	if (setopt(fd, DCCP_SOCKOPT_QPOLICY_ID, policy))
		setup_error("DCCP_SOCKOPT_QPOLICY_ID", policy);
	if (setopt(fd, DCCP_SOCKOPT_QPOLICY_TXQLEN, random_txqlen(s)))
		setup_error("DCCP_SOCKOPT_QPOLICY_TXQLEN", policy);
	if (set_ccid(fd, below(s, 2) ? 3 : 2))
		setup_error("DCCP_SOCKOPT_CCID", policy);
	if (dccp_setopt_bits(fd, DCCP_SOCKOPT_QPOLICY_FLAGS, DCCP_QPOLICY_F_FRAME,
			     below(s, 2)))
		setup_error("DCCP_QPOLICY_F_FRAME", policy);
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
		setup_error("SO_SNDTIMEO", policy);
	if (below(s, 16) == 0 && setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)))
		setup_error("SO_LINGER", policy);
	if (dccp_setopt_bits(fd, DCCP_SOCKOPT_QPOLICY_FLAGS, DCCP_QPOLICY_F_NOTIFY,
			     below(s, 2)))
		setup_error("DCCP_QPOLICY_F_NOTIFY", policy);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	fault_arm(&main_fault, s, &main_counts);
	connect(fd, (struct sockaddr *)&ss, len);
	fault_disarm(&main_fault, &main_counts);
	fcntl(fd, F_SETFL, 0);
}

static void slot_close(struct slot *sl, uint64_t *s)
{
	if (sl->fd < 0)
		return;
	if (below(s, 2))
		shutdown(sl->fd, below(s, 2) ? SHUT_WR : SHUT_RDWR);
	fault_arm(&main_fault, s, &main_counts);
	close_counted(sl->fd);
	fault_disarm(&main_fault, &main_counts);
	sl->fd = -1;
}

/* The 64-bit expiries worth trying, relative to now where it matters. */
static uint64_t random_expiry(uint64_t *s)
{
	uint64_t now = now_ns();

	switch (below(s, 7)) {
	case 0:
		return 0;
	case 1:
		return now - below(s, 1000) * 1000000ULL;	/* past */
	case 2:
		return now + below(s, 200) * 1000000ULL;	/* soon */
	case 3:
		return now + 1000000ULL * NSEC_PER_SEC;		/* far */
	case 4:
		return UINT64_MAX;
	case 5:		/* one of a few frames, 100 to 300 ms ahead */
		return (now / 100000000ULL + 1 + below(s, 3)) * 100000000ULL;
	default:
		return rnd(s);
	}
}

static uint32_t random_priority(uint64_t *s)
{
	switch (below(s, 4)) {
	case 0:
		return 0;
	case 1:
		return UINT32_MAX;
	case 2:
		return below(s, 4);
	default:
		return rnd(s);
	}
}

/*
 * Fill @buf with 0..3 random control messages, some malformed, and return
 * its length.  Every entry takes CMSG_SPACE() of its data; a malformed one
 * may claim another cmsg_len, and the whole may be cut short.
 */
static size_t random_cmsgs(uint64_t *s, unsigned char *buf, size_t size)
{
	static const int levels[] = { SOL_SOCKET, SOL_IP, SOL_IPV6, 0, 12345 };
	static const int types[] = { 0, 3, 0xFFFF, 0x10000, 0x7FFFFFFF };
	static const size_t bad_lens[] = { 0, 8, 15, 0xFFFF, SIZE_MAX };
	unsigned int i, n = below(s, 4);
	size_t off = 0;

	memset(buf, 0, size);
	for (i = 0; i < n; i++) {
		struct cmsghdr *c = (struct cmsghdr *)(buf + off);
		unsigned int kind = below(s, 8);
		size_t data = 0;
		uint64_t v64;
		uint32_t v32;

		if (off + CMSG_SPACE(16) > size)	/* the most data we add */
			break;
		c->cmsg_level = SOL_DCCP;
		switch (kind) {
		case 0:	/* a good priority */
			c->cmsg_type = DCCP_SCM_PRIORITY;
			v32 = random_priority(s);
			data = sizeof(v32);
			memcpy(CMSG_DATA(c), &v32, data);
			break;
		case 1:	/* a frame id, 0 (refused) one time in four */
			c->cmsg_type = DCCP_SCM_FRAME;
			v32 = below(s, 4);
			data = sizeof(v32);
			memcpy(CMSG_DATA(c), &v32, data);
			break;
		case 2:
		case 3:	/* a good expiry */
			c->cmsg_type = DCCP_SCM_EXPIRY;
			v64 = random_expiry(s);
			data = sizeof(v64);
			memcpy(CMSG_DATA(c), &v64, data);
			break;
		case 4:	/* a known type with the wrong data length */
			c->cmsg_type = (int[]){ DCCP_SCM_PRIORITY, DCCP_SCM_EXPIRY,
						DCCP_SCM_FRAME }[below(s, 3)];
			data = (size_t[]){ 0, 2, 4, 8, 16 }[below(s, 5)];
			break;
		case 5:	/* an unknown type */
			c->cmsg_type = types[below(s, 5)];
			data = below(s, 17);
			break;
		case 6:	/* another level, any type: not DCCP's business */
			c->cmsg_level = levels[below(s, 5)];
			c->cmsg_type = below(s, 4);
			data = below(s, 17);
			break;
		default: /* a length that lies */
			c->cmsg_type = below(s, 3);
			data = below(s, 17);
			break;
		}
		c->cmsg_len = kind == 7 ? bad_lens[below(s, 5)] : CMSG_LEN(data);
		off += CMSG_SPACE(data);
	}
	if (off && below(s, 8) == 0)
		off -= below(s, 8);
	return off;
}

/*
 * The verdict of the kernel's dccp_msghdr_parse() on these cmsgs, walking
 * them as for_each_cmsghdr() and CMSG_OK() do: true if it must refuse them.
 * PRIO accepts DCCP_SCM_PRIORITY, the SBPN policies also DCCP_SCM_EXPIRY
 * and DCCP_SCM_FRAME (an id that is not 0).
 */
static bool cmsgs_invalid(const unsigned char *buf, size_t len, int policy)
{
	size_t off = 0;

	while (off + sizeof(struct cmsghdr) <= len) {
		const struct cmsghdr *c = (const struct cmsghdr *)(buf + off);

		if (c->cmsg_len < sizeof(struct cmsghdr) || c->cmsg_len > len - off)
			return true;
		if (c->cmsg_level == SOL_DCCP) {
			if (c->cmsg_type == DCCP_SCM_PRIORITY) {
				if (policy == DCCPQ_POLICY_SIMPLE ||
				    c->cmsg_len != CMSG_LEN(sizeof(uint32_t)))
					return true;
			} else if (c->cmsg_type == DCCP_SCM_EXPIRY) {
				if (policy < DCCPQ_POLICY_SBPN1 ||
				    c->cmsg_len != CMSG_LEN(sizeof(uint64_t)))
					return true;
			} else if (c->cmsg_type == DCCP_SCM_FRAME) {
				uint32_t id;

				if (policy < DCCPQ_POLICY_SBPN1 ||
				    c->cmsg_len != CMSG_LEN(sizeof(id)))
					return true;
				memcpy(&id, CMSG_DATA(c), sizeof(id));
				if (!id)
					return true;
			} else {
				return true;
			}
		}
		off += CMSG_ALIGN(c->cmsg_len);
	}
	return false;
}

/* Count a read of the counters; report the first that breaks the identity. */
static void check_identity(const struct dccp_qpolicy_stats *st, struct counts *c,
			   const char *where)
{
	c->stats_checks++;
	if (st->queued == st->sent + st->expired + st->evicted + st->frame +
	    st->purged + st->ccid_err + st->qlen)
		return;
	if (c->stats_errors++ == 0)
		printf("# stats broken%s: queued %llu sent %llu expired %llu evicted %llu frame %llu purged %llu ccid_err %llu qlen %llu\n",
		       where, (unsigned long long)st->queued, (unsigned long long)st->sent,
		       (unsigned long long)st->expired, (unsigned long long)st->evicted,
		       (unsigned long long)st->frame, (unsigned long long)st->purged,
		       (unsigned long long)st->ccid_err, (unsigned long long)st->qlen);
}

static void check_stats(int fd, struct counts *c)
{
	struct dccp_qpolicy_stats st;
	socklen_t len = sizeof(st);
	int ccid = 0;

	if (getsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_QPOLICY_STATS, &st, &len))
		return;
	len = sizeof(ccid);
	/* the TX CCID is known once the connection is up; [0]: not yet */
	if (getsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_TX_CCID, &ccid, &len) ||
	    ccid < 2 || ccid > 3)
		ccid = 0;
	c->tx_ccid[ccid]++;
	if (st.ccid_err > c->ccid_err)
		c->ccid_err = st.ccid_err;
	check_identity(&st, c, "");
}

static void send_one(struct slot *sl, uint64_t *s, struct counts *c,
		     struct fault *f)
{
	static const size_t sizes[] = { 0, 1, 100, 500, 1000, 1400, 1500, 4000 };
	union {
		unsigned char buf[256];
		struct cmsghdr align;
	} ctl;
	unsigned char payload[4000];
	struct iovec iov = { payload, sizes[below(s, 8)] };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	int flags = MSG_NOSIGNAL | (below(s, 4) ? MSG_DONTWAIT : 0);
	bool invalid;
	ssize_t rc;
	int err;

	memset(payload, 0xA5, iov.iov_len);
	msg.msg_controllen = random_cmsgs(s, ctl.buf, sizeof(ctl.buf));
	msg.msg_control = msg.msg_controllen ? ctl.buf : NULL;
	invalid = cmsgs_invalid(ctl.buf, msg.msg_controllen, sl->policy);

	fault_arm(f, s, c);
	rc = sendmsg(sl->fd, &msg, flags);
	err = rc < 0 ? errno : 0;
	fault_disarm(f, c);
	c->send_errno[err <= MAX_ERRNO ? err : MAX_ERRNO]++;
	if ((invalid && rc >= 0) || (!invalid && err == EINVAL)) {
		if (c->verdict_errors++ == 0)
			printf("# cmsg verdict wrong: policy %d, %zu bytes of cmsgs, expected %s, got %s\n",
			       sl->policy, (size_t)msg.msg_controllen,
			       invalid ? "EINVAL" : "acceptance",
			       err ? strerror(err) : "success");
	}
}

/* Errors that say an allocation failed, for a call with a fault armed. */
static bool alloc_error(int err)
{
	return err == ENOMEM || err == ENOBUFS || err == EAGAIN;
}

static void set_txqlen(struct slot *sl, uint64_t *s, struct counts *c,
		       struct fault *f)
{
	int val = random_txqlen(s), rc, err;
	bool struck;

	fault_arm(f, s, c);
	rc = setopt(sl->fd, DCCP_SOCKOPT_QPOLICY_TXQLEN, val);
	err = rc ? errno : 0;
	struck = fault_disarm(f, c);
	if (rc && !(struck && alloc_error(err)))
		c->setopt_errors++;
	c->txqlen_changes++;
}

/*
 * The other per-socket options at any time: a flag of the policy's or the
 * TX CCID's turned on or off, the other bits kept (as an application
 * would), or a value set outright, the order among them.  Some the kernel
 * must refuse: a bit it does not know, turned on, INT_MIN, an order past
 * the last, -1 (EINVAL), and any value of the counters, which are read
 * only.  Whether the others may be changed on a connected socket (size
 * pacing and Faster Restart are CCID 3's) is the kernel's to say, so
 * refusals are counted, not judged.
 */
static void set_option(struct slot *sl, uint64_t *s, struct counts *c,
		       struct fault *f)
{
	static const struct {
		int opt;
		int flag;	/* the bit turned on or off, or 0: */
		int val;	/* the value set */
	} opts[] = {
		{ DCCP_SOCKOPT_QPOLICY_FLAGS, DCCP_QPOLICY_F_NOTIFY, 0 },
		{ DCCP_SOCKOPT_QPOLICY_FLAGS, DCCP_QPOLICY_F_LAST_RTT, 0 },
		{ DCCP_SOCKOPT_QPOLICY_FLAGS, DCCP_QPOLICY_F_PREDICT, 0 },
		{ DCCP_SOCKOPT_QPOLICY_FLAGS, DCCP_QPOLICY_F_OWD, 0 },
		{ DCCP_SOCKOPT_QPOLICY_FLAGS, DCCP_QPOLICY_F_FRAME, 0 },
		{ DCCP_SOCKOPT_QPOLICY_FLAGS, DCCP_QPOLICY_F_UNKNOWN, 0 },
		{ DCCP_SOCKOPT_QPOLICY_FLAGS, 0, 0 },
		{ DCCP_SOCKOPT_QPOLICY_FLAGS, 0, DCCP_QPOLICY_F_KNOWN },
		{ DCCP_SOCKOPT_QPOLICY_FLAGS, 0, INT_MIN },
		{ DCCP_SOCKOPT_QPOLICY_ORDER, 0, DCCP_QPOLICY_ORDER_PRIORITY },
		{ DCCP_SOCKOPT_QPOLICY_ORDER, 0, DCCP_QPOLICY_ORDER_EDF },
		{ DCCP_SOCKOPT_QPOLICY_ORDER, 0, DCCP_QPOLICY_ORDER_NEWEST },
		{ DCCP_SOCKOPT_QPOLICY_ORDER, 0, DCCP_QPOLICY_ORDER_INVALID },
		{ DCCP_SOCKOPT_QPOLICY_ORDER, 0, -1 },
		{ DCCP_SOCKOPT_TX_CCID_FLAGS, DCCP_TX_CCID_F_SIZE_PACING, 0 },
		{ DCCP_SOCKOPT_TX_CCID_FLAGS, DCCP_TX_CCID_F_FASTER_RESTART, 0 },
		{ DCCP_SOCKOPT_TX_CCID_FLAGS, DCCP_TX_CCID_F_UNKNOWN, 0 },
		{ DCCP_SOCKOPT_TX_CCID_FLAGS, 0, 0 },
		{ DCCP_SOCKOPT_TX_CCID_FLAGS, 0, INT_MIN },
		{ DCCP_SOCKOPT_QPOLICY_STATS, 0, 0 },	/* read only */
	};
	unsigned int i = below(s, sizeof(opts) / sizeof(opts[0]));
	int val = opts[i].val, on = below(s, 2), rc;

	c->opt_calls++;
	/* a flag: the bits in force first (a read refused counts as a refusal) */
	if (opts[i].flag && dccp_getopt_int(sl->fd, opts[i].opt, &val)) {
		c->opt_refused++;
		return;
	}
	if (opts[i].flag)
		val = on ? val | opts[i].flag : val & ~opts[i].flag;
	fault_arm(f, s, c);
	rc = setopt(sl->fd, opts[i].opt, val);
	fault_disarm(f, c);
	if (rc)
		c->opt_refused++;
}

/* Drain up to 8 drop notices from the socket's error queue. */
static void read_notices(struct slot *sl, uint64_t *s, struct counts *c,
			 struct fault *f)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct sock_extended_err)) + 64];
		struct cmsghdr align;
	} ctl;
	char payload[4000];
	struct iovec iov = { payload, sizeof(payload) };
	int i;

	for (i = 0; i < 8; i++) {
		struct msghdr msg = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
		};
		ssize_t rc;

		fault_arm(f, s, c);
		rc = recvmsg(sl->fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT);
		fault_disarm(f, c);
		if (rc < 0)
			break;
		c->notices++;
	}
}

struct worker {
	pthread_t tid;
	unsigned int id;
	unsigned int round;
	int nlfd;		/* NETLINK_SOCK_DIAG in the senders' namespace */
};

static char diag_bufs[MAX_THREADS][DIAG_BUF];

static void diag_check(const struct inet_diag_msg *m,
		       const struct dccp_qpolicy_diag *d, void *arg)
{
	struct counts *c = arg;
	struct dccp_qpolicy_stats st;

	(void)m;
	c->dumped++;
	if (!d)
		return;
	memcpy(&st, &d->stats, sizeof(st));
	check_identity(&st, c, " in a sock_diag dump");
}

/* A sock_diag dump of both families; it must end unless a fault struck. */
static void diag_dump(struct worker *w, uint64_t *s, struct counts *c,
		      struct fault *f)
{
	int family = below(s, 2) ? AF_INET6 : AF_INET, rc;
	bool struck;

	fault_arm(f, s, c);
	rc = dccp_diag_dump(w->nlfd, family, diag_bufs[w->id], DIAG_BUF, diag_check, c);
	struck = fault_disarm(f, c);
	c->dumps++;
	if (rc && !struck && c->dump_errors++ == 0)
		printf("# sock_diag dump failed: %s\n", strerror(-rc));
	/* a dump cut short leaves its rest queued: start the next one clean */
	if (rc) {
		char *buf = diag_bufs[w->id];

		while (recv(w->nlfd, buf, DIAG_BUF, MSG_DONTWAIT) > 0)
			;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct counts *c = &worker_counts[w->id];
	uint64_t s = rnd_seed(w->round, w->id + 1);
	struct fault f;

	fault_open(&f);
	while (!round_over) {
		struct slot *sl = &slots[below(&s, cfg_sockets)];
		unsigned int op = below(&s, 100);

		if (op == 99) {
			diag_dump(w, &s, c, &f);
			continue;
		}
		pthread_rwlock_rdlock(&sl->lock);
		if (sl->fd >= 0) {
			if (op < 90)
				send_one(sl, &s, c, &f);
			else if (op < 93)
				set_txqlen(sl, &s, c, &f);
			else if (op < 97)
				set_option(sl, &s, c, &f);
			else
				read_notices(sl, &s, c, &f);
			check_stats(sl->fd, c);
		}
		pthread_rwlock_unlock(&sl->lock);
	}
	if (f.fd >= 0)
		close(f.fd);
	return NULL;
}

/*
 * B's side: accept, read most connections, leave every fourth unread (its
 * receive queue fills), and close one now and then.  On stop, close all.
 */
static void *receiver_main(void *arg)
{
	struct pollfd pfd[DCCP_NR_POLICIES * 2 + MAX_ACCEPTED];
	unsigned int nl = DCCP_NR_POLICIES * 2, na = 0, i;
	uint64_t s = rnd_seed(*(unsigned int *)arg, 0);
	struct fault f;
	char buf[2048];

	fault_open(&f);
	for (i = 0; i < nl; i++)
		pfd[i] = (struct pollfd){ .fd = listeners[i], .events = POLLIN };
	while (!receiver_stop) {
		if (poll(pfd, nl + na, 50) <= 0)
			continue;
		for (i = 0; i < nl; i++) {
			int fd;

			if (!(pfd[i].revents & POLLIN))
				continue;
			fault_arm(&f, &s, &receiver_counts);
			fd = accept(pfd[i].fd, NULL, NULL);
			fault_disarm(&f, &receiver_counts);
			if (fd < 0)
				continue;
			__atomic_add_fetch(&sockets_opened, 1, __ATOMIC_RELAXED);
			if (na == MAX_ACCEPTED) {
				close_counted(fd);
				continue;
			}
			pfd[nl + na] = (struct pollfd){
				.fd = fd, .events = na % 4 ? POLLIN : 0 };
			na++;
		}
		for (i = nl; i < nl + na; i++) {
			if (!pfd[i].revents)
				continue;
			if (recv(pfd[i].fd, buf, sizeof(buf), MSG_DONTWAIT) == 0 ||
			    below(&s, 4096) == 0 || (pfd[i].revents & (POLLERR | POLLHUP))) {
				close_counted(pfd[i].fd);
				pfd[i--] = pfd[nl + --na];
			}
		}
	}
	for (i = nl; i < nl + na; i++)
		close_counted(pfd[i].fd);
	if (f.fd >= 0)
		close(f.fd);
	return NULL;
}

/* Active objects of a slab cache after flushing its per-CPU slabs, or -1. */
static long slab_objects(const char *name)
{
	char path[128], line[512];
	long active = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink", name);
	f = fopen(path, "w");
	if (f) {
		fputs("1", f);
		fclose(f);
	}
	f = fopen("/proc/slabinfo", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char n[128];
		long a;

		if (sscanf(line, "%127s %ld", n, &a) == 2 && !strcmp(n, name))
			active = a;
	}
	fclose(f);
	return active;
}

/* Slab caches DCCP creates and must destroy on unload; prints any left. */
static unsigned int dccp_slabs_left(void)
{
	char line[512];
	unsigned int n = 0;
	FILE *f = fopen("/proc/slabinfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncasecmp(line, "dccp", 4) || !strncmp(line, "ccid", 4)) {
			printf("# left after unload: %s", line);
			n++;
		}
	}
	fclose(f);
	return n;
}

/*
 * What `modprobe -r dccp_diag dccp_ipv6 dccp_ipv4 dccp` does, without an exec
 * per try: the sockets of a deleted namespace, TIME-WAIT ones included, go
 * away only when a workqueue dismantles it, so retry for up to 2 min.
 */
static bool modules_unload(void)
{
	static const char * const mods[] = {
		"dccp_diag", "dccp_ipv6", "dccp_ipv4", "dccp" };
	unsigned int m = 0;
	int tries;

	for (tries = 0; tries < 1200 && m < 4; tries++) {
		while (m < 4 && (!syscall(SYS_delete_module, mods[m], O_NONBLOCK) ||
				 errno == ENOENT))
			m++;
		if (m < 4)
			sleep_ms(100);
	}
	if (m == 4)
		return true;
	printf("# %s: %s\n", mods[m], strerror(errno));
	sh("grep -E '^dccp' /proc/modules | sed 's/^/# /'");
	return false;
}

static bool skbs_back(long baseline)
{
	long now = -1;
	int i;

	for (i = 0; i < 20; i++) {
		now = slab_objects(SKB_SLAB);
		if (now <= baseline + SKB_SLACK)
			return true;
		sleep_ms(500);
	}
	printf("# %s: %ld objects, %ld before the first round\n", SKB_SLAB, now, baseline);
	return false;
}

/* One round; returns true if it passed its checks. */
static bool run_round(unsigned int round, long skb_baseline)
{
	struct worker workers[MAX_THREADS];
	unsigned int mode, i, before = failures;
	uint64_t s = rnd_seed(round, 0xFFFF), start = now_ns(), end, half, unload;
	pthread_t receiver;
	bool b_gone = false;

	if (sh("modprobe -a dccp_ipv4 dccp_ipv6 dccp_diag"))
		ksft_exit_fail_msg("modprobe dccp_ipv4 dccp_ipv6 dccp_diag failed\n");
	/* A socket closed while its peer is unreachable retransmits its Close
	 * retries2 times (default 15, minutes of backoff) and holds the module
	 * meanwhile: one retry lets it die within seconds.  The modules are
	 * unloaded after the round, so the next load has the default again.
	 */
	if (sh("echo 1 >/proc/sys/net/dccp/default/retries2"))
		ksft_exit_fail_msg("cannot set net.dccp.default.retries2\n");
	if (net_up())
		ksft_exit_fail_msg("cannot set up the namespaces\n");
	ns_fd_a = open_ns(ns_a);
	ns_fd_b = open_ns(ns_b);

	listen_all(&s);
	for (i = 0; i < cfg_sockets; i++)
		slot_open(&slots[i], &s);

	round_over = false;
	receiver_stop = false;
	pthread_create(&receiver, NULL, receiver_main, &round);
	for (i = 0; i < cfg_threads; i++) {
		workers[i] = (struct worker){ .id = i, .round = round };
		enter_ns(ns_fd_a);
		workers[i].nlfd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
					 NETLINK_SOCK_DIAG);
		enter_ns(ns_self);
		if (workers[i].nlfd < 0)
			ksft_exit_fail_msg("sock_diag socket: %s\n", strerror(errno));
		pthread_create(&workers[i].tid, NULL, worker_main, &workers[i]);
	}

	/* 0: the link flaps; 1: the peer's namespace is deleted half way. */
	mode = below(&s, 3);
	end = now_ns() + cfg_round * NSEC_PER_SEC;
	half = now_ns() + cfg_round * NSEC_PER_SEC / 2;
	while (now_ns() < end) {
		struct slot *sl = &slots[below(&s, cfg_sockets)];

		sleep_ms(20 + below(&s, 100));
		pthread_rwlock_wrlock(&sl->lock);
		if (below(&s, 4) == 0) {
			slot_close(sl, &s);
			slot_open(sl, &s);
		} else if (sl->fd >= 0 && below(&s, 16) == 0) {
			shutdown(sl->fd, below(&s, 2) ? SHUT_WR : SHUT_RDWR);
		}
		pthread_rwlock_unlock(&sl->lock);

		if (mode == 0 && below(&s, 8) == 0)
			sh("ip -n %s link set vb %s", ns_b, below(&s, 2) ? "down" : "up");
		if (mode == 1 && !b_gone && now_ns() > half) {
			receiver_stop = true;
			pthread_join(receiver, NULL);
			for (i = 0; i < DCCP_NR_POLICIES * 2; i++)
				close_counted(listeners[i]);
			close(ns_fd_b);
			sh("ip netns del %s", ns_b);
			b_gone = true;
		}
	}

	round_over = true;
	for (i = 0; i < cfg_threads; i++) {
		pthread_join(workers[i].tid, NULL);
		close(workers[i].nlfd);
	}
	/* Close with whatever is queued, some after a shutdown. */
	for (i = 0; i < cfg_sockets; i++)
		slot_close(&slots[i], &s);
	if (!b_gone) {
		receiver_stop = true;
		pthread_join(receiver, NULL);
		for (i = 0; i < DCCP_NR_POLICIES * 2; i++)
			close_counted(listeners[i]);
		close(ns_fd_b);
	}
	close(ns_fd_a);
	net_down();

	unload = now_ns();
	if (!modules_unload()) {
		fail("round %u: the DCCP modules cannot be unloaded", round);
	} else {
		unload_cycles++;
		if (dccp_slabs_left())
			fail("round %u: DCCP slab caches outlived the modules", round);
	}
	if (!skbs_back(skb_baseline))
		fail("round %u: %s did not shrink back", round, SKB_SLAB);
	printf("# round %u: %s, %.1f s (unload and checks %.1f s)\n", round,
	       mode == 0 ? "link flaps" : mode == 1 ? "peer namespace deleted" : "plain",
	       (now_ns() - start) / 1e9, (now_ns() - unload) / 1e9);
	return failures == before;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-s SEED] [-t SECONDS] [-r ROUND_SECONDS] [-n SOCKETS] [-j THREADS]\n"
		"          [-c CALLS] [-u CYCLES] [-f PERMILLE]\n"
		"  -s  seed of all random choices (default 1)\n"
		"  -t  time budget of all rounds in seconds (default 30)\n"
		"  -r  seconds of sending per round (default 4)\n"
		"  -n  client sockets (default 32, at most %d)\n"
		"  -j  sending threads, sharing the sockets (default 4, at most %d)\n"
		"  -c  run rounds until this many sendmsg/setsockopt calls were made\n"
		"  -u  and until the modules were unloaded this many times\n"
		"      (with -c or -u, failing if the budget ends first)\n"
		"  -f  fail an allocation in this many of every 1000 calls (fault\n"
		"      injection: a debug kernel)\n",
		prog, MAX_SOCKETS, MAX_THREADS);
	exit(KSFT_FAIL);
}

static void parse_opts(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "s:t:r:n:j:c:u:f:")) != -1) {
		switch (c) {
		case 's':
			cfg_seed = strtoul(optarg, NULL, 0);
			break;
		case 't':
			cfg_duration = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			cfg_round = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			cfg_sockets = strtoul(optarg, NULL, 0);
			break;
		case 'j':
			cfg_threads = strtoul(optarg, NULL, 0);
			break;
		case 'c':
			cfg_calls = strtoull(optarg, NULL, 0);
			break;
		case 'u':
			cfg_cycles = strtoull(optarg, NULL, 0);
			break;
		case 'f':
			cfg_faults = strtoul(optarg, NULL, 0);
			break;
		default:
			usage(argv[0]);
		}
	}
	if (!cfg_round || !cfg_sockets || cfg_sockets > MAX_SOCKETS ||
	    !cfg_threads || cfg_threads > MAX_THREADS || cfg_faults > 1000)
		usage(argv[0]);
}

/* sendmsg and setsockopt calls of the workers so far (between rounds) */
static uint64_t total_calls(void)
{
	uint64_t n = 0;
	unsigned int i, e;

	for (i = 0; i < cfg_threads; i++) {
		for (e = 0; e <= MAX_ERRNO; e++)
			n += worker_counts[i].send_errno[e];
		n += worker_counts[i].txqlen_changes;
	}
	return n;
}

static bool goals_met(void)
{
	return total_calls() >= cfg_calls && unload_cycles >= cfg_cycles;
}

static void print_totals(unsigned int rounds)
{
	struct counts sum = { 0 };
	uint64_t tried = 0;
	unsigned int i, e;

	for (i = 0; i < cfg_threads; i++) {
		for (e = 0; e <= MAX_ERRNO; e++)
			sum.send_errno[e] += worker_counts[i].send_errno[e];
		sum.verdict_errors += worker_counts[i].verdict_errors;
		sum.stats_errors += worker_counts[i].stats_errors;
		sum.stats_checks += worker_counts[i].stats_checks;
		sum.txqlen_changes += worker_counts[i].txqlen_changes;
		sum.setopt_errors += worker_counts[i].setopt_errors;
		for (e = 0; e < 4; e++)
			sum.tx_ccid[e] += worker_counts[i].tx_ccid[e];
		if (worker_counts[i].ccid_err > sum.ccid_err)
			sum.ccid_err = worker_counts[i].ccid_err;
		sum.opt_calls += worker_counts[i].opt_calls;
		sum.opt_refused += worker_counts[i].opt_refused;
		sum.notices += worker_counts[i].notices;
		sum.dumps += worker_counts[i].dumps;
		sum.dumped += worker_counts[i].dumped;
		sum.dump_errors += worker_counts[i].dump_errors;
		sum.armed += worker_counts[i].armed;
		sum.injected += worker_counts[i].injected;
	}
	sum.armed += main_counts.armed + receiver_counts.armed;
	sum.injected += main_counts.injected + receiver_counts.injected;
	for (e = 0; e <= MAX_ERRNO; e++)
		tried += sum.send_errno[e];
	printf("# seed %lu: %u rounds\n", cfg_seed, rounds);
	printf("# sendmsg: %llu tried, %llu succeeded\n",
	       (unsigned long long)tried, (unsigned long long)sum.send_errno[0]);
	for (e = 1; e <= MAX_ERRNO; e++)
		if (sum.send_errno[e])
			printf("# sendmsg: %llu %s\n", (unsigned long long)sum.send_errno[e],
			       e == MAX_ERRNO ? "other errors" : strerrorname_np(e));
	printf("# txqlen changes: %llu; other options set: %llu (%llu refused)\n",
	       (unsigned long long)sum.txqlen_changes, (unsigned long long)sum.opt_calls,
	       (unsigned long long)sum.opt_refused);
	printf("# drop notices read: %llu; sock_diag dumps: %llu (%llu sockets, %llu failed without a fault)\n",
	       (unsigned long long)sum.notices, (unsigned long long)sum.dumps,
	       (unsigned long long)sum.dumped, (unsigned long long)sum.dump_errors);
	if (cfg_faults)
		printf("# faults: %llu calls armed (%llu connect/close, %llu accept), %llu faults injected\n",
		       (unsigned long long)sum.armed, (unsigned long long)main_counts.armed,
		       (unsigned long long)receiver_counts.armed,
		       (unsigned long long)sum.injected);
	printf("# sockets: %llu opened, %llu closed\n",
	       (unsigned long long)sockets_opened, (unsigned long long)sockets_closed);
	printf("# module unload cycles: %llu\n", (unsigned long long)unload_cycles);
	printf("# counter checks: %llu (TX CCID 2: %llu, CCID 3: %llu, not yet known: %llu); "
	       "largest ccid_err seen: %llu\n",
	       (unsigned long long)sum.stats_checks, (unsigned long long)sum.tx_ccid[2],
	       (unsigned long long)sum.tx_ccid[3], (unsigned long long)sum.tx_ccid[0],
	       (unsigned long long)sum.ccid_err);
	printf("# cmsg verdicts wrong: %llu, counter invariant broken: %llu, "
	       "setsockopt failures: %llu\n",
	       (unsigned long long)sum.verdict_errors, (unsigned long long)sum.stats_errors,
	       (unsigned long long)(setup_errors + sum.setopt_errors));
	if (sum.verdict_errors)
		fail("%llu sendmsg calls got the wrong cmsg verdict",
		     (unsigned long long)sum.verdict_errors);
	if (sum.stats_errors)
		fail("%llu reads of the queueing counters broke their invariant",
		     (unsigned long long)sum.stats_errors);
	if (setup_errors + sum.setopt_errors)
		fail("%llu setsockopt calls the test relies on failed",
		     (unsigned long long)(setup_errors + sum.setopt_errors));
	if (!sum.tx_ccid[2] || !sum.tx_ccid[3])
		fail("not every CCID asked for ran: %llu checks on CCID 2, %llu on CCID 3",
		     (unsigned long long)sum.tx_ccid[2], (unsigned long long)sum.tx_ccid[3]);
	if (!sum.ccid_err)
		fail("no CCID error although CCID 3 refuses the empty datagrams sent");
	if (sum.dump_errors)
		fail("%llu sock_diag dumps failed without a fault", (unsigned long long)sum.dump_errors);
	if (!sum.dumps || !sum.notices)
		fail("the mix lacked an operation: %llu sock_diag dumps, %llu notices read",
		     (unsigned long long)sum.dumps, (unsigned long long)sum.notices);
	if (cfg_faults && !sum.injected)
		fail("-f %u: no fault was injected in %llu armed calls", cfg_faults,
		     (unsigned long long)sum.armed);
}

static void cleanup(void)
{
	net_down();
	if (cfg_faults)
		dccp_fault_defaults();
}

int main(int argc, char **argv)
{
	uint64_t start, budget, longest = 0;
	unsigned int round = 0, i;
	bool goals;
	long skb_baseline;
	bool ok;

	parse_opts(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	ksft_print_header();
	if (geteuid())
		ksft_exit_skip("must run as root (in the VM)\n");
	if (sh("modprobe -a dccp_ipv4 dccp_ipv6 dccp_diag sch_netem veth 2>/dev/null"))
		ksft_exit_skip("no DCCP modules\n");

	if (cfg_faults) {
		const char *why = dccp_fault_missing(), *knob = NULL;

		if (why)
			ksft_exit_fail_msg("-f: %s\n", why);
		if (dccp_fault_quiet(0, &knob))
			ksft_exit_fail_msg("-f: cannot set %s: %s\n", knob, strerror(errno));
	}
	fault_open(&main_fault);

	snprintf(ns_a, sizeof(ns_a), "dst-a-%d", getpid());
	snprintf(ns_b, sizeof(ns_b), "dst-b-%d", getpid());
	atexit(cleanup);
	ns_self = open("/proc/self/ns/net", O_RDONLY);
	if (ns_self < 0)
		ksft_exit_fail_msg("own namespace: %s\n", strerror(errno));
	for (i = 0; i < MAX_SOCKETS; i++) {
		pthread_rwlockattr_t a;

		pthread_rwlockattr_init(&a);
		pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		pthread_rwlock_init(&slots[i].lock, &a);
		slots[i].fd = -1;
	}

	if (!modules_unload())
		ksft_exit_fail_msg("the DCCP modules cannot be unloaded before the first round\n");
	skb_baseline = slab_objects(SKB_SLAB);
	if (skb_baseline < 0)
		ksft_exit_skip("no /proc/slabinfo entry for %s\n", SKB_SLAB);
	printf("# seed %lu, %u s budget, %u s rounds, %u sockets, %u threads, faults %u/1000; %s %ld objects\n",
	       cfg_seed, cfg_duration, cfg_round, cfg_sockets, cfg_threads,
	       cfg_faults, SKB_SLAB, skb_baseline);

	/* Setting up and tearing down a round (namespace cleanup, above all)
	 * takes longer than its sending time under TCG: start another round
	 * only if one as long as the longest so far still fits the budget.
	 * One always runs.  With goals (-c, -u), stop as soon as they are met.
	 */
	start = now_ns();
	budget = cfg_duration * NSEC_PER_SEC;
	goals = cfg_calls || cfg_cycles;
	do {
		uint64_t t = now_ns();

		round++;
		ok = run_round(round, skb_baseline);
		ksft_test_result(ok, "round %u\n", round);
		if (now_ns() - t > longest)
			longest = now_ns() - t;
	} while ((!goals || !goals_met()) && now_ns() - start + longest <= budget);

	print_totals(round);
	if (goals && !goals_met())
		fail("goals not met in %u s: %llu of %llu calls, %llu of %llu unload cycles",
		     cfg_duration, (unsigned long long)total_calls(),
		     (unsigned long long)cfg_calls, (unsigned long long)unload_cycles,
		     (unsigned long long)cfg_cycles);
	printf("1..%u\n", round);
	return failures ? KSFT_FAIL : KSFT_PASS;
}
