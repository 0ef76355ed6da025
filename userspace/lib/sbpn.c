// SPDX-License-Identifier: GPL-2.0
/*
 * sbpn.c - DCCP queueing-policy helpers; see sbpn.h for the contract.
 */
#include <errno.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/dccp.h>
#include <linux/errqueue.h>

#include "config.h"
#include "sbpn.h"
#include "sbpn_errqueue.h"

/*
 * CCID3 sender state as DCCP_SOCKOPT_CCID_TX_INFO returns it.  The kernel
 * declares it outside uapi, in include/linux/tfrc.h (6.1); it is ABI because
 * getsockopt() copies it out unchanged.  X and X_recv are in 64ths of
 * bytes/s, x_calc in bytes/s, p scaled by 1e6, rtt/rto/ipi in microseconds.
 */
struct tfrc_tx_info {
	__u64 tfrctx_x;
	__u64 tfrctx_x_recv;
	__u32 tfrctx_x_calc;
	__u32 tfrctx_rtt;
	__u32 tfrctx_p;
	__u32 tfrctx_rto;
	__u32 tfrctx_ipi;
};

/*
 * The flag and order options of the series, for a build against a header
 * without them (the stock one: config.h): a stock kernel answers each with
 * ENOPROTOOPT by itself, so their numbers do instead of stubs.
 * DCCP_QPOLICY_F_NOTIFY is not among them: without the header's error codes
 * the library could not read the notices, so sbpn_set_notify() refuses.
 */
#ifndef DCCP_SOCKOPT_QPOLICY_FLAGS
#define DCCP_SOCKOPT_QPOLICY_FLAGS	33
#define DCCP_QPOLICY_F_LAST_RTT		(1 << 1)
#define DCCP_QPOLICY_F_PREDICT		(1 << 2)
#define DCCP_QPOLICY_F_OWD		(1 << 3)
#define DCCP_QPOLICY_F_FRAME		(1 << 4)
#endif
#ifndef DCCP_SOCKOPT_QPOLICY_ORDER
#define DCCP_SOCKOPT_QPOLICY_ORDER	34
#define DCCP_QPOLICY_ORDER_PRIORITY	0
#define DCCP_QPOLICY_ORDER_EDF		1
#define DCCP_QPOLICY_ORDER_NEWEST	2
#endif
#ifndef DCCP_SOCKOPT_TX_CCID_FLAGS
#define DCCP_SOCKOPT_TX_CCID_FLAGS	35
#define DCCP_TX_CCID_F_FASTER_RESTART	(1 << 0)
#define DCCP_TX_CCID_F_SIZE_PACING	(1 << 1)
#endif

static const char *const policy_names[SBPN_POLICY_COUNT] = {
	[SBPN_POLICY_SIMPLE] = "simple",
	[SBPN_POLICY_PRIO] = "prio",
	[SBPN_POLICY_SBPN1] = "sbpn1",
	[SBPN_POLICY_SBPN2] = "sbpn2",
	[SBPN_POLICY_SBPN3] = "sbpn3",
};

/* The kernel's id for each policy; -1 where this build's header lacks it. */
static int policy_kernel_id(int policy)
{
	switch (policy) {
	case SBPN_POLICY_SIMPLE:
		return DCCPQ_POLICY_SIMPLE;
	case SBPN_POLICY_PRIO:
		return DCCPQ_POLICY_PRIO;
#ifdef HAVE_DCCPQ_POLICY_SBPN1
	case SBPN_POLICY_SBPN1:
		return DCCPQ_POLICY_SBPN1;
#endif
#ifdef HAVE_DCCPQ_POLICY_SBPN2
	case SBPN_POLICY_SBPN2:
		return DCCPQ_POLICY_SBPN2;
#endif
#ifdef HAVE_DCCPQ_POLICY_SBPN3
	case SBPN_POLICY_SBPN3:
		return DCCPQ_POLICY_SBPN3;
#endif
	default:
		return -1;
	}
}

int sbpn_policy_from_name(const char *name)
{
	for (int i = 0; i < SBPN_POLICY_COUNT; i++)
		if (!strcmp(name, policy_names[i]))
			return i;
	return -1;
}

