/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the SBPN selftests, on top of dccp_test.h.
 *
 * Topology: a test program declares two paths with SBPN_TOPOLOGY(); before
 * its tests run, two network namespaces (sender A, receiver B) are created,
 * joined by veth pairs va1-vb1 (10.9.1.0/24, fd09:1::/64) and va2-vb2
 * (10.9.2.0/24, fd09:2::/64), each end with the given root qdisc, and
 * removed again at exit.  Tests
 * share them, since every process spawned under TCG costs about a second;
 * each test gets its own listener port.
 *
 * Most tests need packets to wait in the TX queue long enough to observe
 * the policy's choices.  They get that deterministically from CCID 2 and a
 * long RTT: netem delays only the receiver's Acks (so the data path has no
 * qdisc that could reorder), and "fillers" are sent until CCID 2's initial
 * window is full.  From then on nothing leaves the queue until the first
 * Ack returns, at least one RTT later, and everything queued meanwhile is
 * sent in the policy's order.
 *
 * The receiver sees that order as long as nothing reorders on the way.  A
 * veth hands each packet to the backlog of the CPU that sent it, and the
 * sender sends from whichever CPU an Ack arrived on, so with two CPUs
 * packets could overtake each other before they reach DCCP (which keeps no
 * order of its own).  RPS on vb1 and vb2 steers every packet through CPU
 * 0's backlog instead, so the receiver sees them in the order they left.
 */
#ifndef SBPN_TEST_H
#define SBPN_TEST_H

#include "dccp_test.h"

#include <linux/errqueue.h>

/*
 * Drop notices are read with the library's reader (userspace/lib, on the
 * include path from the Makefile), the one the traffic sender decodes them
 * with: sbpn_read_errqueue() gives the extended error itself, which these
 * tests check, the payload's length or -errno (-EAGAIN: none).
 */
#include "sbpn_errqueue.h"

/* A drop notice of a test packet: its tag (the payload's first word) */
struct sbpn_notice {
	uint32_t tag;
	struct sock_extended_err ee;
};

/*
 * One notice from the error queue of @fd, whose payload must be a whole
 * test packet (DT_PAYLOAD bytes): 0, or -errno (-EAGAIN: none; -EBADMSG:
 * a payload of another length).
 */
static inline int sbpn_read_notice(int fd, struct sbpn_notice *n)
{
	char payload[DT_PAYLOAD];
	ssize_t len = sbpn_read_errqueue(fd, payload, sizeof(payload), &n->ee);

	if (len < 0)
		return len;
	if (len != DT_PAYLOAD)
		return -EBADMSG;
	memcpy(&n->tag, payload, sizeof(n->tag));
	return 0;
}

/* The expiry a notice names: ee_data holds its high 32 bits, ee_info the low */
static inline uint64_t sbpn_notice_expiry(const struct sbpn_notice *n)
{
	return (uint64_t)n->ee.ee_data << 32 | n->ee.ee_info;
}

#define SBPN_FILLER	0x80000000u	/* tag bit of the window fillers */
#define SBPN_PROBE	0x40000000u	/* tag bit of sbpn_measure_rtt()'s packets */
#define SBPN_PROBES	2		/* packets sbpn_measure_rtt() sends */
#define SBPN_MAX_TAGS	4096
#define SBPN_WAIT_MS	6000	/* longest silence while packets are due */
#define SBPN_QUIET_MS	400	/* silence that shows nothing more is coming */

/* MAC address of vXN: SBPN_MAC "X:0N", e.g. 02:00:00:00:0a:01 for va1 */
#define SBPN_MAC	"02:00:00:00:0"
static const char * const sbpn_ip_a[] = { NULL, "10.9.1.1", "10.9.2.1" };
static const char * const sbpn_ip_b[] = { NULL, "10.9.1.2", "10.9.2.2" };
/* the same paths over IPv6 */
static const char * const sbpn_ip6_a[] = { NULL, "fd09:1::1", "fd09:2::1" };
static const char * const sbpn_ip6_b[] = { NULL, "fd09:1::2", "fd09:2::2" };

