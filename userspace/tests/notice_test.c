// SPDX-License-Identifier: GPL-2.0
/*
 * notice_test - the error-queue reader (lib/sbpn_errqueue.h) and the
 * library's decoding of a drop notice on the host, KTAP on stdout; run by
 * tests/host_tests.py.
 *
 * A drop notice needs our DCCP modules (the selftests check those in the
 * VM), but the kernel hands every error-queue message to userspace the
 * same way: ip_recv_error() / ipv6_recv_error() put the extended error and
 * the offender's address in one cmsg.  A UDP socket with IP_RECVERR /
 * IPV6_RECVERR that sends to a closed port on loopback gets the ICMP
 * error that way, so the reader's control buffer is tried here on both
 * families: sized for IPv4 alone it cuts IPv6's (MSG_CTRUNC).
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/dccp.h>

#include "config.h"
#include "sbpn.h"
#include "sbpn_errqueue.h"

static int failed, n;

#define CHECK(cond, ...) do { if (!(cond)) { printf("# " __VA_ARGS__); printf("\n"); ok = 0; } } while (0)

static void report(int ok, const char *name, const char *skip)
{
	printf("%sok %d %s%s%s\n", ok ? "" : "not ", ++n, name, skip ? " # SKIP " : "",
	       skip ? skip : "");
	failed += !ok;
}

/*
 * A UDP socket of @family connected to a loopback port nothing listens on,
 * with IP_RECVERR / IPV6_RECVERR on; -1 if this host cannot have one.
 */
