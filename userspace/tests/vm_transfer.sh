#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# End-to-end transfers over a veth pair between two network namespaces,
# run INSIDE the VM:  scripts/vm-run -- userspace/tests/vm_transfer.sh
#
# For each case sbpn-recv runs in namespace B, sbpn-send in A, and
# account.py checks that every scheduled packet is accounted for (received,
# lost, or dropped with EAGAIN), that both record files are complete, and
# that received packets match what was sent.  One case has netem loss on
# A's egress so "lost" is exercised; UDP and TCP cases must lose nothing.
# DCCP senders must record the Faster Restart setting they asked for.  SBPN
# senders record the kernel's drop notices (--notices): each must name a
# packet that was accepted and never arrived, and they must add up to the
# kernel's counters; on the narrow path (150 kbit/s for a 374 kbit/s call,
# tx_qlen 5) there must be some.
# The sender's lateness p50/p99/max is printed for each case.  Then the
# documented examples: Python's (py_sendmsg.py, as traffic.rst uses
# sbpn.py) and traffic.rst's C program, compiled here from the page.
#
# KTAP output; exit 0 all passed, 1 a case failed, 4 skipped (no DCCP, or
# binaries not built).  Records stay in $VM_OUT/vm_transfer (or /tmp).

set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/userspace/bin
TESTS=$ROOT/userspace/tests
OUT=${VM_OUT:-/tmp}/vm_transfer
DUR=${DUR:-4}
A=sbpn-a-$$
B=sbpn-b-$$

echo "TAP version 13"
skip_all() { echo "1..0 # SKIP $1"; exit 4; }
[ -x "$BIN/sbpn-send" ] && [ -x "$BIN/sbpn-recv" ] || skip_all "userspace not built (make -C userspace)"
command -v ip >/dev/null && command -v tc >/dev/null || skip_all "ip/tc missing"
modprobe -a dccp_ipv4 dccp_ipv6 2>/dev/null
modprobe -a sch_netem veth 2>/dev/null
[ -d /sys/module/dccp ] || skip_all "no DCCP modules"

# shellcheck source=vm_netns.sh
. "$TESTS/vm_netns.sh"
mkdir -p "$OUT"
netns_pair "$A" "$B" 77
# a little delay so the path is not instantaneous; loss per case below
tc -n "$A" qdisc add dev va root netem delay 10ms limit 10000

echo "# modules: $(cat /sys/module/dccp/version 2>/dev/null || echo stock) kernel $(uname -r)"
if "$BIN/sbpn-send" --dry-run --policy sbpn1 --out /dev/null --flow x --duration 0.1 2>/dev/null; then
	SBPN=1
else
	SBPN=0
fi