/* The namespaces of SBPN_TOPOLOGY(), named after the harness's pid. */
static char sbpn_ns_a[32], sbpn_ns_b[32];

/* A test connection: a sender in A, its peer accepted in B. */
struct sbpn_conn {
	int lfd;	/* listener, in B */
	int cfd;	/* sender, in A */
	int afd;	/* receiver (the accepted socket), in B */
	int port;
	int policy;	/* the sender's */
};

/* Absolute CLOCK_MONOTONIC deadline @ms from now, as DCCP_SCM_EXPIRY wants. */
static inline uint64_t sbpn_in_ms(uint64_t ms)
{
	return dt_now_ns() + ms * NSEC_PER_MSEC;
}

/* Run @prog -b - (ip or tc batch mode) with @cmds on stdin; 0 on success. */
static inline int sbpn_batch(const char *prog, const char *cmds)
{
	int fds[2], status;
	size_t len = strlen(cmds);
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(fds[0], 0);
		close(fds[0]);
		close(fds[1]);
		execlp(prog, prog, "-b", "-", (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
	if (write(fds[1], cmds, len) != (ssize_t)len)
		fprintf(stderr, "# %s: short write of its commands\n", prog);
	close(fds[1]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr, "# %s -b failed on:\n%s", prog, cmds);
		return -1;
	}
	return 0;
}

static inline int sbpn_enter(const char *ns)
{
	char path[64];
	int fd, err;

	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	err = setns(fd, CLONE_NEWNET);
	close(fd);
	return err;
}

/* Configure one end (@side 'a' or 'b') in the current namespace. */
static inline int sbpn_end_setup(char side, const char * const ips[],
				 const char * const peer_ips[],
				 const char * const ip6s[],
				 const char * const peer_ip6s[],
				 const char * const qdisc[2])
{
	char cmds[1024], tc[512];
	int off = 0;

	char peer = side == 'a' ? 'b' : 'a';

	/* static neighbours: no ARP or neighbour discovery adds to the
	 * handshake's RTT; no duplicate address detection delays IPv6
	 */
	snprintf(cmds, sizeof(cmds),
		 "link set lo up\n"
		 "addr add %s/24 dev v%c1\nlink set v%c1 up\n"
		 "addr add %s/24 dev v%c2\nlink set v%c2 up\n"
		 "addr add %s/64 dev v%c1 nodad\naddr add %s/64 dev v%c2 nodad\n"
		 "neigh add %s lladdr " SBPN_MAC "%c:01 dev v%c1 nud permanent\n"
		 "neigh add %s lladdr " SBPN_MAC "%c:02 dev v%c2 nud permanent\n"
		 "neigh add %s lladdr " SBPN_MAC "%c:01 dev v%c1 nud permanent\n"
		 "neigh add %s lladdr " SBPN_MAC "%c:02 dev v%c2 nud permanent\n",
		 ips[1], side, side, ips[2], side, side,
		 ip6s[1], side, ip6s[2], side,
		 peer_ips[1], peer, side, peer_ips[2], peer, side,
		 peer_ip6s[1], peer, side, peer_ip6s[2], peer, side);
	tc[0] = 0;
	for (int i = 0; i < 2; i++)
		if (qdisc[i])
			off += snprintf(tc + off, sizeof(tc) - off,
					"qdisc add dev v%c%d root %s\n",
					side, i + 1, qdisc[i]);
	if (sbpn_batch("ip", cmds))
		return -1;
	return off ? sbpn_batch("tc", tc) : 0;
}

static inline int sbpn_topology_up(const char * const qdisc_a[2],
				   const char * const qdisc_b[2])
{
	char cmds[512];
	int init_ns = open("/proc/self/ns/net", O_RDONLY);

	/* the VM has every one of them: failing to load one is a failure */
	if (system("modprobe -a dccp_ipv4 dccp_ipv6 dccp_diag sch_netem sch_fq veth")) {
		printf("# cannot load DCCP, dccp_diag, netem, fq or veth\n");
		exit(KSFT_FAIL);
	}
	snprintf(sbpn_ns_a, sizeof(sbpn_ns_a), "sbA-%d", getpid());
	snprintf(sbpn_ns_b, sizeof(sbpn_ns_b), "sbB-%d", getpid());
	snprintf(cmds, sizeof(cmds),
		 "netns add %s\nnetns add %s\n"
		 "link add va1 netns %s address " SBPN_MAC
		 "a:01 type veth peer name vb1 netns %s address " SBPN_MAC "b:01\n"
		 "link add va2 netns %s address " SBPN_MAC
		 "a:02 type veth peer name vb2 netns %s address " SBPN_MAC "b:02\n",
		 sbpn_ns_a, sbpn_ns_b, sbpn_ns_a, sbpn_ns_b, sbpn_ns_a, sbpn_ns_b);
	if (init_ns < 0 || sbpn_batch("ip", cmds) ||
	    sbpn_enter(sbpn_ns_a) ||
	    sbpn_end_setup('a', sbpn_ip_a, sbpn_ip_b, sbpn_ip6_a, sbpn_ip6_b, qdisc_a) ||
	    sbpn_enter(sbpn_ns_b) ||
	    sbpn_end_setup('b', sbpn_ip_b, sbpn_ip_a, sbpn_ip6_b, sbpn_ip6_a, qdisc_b) ||
	    setns(init_ns, CLONE_NEWNET))
		return -1;
	close(init_ns);
	/* one receiving backlog (CPU 0) for the data: no reordering */
	snprintf(cmds, sizeof(cmds),
		 "ip netns exec %s sh -c 'for d in vb1 vb2; do echo 1 >/sys/class/net/$d/queues/rx-0/rps_cpus || exit 1; done'",
		 sbpn_ns_b);
	return system(cmds) ? -1 : 0;
}

static inline void sbpn_topology_down(void)
{
	char cmds[128];

	snprintf(cmds, sizeof(cmds), "netns del %s\nnetns del %s\n",
		 sbpn_ns_a, sbpn_ns_b);
	sbpn_batch("ip", cmds);
}

/*
 * Declare the program's two paths: the root qdiscs (tc syntax after "root",
 * NULL for the default) of va1, va2 (sender side) and vb1, vb2 (receiver).
 */
#define SBPN_TOPOLOGY(a1, a2, b1, b2)					\
	static void __attribute__((constructor)) sbpn_topology_ctor(void) \
	{								\
		static const char * const qa[2] = { a1, a2 };		\
		static const char * const qb[2] = { b1, b2 };		\
									\
		if (sbpn_topology_up(qa, qb)) {				\
			printf("# could not set up the namespaces\n");	\
			sbpn_topology_down();				\
			exit(KSFT_FAIL);				\
		}							\
	}								\
	static void __attribute__((destructor)) sbpn_topology_dtor(void) \
	{								\
		sbpn_topology_down();					\
	}

static inline void sbpn_switch(struct __test_metadata *_metadata, const char *ns)
{
	ASSERT_EQ(0, sbpn_enter(ns));
}

/*
 * Connect a sender in A (CCID @ccid, @policy, @qlen) over path @path to a
 * listener in B.  The receiver's buffer holds far more than any test sends,
 * so nothing is lost while it is not reading.
 */
static inline void sbpn_connect_af(struct __test_metadata *_metadata,
				   struct sbpn_conn *c, int family, int path,
				   int ccid, int policy, int qlen)
{
	const char *ip = (family == AF_INET6 ? sbpn_ip6_b : sbpn_ip_b)[path];
	int rcvbuf = 16 << 20, sndbuf = 16 << 20;	/* bytes */

	c->port = 5000 + getpid() % 30000;
	c->policy = policy;
	sbpn_switch(_metadata, sbpn_ns_b);
	c->lfd = dt_listen(_metadata, ccid, ip, c->port);
	sbpn_switch(_metadata, sbpn_ns_a);
	c->cfd = dt_socket_af(_metadata, family, ccid, policy, qlen);
	ASSERT_EQ(0, setsockopt(c->cfd, SOL_SOCKET, SO_SNDBUFFORCE,
				&sndbuf, sizeof(sndbuf)));
	c->afd = dt_connect(_metadata, c->cfd, c->lfd, ip, c->port);
	ASSERT_EQ(0, setsockopt(c->afd, SOL_SOCKET, SO_RCVBUFFORCE,
				&rcvbuf, sizeof(rcvbuf)));
}

static inline void sbpn_connect(struct __test_metadata *_metadata,
				struct sbpn_conn *c, int path, int ccid,
				int policy, int qlen)
{
	sbpn_connect_af(_metadata, c, AF_INET, path, ccid, policy, qlen);
}

/*
 * Let the sender's CCID measure the RTT of a path whose RTT is @rtt_ms:
 * until it has, the policies judge expiry against an RTT of 0 (never the
 * handshake's).  SBPN_PROBES packets without an expiry (the receiver's Ack
 * Ratio is 2, so one Ack covers both and none is delayed), received here,
 * then the time their Ack needs to return.  They count as queued and sent.
 */
static inline void sbpn_measure_rtt(struct __test_metadata *_metadata,
				    const struct sbpn_conn *c,
				    unsigned int rtt_ms)
{
	uint32_t got[SBPN_PROBES];

	for (uint32_t i = 0; i < SBPN_PROBES; i++)
		ASSERT_EQ(0, dt_send(c->cfd, SBPN_PROBE | i, 1, 0, 0, 0,
				     MSG_DONTWAIT));
	ASSERT_EQ(SBPN_PROBES,
		  dt_recv_tags(c->afd, got, SBPN_PROBES, SBPN_WAIT_MS));
	dt_sleep_ms(rtt_ms + 200);
}

static inline struct dccp_qpolicy_stats
sbpn_stats(struct __test_metadata *_metadata, int fd)
{
	struct dccp_qpolicy_stats s;
	socklen_t len = sizeof(s);

	memset(&s, 0xff, sizeof(s));
	EXPECT_EQ(0, getsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_QPOLICY_STATS, &s, &len));
	EXPECT_EQ(sizeof(s), len);
	return s;
}

