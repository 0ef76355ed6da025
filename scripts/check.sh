#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run every test of the project and print one summary line,
# "N passed, N failed, N skipped":
#
#   scripts/check.sh                 all of them, 1 to 5 (make check)
#   scripts/check.sh --host          the host tier, 1 to 3: no VM (make
#                                    check-host; host_tests below)
#   scripts/check.sh --vm [SUITE...] the in-guest suites named, default all,
#                                    of 5 alone, in one VM boot of the
#                                    target (make check-vm SUITES=...)
#
#   1. the kernel inputs of each target, fetched into a fresh cache,
#      install no kernel package and leave /boot as it was, and modules
#      build against their headers alone (scripts/tests/kernel_inputs_host.sh);
#      style: checkpatch --strict of each target on patches/ and kernel/;
#      the series made the same change on each target (same-series.sh);
#      the series' selftests patch is what selftests/ gives
#      (series-selftests.sh --check), whichever git's version wrote it;
#      docutils on Documentation/
#      (scripts/doccheck.py); Documentation/socket-api.rst is the series'
#      dccp.rst (scripts/socket-api.py --check); no words of the project's
#      process (issue numbers, sessions, the machines it was made on) in
#      any tracked file (scripts/tests/test_words.py)
#   2. userspace host tests (make -C userspace check), and libFuzzer on the
#      model and trace parsers for FUZZ_SECONDS (default 20) each
#   3. the harness' host tests (scripts/tests/: the test accounting itself,
#      scenarios, host-deps.sh's package list per Debian release, the table
#      that opens Documentation/results.rst; the
#      analysis, the sequential decision, the analysis package's acyclic
#      imports and the command lines' edges with the pinned .venv)
#   4. the harness's own tests on the host (they boot VMs on purpose to see
#      WARNs, timeouts and bad exit codes reported as failures), and one
#      campaign run as two shards in two VM boots and merged
#      (scripts/tests/shards_vms.sh)
#   5. every in-guest suite (scripts/vm-tests.sh) in one VM boot of the
#      target kernel (KVER, see scripts/target.sh); then, for each other
#      target in ALSO_KVERS (by default the host archive's other ones, already
#      built by make check), the kselftest collections in one VM boot of
#      that kernel: the kernel code is tested on both, the harness and the
#      testbed, which do not depend on it, on the target
#
# Logs go to $BUILD/check/.  Exit 0 only if nothing failed and something ran.
# The totals count test cases (a kselftest program's nested results, see
# scripts/ktap_count.py), except that a program in ONE_CASE below counts as
# one; a skipped case counts as skipped, never as passed.
# Every suite and kselftest program that must run is listed below: one that
# is missing, crashed or skipped whole is a failure unless ALLOW_SKIP names
# it with the reason.

set -uo pipefail