const char *sbpn_policy_name(int policy)
{
	if (policy < 0 || policy >= SBPN_POLICY_COUNT)
		return "?";
	return policy_names[policy];
}

const char *sbpn_kernel_policy_name(int id)
{
	for (int i = 0; i < SBPN_POLICY_COUNT; i++)
		if (id >= 0 && policy_kernel_id(i) == id)
			return policy_names[i];
	return "?";
}

bool sbpn_policy_built(int policy)
{
	return policy_kernel_id(policy) >= 0;
}

unsigned int sbpn_policy_cmsgs(int policy)
{
	switch (policy) {
	case SBPN_POLICY_SIMPLE:
		return 0;	/* .params = 0: any qpolicy cmsg is EINVAL */
	case SBPN_POLICY_PRIO:
		return SBPN_CMSG_PRIORITY;
	default:
#ifdef HAVE_DCCP_SCM_FRAME
		return SBPN_CMSG_PRIORITY | SBPN_CMSG_EXPIRY | SBPN_CMSG_FRAME;
#else
		return SBPN_CMSG_PRIORITY | SBPN_CMSG_EXPIRY;
#endif
	}
}

bool sbpn_kernel_has_modules(void)
{
	/* Debian's dccp.ko has no MODULE_VERSION; ours has. */
	return access("/sys/module/dccp/version", F_OK) == 0;
}

int sbpn_set_policy(int fd, int policy)
{
	int id = policy_kernel_id(policy);

	if (id < 0) {
		errno = EOPNOTSUPP;
		return -1;
	}
	return setsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_QPOLICY_ID, &id, sizeof(id));
}

int sbpn_set_qlen(int fd, unsigned int qlen)
{
	int v = (int)qlen;

	return setsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_QPOLICY_TXQLEN, &v, sizeof(v));
}

int sbpn_get_qlen(int fd, unsigned int *qlen)
{
	int v;
	socklen_t len = sizeof(v);

	if (getsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_QPOLICY_TXQLEN, &v, &len) < 0)
		return -1;
	*qlen = (unsigned int)v;
	return 0;
}

/* The options that take one int: the flag masks and the send order. */
static int set_int(int fd, int opt, int val)
{
	return setsockopt(fd, SOL_DCCP, opt, &val, sizeof(val));
}

static int get_int(int fd, int opt, int *val)
{
	socklen_t len = sizeof(*val);

	return getsockopt(fd, SOL_DCCP, opt, val, &len);
}

int sbpn_set_qpolicy_flags(int fd, unsigned int flags)
{
	return set_int(fd, DCCP_SOCKOPT_QPOLICY_FLAGS, (int)flags);
}

int sbpn_get_qpolicy_flags(int fd, unsigned int *flags)
{
	return get_int(fd, DCCP_SOCKOPT_QPOLICY_FLAGS, (int *)flags);
}

int sbpn_set_tx_ccid_flags(int fd, unsigned int flags)
{
	return set_int(fd, DCCP_SOCKOPT_TX_CCID_FLAGS, (int)flags);
}

int sbpn_get_tx_ccid_flags(int fd, unsigned int *flags)
{
	return get_int(fd, DCCP_SOCKOPT_TX_CCID_FLAGS, (int *)flags);
}

int sbpn_set_qpolicy_order(int fd, int order)
{
	return set_int(fd, DCCP_SOCKOPT_QPOLICY_ORDER, order);
}

int sbpn_get_qpolicy_order(int fd, int *order)
{
	return get_int(fd, DCCP_SOCKOPT_QPOLICY_ORDER, order);
}

/*
 * One bit of the flags option @opt on or off: the kernel only replaces the
 * whole mask, so read it, change the bit and write it back.
 */
static int set_flag(int fd, int opt, int bit, int on)
{
	int flags;

	if (get_int(fd, opt, &flags))
		return -1;
	return set_int(fd, opt, on ? flags | bit : flags & ~bit);
}

static int get_flag(int fd, int opt, int bit, int *on)
{
	int flags;

	if (get_int(fd, opt, &flags))
		return -1;
	*on = !!(flags & bit);
	return 0;
}