static inline void sbpn_stats_log(struct __test_metadata *_metadata,
				  const char *when,
				  const struct dccp_qpolicy_stats *s)
{
	TH_LOG("%s: queued %llu sent %llu expired %llu expired_sent %llu evicted %llu",
	       when, s->queued, s->sent, s->expired, s->expired_sent, s->evicted);
	TH_LOG("%s: refused %llu purged %llu ccid_err %llu qlen %llu",
	       when, s->refused, s->purged, s->ccid_err, s->qlen);
}

/* The counters' invariant: every admitted packet is somewhere. */
static inline void sbpn_check_invariant(struct __test_metadata *_metadata,
					const struct dccp_qpolicy_stats *s)
{
	EXPECT_EQ(s->queued, s->sent + s->expired + s->evicted + s->frame +
			     s->purged + s->ccid_err + s->qlen);
	EXPECT_LE(s->expired_sent, s->sent);
}

/*
 * Send one tagged packet the way @policy accepts it: a priority unless
 * SIMPLE, an expiry (absolute ns, 0 for none) only under SBPN.
 * Returns 0 or -errno.
 */
static inline int sbpn_send(int fd, int policy, uint32_t tag, uint32_t prio,
			    uint64_t expiry, int flags)
{
	int sbpn = policy >= DCCPQ_POLICY_SBPN1;

	return dt_send(fd, tag, policy != DCCPQ_POLICY_SIMPLE, prio,
		       sbpn && expiry, expiry, flags);
}

