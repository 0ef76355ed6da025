# SPDX-License-Identifier: GPL-2.0
#
# How DCCP is built out of tree, included by the top-level Makefile (make
# modules) and shipped in the DKMS package, whose own Makefile (dkms/Makefile)
# includes it: both builds pass kbuild the same arguments.
#
# $(call dccp_kbuild_args,TREE) is kbuild's command line (after -C KDIR) for
# TREE, a tree assembled by scripts/build-tree.sh: the patched net/dccp as
# the external module, its patched headers ahead of the kernel's, and the
# DCCP options Debian's kernels set (7.x's configuration, which has no DCCP,
# needs them given), without the BTF of the modules, which needs the
# kernel's vmlinux that headers packages do not ship.  DCCP_MODULES are
# the modules it builds, in TREE/net/dccp.

DCCP_MODULES	:= dccp dccp_ipv4 dccp_ipv6 dccp_diag

dccp_kbuild_args = M=$(1)/net/dccp \
	NOSTDINC_FLAGS="-I$(1)/include -I$(1)/include/uapi" \
	CONFIG_IP_DCCP=m CONFIG_INET_DCCP_DIAG=m \
	CONFIG_IP_DCCP_CCID3=y CONFIG_IP_DCCP_TFRC_LIB=y \
	CONFIG_DEBUG_INFO_BTF_MODULES=
