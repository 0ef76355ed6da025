# SPDX-License-Identifier: GPL-2.0
#
# Sourced by the VM traffic tests (vm_transfer.sh, vm_keyframe.sh): two
# network namespaces, the sender's and the receiver's, joined by a veth
# pair (va in the first, vb in the second) on 10.NET.0.0/24, .1 and .2,
# loopback up, and removed with the receiver's processes on exit.  The
# caller defines skip_all MESSAGE (its KTAP "1..0 # SKIP" exit).
#
#   netns_pair SENDER_NS RECEIVER_NS NET

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