/*
 * Fill CCID 2's window: send fillers (priority 0, expiring @expiry_ms after
 * their sendmsg unless 0) until one stays queued.  Returns the number sent;
 * the last one, SBPN_FILLER | (n - 1), is the one in the queue.
 */
static inline int sbpn_block(struct __test_metadata *_metadata,
			     const struct sbpn_conn *c, uint64_t expiry_ms)
{
	struct dccp_qpolicy_stats s;
	int n;

	for (n = 0; n < 32; n++) {
		ASSERT_EQ(0, sbpn_send(c->cfd, c->policy, SBPN_FILLER | n, 0,
				       expiry_ms ? sbpn_in_ms(expiry_ms) : 0,
				       MSG_DONTWAIT));
		s = sbpn_stats(_metadata, c->cfd);
		if (s.qlen)
			break;
	}
	ASSERT_EQ(1, s.qlen);
	return n + 1;
}

/* Wait until the sender's queue is empty; returns its final counters. */
static inline struct dccp_qpolicy_stats
sbpn_drain(struct __test_metadata *_metadata, int fd)
{
	struct dccp_qpolicy_stats s = sbpn_stats(_metadata, fd);

	for (int ms = 0; s.qlen && ms < SBPN_WAIT_MS; ms += 50) {
		dt_sleep_ms(50);
		s = sbpn_stats(_metadata, fd);
	}
	ASSERT_EQ(0, s.qlen);
	return s;
}

