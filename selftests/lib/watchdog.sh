# SPDX-License-Identifier: GPL-2.0
#
# Sourced after kselftest's runner.sh (selftests/ksft-lib.mk): its
# tap_timeout() with a watchdog.  A program still running after
# $kselftest_timeout seconds gets SIGTERM, and SIGKILL 10 s later if it
# ignores that (runner.sh's timeout only sends SIGTERM, so a program stuck in
# the kernel hung the whole suite); at the moment it overruns, SysRq w dumps
# the blocked tasks to the kernel log, which scripts/vm-run keeps.

tap_timeout()
{
	local rc wd

	(sleep "$kselftest_timeout" &&
		echo "# $1: overran ${kselftest_timeout}s; blocked tasks (SysRq w) in the kernel log" &&
		echo w >/proc/sysrq-trigger) &
	wd=$!
	/usr/bin/timeout --foreground --kill-after=10 "$kselftest_timeout" $1
	rc=$?
	kill "$wd" 2>/dev/null
	wait "$wd" 2>/dev/null
	return $rc
}