CASES=(
	"dccp-simple-ccid3|dccp|--policy simple --ccid 3|3|"
	"dccp-prio-ccid3|dccp|--policy prio --ccid 3|3|"
	"dccp-simple-ccid2|dccp|--policy simple --ccid 2|2|"
	"dccp-prio-ccid2-q32|dccp|--policy prio --ccid 2 --tx-qlen 32|2|"
	"udp|udp||3|--no-loss"
	"tcp|tcp||3|--no-loss"
	"dccp-simple-ccid3-loss5|dccp|--policy simple --ccid 3|3|--expect-loss|loss 5%"
	"udp-loss5|udp||3|--expect-loss|loss 5%"
	"dccp-sbpn1|dccp|--policy sbpn1|3||"
	"dccp-sbpn2|dccp|--policy sbpn2|3||"
	"dccp-sbpn2-fr|dccp|--policy sbpn2 --faster-restart|3||"
	"dccp-sbpn3-ccid2|dccp|--policy sbpn3 --ccid 2|2||"
	"dccp-sbpn2-narrow|dccp|--policy sbpn2 --tx-qlen 5|3|--expect-notices|rate 150kbit"
)
echo "1..$((${#CASES[@]} + 3))"
n=0
failed=0
port=7000
for c in "${CASES[@]}"; do
	IFS='|' read -r name tr opts ccid check netem <<<"$c"
	n=$((n + 1))
	port=$((port + 1))
	if [[ $opts == *sbpn* ]] && [ "$SBPN" = 0 ]; then
		echo "ok $n $name # SKIP sbpn-send built without the SBPN header"
		continue
	fi
	if [ -n "$netem" ]; then
		tc -n "$A" qdisc change dev va root netem delay 10ms limit 10000 $netem
	else
		tc -n "$A" qdisc change dev va root netem delay 10ms limit 10000
	fi
	rm -f "$OUT/$name".*
	ccidopt=""
	[ "$tr" = dccp ] && ccidopt="--ccid $ccid"
	ip netns exec "$B" "$BIN/sbpn-recv" --transport "$tr" --listen 10.77.0.2:$port \
		--out "$OUT/$name.recv.tsv" --flow "$name" $ccidopt --idle-timeout-ms 3000 \
		--ready-file "$OUT/$name.ready" 2>"$OUT/$name.recv.err" &
	rpid=$!
	for _ in $(seq 100); do [ -e "$OUT/$name.ready" ] && break; sleep 0.05; done
	extra=""
	[ "$tr" = dccp ] && extra="--cc-log $OUT/$name.cc.tsv"
	notices=""
	[[ $opts == *sbpn* ]] && notices="$OUT/$name.notices.tsv"
	[ -n "$notices" ] && extra="$extra --notices $notices"
	ip netns exec "$A" "$BIN/sbpn-send" --transport "$tr" --to 10.77.0.2:$port \
		--out "$OUT/$name.send.tsv" --flow "$name" --duration "$DUR" --seed $n \
		$opts $extra 2>"$OUT/$name.send.err"
	src=$?
	wait $rpid
	rrc=$?
	summary=$(python3 "$TESTS/account.py" "$OUT/$name.send.tsv" "$OUT/$name.recv.tsv" \
		$notices $check 2>&1)
	arc=$?
	echo "$summary" | sed "s/^/# $name: /"
	# the sender records the Faster Restart setting the kernel reports
	if [ "$tr" = dccp ]; then
		want=0
		[[ $opts == *--faster-restart* ]] && want=1
		fr=$(sed -n 's/^# faster_restart: //p' "$OUT/$name.send.tsv")
		if [ "$fr" != "$want" ]; then
			echo "# $name: faster_restart metadata '$fr', expected '$want'"
			arc=1
		fi
	fi
	if [ "$tr" = dccp ]; then
		echo "# $name: cc-log $(grep -vc '^#' "$OUT/$name.cc.tsv") lines, last: $(grep -v '^#' "$OUT/$name.cc.tsv" | tail -1 | cut -f2-8)"
	fi
	if [ $src -eq 0 ] && [ $rrc -eq 0 ] && [ $arc -eq 0 ]; then
		echo "ok $n $name"
	else
		echo "# send rc $src: $(tail -2 "$OUT/$name.send.err")"
		echo "# recv rc $rrc: $(tail -2 "$OUT/$name.recv.err")"
		echo "not ok $n $name"
		failed=$((failed + 1))
	fi
done
tc -n "$A" qdisc change dev va root netem delay 10ms limit 10000

# sbpn.py as the Python example of Documentation/traffic.rst uses it, against
# the real receiver (the host tests compile the example itself).
n=$((n + 1))
port=$((port + 1))
rm -f "$OUT/python."*
ip netns exec "$B" "$BIN/sbpn-recv" --transport dccp --listen 10.77.0.2:$port \
	--out "$OUT/python.recv.tsv" --flow python --ready-file "$OUT/python.ready" \
	2>"$OUT/python.recv.err" &
rpid=$!
for _ in $(seq 100); do [ -e "$OUT/python.ready" ] && break; sleep 0.05; done
ip netns exec "$A" python3 "$TESTS/py_sendmsg.py" 10.77.0.2 $port >"$OUT/python.out" 2>&1
prc=$?
wait $rpid
rrc=$?
got=$(grep -vc '^#' "$OUT/python.recv.tsv")
echo "# python: rc $prc, receiver rc $rrc, $((got - 1)) packets received: $(cat "$OUT/python.out")"
if [ $prc -eq 0 ] && [ $rrc -eq 0 ] && [ "$got" -eq 11 ]; then
	echo "ok $n python-sendmsg-example"
else
	echo "not ok $n python-sendmsg-example"
	failed=$((failed + 1))
fi

