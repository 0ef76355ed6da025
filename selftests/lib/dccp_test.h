/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the DCCP and SBPN selftests (kselftest_harness.h).
 *
 * Every test runs in a child of the harness; dt_netns_enter() gives it a
 * fresh network namespace with lo up, so tests never touch the host's state
 * and clean up by exiting.  Sockets keep the namespace they were created in,
 * which lets one test put its two ends in two namespaces (dt_netns_new()
 * plus setns()).  Every packet carries a 4-byte tag the receiver reads back.
 * Helpers that can fail take the harness's _metadata and ASSERT.
 */
#ifndef DCCP_TEST_H
#define DCCP_TEST_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/dccp.h>

#include "kselftest_harness.h"
#include "dccp_abi.h"

/*
 * CCID3's sender state as DCCP_SOCKOPT_CCID_TX_INFO returns it; the kernel
 * declares it in include/linux/tfrc.h, outside uapi.  X in 64ths of bytes/s,
 * p scaled by 1e6, times in microseconds.
 */
struct dt_tfrc_tx_info {
	uint64_t x;
	uint64_t x_recv;
	uint32_t x_calc;
	uint32_t rtt_us;
	uint32_t p;
	uint32_t rto_us;
	uint32_t ipi_us;
};

/*
 * CCID3's receiver state as DCCP_SOCKOPT_CCID_RX_INFO returns it (struct
 * tfrc_rx_info of include/linux/tfrc.h): X_recv in bytes/s, the RTT in
 * microseconds, p scaled by 1e6.
 */
struct dt_tfrc_rx_info {
	uint32_t x_recv;
	uint32_t rtt;
	uint32_t p;
};

#define DT_PAYLOAD	100	/* bytes per test packet */
#define NSEC_PER_MSEC	1000000ULL

static inline uint64_t dt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static inline void dt_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The integer in @path (a sysfs file, say), or -1 if it cannot be read. */
static inline int dt_read_int(const char *path)
{
	FILE *f = fopen(path, "r");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* Run a shell command; fail the test if it does not exit 0. */
static inline void dt_sh(struct __test_metadata *_metadata, const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc != 0)
		TH_LOG("command failed (status %d): %s", rc, cmd);
	ASSERT_EQ(0, rc);
}

/* A fresh network namespace for the calling process, with lo up. */
static inline void dt_netns_enter(struct __test_metadata *_metadata)
{
	ASSERT_EQ(0, system("modprobe -a dccp_ipv4 dccp_ipv6 sch_netem sch_fq veth"));
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	dt_sh(_metadata, "ip link set lo up");
}

/*
 * Two new namespaces /run/netns/@a and @b joined by a veth pair: va
 * (10.9.0.1/24) in @a, vb (10.9.0.2/24) in @b, all links up.
 */
static inline void dt_veth_pair(struct __test_metadata *_metadata,
				const char *a, const char *b)
{
	ASSERT_EQ(0, system("modprobe -a dccp_ipv4 sch_netem veth"));
	dt_sh(_metadata, "ip netns add %s && ip netns add %s", a, b);
	dt_sh(_metadata, "ip -n %s link add va type veth peer name vb netns %s", a, b);
	dt_sh(_metadata,
	      "ip -n %s addr add 10.9.0.1/24 dev va && ip -n %s link set va up && ip -n %s link set lo up",
	      a, a, a);
	dt_sh(_metadata,
	      "ip -n %s addr add 10.9.0.2/24 dev vb && ip -n %s link set vb up && ip -n %s link set lo up",
	      b, b, b);
}

/* Delete the namespaces of dt_veth_pair() (in a teardown: logs, never fails). */
static inline void dt_veth_pair_del(struct __test_metadata *_metadata,
				    const char *a, const char *b)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "ip netns del %s; ip netns del %s", a, b);
	if (system(cmd))
		TH_LOG("cleanup failed: %s", cmd);
}

/*
 * Let @dev in namespace @ns receive through CPU 0's backlog only (RPS).  A
 * veth delivers a packet through the backlog of the CPU that sent it, so
 * with two CPUs packets can overtake each other, which DCCP takes for loss.
 */
static inline void dt_one_backlog(struct __test_metadata *_metadata,
				  const char *ns, const char *dev)
{
	dt_sh(_metadata, "ip netns exec %s sh -c 'echo 1 >/sys/class/net/%s/queues/rx-0/rps_cpus'",
	      ns, dev);
}

/* Switch to the namespace /run/netns/@name; returns nothing, asserts. */
static inline void dt_netns_switch(struct __test_metadata *_metadata, const char *name)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, setns(fd, CLONE_NEWNET));
	close(fd);
}

