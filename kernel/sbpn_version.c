// SPDX-License-Identifier: GPL-2.0
/*
 * Marks the DCCP modules built by the SBPN project.
 *
 * The same object is linked into dccp, dccp_ipv4, dccp_ipv6 and dccp_diag.
 * It adds two modinfo fields: "version" (which the module loader also
 * exports as /sys/module/<name>/version; Debian's DCCP modules have none)
 * and "sbpn", naming the project.  A test can so tell our modules from the
 * stock ones, and tell which build of ours is loaded.
 */
#include <linux/module.h>

#ifndef SBPN_VERSION
#error "SBPN_VERSION must be defined by the build (see kernel/Kbuild)"
#endif

MODULE_VERSION(SBPN_VERSION);
MODULE_INFO(sbpn, "Send Best Packet Next queueing policies for DCCP");
