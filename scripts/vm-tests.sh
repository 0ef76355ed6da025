#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run inside the VM by scripts/check.sh: in-guest test suites in one boot,
# all of them or those named on the command line.  Each suite's KTAP output
# goes to $VM_OUT/<suite>.log (and to stdout as it runs), its exit status to
# $VM_OUT/<suite>.rc; check.sh counts the results.  Suites run one after
# another: they share the guest's CPUs.

set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${VM_OUT:?run this in the VM (scripts/vm-run)}
cd "$ROOT"

# One suite per kselftest collection: each prints its own KTAP plan.
SUITES=()
for c in $(make -s --no-print-directory -C selftests collections); do
	SUITES+=("$c:make --no-print-directory -C selftests/$c run_tests")
done
SUITES+=(
	"traffic:userspace/tests/vm_transfer.sh"
	"keyframe:userspace/tests/vm_keyframe.sh"
	"vp8:userspace/tests/vm_vp8.sh"
	"testbed:scripts/tests/vm_testbed.py"
	"competing:scripts/tests/vm_competing.py"
)

want=" $* "
for s in "${SUITES[@]}"; do
	name=${s%%:*}
	cmd=${s#*:}
	[ $# -eq 0 ] || [[ $want == *" $name "* ]] || continue
	printf '== %s (in the VM): %s [%dm%02ds]\n' "$name" "$cmd" $((SECONDS / 60)) $((SECONDS % 60))
	$cmd 2>&1 | tee "$OUT/$name.log"
	echo "${PIPESTATUS[0]}" >"$OUT/$name.rc"
done
