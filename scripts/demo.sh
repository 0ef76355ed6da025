#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A short DCCP demo, run INSIDE the VM by `make demo`: the Ekiga video-call
# model over DCCP/CCID3 through a 1 Mbit/s, 80 ms RTT bottleneck shared with
# two TCP Reno flows, once per queueing policy (SIMPLE = unmodified DCCP,
# and SBPN2), and a table of audio and video received / on time.
#
#   sender --veth-- router --veth-- receiver
#          40 ms          40 ms + tbf 1 Mbit/s (router egress)
#
# Records stay in $VM_OUT/demo/.  Exit 0 when every run completed.

set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/userspace/bin
OUT=${VM_OUT:-/tmp}/demo
DUR=${DUR:-20}
POLICIES=${POLICIES:-simple sbpn2}
S=demo-s-$$ R=demo-r-$$ D=demo-d-$$

cleanup() {
	for ns in $S $R $D; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	return 0
}
trap cleanup EXIT

modprobe -a dccp_ipv4 sch_netem sch_tbf veth
mkdir -p "$OUT"
for ns in $S $R $D; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
ip link add s0 netns $S type veth peer name r0 netns $R
ip link add r1 netns $R type veth peer name d0 netns $D
ip -n $S addr add 10.80.1.1/24 dev s0
ip -n $R addr add 10.80.1.2/24 dev r0
ip -n $R addr add 10.80.2.2/24 dev r1
ip -n $D addr add 10.80.2.1/24 dev d0
for l in "$S s0" "$R r0" "$R r1" "$D d0"; do set -- $l; ip -n "$1" link set "$2" up; done
ip -n $S route add default via 10.80.1.2
ip -n $D route add default via 10.80.2.2
ip netns exec $R sysctl -qw net.ipv4.ip_forward=1
# Forward: 40 ms, then a 1 Mbit/s token bucket; reverse: 40 ms.
tc -n $R qdisc add dev r1 root handle 1: netem delay 40ms limit 1000
tc -n $R qdisc add dev r1 parent 1: handle 2: tbf rate 1mbit burst 3000 limit 15000
tc -n $R qdisc add dev r0 root netem delay 40ms limit 1000

ip netns exec $D iperf3 -s -D -p 5201
ip netns exec $D iperf3 -s -D -p 5202
sleep 1

echo "policy  class  sched  received  on_time   (first 3 s not counted)"
port=6000
for pol in $POLICIES; do
	port=$((port + 1))
	ip netns exec $D "$BIN/sbpn-recv" --transport dccp --listen 10.80.2.1:$port \
		--out "$OUT/$pol.recv.tsv" --flow "$pol" --ccid 3 \
		--ready-file "$OUT/$pol.ready" --idle-timeout-ms 5000 2>"$OUT/$pol.recv.err" &
	rpid=$!
	for p in 5201 5202; do
		ip netns exec $S iperf3 -c 10.80.2.1 -p $p -C reno -l 519 -t $((DUR + 2)) \
			>"$OUT/$pol.tcp$p.txt" 2>&1 &
	done
	sleep 2
	ip netns exec $S "$BIN/sbpn-send" --transport dccp --to 10.80.2.1:$port \
		--out "$OUT/$pol.send.tsv" --flow "$pol" --policy "$pol" --ccid 3 \
		--duration "$DUR" --seed 1 2>"$OUT/$pol.send.err"
	wait $rpid
	wait
	python3 "$ROOT/scripts/demo_table.py" "$OUT/$pol.send.tsv" "$OUT/$pol.recv.tsv" "$pol"
done