static int refused_socket(int family)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len = family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	int on = 1, fd;

	ss.ss_family = (sa_family_t)family;
	if (family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else
		((struct sockaddr_in6 *)&ss)->sin6_addr = in6addr_loopback;
	/* a port that was free a moment ago: bind, learn it, close */
	fd = socket(family, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&ss, len) || getsockname(fd, (struct sockaddr *)&ss, &len)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	fd = socket(family, SOCK_DGRAM, 0);
	if (fd < 0)
		return -1;
	if ((family == AF_INET ? setsockopt(fd, SOL_IP, IP_RECVERR, &on, sizeof(on))
			       : setsockopt(fd, SOL_IPV6, IPV6_RECVERR, &on, sizeof(on))) ||
	    connect(fd, (struct sockaddr *)&ss, len)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Send @msg until its ICMP error is queued: 0 once it is.  The kernel may
 * withhold an ICMP error (its global ICMP rate limit, which other tests on
 * the host draw on too), so @msg goes again every 500 ms, 20 times at most.
 */
static int provoke(int fd, const char *msg)
{
	for (int i = 0; i < 20; i++) {
		struct pollfd p = { .fd = fd, .events = 0 };

		if (send(fd, msg, strlen(msg), 0) < 0 && errno != ECONNREFUSED)
			return -1;
		if (poll(&p, 1, 500) == 1 && (p.revents & POLLERR))
			return 0;
	}
	return -1;
}

static void nothing_waiting(void)
{
	struct sock_extended_err ee;
	struct sbpn_notice nt;
	char buf[64];
	int ok = 1, fd = refused_socket(AF_INET);
	ssize_t r;

	CHECK(fd >= 0, "no IPv4 UDP socket on loopback: %s", strerror(errno));
	if (fd >= 0) {
		r = sbpn_read_errqueue(fd, buf, sizeof(buf), &ee);
		CHECK(r == -EAGAIN, "sbpn_read_errqueue on an empty queue: %zd", r);
		r = sbpn_read_notice(fd, buf, sizeof(buf), &nt);
		CHECK(r == 0, "sbpn_read_notice on an empty queue: %zd (%s)", r, strerror(errno));
		close(fd);
	}
	report(ok, "nothing_waiting", NULL);
}

/*
 * The ICMP error of each family: payload and extended error as sent; the
 * library's sbpn_read_notice() says it is no drop notice (EBADMSG) and
 * consumes it.
 */
static void one_family(int family, const char *name)
{
	const char *msg = family == AF_INET ? "to IPv4" : "to IPv6";
	uint8_t origin = family == AF_INET ? SO_EE_ORIGIN_ICMP : SO_EE_ORIGIN_ICMP6;
	struct sock_extended_err ee;
	struct sbpn_notice nt;
	char buf[64] = { 0 };
	int ok = 1, fd = refused_socket(family);
	ssize_t r;

	if (fd < 0) {
		if (family == AF_INET6) {
			report(1, name, "no IPv6 on loopback");
			return;
		}
		CHECK(0, "no IPv4 UDP socket on loopback: %s", strerror(errno));
		report(ok, name, NULL);
		return;
	}
	CHECK(provoke(fd, msg) == 0, "no ICMP error queued in 10 s");
	memset(&ee, 0, sizeof(ee));
	r = sbpn_read_errqueue(fd, buf, sizeof(buf), &ee);
	CHECK(r == (ssize_t)strlen(msg), "sbpn_read_errqueue: %zd (%s), want %zu", r,
	      r < 0 ? strerror((int)-r) : "a length", strlen(msg));
	if (r > 0)
		CHECK(!memcmp(buf, msg, strlen(msg)), "payload '%.*s'", (int)r, buf);
	CHECK(ee.ee_origin == origin && ee.ee_errno == ECONNREFUSED,
	      "origin %u errno %u, want %u and ECONNREFUSED", ee.ee_origin, ee.ee_errno, origin);
#ifdef HAVE_DCCP_QPOLICY_F_NOTIFY
	CHECK(provoke(fd, msg) == 0, "no second ICMP error queued in 10 s");
	errno = 0;
	r = sbpn_read_notice(fd, buf, sizeof(buf), &nt);
	CHECK(r == -1 && errno == EBADMSG, "sbpn_read_notice on an ICMP error: %zd (%s)", r,
	      strerror(errno));
	r = sbpn_read_notice(fd, buf, sizeof(buf), &nt);
	CHECK(r == 0, "the ICMP error left on the queue: %zd", r);
#else
	(void)nt;
#endif
	close(fd);
	report(ok, name, NULL);
}

/*
 * Control data beyond a notice's (here a timestamp before the extended
 * error) is refused, not read in part.
 */
static void more_control_data_refused(void)
{
	struct sock_extended_err ee;
	char buf[64];
	int ok = 1, on = 1, fd = refused_socket(AF_INET);
	ssize_t r;

	CHECK(fd >= 0, "no IPv4 UDP socket on loopback: %s", strerror(errno));
	if (fd >= 0) {
		CHECK(!setsockopt(fd, SOL_SOCKET, SO_TIMESTAMP, &on, sizeof(on)), "SO_TIMESTAMP: %s",
		      strerror(errno));
		CHECK(provoke(fd, "stamped") == 0, "no ICMP error queued in 10 s");
		r = sbpn_read_errqueue(fd, buf, sizeof(buf), &ee);
		CHECK(r == -EMSGSIZE, "sbpn_read_errqueue with a timestamp: %zd, want -EMSGSIZE", r);
		close(fd);
	}
	report(ok, "more_control_data_refused", NULL);
}

/*
 * The decoding of a notice's extended error ("dccp: qpolicy: report
 * discarded packets on the error queue", DCCP_QPOLICY_EE_LATE from "dccp:
 * qpolicy: sbpn: optionally judge expiry at the predicted departure" and
 * DCCP_QPOLICY_EE_FRAME from "dccp: qpolicy: sbpn: optionally give up a
 * frame whole"): each code its
 * reason, the expiry from ee_data:ee_info; another origin, errno or code
 * is no notice.
 */
static void notice_decoding(void)
{
#ifdef HAVE_DCCP_QPOLICY_F_NOTIFY
	static const struct { uint8_t code; enum sbpn_drop_reason reason; } codes[] = {
		{ DCCP_QPOLICY_EE_EXPIRED, SBPN_DROP_EXPIRED },
		{ DCCP_QPOLICY_EE_EVICTED, SBPN_DROP_EVICTED },
		{ DCCP_QPOLICY_EE_CCID_ERR, SBPN_DROP_CCID_ERR },
		{ DCCP_QPOLICY_EE_FRAME, SBPN_DROP_FRAME },
		{ DCCP_QPOLICY_EE_LATE, SBPN_DROP_LATE },
	};
	/* not notices: ICMP's origin, SO_TXTIME's (whose code 2 is
	 * TXTIME_MISSED), another errno, codes below and above the enum
	 */
	static const struct { uint8_t origin, code; int err; const char *what; } bad[] = {
		{ SO_EE_ORIGIN_ICMP, DCCP_QPOLICY_EE_EXPIRED, ECANCELED, "origin ICMP" },
		{ SO_EE_ORIGIN_TXTIME, SO_EE_CODE_TXTIME_MISSED, ECANCELED, "origin TXTIME" },
		{ SO_EE_ORIGIN_DCCP_QPOLICY, DCCP_QPOLICY_EE_EXPIRED, ECONNREFUSED,
		  "errno ECONNREFUSED" },
		{ SO_EE_ORIGIN_DCCP_QPOLICY, 0, ECANCELED, "code 0" },
		{ SO_EE_ORIGIN_DCCP_QPOLICY, DCCP_QPOLICY_EE_FRAME + 1, ECANCELED, "code 6" },
	};
	const struct sock_extended_err good = {
		.ee_errno = ECANCELED, .ee_origin = SO_EE_ORIGIN_DCCP_QPOLICY,
		.ee_info = 0x9abcdef0, .ee_data = 0x12345678,
	};
	struct sock_extended_err ee;
	struct sbpn_notice nt;
	int ok = 1, r;

	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		ee = good;
		ee.ee_code = codes[i].code;
		memset(&nt, 0, sizeof(nt));
		r = sbpn_notice_from_ee(&ee, &nt);
		CHECK(r == 0 && nt.reason == codes[i].reason, "code %u: %d, reason %d, want %d",
		      codes[i].code, r, nt.reason, codes[i].reason);
		CHECK(nt.expiry_ns == 0x123456789abcdef0ull, "code %u: expiry %#llx", codes[i].code,
		      (unsigned long long)nt.expiry_ns);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ee = good;
		ee.ee_origin = bad[i].origin;
		ee.ee_code = bad[i].code;
		ee.ee_errno = bad[i].err;
		errno = 0;
		r = sbpn_notice_from_ee(&ee, &nt);
		CHECK(r == -1 && errno == EBADMSG, "%s: %d (%s)", bad[i].what, r, strerror(errno));
	}
	report(ok, "notice_decoding", NULL);
#else
	report(1, "notice_decoding", "this build's header has no DCCP_QPOLICY_F_NOTIFY");
#endif
}

int main(void)
{
	printf("TAP version 13\n1..5\n");
	nothing_waiting();
	one_family(AF_INET, "icmp_error_ipv4");
	one_family(AF_INET6, "icmp_error_ipv6");
	more_control_data_refused();
	notice_decoding();
	return failed ? 1 : 0;
}
