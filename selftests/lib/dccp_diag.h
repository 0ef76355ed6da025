/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One sock_diag dump of DCCP sockets with their queueing policy
 * (INET_DIAG_DCCP_QPOLICY, requested as INET_DIAG_INFO), for the tests
 * that read it: sbpn/sbpn_diag, faults/dccp_faults, stress/dccp_stress.
 */
#ifndef DCCP_DIAG_H
#define DCCP_DIAG_H

#include <errno.h>
#include <stddef.h>
#include <sys/socket.h>
#include <linux/dccp.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>

#include "dccp_abi.h"

/* Called for each socket of the dump: its attribute, or NULL if it has none. */
typedef void (*dccp_diag_cb)(const struct inet_diag_msg *m,
			     const struct dccp_qpolicy_diag *d, void *arg);

/*
 * Dump the DCCP sockets of @family in the namespace of the NETLINK_SOCK_DIAG
 * socket @fd, reading into @buf (a reply datagram is at most 32 KiB, give
 * 64 KiB).  Returns 0 once the dump ended, or -errno: of send() or recv(),
 * the error of an NLMSG_ERROR reply, -EIO for a dump cut short.
 */
static inline int dccp_diag_dump(int fd, int family, char *buf, size_t size,
				 dccp_diag_cb cb, void *arg)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req = {
		.nlh = {
			.nlmsg_len = sizeof(req),
			.nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		},
		.r = {
			.sdiag_family = family,
			.sdiag_protocol = IPPROTO_DCCP,
			.idiag_ext = 1 << (INET_DIAG_INFO - 1),
			.idiag_states = ~0U,
		},
	};

	if (send(fd, &req, sizeof(req), 0) != sizeof(req))
		return -errno;
	for (;;) {
		ssize_t len = recv(fd, buf, size, 0);
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		if (len < 0)
			return -errno;
		if (len == 0)
			return -EIO;
		for (; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			const struct inet_diag_msg *m = NLMSG_DATA(h);
			const struct dccp_qpolicy_diag *d = NULL;
			struct rtattr *a = (struct rtattr *)(m + 1);
			int alen = h->nlmsg_len - NLMSG_LENGTH(sizeof(*m));

			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				return e->error ? e->error : -EIO;
			}
			for (; RTA_OK(a, alen); a = RTA_NEXT(a, alen))
				if (a->rta_type == INET_DIAG_DCCP_QPOLICY &&
				    RTA_PAYLOAD(a) >= sizeof(*d))
					d = RTA_DATA(a);
			cb(m, d, arg);
		}
	}
}

#endif /* DCCP_DIAG_H */
