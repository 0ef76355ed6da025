// SPDX-License-Identifier: GPL-2.0
/*
 * dccp-qstat - list every DCCP socket with its queueing policy, queue
 * length and counters, from sock_diag (the INET_DIAG_DCCP_QPOLICY
 * attribute of the project's dccp_diag), like ss lists TCP sockets.
 *
 * Built on libnl-3's core: a sock_diag dump request for IPPROTO_DCCP with
 * INET_DIAG_INFO, one line per socket in the reply.  (libnl-idiag-3's
 * request helper only builds the old TCP-only request.)  Output: a header,
 * then tab-separated lines; a socket whose kernel sends no queueing
 * attribute (stock modules) shows "-" in those columns.
 *
 * Exit: 0 ok (also when there is no DCCP socket), 1 netlink failure,
 * 2 usage error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/dccp.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "config.h"
#include "sbpn.h"

#define EXIT_RUNTIME	1
#define EXIT_USAGE	2

static const char *const states[] = {
	/* enum dccp_state, as sock_diag reports it (TCP's numbering) */
	[1] = "OPEN", [2] = "REQUESTING", [7] = "CLOSED", [8] = "PASSIVE_CLOSE",
	[9] = "ACTIVE_CLOSE", [10] = "LISTEN", [11] = "CLOSING",
	[12] = "TIME_WAIT", [13] = "RESPOND", [14] = "PARTOPEN",
	[15] = "PASSIVE_CLOSEREQ",
};

static struct {
	int family;		/* AF_UNSPEC: both */
	long sport;		/* -1: any */
} cfg = { .family = AF_UNSPEC, .sport = -1 };

static void usage(FILE *f)
{
	fprintf(f,
"usage: dccp-qstat [-4|-6] [--sport PORT]\n"
"\n"
"Lists the DCCP sockets of the current network namespace: addresses, state,\n"
"queueing policy, tx_qlen and the qpolicy counters (DCCP_SOCKOPT_QPOLICY_STATS)\n"
"as dccp_diag reports them, one tab-separated line each.\n"
"\n"
"  -4, -6         IPv4 or IPv6 sockets only (default: both)\n"
"  --sport PORT   only sockets with this local port\n"
"  --help         this text\n");
}

static void print_header(void)
{
	printf("local\tpeer\tstate\tpolicy\ttx_qlen\tqlen\tqueued\tsent\texpired\t"
	       "expired_sent\tevicted\trefused\tpurged\tccid_err\txmit_err\tframe\n");
}

static void format_addr(char *out, size_t len, int family, const __be32 *addr,
			__be16 port)
{
	char ip[INET6_ADDRSTRLEN];

	inet_ntop(family, addr, ip, sizeof(ip));
	snprintf(out, len, family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, ntohs(port));
}

static int on_socket(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct nlattr *tb[INET_DIAG_MAX + 1];
	struct inet_diag_msg *r;
	char local[64], peer[64];
	int *count = arg;

	if (nlh->nlmsg_len < (__u32)nlmsg_size(sizeof(*r)) ||
	    nlmsg_parse(nlh, sizeof(*r), tb, INET_DIAG_MAX, NULL) < 0) {
		fprintf(stderr, "dccp-qstat: malformed sock_diag message\n");
		return NL_STOP;
	}
	r = nlmsg_data(nlh);
	if (cfg.sport >= 0 && ntohs(r->id.idiag_sport) != cfg.sport)
		return NL_OK;
	format_addr(local, sizeof(local), r->idiag_family, r->id.idiag_src, r->id.idiag_sport);
	format_addr(peer, sizeof(peer), r->idiag_family, r->id.idiag_dst, r->id.idiag_dport);
	printf("%s\t%s\t%s", local, peer,
	       r->idiag_state < sizeof(states) / sizeof(states[0]) && states[r->idiag_state] ?
	       states[r->idiag_state] : "?");
#ifdef HAVE_INET_DIAG_DCCP_QPOLICY
	if (tb[INET_DIAG_DCCP_QPOLICY] &&
	    nla_len(tb[INET_DIAG_DCCP_QPOLICY]) >= (int)sizeof(struct dccp_qpolicy_diag)) {
		struct dccp_qpolicy_diag d;
		const struct dccp_qpolicy_stats *s = &d.stats;

		memcpy(&d, nla_data(tb[INET_DIAG_DCCP_QPOLICY]), sizeof(d));
		printf("\t%s\t%u\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\n",
		       sbpn_kernel_policy_name((int)d.policy), d.tx_qlen,
		       (unsigned long long)s->qlen, (unsigned long long)s->queued,
		       (unsigned long long)s->sent, (unsigned long long)s->expired,
		       (unsigned long long)s->expired_sent, (unsigned long long)s->evicted,
		       (unsigned long long)s->refused, (unsigned long long)s->purged,
		       (unsigned long long)s->ccid_err, (unsigned long long)s->xmit_err,
		       (unsigned long long)s->frame);
		(*count)++;
		return NL_OK;
	}
#endif
	printf("\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\n");
	(*count)++;
	return NL_OK;
}

/* Dump the DCCP sockets of @family; 0, or -1 with a message */
static int dump(struct nl_sock *sk, int family)
{
	struct inet_diag_req_v2 req = {
		.sdiag_family = (__u8)family,
		.sdiag_protocol = IPPROTO_DCCP,
		.idiag_ext = 1 << (INET_DIAG_INFO - 1),
		.idiag_states = ~0U,
	};
	int err;

	err = nl_send_simple(sk, SOCK_DIAG_BY_FAMILY, NLM_F_DUMP, &req, sizeof(req));
	if (err >= 0)
		err = nl_recvmsgs_default(sk);
	if (err < 0) {
		fprintf(stderr, "dccp-qstat: sock_diag dump of %s DCCP sockets: %s%s\n",
			family == AF_INET ? "IPv4" : "IPv6", nl_geterror(err),
			err == -NLE_OBJ_NOTFOUND ?
			" (no dccp_diag module: modprobe dccp_diag)" : "");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	enum { O_SPORT = 256, O_HELP };
	static const struct option opts[] = {
		{ "sport", required_argument, 0, O_SPORT },
		{ "help", no_argument, 0, O_HELP },
		{ 0 }
	};
	struct nl_sock *sk;
	int c, count = 0, rc = 0;
	char *end;

	while ((c = getopt_long(argc, argv, "46", opts, NULL)) != -1) {
		switch (c) {
		case '4': cfg.family = AF_INET; break;
		case '6': cfg.family = AF_INET6; break;
		case O_SPORT:
			errno = 0;
			cfg.sport = strtol(optarg, &end, 10);
			if (errno || !*optarg || *end || cfg.sport < 0 || cfg.sport > 65535) {
				fprintf(stderr, "dccp-qstat: --sport: expected 0..65535, got '%s'\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case O_HELP: usage(stdout); return 0;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "dccp-qstat: unexpected argument '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}

	sk = nl_socket_alloc();
	if (!sk || nl_connect(sk, NETLINK_SOCK_DIAG) < 0) {
		fprintf(stderr, "dccp-qstat: cannot open a sock_diag netlink socket\n");
		return EXIT_RUNTIME;
	}
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, on_socket, &count);
	print_header();
	if (cfg.family != AF_INET6 && dump(sk, AF_INET))
		rc = EXIT_RUNTIME;
	if (!rc && cfg.family != AF_INET && dump(sk, AF_INET6))
		rc = EXIT_RUNTIME;
	if (!rc)
		fprintf(stderr, "dccp-qstat: %d socket%s\n", count, count == 1 ? "" : "s");
	nl_socket_free(sk);
	return rc;
}