mode=all
case ${1:-} in
--host) mode=host; shift ;;
--vm) mode=vm; shift ;;
-h|--help) sed -n '4,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
"") ;;
*) echo "check.sh: $1: expected --host or --vm [SUITE...]" >&2; exit 2 ;;
esac
[ $# -eq 0 ] || [ "$mode" = vm ] || { echo "check.sh: suites go with --vm" >&2; exit 2; }

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/target.sh
. "$ROOT/scripts/target.sh"
LOG=$BUILD/check
if [ -z "${ALSO_KVERS+set}" ]; then
	ALSO_KVERS=$(scripts/host-deps.sh --kvers 2>/dev/null || echo 6.1 6.12)
	ALSO_KVERS=$(printf '%s\n' $ALSO_KVERS | grep -vxF "$KVER" | tr '\n' ' ')
	ALSO_KVERS=${ALSO_KVERS% }
fi
# One VM boot of the target alone: the other targets are not booted.
[ "$mode" != vm ] || ALSO_KVERS=

rm -rf "$LOG"
mkdir -p "$LOG"
cd "$ROOT"

passed=0
failed=0
skipped=0

# The in-guest suites that must run: the kselftest collections (each with
# the programs its Makefile lists) and the Python/shell suites.
COLLECTIONS=$(make -s --no-print-directory -C selftests collections)
VM_SUITES="$COLLECTIONS traffic keyframe vp8 testbed competing"
# Suites allowed to skip whole, with the reason printed: none today.
declare -A ALLOW_SKIP=()
# Programs counted as one case, per suite: dccp_stress prints a result per
# round, and runs as many rounds as fit its 30 s (1 to 4 per boot), so
# its rounds would make the totals differ from run to run.
declare -A ONE_CASE=([stress]=dccp_stress)

if [ "$mode" = vm ]; then
	# shellcheck disable=SC2206	# the suites are words
	suites=(${*:-$VM_SUITES})
	for s in "${suites[@]}"; do
		[[ " $VM_SUITES " == *" $s "* ]] && continue
		echo "check.sh: --vm $s: no such in-guest suite; they are: $VM_SUITES" >&2
		exit 2
	done
fi

# Add a suite's test cases to the totals and print them (ktap_count.py).
# Call it directly, never in $(...): a subshell would lose the totals.
count_suite() { # label, log, exit status, [ktap_count.py options...]
	local out p f s
	out=$(python3 scripts/ktap_count.py "$@" ${ALLOW_SKIP[$1]:+--allow-skip "${ALLOW_SKIP[$1]}"})
	echo "$out" | sed '$d'
	read -r p f s <<<"$(echo "$out" | tail -n1)"
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
}

# A stage's heading, with the time since the start, so that a log shows
# where the test command's time goes.
stage() {
	printf '== %s [%dm%02ds]\n' "$*" $((SECONDS / 60)) $((SECONDS % 60))
}

# Run a check that gives one verdict: count it, print its last line on
# success and its whole log on failure.
count_step() { # label, command...
	local label=$1
	shift
	stage "$label"
	if "$@" >"$LOG/$label.log" 2>&1; then
		passed=$((passed + 1))
		tail -n1 "$LOG/$label.log"
	else
		failed=$((failed + 1))
		cat "$LOG/$label.log"
	fi
}

# The host tier: every test that needs no VM, the one list that make check
# and make check-host (--host) run.
host_tests() {
	stage "kernel inputs (host): fetched with no kernel installed and /boot unchanged"
	# shellcheck disable=SC2086	# the targets are words
	KVERS=$(printf '%s\n' $KVER $ALSO_KVERS | grep -vxF 7.3 | tr '\n' ' ') \
		scripts/tests/kernel_inputs_host.sh 2>&1 | tee "$LOG/kernel-inputs.log"
	count_suite kernel-inputs "$LOG/kernel-inputs.log" "${PIPESTATUS[0]}"

	for k in $KVER $ALSO_KVERS; do
		count_step "style-$k" env KVER="$k" BUILD= scripts/style.sh
	done
	[ -z "$ALSO_KVERS" ] || count_step same-series env KVERS="$KVER $ALSO_KVERS" scripts/same-series.sh
	count_step selftests-patch scripts/series-selftests.sh --check
	# The same with a git whose default signature, its version, is not
	# this host's (as Debian 12's and 13's gits differ): still the same.
	count_step selftests-patch-other-git env GIT_CONFIG_COUNT=1 \
		GIT_CONFIG_KEY_0=format.signature GIT_CONFIG_VALUE_0=0.0.0-another-git \
		scripts/series-selftests.sh --check
	count_step docs /usr/bin/python3 scripts/doccheck.py
	count_step socket-api /usr/bin/python3 scripts/socket-api.py --check --tree "$BUILD/tree"
	stage "words (host)"
	/usr/bin/python3 scripts/tests/test_words.py 2>&1 | tee "$LOG/words.log"
	count_suite words "$LOG/words.log" "${PIPESTATUS[0]}"

	stage "userspace (host)"
	make --no-print-directory -C userspace HDR="$BUILD/include" check 2>&1 | tee "$LOG/userspace.log"
	count_suite userspace "$LOG/userspace.log" "${PIPESTATUS[0]}"

	stage "parser fuzzing (host): libFuzzer, ${FUZZ_SECONDS:=20} s per parser"
	if make --no-print-directory -C userspace/fuzz run HDR="$BUILD/include" FUZZ_SECONDS="$FUZZ_SECONDS" \
		>"$LOG/fuzz.log" 2>&1; then
		passed=$((passed + 1))
		echo "fuzz: passed, $(grep -h '^stat::number_of_executed_units' "$LOG/fuzz.log" |
			awk '{ n += $2 } END { print n + 0 }') inputs, no crash, leak or timeout"
	else
		failed=$((failed + 1))
		tail -n 40 "$LOG/fuzz.log"
		echo "fuzz: failed (log: $LOG/fuzz.log; the input is in userspace/build/fuzz/)"
	fi

	stage "test accounting (host)"
	python3 scripts/tests/test_ktap_count.py 2>&1 | tee "$LOG/accounting.log"
	count_suite accounting "$LOG/accounting.log" "${PIPESTATUS[0]}"

	stage "host packages (host)"
	python3 scripts/tests/test_host_deps.py 2>&1 | tee "$LOG/host-deps.log"
	count_suite host-deps "$LOG/host-deps.log" "${PIPESTATUS[0]}"

	stage "scenarios (host)"
	python3 scripts/tests/test_scenario.py 2>&1 | tee "$LOG/scenario.log"
	count_suite scenario "$LOG/scenario.log" "${PIPESTATUS[0]}"

	stage "results table (host)"
	python3 scripts/tests/test_results_table.py 2>&1 | tee "$LOG/results-table.log"
	count_suite results-table "$LOG/results-table.log" "${PIPESTATUS[0]}"

	stage "analysis (host)"
	if scripts/venv.sh >"$LOG/venv.log" 2>&1; then
		.venv/bin/python scripts/tests/test_stats.py 2>&1 | tee "$LOG/stats.log"
		count_suite stats "$LOG/stats.log" "${PIPESTATUS[0]}"
		.venv/bin/python scripts/tests/test_friendliness.py 2>&1 | tee "$LOG/friendliness.log"
		count_suite friendliness "$LOG/friendliness.log" "${PIPESTATUS[0]}"
		.venv/bin/python scripts/tests/test_quality.py 2>&1 | tee "$LOG/quality.log"
		count_suite quality "$LOG/quality.log" "${PIPESTATUS[0]}"
		.venv/bin/python scripts/tests/test_vp8call.py 2>&1 | tee "$LOG/vp8call.log"
		count_suite vp8call "$LOG/vp8call.log" "${PIPESTATUS[0]}"
		.venv/bin/python scripts/tests/test_vp8report.py 2>&1 | tee "$LOG/vp8report.log"
		count_suite vp8report "$LOG/vp8report.log" "${PIPESTATUS[0]}"
		.venv/bin/python scripts/tests/test_stepresponse.py 2>&1 | tee "$LOG/stepresponse.log"
		count_suite stepresponse "$LOG/stepresponse.log" "${PIPESTATUS[0]}"
		.venv/bin/python scripts/tests/test_imports.py 2>&1 | tee "$LOG/imports.log"
		count_suite imports "$LOG/imports.log" "${PIPESTATUS[0]}"
		.venv/bin/python scripts/tests/test_decide.py 2>&1 | tee "$LOG/decide.log"
		count_suite decide "$LOG/decide.log" "${PIPESTATUS[0]}"
		.venv/bin/python scripts/tests/test_cli.py 2>&1 | tee "$LOG/cli.log"
		count_suite cli "$LOG/cli.log" "${PIPESTATUS[0]}"
	else
		cat "$LOG/venv.log"
		failed=$((failed + 1))
	fi
}

