#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The key-frame loop's "notice" path, which needs DCCP and
# our modules, run INSIDE the VM:  scripts/vm-run -- userspace/tests/vm_keyframe.sh
# (scripts/vm-tests.sh's suite "keyframe").
#
# An Ekiga call with coding dependencies (video_gop 100) over SBPN2 with
# drop notices on a path too narrow for it (150 kbit/s, tx_qlen 5), so the
# policy discards video: with --keyframe-on-loss notice every frame the
# loop forced must be marked "notice" and follow a video notice (the
# notice of a frame at or after the last key frame); with receiver over
# 2 % netem loss the receiver's requests must force frames; with
# receiver,notice the notices must, and the receiver must ask (whether
# one of its requests comes before a notice is chance).  The host tests
# cover the receiver's path over UDP and TCP.
#
# KTAP output; exit 0 all passed, 1 a case failed, 4 skipped.

set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/userspace/bin
TESTS=$ROOT/userspace/tests
MODEL=$ROOT/userspace/models/ekiga-gop.model
OUT=${VM_OUT:-/tmp}/vm_keyframe
DUR=${DUR:-8}
A=sbpn-ka-$$
B=sbpn-kb-$$

echo "TAP version 13"
skip_all() { echo "1..0 # SKIP $1"; exit 4; }
# shellcheck source=vm_netns.sh
. "$TESTS/vm_netns.sh"
need_sbpn "$BIN"
mkdir -p "$OUT"
netns_pair "$A" "$B" 78
tc -n "$A" qdisc add dev va root handle 1: netem delay 20ms loss "${LOSS:-0}%" limit 1000
tc -n "$A" qdisc add dev va parent 1: handle 2: tbf rate 150kbit burst 3000 limit 6000

n=0 failed=0
result() {	# ok? name diagnostics...
	local rc=$1 name=$2
	shift 2
	n=$((n + 1))
	if [ "$rc" = 0 ]; then echo "ok $n $name"; else
		printf '# %s\n' "$@"; echo "not ok $n $name"; failed=$((failed + 1)); fi
}

# case SOURCES PORT LOSS
run_case() {
	local src=$1 port=$2 name=kf-${1/,/-}
	tc -n "$A" qdisc change dev va root handle 1: netem delay 20ms loss "$3%" limit 1000
	ip netns exec "$B" "$BIN/sbpn-recv" --listen 10.78.0.2:"$port" --out "$OUT/$name.recv.tsv" \
		--flow "$name" --keyframe-requests --ready-file "$OUT/$name.ready" &
	for _ in $(seq 50); do [ -e "$OUT/$name.ready" ] && break; sleep 0.1; done
	ip netns exec "$A" "$BIN/sbpn-send" --to 10.78.0.2:"$port" --out "$OUT/$name.send.tsv" \
		--flow "$name" --model "$MODEL" --policy sbpn2 --tx-qlen 5 --duration "$DUR" \
		--notices "$OUT/$name.notices.tsv" --keyframe-on-loss "$src" 2>"$OUT/$name.err"
	local rc=$?
	wait
	python3 "$TESTS/vm_keyframe_check.py" "$OUT/$name" "$src" "$rc"
}

out=$(run_case notice 7100 0); result $? "notice forces key frames after video drop notices" "$out"
out=$(run_case receiver 7101 2); result $? "receiver's requests force key frames over DCCP" "$out"
out=$(run_case receiver,notice 7102 2); result $? "receiver and notice: notices force key frames, the receiver asks" "$out"
echo "1..$n"
[ $failed = 0 ]
