#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run inside the debug-kernel VM by `make check-debug`: every in-guest suite
# (scripts/vm-tests.sh), the DCCP stress test for STRESS_SECONDS (default
# 120), then a kmemleak scan.  With arguments (`make stress-debug`), only the
# stress test runs, with those arguments, then the scan.  With --faults
# [ARGS] (`make faults`), only the fault-injection test
# (selftests/faults/dccp_faults) runs, then the scan.  KASAN, lockdep and
# the atomic-sleep checks report on the console, where scripts/vm-run sees
# them.  Leaks from the boot are forgotten before the suites start; anything
# kmemleak finds after them fails the run.  Exit 0 only if every suite exited
# 0 (or 4, skipped) with no "not ok" result, and kmemleak reports nothing.

set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}	# the target's, from vm-run
OUT=${VM_OUT:?run this in the VM (scripts/vm-run)}
KMEMLEAK=/sys/kernel/debug/kmemleak
MODULES=(dccp_diag dccp_ipv6 dccp_ipv4 dccp)
STRESS_SECONDS=${STRESS_SECONDS:-120}
MODE=suites
case ${1:-} in
--faults) MODE=faults; shift ;;
"") ;;
*) MODE=stress ;;
esac

[ -w "$KMEMLEAK" ] || { echo "debug-check: no $KMEMLEAK: not the debug kernel?"; exit 1; }
# Only this run's suites count: an earlier run's results (of a suite since
# renamed, say) stay in $OUT otherwise.
rm -f "$OUT"/*.rc

# kmemleak announces each scan's count on the console at info level, where
# vm-run would take it for a failure: keep info off the console while we scan
# and read the report ourselves.
scan() {
	local saved
	saved=$(cut -f1 /proc/sys/kernel/printk)
	echo 5 >/proc/sys/kernel/printk
	# Objects younger than 5 s are never reported; a second scan drops
	# objects that were only unreferenced for a moment.
	sleep 6
	echo scan >"$KMEMLEAK"
	echo scan >"$KMEMLEAK"
	echo "$saved" >/proc/sys/kernel/printk
}

scan
echo clear >"$KMEMLEAK"

STRESS_ARGS=("$@")
if [ "$MODE" = suites ]; then
	# The kselftest runner gives each test 45 s, and one stress round
	# takes longer than that on this kernel: the suite runs the shortest
	# round, and the real stress run follows on its own.
	export KSELFTEST_DCCP_STRESS_ARGS="-t 1 -r 1 -n 8 -j 2"
	"$ROOT/scripts/vm-tests.sh"
	STRESS_ARGS=(-t "$STRESS_SECONDS")
fi
if [ "$MODE" = faults ]; then
	echo "== faults (in the VM): dccp_faults $*"
	"$BUILD/selftests/faults/dccp_faults" "$@" 2>&1 | tee "$OUT/faults.log"
	echo "${PIPESTATUS[0]}" >"$OUT/faults.rc"
else
	# Not "stress": that is the kselftest collection's result, which must
	# count too.
	echo "== stress-long (in the VM): dccp_stress ${STRESS_ARGS[*]}"
	"$BUILD/selftests/stress/dccp_stress" "${STRESS_ARGS[@]}" 2>&1 | tee "$OUT/stress-long.log"
	echo "${PIPESTATUS[0]}" >"$OUT/stress-long.rc"
fi

# A suite fails if it exits neither 0 nor 4 or if any of its top-level KTAP
# results is "not ok" (the kselftest runner exits 0 either way).
rc=0
for f in "$OUT"/*.rc; do
	[ -e "$f" ] || { echo "debug-check: no suite ran"; rc=1; break; }
	name=$(basename "$f" .rc)
	s=$(cat "$f")
	bad=$(grep -cE '^not ok [0-9]+ ' "$OUT/$name.log")
	echo "debug-check: $name exited $s, $bad results not ok"
	# The stress or faults run is what this boot is for: a skip of it is a
	# failure.
	{ [ "$s" -eq 0 ] || { [ "$s" -eq 4 ] && [ "$name" != stress-long ] &&
		[ "$name" != faults ]; }; } && [ "$bad" -eq 0 ] || rc=1
done

# Unloading frees what the modules own, so a lost reference into them shows.
modprobe -r "${MODULES[@]}" 2>/dev/null
scan
cat "$KMEMLEAK" >"$OUT/kmemleak.txt"
leaks=$(grep -c '^unreferenced object' "$OUT/kmemleak.txt")
echo "debug-check: kmemleak: $leaks unreferenced objects"
if [ "$leaks" -ne 0 ]; then
	cat "$OUT/kmemleak.txt"
	rc=1
fi
exit $rc