static inline int dt_setopt(int fd, int opt, int val)
{
	return setsockopt(fd, SOL_DCCP, opt, &val, sizeof(val));
}

/* The value of the int option @opt of @fd, or -errno (for one never < 0). */
static inline int dt_getopt(int fd, int opt)
{
	int val;

	return dccp_getopt_int(fd, opt, &val) ? -errno : val;
}

/*
 * Turn the TX CCID's flag(s) @flag (DCCP_TX_CCID_F_*) on or off, the other
 * bits of DCCP_SOCKOPT_TX_CCID_FLAGS as they are.  0, or -1 (errno).
 */
static inline int dt_set_txflag(int fd, int flag, int on)
{
	return dccp_setopt_bits(fd, DCCP_SOCKOPT_TX_CCID_FLAGS, flag, on);
}

/*
 * A DCCP socket of @family with the CCID (0: default), queueing policy and
 * tx_qlen set; these must be set before listen()/connect().
 */
static inline int dt_socket_af(struct __test_metadata *_metadata, int family,
			       int ccid, int policy, int qlen)
{
	int fd = socket(family, SOCK_DCCP, IPPROTO_DCCP);
	uint8_t c = ccid;
	int one = 1;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
	if (ccid)
		ASSERT_EQ(0, setsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_CCID, &c, 1));
	ASSERT_EQ(0, dt_setopt(fd, DCCP_SOCKOPT_QPOLICY_ID, policy));
	ASSERT_EQ(0, dt_setopt(fd, DCCP_SOCKOPT_QPOLICY_TXQLEN, qlen));
	return fd;
}

static inline int dt_socket(struct __test_metadata *_metadata, int ccid,
			    int policy, int qlen)
{
	return dt_socket_af(_metadata, AF_INET, ccid, policy, qlen);
}

static inline struct sockaddr_in dt_addr(const char *ip, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

	inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

/* The family of a numeric address: AF_INET6 if it has a colon */
static inline int dt_family(const char *ip)
{
	return strchr(ip, ':') ? AF_INET6 : AF_INET;
}

/* @ip:@port as a socket address of its family; returns its length */
static inline socklen_t dt_sockaddr(const char *ip, int port,
				    struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (dt_family(ip) == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(port);
		inet_pton(AF_INET6, ip, &a->sin6_addr);
		return sizeof(*a);
	}
	*(struct sockaddr_in *)ss = dt_addr(ip, port);
	return sizeof(struct sockaddr_in);
}

static inline int dt_listen(struct __test_metadata *_metadata, int ccid,
			    const char *ip, int port)
{
	struct sockaddr_storage a;
	socklen_t len = dt_sockaddr(ip, port, &a);
	int fd = dt_socket_af(_metadata, dt_family(ip), ccid, DCCPQ_POLICY_SIMPLE, 0);

	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&a, len));
	ASSERT_EQ(0, listen(fd, 8));
	return fd;
}

/* Connect @cfd to @ip:@port and return the connection @lfd accepts. */
static inline int dt_connect(struct __test_metadata *_metadata, int cfd,
			     int lfd, const char *ip, int port)
{
	struct sockaddr_storage a;
	socklen_t len = dt_sockaddr(ip, port, &a);
	int afd;

	ASSERT_EQ(0, connect(cfd, (struct sockaddr *)&a, len));
	afd = accept(lfd, NULL, NULL);
	ASSERT_LE(0, afd);
	return afd;
}

#define DT_MAX_PAYLOAD	1400	/* bytes, dt_send_len()'s largest packet */

/*
 * Fill @cmsg, a header of @msg's control buffer, as a SOL_DCCP cmsg of
 * @type carrying the @len bytes at @data; returns the next header (NULL
 * when @msg's control buffer has no room for one).
 */
static inline struct cmsghdr *dt_put_cmsg(struct msghdr *msg,
					  struct cmsghdr *cmsg, int type,
					  const void *data, size_t len)
{
	cmsg->cmsg_level = SOL_DCCP;
	cmsg->cmsg_type = type;
	cmsg->cmsg_len = CMSG_LEN(len);
	memcpy(CMSG_DATA(cmsg), data, len);
	return CMSG_NXTHDR(msg, cmsg);
}

/*
 * Send one tagged packet of @len bytes (4 to DT_MAX_PAYLOAD) with the given
 * cmsgs; returns 0 or -errno.  @prio/@expiry are attached when
 * @with_prio/@with_expiry.
 */