/*
 * The send order @order on or off.  On replaces only the default order,
 * never the other of EDF and NEWEST; off returns to the default only from
 * @order itself.
 */
static int set_order(int fd, int order, int on)
{
	int cur;

	if (get_int(fd, DCCP_SOCKOPT_QPOLICY_ORDER, &cur))
		return -1;
	if (!!on == (cur == order))
		return 0;
	if (on && cur != DCCP_QPOLICY_ORDER_PRIORITY) {
		errno = EINVAL;
		return -1;
	}
	return set_int(fd, DCCP_SOCKOPT_QPOLICY_ORDER,
		       on ? order : DCCP_QPOLICY_ORDER_PRIORITY);
}

static int get_order(int fd, int order, int *on)
{
	int cur;

	if (get_int(fd, DCCP_SOCKOPT_QPOLICY_ORDER, &cur))
		return -1;
	*on = cur == order;
	return 0;
}

int sbpn_set_faster_restart(int fd, int on)
{
	return set_flag(fd, DCCP_SOCKOPT_TX_CCID_FLAGS,
			DCCP_TX_CCID_F_FASTER_RESTART, on);
}

int sbpn_get_faster_restart(int fd, int *on)
{
	return get_flag(fd, DCCP_SOCKOPT_TX_CCID_FLAGS,
			DCCP_TX_CCID_F_FASTER_RESTART, on);
}

int sbpn_set_size_pacing(int fd, int on)
{
	return set_flag(fd, DCCP_SOCKOPT_TX_CCID_FLAGS,
			DCCP_TX_CCID_F_SIZE_PACING, on);
}

int sbpn_get_size_pacing(int fd, int *on)
{
	return get_flag(fd, DCCP_SOCKOPT_TX_CCID_FLAGS,
			DCCP_TX_CCID_F_SIZE_PACING, on);
}

int sbpn_set_predict(int fd, int on)
{
	return set_flag(fd, DCCP_SOCKOPT_QPOLICY_FLAGS, DCCP_QPOLICY_F_PREDICT, on);
}

int sbpn_get_predict(int fd, int *on)
{
	return get_flag(fd, DCCP_SOCKOPT_QPOLICY_FLAGS, DCCP_QPOLICY_F_PREDICT, on);
}

int sbpn_set_last_rtt(int fd, int on)
{
	return set_flag(fd, DCCP_SOCKOPT_QPOLICY_FLAGS, DCCP_QPOLICY_F_LAST_RTT, on);
}

int sbpn_get_last_rtt(int fd, int *on)
{
	return get_flag(fd, DCCP_SOCKOPT_QPOLICY_FLAGS, DCCP_QPOLICY_F_LAST_RTT, on);
}

int sbpn_set_owd(int fd, int on)
{
	return set_flag(fd, DCCP_SOCKOPT_QPOLICY_FLAGS, DCCP_QPOLICY_F_OWD, on);
}

int sbpn_get_owd(int fd, int *on)
{
	return get_flag(fd, DCCP_SOCKOPT_QPOLICY_FLAGS, DCCP_QPOLICY_F_OWD, on);
}

int sbpn_set_edf(int fd, int on)
{
	return set_order(fd, DCCP_QPOLICY_ORDER_EDF, on);
}

int sbpn_get_edf(int fd, int *on)
{
	return get_order(fd, DCCP_QPOLICY_ORDER_EDF, on);
}

int sbpn_set_newest(int fd, int on)
{
	return set_order(fd, DCCP_QPOLICY_ORDER_NEWEST, on);
}

int sbpn_get_newest(int fd, int *on)
{
	return get_order(fd, DCCP_QPOLICY_ORDER_NEWEST, on);
}

int sbpn_set_frame(int fd, int on)
{
	return set_flag(fd, DCCP_SOCKOPT_QPOLICY_FLAGS, DCCP_QPOLICY_F_FRAME, on);
}

int sbpn_get_frame(int fd, int *on)
{
	return get_flag(fd, DCCP_SOCKOPT_QPOLICY_FLAGS, DCCP_QPOLICY_F_FRAME, on);
}