/* Tags of fillers 0 .. @n - 1, the ones a full window let through. */
static inline int sbpn_fillers(uint32_t *want, int n)
{
	for (int i = 0; i < n; i++)
		want[i] = SBPN_FILLER | i;
	return n;
}

/*
 * Receive until @want packets (fillers not counted unless @keep_fillers)
 * arrived or SBPN_WAIT_MS pass without one, then until SBPN_QUIET_MS pass
 * without one, so that packets beyond @want are seen too.  Returns the count.
 */
static inline int sbpn_recv(int fd, uint32_t *tags, int want, int keep_fillers)
{
	uint32_t t;
	int n = 0, wait = SBPN_WAIT_MS;

	while (n < SBPN_MAX_TAGS && dt_recv_tags(fd, &t, 1, wait) == 1) {
		if (keep_fillers || !(t & SBPN_FILLER))
			tags[n++] = t;
		if (n >= want)
			wait = SBPN_QUIET_MS;
	}
	return n;
}

static inline void sbpn_log_tags(struct __test_metadata *_metadata,
				 const char *what, const uint32_t *tags, int n)
{
	char line[1024];
	int off = 0;

	line[0] = 0;
	for (int i = 0; i < n && off < (int)sizeof(line) - 16; i++)
		off += snprintf(line + off, sizeof(line) - off, "%s%s%u",
				i ? " " : "", tags[i] & SBPN_FILLER ? "F" : "",
				tags[i] & ~SBPN_FILLER);
	TH_LOG("%s (%d): %s", what, n, line);
}

/* Expect the receiver to have got exactly @want, in this order. */
static inline void sbpn_expect_tags(struct __test_metadata *_metadata,
				    const uint32_t *got, int n_got,
				    const uint32_t *want, int n_want)
{
	int same = n_got == n_want;

	for (int i = 0; same && i < n_got; i++)
		same = got[i] == want[i];
	if (!same) {
		sbpn_log_tags(_metadata, "expected", want, n_want);
		sbpn_log_tags(_metadata, "received", got, n_got);
	}
	EXPECT_TRUE(same);
}

/*
 * Turn the queueing policy's flag(s) @flag (DCCP_QPOLICY_F_*) on or off,
 * the other bits of DCCP_SOCKOPT_QPOLICY_FLAGS as they are.  0, or -1
 * (errno).
 */
static inline int sbpn_set_qflag(int fd, int flag, int on)
{
	return dccp_setopt_bits(fd, DCCP_SOCKOPT_QPOLICY_FLAGS, flag, on);
}

/*
 * A flag of a bit mask option (DCCP_SOCKOPT_QPOLICY_FLAGS or
 * DCCP_SOCKOPT_TX_CCID_FLAGS) and the option's contract, then its use: the
 * flag is off until set; a bit the kernel does not know and INT_MIN are
 * refused (EINVAL) and leave the bits in force as they were; turn @flag on
 * or off (@on) and read back the bits in force, the others unchanged.
 */