# The host-side tests that boot VMs themselves: the harness's, and a
# campaign split over two boots.
vm_host_tests() {
	stage "harness self-tests (host, boots VMs)"
	mkdir -p "$BUILD/harness"
	cp -r selftests/harness/warn "$BUILD/harness/"
	make -s -C "$KDIR" M="$BUILD/harness/warn" modules \
		>"$LOG/warn-module.log" 2>&1 || { cat "$LOG/warn-module.log"; failed=$((failed + 1)); }
	selftests/harness/vm_run_test.sh | tee "$LOG/harness.log"
	count_suite harness "$LOG/harness.log" "${PIPESTATUS[0]}"

	stage "shards (host, two VM boots)"
	scripts/tests/shards_vms.sh 2>&1 | tee "$LOG/shards.log"
	count_suite shards "$LOG/shards.log" "${PIPESTATUS[0]}"
}

# Run suites in one VM boot of target kver and count them; the label of a
# suite on another target than KVER names it ("sbpn@6.12").
vm_suites() { # kver, suites...
	local k=$1 out suite label expect vm_rc one
	shift
	out=$LOG/vm${k:+-$k}
	[ "$k" = "$KVER" ] && out=$LOG/vm
	stage "in the VM, Linux $k: scripts/vm-tests.sh $*"
	KVER=$k BUILD= scripts/vm-run --timeout 1500 --out "$out" -- scripts/vm-tests.sh "$@"
	vm_rc=$?
	if [ "$vm_rc" -ne 0 ]; then
		echo "vm ($k): the VM run itself failed (exit $vm_rc)"
		failed=$((failed + 1))
	fi
	for suite in "$@"; do
		label=$suite
		[ "$k" = "$KVER" ] || label=$suite@$k
		if [ ! -e "$out/$suite.rc" ]; then
			echo "$label: did not run"
			failed=$((failed + 1))
			continue
		fi
		expect=()
		if [ -d "selftests/$suite" ]; then
			read -r -a expect <<<"$(make -s --no-print-directory -C "selftests/$suite" list-progs)"
		fi
		one=${ONE_CASE[$suite]:-}
		# shellcheck disable=SC2086	# the programs are words
		count_suite "$label" "$out/$suite.log" "$(cat "$out/$suite.rc")" \
			${expect[@]:+--expect "${expect[@]}"} ${one:+--one-case $one}
	done
}

case $mode in
host)
	host_tests ;;
vm)
	vm_suites "$KVER" "${suites[@]}" ;;
all)
	host_tests
	vm_host_tests
	# shellcheck disable=SC2086	# word splitting of the suite lists is wanted
	vm_suites "$KVER" $VM_SUITES
	for k in $ALSO_KVERS; do
		# shellcheck disable=SC2086
		vm_suites "$k" $COLLECTIONS
	done ;;
esac

stage "end"
echo
echo "$passed passed, $failed failed, $skipped skipped (test cases)"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
