/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DCCP's socket ABI values that glibc does not define, for every selftest
 * (dccp_test.h's harness tests and the stress test alike).
 */
#ifndef DCCP_ABI_H
#define DCCP_ABI_H

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

#endif /* DCCP_ABI_H */