# The C example of Documentation/traffic.rst ("The C helper"), taken from
# the page, compiled here and run against a DCCP server of service code 0
# on a 300 kbit/s path: it must end with 0, print its counters, and every
# packet the kernel sent must arrive (the path loses none).
n=$((n + 1))
port=$((port + 1))
tc -n "$A" qdisc change dev va root netem delay 10ms limit 10000 rate 300kbit
sed -n '/^.. example sbpn-c begin/,/^.. example sbpn-c end/p' "$ROOT/Documentation/traffic.rst" |
	sed -n '/^  /s/^  //p' >"$OUT/call.c"
HDR=${BUILD:-$ROOT/build}/include
if cc -std=gnu11 -Wall -Wextra -Werror -I"$HDR" -I"$ROOT/userspace/lib" -o "$OUT/call" \
	"$OUT/call.c" "$ROOT/userspace/lib/libsbpn.a" 2>"$OUT/call.cc.err"; then
	rm -f "$OUT/call.ready"
	ip netns exec "$B" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, 6, 33)  # SOCK_DCCP, IPPROTO_DCCP
s.bind(("10.77.0.2", int(sys.argv[1])))
s.listen(1)
open(sys.argv[2], "w").close()
c, _ = s.accept()
n = 0
while c.recv(2048):
    n += 1
print(n)' $port "$OUT/call.ready" >"$OUT/call.recv" 2>&1 &
	rpid=$!
	for _ in $(seq 100); do [ -e "$OUT/call.ready" ] && break; sleep 0.05; done
	ip netns exec "$A" "$OUT/call" 10.77.0.2 $port >"$OUT/call.out" 2>&1
	crc=$?
	wait $rpid
	rrc=$?
	got=$(cat "$OUT/call.recv")
	sent=$(sed -n 's/^queued [0-9]* sent \([0-9]*\) .*/\1/p' "$OUT/call.out")
	echo "# c-example: rc $crc, server rc $rrc, $got received; $(grep -c '^frame' "$OUT/call.out") notices printed; $(grep '^queued' "$OUT/call.out")"
	if [ $crc -eq 0 ] && [ $rrc -eq 0 ] && [ -n "$sent" ] && [ "$sent" -gt 0 ] &&
	   [ "$got" = "$sent" ] && grep -q '^X [0-9]* B/s, RTT [0-9]* us$' "$OUT/call.out"; then
		echo "ok $n c-example"
	else
		tail -5 "$OUT/call.out" | sed 's/^/# /'
		echo "not ok $n c-example"
		failed=$((failed + 1))
	fi
else
	sed 's/^/# /' "$OUT/call.cc.err" | head -20
	echo "not ok $n c-example (compile)"
	failed=$((failed + 1))
fi
tc -n "$A" qdisc change dev va root netem delay 10ms limit 10000

# A receiver stopped by SIGTERM keeps its records and says it is partial.
n=$((n + 1))
port=$((port + 1))
ip netns exec "$B" "$BIN/sbpn-recv" --transport dccp --listen 10.77.0.2:$port \
	--out "$OUT/sigterm.recv.tsv" --flow sigterm --ready-file "$OUT/sigterm.ready" \
	2>/dev/null &
rpid=$!
for _ in $(seq 100); do [ -e "$OUT/sigterm.ready" ] && break; sleep 0.05; done
ip netns exec "$A" "$BIN/sbpn-send" --transport dccp --to 10.77.0.2:$port \
	--out "$OUT/sigterm.send.tsv" --flow sigterm --duration 30 2>/dev/null &
spid=$!
sleep 2
kill -TERM $rpid
wait $rpid
rrc=$?
wait $spid
src=$?
rows=$(grep -vc '^#' "$OUT/sigterm.recv.tsv")
echo "# sigterm: receiver rc $rrc, $((rows - 1)) records, sender rc $src"
if [ $rrc -ne 0 ] && [ "$rows" -gt 10 ] && ! grep -q '^# complete' "$OUT/sigterm.recv.tsv" &&
   grep -q '^# interrupted: TERM' "$OUT/sigterm.recv.tsv"; then
	echo "ok $n receiver-sigterm-partial"
else
	echo "not ok $n receiver-sigterm-partial"
	failed=$((failed + 1))
fi

[ $failed -eq 0 ] && exit 0 || exit 1
