/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DCCP's socket ABI values that glibc does not define, for every selftest
 * (dccp_test.h's harness tests and the stress test alike).
 */
#ifndef DCCP_ABI_H
#define DCCP_ABI_H

#ifndef SOL_DCCP
#define SOL_DCCP	269
#endif
#ifndef SOCK_DCCP
#define SOCK_DCCP	6
#endif
#ifndef IPPROTO_DCCP
#define IPPROTO_DCCP	33
#endif

#endif /* DCCP_ABI_H */
