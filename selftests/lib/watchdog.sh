# SPDX-License-Identifier: GPL-2.0
#
# Sourced after kselftest's runner.sh (selftests/ksft-lib.mk): its
# tap_timeout() with a watchdog.  A program still running after
# $kselftest_timeout seconds gets SIGTERM, and SIGKILL 10 s later if it
# ignores that (runner.sh's timeout only sends SIGTERM, so a program stuck in
# the kernel hung the whole suite); at the moment it overruns, SysRq w dumps
# the blocked tasks to the kernel log, which scripts/vm-run keeps.  As in
# runner.sh, the inner timeout runs the program in a process group of its
# own and signals all of it: a child left behind would keep the output pipe
# open and hang the suite.

tap_timeout()
{
	local rc wd

	# The watchdog must not hold the program's output pipe open (the runner
	# reads that pipe to its end): it writes to the kernel log only, closes
	# the runner's fds 3 and 4 (the exit status pipe and the suite's output),
	# and its sleep dies with it.  A sleep left holding fd 4 kept the suite
	# waiting for $kselftest_timeout after its last program had finished.
	(trap 'kill "$nap" 2>/dev/null; exit 0' TERM
	 sleep "$kselftest_timeout" &
	 nap=$!
	 wait "$nap" &&
		echo "kselftest watchdog: $1 overran ${kselftest_timeout}s" >/dev/kmsg &&
		echo w >/proc/sysrq-trigger) >/dev/null 2>&1 </dev/null 3>&- 4>&- &
	wd=$!
	# the outer one only in case the inner one itself hangs
	/usr/bin/timeout --foreground --kill-after=10 $((kselftest_timeout + 20)) \
		/usr/bin/timeout --kill-after=10 "$kselftest_timeout" $1
	rc=$?
	kill "$wd" 2>/dev/null
	wait "$wd" 2>/dev/null
	return $rc
}
