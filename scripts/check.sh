#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run every test of the project and print one summary line,
# "N passed, N failed, N skipped":
#
#   1. style: checkpatch --strict on patches/ and kernel/; docutils on
#      Documentation/ (scripts/doccheck.py)
#   2. the harness's own tests on the host (they boot VMs on purpose to see
#      WARNs, timeouts and bad exit codes reported as failures)
#   3. userspace host tests (make -C userspace check), and libFuzzer on the
#      model and trace parsers for FUZZ_SECONDS (default 20) each
#   4. the harness' host tests (scripts/tests/: scenarios; the analysis with
#      the pinned .venv)
#   5. every in-guest suite (scripts/vm-tests.sh) in one VM boot
#
# Logs go to build/check/.  Exit 0 only if nothing failed and something ran.
# A skipped VM selftest counts as skipped, never as passed.

set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LOG=$ROOT/build/check
CACHE=${CACHE:-$ROOT/.cache/kernel}
# shellcheck source=/dev/null
. "$CACHE/current.env"

rm -rf "$LOG"
mkdir -p "$LOG"
cd "$ROOT"

passed=0
failed=0
skipped=0

# Add a KTAP file's top-level results to the totals and print them.  Call it
# directly, never in $(...): a subshell would lose the totals.
count_tap() { # label, file with KTAP results at top level
	local label=$1 p f s plan
	shift
	p=$(grep -cE '^ok [0-9]+ ' "$1" | head -1)
	s=$(grep -cE '^ok [0-9]+ .*# SKIP' "$1" | head -1)
	f=$(grep -cE '^not ok [0-9]+ ' "$1" | head -1)
	passed=$((passed + p - s))
	skipped=$((skipped + s))
	failed=$((failed + f))
	echo "$label: $((p - s)) passed, $f failed, $s skipped"
	# A run that stopped early has fewer results than its plan said.
	plan=$(sed -n 's/^1\.\.\([0-9]*\).*/\1/p' "$1" | head -1)
	if [ -n "$plan" ] && [ "$plan" -ne $((p + f)) ]; then
		echo "$label: planned $plan results, got $((p + f))"
		failed=$((failed + 1))
	fi
}

# Run a check that gives one verdict: count it, print its last line on
# success and its whole log on failure.
count_step() { # label, command...
	local label=$1
	shift
	echo "== $label"
	if "$@" >"$LOG/$label.log" 2>&1; then
		passed=$((passed + 1))
		tail -n1 "$LOG/$label.log"
	else
		failed=$((failed + 1))
		cat "$LOG/$label.log"
	fi
}

count_step style scripts/style.sh
count_step docs /usr/bin/python3 scripts/doccheck.py

echo "== harness self-tests (host, boots VMs)"
mkdir -p build/harness
cp -r selftests/harness/warn build/harness/
make -s -C "/lib/modules/$ABI/build" M="$ROOT/build/harness/warn" modules \
	>"$LOG/warn-module.log" 2>&1 || { cat "$LOG/warn-module.log"; failed=$((failed + 1)); }
selftests/harness/vm_run_test.sh | tee "$LOG/harness.log"
count_tap harness "$LOG/harness.log"

echo "== userspace (host)"
make --no-print-directory -C userspace check 2>&1 | tee "$LOG/userspace.log"
rc=${PIPESTATUS[0]}
count_tap userspace "$LOG/userspace.log"
[ "$rc" -eq 0 ] || { echo "userspace: host tests exited $rc"; failed=$((failed + 1)); }

echo "== parser fuzzing (host): libFuzzer, ${FUZZ_SECONDS:=20} s per parser"
if make --no-print-directory -C userspace/fuzz run FUZZ_SECONDS="$FUZZ_SECONDS" \
	>"$LOG/fuzz.log" 2>&1; then
	passed=$((passed + 1))
	echo "fuzz: passed, $(grep -h '^stat::number_of_executed_units' "$LOG/fuzz.log" |
		awk '{ n += $2 } END { print n + 0 }') inputs, no crash, leak or timeout"
else
	failed=$((failed + 1))
	tail -n 40 "$LOG/fuzz.log"
	echo "fuzz: failed (log: $LOG/fuzz.log; the input is in userspace/build/fuzz/)"
fi

echo "== scenarios (host)"
python3 scripts/tests/test_scenario.py 2>&1 | tee "$LOG/scenario.log"
rc=${PIPESTATUS[0]}
count_tap scenario "$LOG/scenario.log"
[ "$rc" -eq 0 ] || { echo "scenario: exited $rc"; failed=$((failed + 1)); }

echo "== analysis (host)"
if scripts/venv.sh >"$LOG/venv.log" 2>&1; then
	.venv/bin/python scripts/tests/test_stats.py 2>&1 | tee "$LOG/stats.log"
	rc=${PIPESTATUS[0]}
	count_tap stats "$LOG/stats.log"
	[ "$rc" -eq 0 ] || { echo "stats: exited $rc"; failed=$((failed + 1)); }
else
	cat "$LOG/venv.log"
	failed=$((failed + 1))
fi

echo "== in the VM: scripts/vm-tests.sh"
scripts/vm-run --timeout 1500 --out "$LOG/vm" -- scripts/vm-tests.sh
vm_rc=$?
if [ "$vm_rc" -ne 0 ]; then
	echo "vm: the VM run itself failed (exit $vm_rc)"
	failed=$((failed + 1))
fi
for rcfile in "$LOG"/vm/*.rc; do
	[ -e "$rcfile" ] || { echo "vm: no suite ran"; failed=$((failed + 1)); break; }
	suite=$(basename "$rcfile" .rc)
	# Top-level results only; nested KTAP lines start with "#".
	grep -E '^(not )?ok [0-9]+ |^1\.\.[0-9]+' "$LOG/vm/$suite.log" >"$LOG/vm/$suite.tap"
	count_tap "$suite" "$LOG/vm/$suite.tap"
	rc=$(cat "$rcfile")
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 4 ]; then
		echo "$suite: exited $rc"
		# A failing exit must show up as a failure even if no line said so.
		grep -q '^not ok' "$LOG/vm/$suite.tap" || failed=$((failed + 1))
	elif [ ! -s "$LOG/vm/$suite.tap" ]; then
		echo "$suite: no test ran"
		failed=$((failed + 1))
	fi
done

echo
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
