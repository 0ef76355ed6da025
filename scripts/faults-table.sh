#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The failure points that selftests/faults/dccp_faults reached, per
# operation, from its log (`make faults` prints this after the run), as the
# reStructuredText table for Documentation/robustness.rst, then its phase 2
# line:
#
#   scripts/faults-table.sh build/debug/faults/faults.log
#
# The test prints one "# failure points: <op> all=<n> dccp=<n>" line per
# operation that finished; an operation that failed or was not run has none
# and is listed below the table.  Exit 1 if the log has no such line.

set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 LOG" >&2; exit 2; }
log=$1
[ -r "$log" ] || { echo "faults-table: no $log (did the VM run?)" >&2; exit 1; }

awk '
/^# failure points: / {
	op[++n] = $4; all[n] = substr($5, 5); dccp[n] = substr($6, 6)
	if (length($4) > w) w = length($4)
	next
}
/^(ok|not ok) [0-9]+ faults\./ && !/ # SKIP/ {
	name = $0; sub(/^(ok|not ok) [0-9]+ faults\./, "", name); sub(/\.fail_nth.*/, "", name)
	ran[name] = 1
}
/^# phase 2: / { phase2 = substr($0, 3) }
END {
	if (!n) { print "faults-table: no failure points in the log" > "/dev/stderr"; exit 1 }
	if (w < 9) w = 9
	line = ""; for (i = 0; i < w; i++) line = line "="
	rule = line "  =========  ========="
	print rule
	printf "%-" w "s  %9s  %9s\n", "operation", "all", "dccp"
	print rule
	for (i = 1; i <= n; i++) {
		printf "%-" w "s  %9s  %9s\n", op[i], all[i], dccp[i]
		delete ran[op[i]]
	}
	print rule
	for (name in ran)
		printf "no count (failed): %s\n", name
	if (phase2 != "")
		print phase2
}' "$log"
