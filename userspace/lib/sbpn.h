/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sbpn.h - one-call helpers for DCCP queueing policies (SBPN and stock).
 *
 * The point of this header: "send this buffer with priority P and deadline
 * D" is one call, sbpn_send(), and the socket options around it (policy,
 * tx_qlen, CCID, counters, CCID3 state) are one call each.  Every function
 * returns 0 (or a byte count) on success and -1 with errno set on failure,
 * like the system calls underneath; nothing prints.
 *
 * A priority (DCCP_SCM_PRIORITY) is a uint32_t and higher is more
 * important: PRIO and the SBPN policies send the highest priority first
 * (unless sbpn_set_edf() orders by expiry) and, when the queue is full,
 * give up the lowest first.  An expiry
 * (DCCP_SCM_EXPIRY) is an absolute time in nanoseconds on CLOCK_MONOTONIC
 * (clock_gettime(CLOCK_MONOTONIC) plus the packet's lifetime), not a
 * lifetime; 0 means none.  A drop notice (sbpn_read_notice()) gives back
 * the payload, the reason and the expiry, not the frame id nor the
 * priority: an application that must know which frame a notice is about
 * keeps the frame in its payload, as sbpn-send does in its 32-byte header
 * (Documentation/records.rst, Payload).
 *
 * The library builds against the project's patched <linux/dccp.h>: what
 * the header provides is probed at build time into config.h
 * (HAVE_DCCP_SCM_EXPIRY, HAVE_DCCPQ_POLICY_SBPN1, ...), and the build stops
 * when the header lacks any of it.  Built against the stock header on
 * purpose (make STOCK_HEADER=1), the missing features fail at run time
 * with EOPNOTSUPP.  This header itself needs neither.
 */
#ifndef SBPN_H
#define SBPN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>

/*
 * Older libcs lack these; they are ABI.  glibc declares SOCK_DCCP and
 * IPPROTO_DCCP as enumerators, so its headers come first: a macro of the
 * same name defined before them would break their enums.
 */
#ifndef SOCK_DCCP
#define SOCK_DCCP 6
#endif
#ifndef IPPROTO_DCCP
#define IPPROTO_DCCP 33
#endif
#ifndef SOL_DCCP
#define SOL_DCCP 269
#endif

/*
 * Policies by name.  The library's own numbers: the kernel's DCCPQ_POLICY_*
 * ids are not dense (the SBPN policies are 8-10).
 */
enum sbpn_policy {
	SBPN_POLICY_SIMPLE,
	SBPN_POLICY_PRIO,
	SBPN_POLICY_SBPN1,
	SBPN_POLICY_SBPN2,
	SBPN_POLICY_SBPN3,
	SBPN_POLICY_COUNT
};

/* Which control messages sbpn_send() attaches. */
#define SBPN_CMSG_PRIORITY	0x1	/* DCCP_SCM_PRIORITY, __u32, higher first */
#define SBPN_CMSG_EXPIRY	0x2	/* DCCP_SCM_EXPIRY, __u64 absolute ns, CLOCK_MONOTONIC */
#define SBPN_CMSG_FRAME		0x4	/* DCCP_SCM_FRAME, __u32 frame id, not 0 */

/* The qpolicy counters (DCCP_SOCKOPT_QPOLICY_STATS), packets each. */
struct sbpn_qstats {
	uint64_t queued, sent, expired, expired_sent, evicted, refused, purged,
		 ccid_err;
	uint64_t qlen;	/* packets queued when the counters were read */
	uint64_t xmit_err;	/* of sent, dropped by the local network layer */
	uint64_t frame;		/* discarded with their frame (DCCP_QPOLICY_F_FRAME) */
};

/* Why the kernel discarded a packet it had admitted (a drop notice). */
enum sbpn_drop_reason {
	SBPN_DROP_EXPIRED,
	SBPN_DROP_EVICTED,
	SBPN_DROP_CCID_ERR,
	SBPN_DROP_FRAME,	/* another packet of its frame was dropped */
	SBPN_DROP_LATE,		/* in time when judged, not at its predicted
				 * departure (DCCP_QPOLICY_F_PREDICT);
				 * counted as expired
				 */
	SBPN_DROP_COUNT
};

/*
 * One drop notice from the socket's error queue.  It has no frame id (nor
 * priority): the kernel returns only the payload as it was sent, so the
 * application keeps whatever names the packet (its frame, a sequence
 * number) in the payload and reads it back from there.
 */
struct sbpn_notice {
	enum sbpn_drop_reason reason;
	uint64_t expiry_ns;	/* the packet's expiry as sent (absolute ns,
				 * CLOCK_MONOTONIC), 0 for none
				 */
	size_t len;		/* payload bytes copied into the caller's buffer */
};

/* CCID3 sender state in plain units (converted from struct tfrc_tx_info). */
struct sbpn_tx_info {
	double x_Bps;		/* allowed sending rate X, bytes/s */
	double x_recv_Bps;	/* receive rate reported by the receiver, bytes/s */
	uint32_t x_calc_Bps;	/* throughput equation result, bytes/s */
	uint32_t rtt_us;
	double p;		/* loss event rate, 0..1 */
	uint32_t rto_us;
	uint32_t ipi_us;	/* inter-packet interval */
};

/*
 * Map a policy name ("simple", "prio", "sbpn1", ...) to enum sbpn_policy;
 * -1 if the name is unknown.
 */
int sbpn_policy_from_name(const char *name);
const char *sbpn_policy_name(int policy);
/* The name of the kernel's policy id @id (sock_diag's); "?" if unknown. */
const char *sbpn_kernel_policy_name(int id);
/* Whether this build's header defines the policy's kernel constant. */
bool sbpn_policy_built(int policy);
/* The SBPN_CMSG_* set a policy accepts (sending others gives EINVAL). */
unsigned int sbpn_policy_cmsgs(int policy);
/* Whether the running kernel has the project's DCCP modules loaded. */
bool sbpn_kernel_has_modules(void);

/*
 * Socket setup.  sbpn_set_policy only works while the socket is CLOSED
 * (before connect/listen); EOPNOTSUPP when this build does not know the
 * policy.  sbpn_set_ccid sets the preference for both half-connections.
 */
int sbpn_set_policy(int fd, int policy);
int sbpn_set_qlen(int fd, unsigned int qlen);
int sbpn_get_qlen(int fd, unsigned int *qlen);
int sbpn_set_ccid(int fd, uint8_t ccid);
int sbpn_get_tx_ccid(int fd, int *ccid);
/*
 * The optional mechanisms are bits of two int options and the send order
 * a value of a third (<linux/dccp.h>): DCCP_SOCKOPT_QPOLICY_FLAGS
 * (DCCP_QPOLICY_F_*), DCCP_SOCKOPT_TX_CCID_FLAGS (DCCP_TX_CCID_F_*) and
 * DCCP_SOCKOPT_QPOLICY_ORDER (enum dccp_qpolicy_order).  All three may be
 * set at any time during the socket's life and are inherited on accept.
 * Setting a flags option replaces all its bits; a bit or an order the
 * kernel does not know is EINVAL, so an application learns that the kernel
 * lacks that mechanism.  A kernel without the options (stock DCCP) gives
 * ENOPROTOOPT.  These six read or write the whole value; the per-mechanism
 * calls below are built on them.
 */
int sbpn_set_qpolicy_flags(int fd, unsigned int flags);
int sbpn_get_qpolicy_flags(int fd, unsigned int *flags);
int sbpn_set_tx_ccid_flags(int fd, unsigned int flags);
int sbpn_get_tx_ccid_flags(int fd, unsigned int *flags);
int sbpn_set_qpolicy_order(int fd, int order);
int sbpn_get_qpolicy_order(int fd, int *order);
/*
 * One mechanism each, on is 0 or 1; any time.  sbpn_set_*() reads the
 * option, turns the mechanism's bit (or send order, below) on or off and
 * writes it back, leaving the rest as it is (so two threads must not set
 * mechanisms of one socket at once); sbpn_get_*() says whether it is in
 * force.  ENOPROTOOPT when the kernel lacks the option, EINVAL when it
 * lacks the mechanism.
 *
 * CCID3 TFRC Faster Restart (DCCP_TX_CCID_F_FASTER_RESTART).
 */
int sbpn_set_faster_restart(int fd, int on);
int sbpn_get_faster_restart(int fd, int *on);
/*
 * CCID3 size pacing (DCCP_TX_CCID_F_SIZE_PACING: each packet spaced by
 * len / X) and SBPN's predicted departure (DCCP_QPOLICY_F_PREDICT).
 */
int sbpn_set_size_pacing(int fd, int on);
int sbpn_get_size_pacing(int fd, int *on);
int sbpn_set_predict(int fd, int on);
int sbpn_get_predict(int fd, int *on);
/*
 * Judge expiry by the last RTT measured after CCID3's nofeedback timer
 * expired, as the SBPN paper did, instead of 0 (DCCP_QPOLICY_F_LAST_RTT).
 */
int sbpn_set_last_rtt(int fd, int on);
int sbpn_get_last_rtt(int fd, int *on);
/*
 * Judge expiry by a one-way delay of RTT - min RTT/2 (all queueing on the
 * way out) instead of RTT/2 (DCCP_QPOLICY_F_OWD).
 */
int sbpn_set_owd(int fd, int on);
int sbpn_get_owd(int fd, int *on);
/*
 * Send the earliest expiry first, whatever its priority; priority then only
 * decides what a full queue gives up (DCCP_QPOLICY_ORDER_EDF).  Send the
 * packets of a priority newest first; a full queue gives up the oldest of
 * the lowest priority (DCCP_QPOLICY_ORDER_NEWEST).  Both are send orders
 * (DCCP_SOCKOPT_QPOLICY_ORDER), so at most one is in force.  Turning one on
 * while the other is in force fails with EINVAL, as it did when they were
 * two options, rather than replace the order the caller chose; turning one
 * off restores DCCP_QPOLICY_ORDER_PRIORITY if it is in force and changes
 * nothing otherwise.
 */
int sbpn_set_edf(int fd, int on);
int sbpn_get_edf(int fd, int *on);
int sbpn_set_newest(int fd, int on);
int sbpn_get_newest(int fd, int *on);
/*
 * Give up a frame (the packets of one priority and expiry) whole when one of
 * its packets is dropped (DCCP_QPOLICY_F_FRAME).
 */
int sbpn_set_frame(int fd, int on);
int sbpn_get_frame(int fd, int *on);

/*
 * Drop notices (DCCP_QPOLICY_F_NOTIFY): each packet the queueing policy
 * discards after admitting it comes back on the error queue with its
 * payload.  sbpn_set_notify() sets the bit like the calls above, and is
 * EOPNOTSUPP when this build's header lacks the notices.  sbpn_read_notice
 * reads one without blocking into buf (cap bytes): 1 and *n filled, 0 when
 * there is none, -1 and errno on error (EBADMSG: not a drop notice;
 * EMSGSIZE: more control data than a notice has).  The payload in buf is
 * the only way to tell which packet it was: the frame id given to
 * sbpn_send_frame() does not come back.  It reads with
 * sbpn_read_errqueue() (sbpn_errqueue.h), which the selftests use too.
 */
const char *sbpn_drop_reason_name(enum sbpn_drop_reason r);
int sbpn_set_notify(int fd, int on);
int sbpn_read_notice(int fd, void *buf, size_t cap, struct sbpn_notice *n);
/*
 * The drop notice an extended error describes, as sbpn_read_notice() decodes
 * it: 0 with n->reason and n->expiry_ns set (n->len untouched), or -1 and
 * EBADMSG when the origin, errno or code is not a notice's.
 */
struct sock_extended_err;
int sbpn_notice_from_ee(const struct sock_extended_err *ee, struct sbpn_notice *n);

/*
 * Send one datagram.  cmsgs (SBPN_CMSG_*) says which of prio and
 * expiry_ns are attached.  prio: higher is more important (sent first,
 * given up last on a full queue; PRIO and the SBPN policies).  expiry_ns:
 * the absolute time in ns on CLOCK_MONOTONIC after which the packet is of
 * no use to the receiver; 0, or 2^63 - 1 and above, for never (SBPN
 * policies; by default the kernel judges a packet expired once expiry_ns <
 * now + RTT/2, i.e. it could no longer arrive in time).  flags go to
 * sendmsg() (MSG_DONTWAIT: a full queue gives EAGAIN instead of waiting).
 */
ssize_t sbpn_send(int fd, const void *buf, size_t len, uint32_t prio,
		  uint64_t expiry_ns, unsigned int cmsgs, int flags);

/*
 * sbpn_send() naming the frame the datagram belongs to: frame, not 0, is
 * attached when cmsgs has SBPN_CMSG_FRAME (the SBPN policies take it, where
 * the kernel has it: sbpn_policy_cmsgs()); 0 attaches none.  Without an id
 * the kernel takes the packets of one priority and expiry to be a frame
 * (DCCP_QPOLICY_F_FRAME).  prio and expiry_ns as for sbpn_send().  The id
 * only tells the kernel which packets belong together; a drop notice does
 * not carry it, so put it in the payload too to read it back.
 */
ssize_t sbpn_send_frame(int fd, const void *buf, size_t len, uint32_t prio,
			uint64_t expiry_ns, uint32_t frame, unsigned int cmsgs,
			int flags);

/* Counters; EOPNOTSUPP/ENOPROTOOPT when the build/kernel lacks them. */
int sbpn_get_qstats(int fd, struct sbpn_qstats *st);
/* CCID3 sender state; ENOPROTOOPT under CCID 2. */
int sbpn_get_tx_info(int fd, struct sbpn_tx_info *ti);

#endif /* SBPN_H */
