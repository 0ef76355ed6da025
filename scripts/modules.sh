#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Swap the DCCP modules of a running Debian kernel (6.1, 6.12 or 7.3).
#
#   modules.sh load DIR    unload whatever DCCP is loaded, insmod ours from DIR
#   modules.sh unload      unload ours, load the kernel's own DCCP modules again
#                          (Linux 6.16 and later have none: ours just go)
#   modules.sh status      which DCCP modules are loaded, and whose
#
# All four modules go together (dccp, dccp_ipv4, dccp_ipv6, dccp_diag):
# with MODVERSIONS a stock dccp_ipv4 next to our dccp is not something we
# test.  Ours carry a "version" modinfo field (/sys/module/dccp/version);
# Debian's have none.
#
# Debian's dccp_ipv4 and dccp_ipv6 cannot be unloaded once loaded: the
# control socket each creates in the initial network namespace holds
# references on its own module, and that namespace never goes away ("dccp:
# do not pin dccp_ipv4 and dccp_ipv6 with their control sockets", the first
# of our fixes, fixes this for ours).  So `load` must run before
# anything used the stock DCCP (right after boot); `unload` removes ours and
# loads the stock modules again.  Both say so instead of half-swapping.

set -euo pipefail

STACK=(dccp dccp_ipv4 dccp_ipv6 dccp_diag)	# load order
REVERSE=(dccp_diag dccp_ipv6 dccp_ipv4 dccp)

say() { echo "modules: $*" >&2; }
die() { say "error: $*"; exit 1; }

loaded() { [ -d "/sys/module/$1" ]; }

ours() { [ -f "/sys/module/$1/version" ]; }

unload_all() {
	local m
	for m in "${REVERSE[@]}"; do
		loaded "$m" || continue
		rmmod "$m" 2>/dev/null && continue
		if [ "$m" = dccp_ipv4 ] || [ "$m" = dccp_ipv6 ]; then
			die "$m is loaded and the stock module cannot be unloaded (its init_net control socket pins the module): reboot, then run this before anything uses DCCP"
		fi
		die "cannot unload $m: $(cat "/sys/module/$m/refcnt") references (DCCP sockets open?)"
	done
}

status() {
	local m
	for m in "${STACK[@]}"; do
		if ! loaded "$m"; then
			echo "$m: not loaded"
		elif ours "$m"; then
			echo "$m: ours, version $(cat "/sys/module/$m/version")"
		else
			echo "$m: stock"
		fi
	done
}

[ "$(id -u)" -eq 0 ] || die "must run as root"

case ${1:-} in
load)
	dir=${2:?usage: modules.sh load DIR}
	kver=$(uname -r)
	for m in "${STACK[@]}"; do
		[ -f "$dir/$m.ko" ] || die "$dir/$m.ko is missing: run make"
	done
	built=$(modinfo -F vermagic "$dir/dccp.ko" | cut -d' ' -f1)
	[ "$built" = "$kver" ] ||
		die "modules were built for $built, the running kernel is $kver (make KVER=$(echo "$kver" | cut -d. -f1,2) ABI=$kver)"
	want=$(modinfo -F srcversion "$dir/dccp.ko")
	if loaded dccp && [ "$(cat /sys/module/dccp/srcversion)" = "$want" ]; then
		say "our modules are already loaded"
		status
		exit 0
	fi
	modprobe inet_diag
	unload_all
	for m in "${STACK[@]}"; do
		insmod "$dir/$m.ko" || die "insmod $dir/$m.ko failed (see dmesg)"
	done
	status
	;;
unload)
	kver=$(uname -r)
	unload_all
	# Linux 6.16 removed DCCP: without ours, a 7.x kernel has none.
	if [ "$(printf '%s\n' 6.16 "$kver" | sort -V | head -n1)" = 6.16 ]; then
		say "Linux $kver has no DCCP of its own: ours are unloaded, none is loaded"
		status
		exit 0
	fi
	# /usr/lib/modules: Debian 13's packages, on a host without merged /usr
	stock=/lib/modules/$kver/kernel/net/dccp
	[ -d "$stock" ] || [ ! -d "/usr$stock" ] || stock=/usr$stock
	[ -d "$stock" ] || die "no stock DCCP modules in $stock"
	modprobe inet_diag
	for m in "${STACK[@]}"; do
		# Debian's 6.12 ships them compressed (.ko.xz); kmod's insmod takes both
		ko=$(find "$stock" -maxdepth 1 -name "$m.ko*" | head -n1)
		[ -n "$ko" ] || die "no stock $m module in $stock"
		insmod "$ko" || die "insmod $ko failed (see dmesg)"
	done
	status
	;;
status)
	status
	;;
*)
	sed -n '4,8p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