static inline void sbpn_set_flag(struct __test_metadata *_metadata, int fd,
				 int opt, int flag, int on)
{
	int unknown = opt == DCCP_SOCKOPT_TX_CCID_FLAGS ?
		      DCCP_TX_CCID_F_UNKNOWN : DCCP_QPOLICY_F_UNKNOWN;
	int old = dt_getopt(fd, opt);

	ASSERT_LE(0, old);
	ASSERT_EQ(0, old & flag);
	ASSERT_EQ(-1, dt_setopt(fd, opt, old | unknown));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, dt_setopt(fd, opt, INT_MIN));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(old, dt_getopt(fd, opt));
	ASSERT_EQ(0, dccp_setopt_bits(fd, opt, flag, on));
	ASSERT_EQ(on ? old | flag : old, dt_getopt(fd, opt));
}

/*
 * DCCP_SOCKOPT_QPOLICY_ORDER's contract, then its use: PRIORITY until set;
 * a value past the last order and -1 are refused (EINVAL) and leave the
 * order in force; set @order and read it back.
 */
static inline void sbpn_set_order(struct __test_metadata *_metadata, int fd,
				  int order)
{
	ASSERT_EQ(DCCP_QPOLICY_ORDER_PRIORITY,
		  dt_getopt(fd, DCCP_SOCKOPT_QPOLICY_ORDER));
	ASSERT_EQ(-1, dt_setopt(fd, DCCP_SOCKOPT_QPOLICY_ORDER,
				DCCP_QPOLICY_ORDER_INVALID));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, dt_setopt(fd, DCCP_SOCKOPT_QPOLICY_ORDER, -1));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(DCCP_QPOLICY_ORDER_PRIORITY,
		  dt_getopt(fd, DCCP_SOCKOPT_QPOLICY_ORDER));
	ASSERT_EQ(0, dt_setopt(fd, DCCP_SOCKOPT_QPOLICY_ORDER, order));
	ASSERT_EQ(order, dt_getopt(fd, DCCP_SOCKOPT_QPOLICY_ORDER));
}

/*
 * Send tagged packet @tag with a priority, an expiry and the frame id @frame
 * (DCCP_SCM_FRAME), each in its cmsg; 0, or -errno.
 */
static inline int sbpn_send_framed(int fd, uint32_t tag, uint32_t prio,
				   uint64_t expiry, uint32_t frame)
{
	char control[2 * CMSG_SPACE(sizeof(uint32_t)) +
		     CMSG_SPACE(sizeof(uint64_t))] = { 0 };
	char buf[DT_PAYLOAD] = { 0 };
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = control, .msg_controllen = sizeof(control),
	};
	struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);

	memcpy(buf, &tag, sizeof(tag));
	cmsg = dt_put_cmsg(&msg, cmsg, DCCP_SCM_PRIORITY, &prio, sizeof(prio));
	cmsg = dt_put_cmsg(&msg, cmsg, DCCP_SCM_EXPIRY, &expiry, sizeof(expiry));
	dt_put_cmsg(&msg, cmsg, DCCP_SCM_FRAME, &frame, sizeof(frame));
	return sendmsg(fd, &msg, MSG_DONTWAIT) < 0 ? -errno : 0;
}

/*
 * One packet of a list for sbpn_send_pkts(): expiry @due_ms after the list
 * starts, so that packets of one @due_ms share an expiry; 0 for none.
 */
struct sbpn_pkt {
	uint32_t tag, prio;
	unsigned int due_ms;
};

/*
 * On a path that holds all but the first packet back (feedback delayed, as
 * in sbpn_predict): send one packet that leaves at once (tag 0), then @n
 * with priority and expiry (@start, CLOCK_MONOTONIC ns, plus due_ms),
 * counting those refused (EAGAIN) in @refused.  Returns the counters with
 * them queued.
 */
