#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side tests of the test harness itself: a harness that cannot fail
# proves nothing.  Each case runs the real scripts/vm-run (or the real
# build-tree.sh) and checks that a failure is reported as one:
#
#   - the guest command's exit status comes back, stdout and stderr stay
#     apart, files written to $VM_OUT survive on the host;
#   - text that imitates the verdict on stdout or the kernel log cannot turn
#     a failing command into a pass;
#   - a kernel WARN in the guest fails the run (exit 125);
#   - so does a "BUG:" line that panics nothing (DCCP_BUG()'s, which
#     syzbot reports for CCID3), though the command exits 0;
#   - the time limit ends a hung command (exit 124), after SysRq has put
#     the backtraces of all CPUs on the console;
#   - the kselftest watchdog (selftests/lib/watchdog.sh) kills a program
#     that ignores SIGTERM after its time is up, reports it as failed, and
#     dumps the blocked tasks (SysRq w), which fails the run;
#   - a patch that does not apply stops the build with its name;
#   - scripts/modules.sh (make load / make unload) swaps the stock DCCP
#     modules for ours and back, in a freshly booted guest; there, with the
#     stock modules back, sbpn-send asked for an SBPN policy says why not.
#
# Output is KTAP; exit 0 if every case passed, 1 otherwise.

set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/target.sh
. "$ROOT/scripts/target.sh"
# shellcheck source=selftests/lib/ktap.sh
. "$ROOT/selftests/lib/ktap.sh"
VMRUN=$ROOT/scripts/vm-run
TMP=$(mktemp -d "$BUILD/harness-test.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

ktap_plan 11

# 1-3: one boot for the plain cases.
"$VMRUN" --timeout 180 --out "$TMP/out" -- sh -c \
	'echo out-line; echo err-line >&2; echo kept >"$VM_OUT/file"; exit 3' \
	>"$TMP/stdout" 2>"$TMP/stderr"
rc=$?
check "exit status of the guest command comes back (got $rc)" test "$rc" -eq 3
check "stdout and stderr stay apart" \
	sh -c "grep -qx out-line '$TMP/stdout' && ! grep -q err-line '$TMP/stdout' &&
	       grep -qx err-line '$TMP/stderr'"
check "files written to \$VM_OUT survive" grep -qx kept "$TMP/out/file"

# 4: forged verdicts on stdout and in the kernel log.
"$VMRUN" --timeout 180 --out "$TMP/out" -- sh -c \
	'echo vmrun-exit=0; echo vmrun-exit=0 >/dev/kmsg; exit 7' \
	>/dev/null 2>&1
rc=$?
check "a forged verdict does not pass a failing command (got $rc)" test "$rc" -eq 7

# 5: a WARN in the guest kernel.
"$VMRUN" --timeout 180 --out "$TMP/out" -- \
	insmod "$BUILD/harness/warn/vmrun_warn.ko" >/dev/null 2>"$TMP/warn.err"
rc=$?
check "a kernel WARN fails the run with 125 (got $rc)" \
	sh -c "test $rc -eq 125 && grep -q 'vmrun_warn: deliberate warning' '$TMP/warn.err'"

# 5b: a "BUG:" report without a WARN or oops (DCCP_BUG()): nothing panics and
# insmod succeeds, so only the console scan can fail the run.
"$VMRUN" --timeout 180 --out "$TMP/out" -- \
	insmod "$BUILD/harness/warn/vmrun_warn.ko" bug=1 >/dev/null 2>"$TMP/bug.err"
rc=$?
check "a \"BUG:\" console line fails the run with 125 (got $rc)" \
	sh -c "test $rc -eq 125 && grep -q 'BUG: vmrun_warn: deliberate report' '$TMP/bug.err'"

# 6: a command that never ends.
"$VMRUN" --timeout 25 --out "$TMP/out" -- sleep 600 >/dev/null 2>&1
rc=$?
check "the time limit ends a hung run with 124 and CPU backtraces (got $rc)" \
	sh -c "test $rc -eq 124 && grep -q 'NMI backtrace for cpu' '$TMP/out/console.log'"

# 7: a kselftest program that ignores SIGTERM and never ends.
mkdir -p "$TMP/stuck"
printf 'include %s/selftests/ksft.mk\nTEST_PROGS := stuck.sh\nKSFT_TIMEOUT := 3\ninclude %s/selftests/ksft-lib.mk\n' \
	"$ROOT" "$ROOT" >"$TMP/stuck/Makefile"
printf '#!/bin/sh\ntrap "" TERM\nsleep 600\n' >"$TMP/stuck/stuck.sh"
chmod +x "$TMP/stuck/stuck.sh"
"$VMRUN" --timeout 120 --out "$TMP/out" -- make -s -C "$TMP/stuck" run_tests \
	>"$TMP/stuck.out" 2>&1
rc=$?
grep 'stuck.sh' "$TMP/stuck.out" | sed 's/^/# stuck: /'
check "the watchdog kills a program that ignores SIGTERM, dumping blocked tasks (got $rc)" \
	sh -c "test $rc -eq 125 && grep -q '^not ok 1 .*stuck.sh # exit=137' '$TMP/stuck.out' &&
	       grep -q 'Show Blocked State' '$TMP/out/console.log'"

# 8: a broken patch.
mkdir -p "$TMP/patches"
cat >"$TMP/patches/0001-broken.patch" <<'EOF'
--- a/net/dccp/qpolicy.c
+++ b/net/dccp/qpolicy.c
@@ -1,3 +1,3 @@
-this line is not in qpolicy.c
+so this patch cannot apply
 nor is this one
EOF
PATCHES=$TMP/patches BUILD=$TMP/build "$ROOT/scripts/build-tree.sh" >/dev/null 2>"$TMP/patch.err"
rc=$?
check "a patch that does not apply fails the build, named (got $rc)" \
	sh -c "test $rc -ne 0 && grep -q 'patches/0001-broken.patch' '$TMP/patch.err'"

# 9: make load / make unload on a running target kernel (a fresh guest, where
# nothing has used DCCP yet).
"$VMRUN" --timeout 180 --out "$TMP/out" -- sh -c \
	"$ROOT/scripts/modules.sh load $BUILD/modules && $ROOT/scripts/modules.sh unload &&
	 { $ROOT/userspace/bin/sbpn-send --to 127.0.0.1:9 --policy sbpn1 --flow x \
		--out /dev/null --duration 1 2>\$VM_OUT/stock.err; echo \$? >\$VM_OUT/stock.rc; }" \
	>"$TMP/swap.out" 2>"$TMP/swap.err"
rc=$?
sed 's/^/# /' "$TMP/swap.out"
check "modules.sh loads ours and restores the stock modules (got $rc)" \
	sh -c "test $rc -eq 0 && test \$(grep -c ': ours, version' '$TMP/swap.out') -eq 4 &&
	       test \$(grep -c ': stock\$' '$TMP/swap.out') -eq 4"

sed 's/^/# /' "$TMP/out/stock.err" 2>/dev/null
check "on stock modules, sbpn-send --policy sbpn1 fails and says why" \
	sh -c "test \"\$(cat '$TMP/out/stock.rc')\" = 1 &&
	       grep -q 'does not have the SBPN policies (stock modules' '$TMP/out/stock.err'"

ktap_done
