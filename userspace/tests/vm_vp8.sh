#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The VP8 call's loop through the kernel, run INSIDE the VM:
#   scripts/vm-run -- userspace/tests/vm_vp8.sh   (vm-tests.sh's suite "vp8")
#
# sbpn-send --source vp8 over DCCP/CCID3 and SBPN2 on a 300 kbit/s path
# with 40 ms of RTT and 1 % loss, with the receiver's key-frame requests:
# the encoder's rate must come from CCID 3 (DCCP_SOCKOPT_CCID_TX_INFO),
# its layers must leave as the model's SBPN priorities, and the bitstream
# must arrive; vm_vp8_check.py says what each case checks.  The host
# tests cover the encoder, the decoder and the metrics without a kernel.
#
# KTAP output; exit 0 all passed, 1 a case failed, 4 skipped.

set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/userspace/bin
TESTS=$ROOT/userspace/tests
MODEL=$ROOT/userspace/models/vp8.model
OUT=${VM_OUT:-/tmp}/vm_vp8
DUR=${DUR:-12}
A=sbpn-va-$$
B=sbpn-vb-$$

echo "TAP version 13"
skip_all() { echo "1..0 # SKIP $1"; exit 4; }
# shellcheck source=vm_netns.sh
. "$TESTS/vm_netns.sh"
need_sbpn "$BIN"
mkdir -p "$OUT"
netns_pair "$A" "$B" 79
tc -n "$A" qdisc add dev va root handle 1: netem delay 20ms loss 1% limit 1000
tc -n "$A" qdisc add dev va parent 1: handle 2: tbf rate 300kbit burst 3000 limit 10000
tc -n "$B" qdisc add dev vb root netem delay 20ms limit 1000

name=vp8
ip netns exec "$B" "$BIN/sbpn-recv" --listen 10.79.0.2:7200 --out "$OUT/$name.recv.tsv" \
	--flow "$name" --keyframe-requests --ready-file "$OUT/$name.ready" &
for _ in $(seq 50); do [ -e "$OUT/$name.ready" ] && break; sleep 0.1; done
ip netns exec "$A" "$BIN/sbpn-send" --to 10.79.0.2:7200 --out "$OUT/$name.send.tsv" \
	--flow "$name" --source vp8 --model "$MODEL" --policy sbpn2 --tx-qlen 5 \
	--duration "$DUR" --keyframe-on-loss receiver --frames "$OUT/$name.frames" \
	--bitstream "$OUT/$name.ivf" --cc-log "$OUT/$name.cc.tsv" 2>"$OUT/$name.err"
rc=$?
wait
echo "1..1"
if out=$(python3 "$TESTS/vm_vp8_check.py" "$OUT/$name" "$MODEL" "$rc" 300); then
	printf '# %s\n' "$out"
	echo "ok 1 the encoder follows CCID 3, its layers leave with their priorities"
else
	printf '# %s\n' "$out"
	echo "not ok 1 the encoder follows CCID 3, its layers leave with their priorities"
	exit 1
fi