static inline struct dccp_qpolicy_stats
sbpn_send_pkts_at(struct __test_metadata *_metadata, int fd, uint64_t start,
		  const struct sbpn_pkt *p, int n, int *refused)
{
	struct dccp_qpolicy_stats s;

	ASSERT_EQ(0, dt_send(fd, 0, 1, 1, 0, 0, MSG_DONTWAIT));
	*refused = 0;
	for (int i = 0; i < n; i++) {
		int rc = dt_send(fd, p[i].tag, 1, p[i].prio, p[i].due_ms != 0,
				 start + p[i].due_ms * NSEC_PER_MSEC,
				 MSG_DONTWAIT);

		if (rc == -EAGAIN)
			(*refused)++;
		else
			ASSERT_EQ(0, rc);
	}
	s = sbpn_stats(_metadata, fd);
	sbpn_stats_log(_metadata, "queued", &s);
	/* the first packet has left, the others wait */
	ASSERT_EQ(1, s.sent);
	return s;
}

/* sbpn_send_pkts_at() with expiries from now */
static inline struct dccp_qpolicy_stats
sbpn_send_pkts(struct __test_metadata *_metadata, int fd,
	       const struct sbpn_pkt *p, int n, int *refused)
{
	return sbpn_send_pkts_at(_metadata, fd, sbpn_in_ms(0), p, n, refused);
}

/*
 * Expect the receiver to get exactly @want, in this order; returns the
 * sender's counters once its queue is empty, their invariant checked.
 */
static inline struct dccp_qpolicy_stats
sbpn_expect_order(struct __test_metadata *_metadata, const struct sbpn_conn *c,
		  const uint32_t *want, int n)
{
	uint32_t got[SBPN_MAX_TAGS];
	struct dccp_qpolicy_stats s;
	int n_got;

	n_got = sbpn_recv(c->afd, got, n, 0);
	sbpn_expect_tags(_metadata, got, n_got, want, n);
	s = sbpn_drain(_metadata, c->cfd);
	sbpn_stats_log(_metadata, "drained", &s);
	sbpn_check_invariant(_metadata, &s);
	return s;
}

/* ---- tracefs, CCID 3 state, drop notices ---------------------------- */

#define SBPN_TRACING	"/sys/kernel/tracing"
#define SBPN_DROP_EVENT	SBPN_TRACING "/events/dccp/dccp_qpolicy_drop/enable"

/* Write @s to the (tracefs) file @path. */
static inline void sbpn_write_file(struct __test_metadata *_metadata,
				   const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC);

	ASSERT_LE(0, fd) {
		TH_LOG("%s: %s", path, strerror(errno));
	}
	ASSERT_EQ((ssize_t)strlen(s), write(fd, s, strlen(s)));
	close(fd);
}

/* One dccp:dccp_qpolicy_drop event as the trace file prints it. */
struct sbpn_drop_event {
	unsigned int sport, dport, priority, rtt_us, qlen;
	unsigned long long expiry_ns, now_ns;
	char reason[16], src[64], dest[64];
	/*
	 * The limit an expired or refused packet was judged against and what
	 * it is made of: limit_ns = now_ns + wait_ns + owd_us * 1000.  Events
	 * of a kernel whose tracepoint records only the RTT have none of these
	 * fields (judged is 0 then, and they read 0).
	 */
	int judged;
	unsigned int min_rtt_us, owd_us;
	unsigned long long wait_ns, limit_ns;
};

/* The value of " @key=" in the event text @ev, scanned with @fmt; 0 if found */
static inline int sbpn_drop_field(const char *ev, const char *key,
				  const char *fmt, void *val)
{
	char k[32];
	const char *p;

	snprintf(k, sizeof(k), " %s=", key);
	p = strstr(ev, k);
	return p && sscanf(p + strlen(k), fmt, val) == 1 ? 0 : -1;
}

/*
 * Parse a trace line into @e; the line is cut to the event's text.  0 if it
 * is a drop event of local port @sport, -1 otherwise.  Fields are found by
 * name, so that fields added to the event do not break older readers.
 */
static inline int sbpn_parse_drop(char *line, unsigned int sport,
				  struct sbpn_drop_event *e)
{
	char *p = strstr(line, "dccp_qpolicy_drop: sport=");

