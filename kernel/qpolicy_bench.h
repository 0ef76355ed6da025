/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module entry points of proto.c in the bench build of dccp.ko, where
 * kernel/Kbuild renames them (a module has one module_init() and one
 * module_exit()) so that those of qpolicy_bench.c can call them.
 */
#ifndef _DCCP_QPOLICY_BENCH_H
#define _DCCP_QPOLICY_BENCH_H

int dccp_proto_init_module(void);
void dccp_proto_cleanup_module(void);

#endif /* _DCCP_QPOLICY_BENCH_H */
