# SPDX-License-Identifier: GPL-2.0
#
# Sourced by the VM traffic tests (vm_transfer.sh, vm_keyframe.sh,
# vm_vp8.sh): two network namespaces, the sender's and the receiver's,
# joined by a veth pair (va in the first, vb in the second) on
# 10.NET.0.0/24, .1 and .2, loopback up, and removed with the receiver's
# processes on exit; and, for a test of the SBPN policies, the check that
# it can run here.  The caller defines skip_all MESSAGE (its KTAP "1..0 #
# SKIP" exit).
#
#   netns_pair SENDER_NS RECEIVER_NS NET
#   need_sbpn BIN    skip unless BIN has sbpn-send and sbpn-recv built with
#                    the SBPN header and the project's DCCP modules load

netns_cleanup() {
	ip netns pids "$NETNS_B" 2>/dev/null | xargs -r kill 2>/dev/null
	ip netns del "$NETNS_A" 2>/dev/null
	ip netns del "$NETNS_B" 2>/dev/null
}

netns_pair() {
	NETNS_A=$1
	NETNS_B=$2
	trap netns_cleanup EXIT
	ip netns add "$NETNS_A" && ip netns add "$NETNS_B" || skip_all "cannot create namespaces"
	ip link add va netns "$NETNS_A" type veth peer name vb netns "$NETNS_B"
	ip -n "$NETNS_A" addr add "10.$3.0.1/24" dev va
	ip -n "$NETNS_B" addr add "10.$3.0.2/24" dev vb
	for ns in "$NETNS_A" "$NETNS_B"; do
		ip -n "$ns" link set lo up
	done
	ip -n "$NETNS_A" link set va up
	ip -n "$NETNS_B" link set vb up
}

need_sbpn() {
	[ -x "$1/sbpn-send" ] && [ -x "$1/sbpn-recv" ] ||
		skip_all "userspace not built (make -C userspace)"
	modprobe -a dccp_ipv4 sch_netem sch_tbf veth 2>/dev/null
	[ -d /sys/module/dccp ] || skip_all "no DCCP modules"
	# --dry-run opens no socket: it only says the program has the SBPN
	# header; the running modules have the policies when they are the
	# project's (sbpn-send's own test: /sys/module/dccp/version, absent in
	# stock DCCP)
	"$1/sbpn-send" --dry-run --policy sbpn2 --out /dev/null --flow x --duration 0.1 \
		2>/dev/null || skip_all "sbpn-send built without the SBPN header"
	[ -e /sys/module/dccp/version ] ||
		skip_all "stock DCCP modules: no SBPN policies (make load)"
}