	memset(e, 0, sizeof(*e));
	if (!p)
		return -1;
	p += strlen("dccp_qpolicy_drop:");
	if (sbpn_drop_field(p, "sport", "%u", &e->sport) ||
	    sbpn_drop_field(p, "dport", "%u", &e->dport) ||
	    sbpn_drop_field(p, "reason", "%15s", e->reason) ||
	    sbpn_drop_field(p, "priority", "%u", &e->priority) ||
	    sbpn_drop_field(p, "expiry_ns", "%llu", &e->expiry_ns) ||
	    sbpn_drop_field(p, "now_ns", "%llu", &e->now_ns) ||
	    sbpn_drop_field(p, "rtt_us", "%u", &e->rtt_us) ||
	    sbpn_drop_field(p, "qlen", "%u", &e->qlen) ||
	    sbpn_drop_field(p, "src", "%63s", e->src) ||
	    sbpn_drop_field(p, "dest", "%63s", e->dest) ||
	    e->sport != sport)
		return -1;
	e->judged = !sbpn_drop_field(p, "min_rtt_us", "%u", &e->min_rtt_us) &&
		    !sbpn_drop_field(p, "owd_us", "%u", &e->owd_us) &&
		    !sbpn_drop_field(p, "wait_ns", "%llu", &e->wait_ns) &&
		    !sbpn_drop_field(p, "limit_ns", "%llu", &e->limit_ns);
	p = strstr(line, "dccp_qpolicy_drop:");
	memmove(line, p, strlen(p) + 1);
	line[strcspn(line, "\n")] = 0;
	return 0;
}

/* The CCID 3 sender state of @fd (DCCP_SOCKOPT_CCID_TX_INFO). */
static inline struct dt_tfrc_tx_info sbpn_tx_info(struct __test_metadata *_metadata,
						  int fd)
{
	struct dt_tfrc_tx_info ti;
	socklen_t len = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	EXPECT_EQ(0, getsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_CCID_TX_INFO, &ti, &len));
	return ti;
}

/* Replace the root qdisc of vb<path>, the receiver's end of @path (its Acks). */
static inline void sbpn_set_path_ack_qdisc(struct __test_metadata *_metadata,
					   int path, const char *qdisc)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "qdisc change dev vb%d root %s\n", path, qdisc);
	sbpn_switch(_metadata, sbpn_ns_b);
	ASSERT_EQ(0, sbpn_batch("tc", cmd));
	sbpn_switch(_metadata, sbpn_ns_a);
}

/* Replace the root qdisc of vb1, the receiver's end of path 1 (its Acks). */
static inline void sbpn_set_ack_qdisc(struct __test_metadata *_metadata,
				      const char *qdisc)
{
	sbpn_set_path_ack_qdisc(_metadata, 1, qdisc);
}

/*
 * Make CCID 3's smoothed RTT of @fd, a sender on @path whose feedback
 * comes back through @qdisc from now on, climb to @rtt_us: a packet every
 * 50 ms brings samples, for up to 30 s.  Then wait until its queue is
 * empty; returns the counters then.
 */
static inline struct dccp_qpolicy_stats
sbpn_grow_rtt(struct __test_metadata *_metadata, int fd, int path,
	      const char *qdisc, unsigned int rtt_us, uint32_t *tag)
{
	struct dccp_qpolicy_stats s = { 0 };
	struct dt_tfrc_tx_info ti = sbpn_tx_info(_metadata, fd);

	sbpn_set_path_ack_qdisc(_metadata, path, qdisc);
	for (int ms = 0; ms < 30000 && ti.rtt_us < rtt_us; ms += 50) {
		ASSERT_EQ(0, dt_send(fd, (*tag)++, 1, 0, 0, 0, MSG_DONTWAIT));
		dt_sleep_ms(50);
		ti = sbpn_tx_info(_metadata, fd);
	}
	ASSERT_LE(rtt_us, ti.rtt_us);
	for (int ms = 0; ms < SBPN_WAIT_MS; ms += 10) {
		s = sbpn_stats(_metadata, fd);
		if (!s.qlen)
			break;
		dt_sleep_ms(10);
	}
	ASSERT_EQ(0, s.qlen);
	return s;
}

#endif /* SBPN_TEST_H */
