# SPDX-License-Identifier: GPL-2.0
#
# KTAP for the shell tests that run on the host (vm_run_test.sh,
# scripts/tests/shards_vms.sh): ktap_plan N first, then one ok, not_ok or
# check per case, and ktap_done last, whose status is the test's.

n=0
failed=0

ktap_plan() { # number of cases
	echo "TAP version 13"
	echo "1..$1"
}

ok() { # description
	n=$((n + 1))
	echo "ok $n $1"
}

not_ok() { # description
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n $1"
}

check() { # description, then a command that must succeed
	local d=$1

	shift
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}

ktap_done() { # 0 if every case passed, 1 otherwise
	echo "# $((n - failed)) passed, $failed failed"
	[ "$failed" -eq 0 ]
}