int sbpn_set_ccid(int fd, uint8_t ccid)
{
	return setsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_CCID, &ccid, sizeof(ccid));
}

int sbpn_get_tx_ccid(int fd, int *ccid)
{
	socklen_t len = sizeof(*ccid);

	return getsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_TX_CCID, ccid, &len);
}

ssize_t sbpn_send(int fd, const void *buf, size_t len, uint32_t prio,
		  uint64_t expiry_ns, unsigned int cmsgs, int flags)
{
	return sbpn_send_frame(fd, buf, len, prio, expiry_ns, 0, cmsgs, flags);
}

/*
 * Fill @cm, a header of @msg's control buffer, as a SOL_DCCP cmsg of @type
 * carrying the @len bytes at @data, and count its space in *@used; returns
 * the next header (NULL when the buffer has no room for one).
 */
static struct cmsghdr *put_cmsg(struct msghdr *msg, struct cmsghdr *cm,
				int type, const void *data, size_t len,
				size_t *used)
{
	cm->cmsg_level = SOL_DCCP;
	cm->cmsg_type = type;
	cm->cmsg_len = CMSG_LEN(len);
	memcpy(CMSG_DATA(cm), data, len);
	*used += CMSG_SPACE(len);
	return CMSG_NXTHDR(msg, cm);
}

ssize_t sbpn_send_frame(int fd, const void *buf, size_t len, uint32_t prio,
			uint64_t expiry_ns, uint32_t frame, unsigned int cmsgs,
			int flags)
{
	union {
		char buf[2 * CMSG_SPACE(sizeof(uint32_t)) +
			 CMSG_SPACE(sizeof(uint64_t))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	size_t used = 0;

#ifndef HAVE_DCCP_SCM_EXPIRY
	if (cmsgs & SBPN_CMSG_EXPIRY) {
		errno = EOPNOTSUPP;
		return -1;
	}
	(void)expiry_ns;
#endif
#ifndef HAVE_DCCP_SCM_FRAME
	if ((cmsgs & SBPN_CMSG_FRAME) && frame) {
		errno = EOPNOTSUPP;
		return -1;
	}
#endif
	memset(&ctl, 0, sizeof(ctl));
	if (cmsgs) {
		msg.msg_control = ctl.buf;
		msg.msg_controllen = sizeof(ctl.buf);
	}
	cm = cmsgs ? CMSG_FIRSTHDR(&msg) : NULL;
	if (cmsgs & SBPN_CMSG_PRIORITY)
		cm = put_cmsg(&msg, cm, DCCP_SCM_PRIORITY, &prio, sizeof(prio),
			      &used);
#ifdef HAVE_DCCP_SCM_EXPIRY
	if (cmsgs & SBPN_CMSG_EXPIRY)
		cm = put_cmsg(&msg, cm, DCCP_SCM_EXPIRY, &expiry_ns,
			      sizeof(expiry_ns), &used);
#endif
#ifdef HAVE_DCCP_SCM_FRAME
	if ((cmsgs & SBPN_CMSG_FRAME) && frame)
		put_cmsg(&msg, cm, DCCP_SCM_FRAME, &frame, sizeof(frame), &used);
#endif
	msg.msg_controllen = used;
	if (!used)
		msg.msg_control = NULL;
	return sendmsg(fd, &msg, flags);
}

int sbpn_get_qstats(int fd, struct sbpn_qstats *st)
{
#if defined(HAVE_DCCP_SOCKOPT_QPOLICY_STATS) && defined(HAVE_STRUCT_DCCP_QPOLICY_STATS)
	struct dccp_qpolicy_stats k;
	socklen_t len = sizeof(k);

	memset(&k, 0, sizeof(k));
	if (getsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_QPOLICY_STATS, &k, &len) < 0)
		return -1;
	st->queued = k.queued;
	st->sent = k.sent;
	st->expired = k.expired;
	st->expired_sent = k.expired_sent;
	st->evicted = k.evicted;
	st->refused = k.refused;
	st->purged = k.purged;
	st->ccid_err = k.ccid_err;
	st->qlen = k.qlen;
#ifdef HAVE_QPOLICY_STATS_XMIT_ERR
	st->xmit_err = k.xmit_err;
#else
	st->xmit_err = 0;
#endif
#ifdef HAVE_QPOLICY_STATS_FRAME
	st->frame = k.frame;
#else
	st->frame = 0;
#endif
	return 0;
#else
	(void)fd;
	memset(st, 0, sizeof(*st));
	errno = EOPNOTSUPP;
	return -1;
#endif
}

int sbpn_get_tx_info(int fd, struct sbpn_tx_info *ti)
{
	struct tfrc_tx_info k;
	socklen_t len = sizeof(k);

	memset(&k, 0, sizeof(k));
	if (getsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_CCID_TX_INFO, &k, &len) < 0)
		return -1;
	ti->x_Bps = k.tfrctx_x / 64.0;
	ti->x_recv_Bps = k.tfrctx_x_recv / 64.0;
	ti->x_calc_Bps = k.tfrctx_x_calc;
	ti->rtt_us = k.tfrctx_rtt;
	ti->p = k.tfrctx_p / 1e6;
	ti->rto_us = k.tfrctx_rto;
	ti->ipi_us = k.tfrctx_ipi;
	return 0;
}