static inline int dt_send_len(int fd, size_t len, uint32_t tag, int with_prio,
			      uint32_t prio, int with_expiry, uint64_t expiry,
			      int flags)
{
	char control[CMSG_SPACE(sizeof(uint32_t)) + CMSG_SPACE(sizeof(uint64_t))];
	char buf[DT_MAX_PAYLOAD] = { 0 };
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cmsg;
	size_t clen = 0;

	if (len < sizeof(tag) || len > sizeof(buf))
		return -EINVAL;
	memset(control, 0, sizeof(control));
	memcpy(buf, &tag, sizeof(tag));
	if (with_prio)
		clen += CMSG_SPACE(sizeof(uint32_t));
	if (with_expiry)
		clen += CMSG_SPACE(sizeof(uint64_t));
	if (clen) {
		msg.msg_control = control;
		msg.msg_controllen = clen;
	}
	cmsg = clen ? CMSG_FIRSTHDR(&msg) : NULL;
	if (with_prio)
		cmsg = dt_put_cmsg(&msg, cmsg, DCCP_SCM_PRIORITY, &prio,
				   sizeof(prio));
	if (with_expiry)
		dt_put_cmsg(&msg, cmsg, DCCP_SCM_EXPIRY, &expiry, sizeof(expiry));
	return sendmsg(fd, &msg, flags) < 0 ? -errno : 0;
}

/* dt_send_len() of a DT_PAYLOAD-byte packet: what most tests send. */
static inline int dt_send(int fd, uint32_t tag, int with_prio, uint32_t prio,
			  int with_expiry, uint64_t expiry, int flags)
{
	return dt_send_len(fd, DT_PAYLOAD, tag, with_prio, prio, with_expiry,
			   expiry, flags);
}

/* Send with exactly one raw cmsg of @len data bytes; returns 0 or -errno. */
static inline int dt_send_raw_cmsg(int fd, int level, int type, size_t len)
{
	char control[CMSG_SPACE(64)];
	char buf[DT_PAYLOAD] = { 0 };
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = control, .msg_controllen = CMSG_SPACE(len),
	};
	struct cmsghdr *cmsg;

	memset(control, 0, sizeof(control));
	cmsg = CMSG_FIRSTHDR(&msg);
	cmsg->cmsg_level = level;
	cmsg->cmsg_type = type;
	cmsg->cmsg_len = CMSG_LEN(len);
	return sendmsg(fd, &msg, MSG_DONTWAIT) < 0 ? -errno : 0;
}

/* Read and drop what @fd has queued, so that a receiver never stops the sender. */
static inline void dt_recv_drop(int fd)
{
	char buf[2048];

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

/*
 * Receive tagged packets into @tags until @quiet_ms pass without one or
 * @max arrive; returns the count.
 */
static inline int dt_recv_tags(int fd, uint32_t *tags, int max, int quiet_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char buf[2048];
	int n = 0;

	while (n < max && poll(&p, 1, quiet_ms) == 1) {
		ssize_t r = recv(fd, buf, sizeof(buf), 0);

		if (r < (ssize_t)sizeof(uint32_t))
			break;
		memcpy(&tags[n++], buf, sizeof(uint32_t));
	}
	return n;
}

static inline int dt_has_tag(const uint32_t *tags, int n, uint32_t tag)
{
	for (int i = 0; i < n; i++)
		if (tags[i] == tag)
			return 1;
	return 0;
}

/*
 * The kernel log from now on: dt_kmsg_open() returns a reader positioned at
 * the end of /dev/kmsg, dt_kmsg_count() counts the records written since
 * that contain @needle, and logs them.
 */
static inline int dt_kmsg_open(struct __test_metadata *_metadata)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	ASSERT_LE(0, fd) TH_LOG("/dev/kmsg: %s", strerror(errno));
	ASSERT_LE(0, lseek(fd, 0, SEEK_END));
	return fd;
}

static inline int dt_kmsg_count(struct __test_metadata *_metadata, int fd,
				const char *needle)
{
	char rec[2048];
	int n = 0;

	for (;;) {
		ssize_t r = read(fd, rec, sizeof(rec) - 1);

		if (r < 0 && errno == EPIPE)	/* overwritten: read on */
			continue;
		if (r <= 0)
			break;
		rec[r] = 0;
		if (strstr(rec, needle)) {
			TH_LOG("kernel: %s", strchr(rec, ';') ? strchr(rec, ';') + 1 : rec);
			n++;
		}
	}
	return n;
}

#endif /* DCCP_TEST_H */
