/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DCCP's socket ABI values that glibc does not define, and the
 * read-modify-write of its bit mask options, for every selftest
 * (dccp_test.h's harness tests and the stress test alike).
 */
#ifndef DCCP_ABI_H
#define DCCP_ABI_H

#include <sys/socket.h>
#include <linux/dccp.h>

#ifndef SOL_DCCP
#define SOL_DCCP	269
#endif
#ifndef SOCK_DCCP
#define SOCK_DCCP	6
#endif
#ifndef IPPROTO_DCCP
#define IPPROTO_DCCP	33
#endif

/*
 * The queueing policies, by index 0 to DCCP_NR_POLICIES - 1: their IDs are
 * not dense (SIMPLE and PRIO are 0 and 1, the SBPN policies 8-10; 2 and 3
 * are multipath DCCP's), so nothing may count from 0 to DCCPQ_POLICY_MAX.
 */
#define DCCP_NR_POLICIES	5

static inline int dccp_policy(unsigned int i)
{
	static const int ids[DCCP_NR_POLICIES] = {
		DCCPQ_POLICY_SIMPLE, DCCPQ_POLICY_PRIO, DCCPQ_POLICY_SBPN1,
		DCCPQ_POLICY_SBPN2, DCCPQ_POLICY_SBPN3,
	};

	return ids[i % DCCP_NR_POLICIES];
}

/*
 * The bits of DCCP_SOCKOPT_QPOLICY_FLAGS and DCCP_SOCKOPT_TX_CCID_FLAGS
 * that the kernel knows, and the next one up, which it refuses (EINVAL),
 * as it refuses any DCCP_SOCKOPT_QPOLICY_ORDER past the last order.
 */
#define DCCP_QPOLICY_F_KNOWN	(DCCP_QPOLICY_F_NOTIFY | \
				 DCCP_QPOLICY_F_LAST_RTT | \
				 DCCP_QPOLICY_F_PREDICT | \
				 DCCP_QPOLICY_F_OWD | \
				 DCCP_QPOLICY_F_FRAME)
#define DCCP_QPOLICY_F_UNKNOWN	(DCCP_QPOLICY_F_FRAME << 1)
#define DCCP_TX_CCID_F_KNOWN	(DCCP_TX_CCID_F_FASTER_RESTART | \
				 DCCP_TX_CCID_F_SIZE_PACING)
#define DCCP_TX_CCID_F_UNKNOWN	(DCCP_TX_CCID_F_SIZE_PACING << 1)
#define DCCP_QPOLICY_ORDER_INVALID	(DCCP_QPOLICY_ORDER_NEWEST + 1)

/* The int value of SOL_DCCP option @opt of @fd in *@val: 0, or -1 (errno). */
static inline int dccp_getopt_int(int fd, int opt, int *val)
{
	socklen_t len = sizeof(*val);

	return getsockopt(fd, SOL_DCCP, opt, val, &len);
}

/*
 * Turn the bits @bits of the bit mask option @opt (DCCP_SOCKOPT_QPOLICY_FLAGS,
 * DCCP_SOCKOPT_TX_CCID_FLAGS) on or off, the others as they are: setting
 * the option replaces every bit, so this reads it first.  0, or -1 (errno).
 */
static inline int dccp_setopt_bits(int fd, int opt, int bits, int on)
{
	int val;

	if (dccp_getopt_int(fd, opt, &val))
		return -1;
	val = on ? val | bits : val & ~bits;
	return setsockopt(fd, SOL_DCCP, opt, &val, sizeof(val));
}

#endif /* DCCP_ABI_H */