const char *sbpn_drop_reason_name(enum sbpn_drop_reason r)
{
	static const char *const names[SBPN_DROP_COUNT] = {
		[SBPN_DROP_EXPIRED] = "expired",
		[SBPN_DROP_EVICTED] = "evicted",
		[SBPN_DROP_CCID_ERR] = "ccid_err",
		[SBPN_DROP_FRAME] = "frame",
		[SBPN_DROP_LATE] = "predicted_late",
	};

	return r < SBPN_DROP_COUNT ? names[r] : "?";
}

int sbpn_set_notify(int fd, int on)
{
#ifdef HAVE_DCCP_QPOLICY_F_NOTIFY
	return set_flag(fd, DCCP_SOCKOPT_QPOLICY_FLAGS, DCCP_QPOLICY_F_NOTIFY, on);
#else
	(void)fd;
	(void)on;
	errno = EOPNOTSUPP;
	return -1;
#endif
}

int sbpn_notice_from_ee(const struct sock_extended_err *ee, struct sbpn_notice *n)
{
#ifdef HAVE_DCCP_QPOLICY_F_NOTIFY
	if (ee->ee_origin != SO_EE_ORIGIN_DCCP_QPOLICY || ee->ee_errno != ECANCELED) {
		errno = EBADMSG;
		return -1;
	}
	switch (ee->ee_code) {
	case DCCP_QPOLICY_EE_EXPIRED:
		n->reason = SBPN_DROP_EXPIRED;
		break;
	case DCCP_QPOLICY_EE_EVICTED:
		n->reason = SBPN_DROP_EVICTED;
		break;
	case DCCP_QPOLICY_EE_CCID_ERR:
		n->reason = SBPN_DROP_CCID_ERR;
		break;
	case DCCP_QPOLICY_EE_FRAME:
		n->reason = SBPN_DROP_FRAME;
		break;
	case DCCP_QPOLICY_EE_LATE:
		n->reason = SBPN_DROP_LATE;
		break;
	default:
		errno = EBADMSG;
		return -1;
	}
	n->expiry_ns = (uint64_t)ee->ee_data << 32 | ee->ee_info;
	return 0;
#else
	(void)ee;
	(void)n;
	errno = EOPNOTSUPP;
	return -1;
#endif
}

int sbpn_read_notice(int fd, void *buf, size_t cap, struct sbpn_notice *n)
{
#ifdef HAVE_DCCP_QPOLICY_F_NOTIFY
	struct sock_extended_err ee;
	ssize_t len = sbpn_read_errqueue(fd, buf, cap, &ee);

	if (len == -EAGAIN)
		return 0;
	if (len < 0) {
		errno = len == -ENOMSG ? EBADMSG : (int)-len;
		return -1;
	}
	if (sbpn_notice_from_ee(&ee, n))
		return -1;
	n->len = (size_t)len;
	return 1;
#else
	(void)fd;
	(void)buf;
	(void)cap;
	(void)n;
	errno = EOPNOTSUPP;
	return -1;
#endif
}
