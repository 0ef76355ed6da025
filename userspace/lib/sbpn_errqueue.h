/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sbpn_errqueue.h - one message from a socket's error queue: the one reader
 * of the kernel's drop notices (DCCP_QPOLICY_F_NOTIFY).  The
 * library's sbpn_read_notice() decodes what it returns; the selftests
 * (selftests/sbpn/sbpn_test.h) check the extended error itself with it.
 * Header-only, needing libc and the kernel's uapi headers alone, so that
 * the selftests, which build against the uapi header without the library's
 * configuration, read notices with the same code as the library.
 */
#ifndef SBPN_ERRQUEUE_H
#define SBPN_ERRQUEUE_H

#include <errno.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <linux/errqueue.h>

/*
 * The control buffer.  For each message, ip_recv_error() and
 * ipv6_recv_error() add one cmsg, IP_RECVERR / IPV6_RECVERR: the struct
 * sock_extended_err followed by the offender's address, a struct
 * sockaddr_in on an IPv4 socket (32 bytes in all) and a struct sockaddr_in6
 * on an IPv6 one (44 bytes).  A drop notice (SO_EE_ORIGIN_DCCP_QPOLICY) gets
 * nothing else: no IP_PKTINFO for that origin, and timestamps only with
 * SO_TIMESTAMP*, which nothing here sets.  So room for the IPv6 form; a
 * message whose control data did not fit (MSG_CTRUNC) is refused rather
 * than read in part.
 */
#define SBPN_ERRQUEUE_CONTROL \
	CMSG_SPACE(sizeof(struct sock_extended_err) + sizeof(struct sockaddr_in6))

/*
 * One message from the error queue of @fd, without blocking: its payload
 * into @buf (@cap bytes) and its extended error into @ee.  The payload's
 * length, or -errno: -EAGAIN none waiting, -ENOMSG no IP_RECVERR or
 * IPV6_RECVERR, -EMSGSIZE its control data did not fit; the message is
 * consumed in every case but -EAGAIN.
 */
static inline ssize_t sbpn_read_errqueue(int fd, void *buf, size_t cap,
					 struct sock_extended_err *ee)
{
	union {
		char buf[SBPN_ERRQUEUE_CONTROL];
		struct cmsghdr align;
	} control;
	struct iovec iov = { .iov_base = buf, .iov_len = cap };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = control.buf, .msg_controllen = sizeof(control.buf),
	};
	struct cmsghdr *cm;
	ssize_t len;

	len = recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT);
	if (len < 0)
		return -errno;
	if (msg.msg_flags & MSG_CTRUNC)
		return -EMSGSIZE;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
		if ((cm->cmsg_level == SOL_IP && cm->cmsg_type == IP_RECVERR) ||
		    (cm->cmsg_level == SOL_IPV6 && cm->cmsg_type == IPV6_RECVERR)) {
			memcpy(ee, CMSG_DATA(cm), sizeof(*ee));
			return len;
		}
	return -ENOMSG;
}

#endif /* SBPN_ERRQUEUE_H */
