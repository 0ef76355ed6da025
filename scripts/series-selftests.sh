#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The selftests as the series sends them, generated from selftests/ (their
# one source): a patch at the end of the series' last part
# (patches/optional) that adds tools/testing/selftests/net/dccp/, the
# kselftest programs of selftests/dccp and selftests/sbpn with the headers
# they include, a kselftest Makefile for that directory, its config and
# its settings.
#
#   series-selftests.sh [DIR]   write the patch into DIR (default patches/),
#                               replacing the one written before, and number
#                               the part's patches and its cover letter's
#                               shortlog and diffstat with it
#   series-selftests.sh --check fail, showing the difference, unless
#                               patches/ is what it would write
#
# The files are copies, the harness's include rewritten to the in-tree
# path; the program lists are the collections' Makefiles' (make
# list-progs), without the programs in NOT_SENT below.  The numbering, the
# shortlog and the diffstat are git format-patch's: the series is applied
# with git am to the kernel source the build uses (scripts/target.sh),
# then the patch committed on top with the date of the part's last patch,
# so that the same inputs always give the same patch, whichever target's
# source they were applied to and whichever git wrote it (no signature,
# which would be git's version).  Every other patch of the part is left as
# it is but for its Subject: line's count, the cover letter's prose too.

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/target.sh
. "$ROOT/scripts/target.sh"
# shellcheck source=scripts/series.sh
. "$ROOT/scripts/series.sh"

SUBJECT="selftests: net: dccp: add the tests of DCCP and its queueing policies"
TESTDIR=tools/testing/selftests/net/dccp
# Project programs that a kernel tree cannot run: dccp_modules.sh checks
# that the modules loaded are the ones this project built, sbpn_diag runs
# the project's own sock_diag reader (userspace/bin/dccp-qstat).
NOT_SENT=" dccp_modules.sh sbpn_diag "
# The headers they include, and where each comes from.
HEADERS=(selftests/lib/dccp_abi.h selftests/lib/dccp_test.h
	selftests/sbpn/sbpn_test.h userspace/lib/sbpn_errqueue.h)

die() { echo "series-selftests: error: $*" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "${1:-}" = --check ]; then
	cp -a "$ROOT/patches" "$tmp/patches"
	"$0" "$tmp/patches" >/dev/null
	if ! diff -ru "$ROOT/patches" "$tmp/patches" >"$tmp/diff"; then
		cat "$tmp/diff" >&2
		echo "series-selftests: patches/ is not what selftests/ gives (above): run scripts/series-selftests.sh" >&2
		exit 1
	fi
	echo "series-selftests: the series' selftests patch is selftests/'s"
	exit 0
fi
PATCHES=$(realpath "${1:-$ROOT/patches}")
part=${SERIES_PARTS[${#SERIES_PARTS[@]} - 1]}
dir=$PATCHES/$part
cover=$dir/0000-cover-letter.patch
[ -f "$cover" ] || die "$cover: no such cover letter"
prefix=$(sed -n 's/^Subject: \[\(.*\) 0*\/[0-9]*\].*/\1/p' "$cover")
[ -n "$prefix" ] || die "$cover: no numbered Subject: line"
# the patch written before, named by format-patch after SUBJECT
rm -f "$dir"/0*-selftests-net-dccp-*.patch

# -- the directory the patch adds ------------------------------------------

progs() { # collection: its programs, in the order they run
	local p
	for p in $(make -s --no-print-directory -C "$ROOT/selftests/$1" list-progs); do
		case $NOT_SENT in *" $p "*) continue ;; esac
		echo "$p"
	done
}
mapfile -t programs < <(progs dccp; progs sbpn)
[ "${#programs[@]}" -gt 0 ] || die "no programs in selftests/dccp and selftests/sbpn"

# make_block FILE FIRST LAST: the lines of FILE from the one equal to FIRST
# to the one equal to LAST
make_block() {
	local block
	block=$(awk -v first="$2" -v last="$3" \
		'$0 == first { f = 1 } f { print } f && $0 == last { exit }' "$1")
	[ -n "$block" ] || die "$1: no block from '$2' to '$3'"
	printf '%s\n' "$block"
}

# wrap VAR WORD...: a make assignment, continued at 72 columns
wrap() {
	local var=$1 line
	shift
	line="$var :="
	for w; do
		if [ $((${#line} + ${#w} + 1)) -gt 72 ]; then
			printf '%s \\\n' "$line"
			line="	$w"
		else
			line+=" $w"
		fi
	done
	printf '%s\n' "$line"
}

out=$tmp/tree/$TESTDIR
mkdir -p "$out"
for p in "${programs[@]}"; do
	src=$ROOT/selftests/dccp/$p.c
	[ -f "$src" ] || src=$ROOT/selftests/sbpn/$p.c
	[ -f "$src" ] || die "$p: no source in selftests/dccp or selftests/sbpn"
	sed 's|^#include "kselftest_harness.h"|#include "../../kselftest_harness.h"|' \
		"$src" >"$out/$p.c"
done
for h in "${HEADERS[@]}"; do
	sed 's|^#include "kselftest_harness.h"|#include "../../kselftest_harness.h"|' \
		"$ROOT/$h" >"$out/${h##*/}"
done
sbpn_mk=$ROOT/selftests/sbpn/Makefile
{
	cat <<-'EOF'
	# SPDX-License-Identifier: GPL-2.0
	#
	# DCCP with its two CCIDs, its fixes and its queueing policies, SBPN's
	# among them.  Each program builds its own network namespaces.
	# sbpn_close unloads and reloads the DCCP modules: it runs last.

	CFLAGS += -Wall -O2 $(KHDR_INCLUDES)

	EOF
	wrap TEST_GEN_PROGS "${programs[@]}"
	echo 'TEST_GEN_FILES := dccp_rst_example.h'
	wrap LOCAL_HDRS "${HEADERS[@]##*/}"
	echo
	echo 'include ../../lib.mk'
	echo
	make_block "$sbpn_mk" '# The sendmsg() example of the patched dccp.rst, compiled by' \
		'$(OUTPUT)/sbpn_doc_example: CFLAGS += -I$(OUTPUT)' |
		sed 's|^DCCP_RST := .*|DCCP_RST := $(top_srcdir)/Documentation/networking/dccp.rst|'
	echo
	make_block "$sbpn_mk" "# sbpn_size_pacing_loss evaluates TFRC's throughput equation" \
		'$(OUTPUT)/sbpn_size_pacing_loss: LDLIBS += -lm'
} >"$out/Makefile"
grep -q '^DCCP_RST := $(top_srcdir)/' "$out/Makefile" || die "$sbpn_mk: no DCCP_RST"
# What the programs load or read: DCCP with CCID 3 and sock_diag, IPv6,
# veth, netem and fq, RPS, the tracepoint's events (a tracer selects
# event tracing), /proc/slabinfo.
cat >"$out/config" <<-'EOF'
	CONFIG_FTRACE=y
	CONFIG_FUNCTION_TRACER=y
	CONFIG_INET_DCCP_DIAG=m
	CONFIG_INET_DIAG=m
	CONFIG_IPV6=y
	CONFIG_IP_DCCP=m
	CONFIG_IP_DCCP_CCID3=y
	CONFIG_NET_NS=y
	CONFIG_NET_SCHED=y
	CONFIG_NET_SCH_FQ=m
	CONFIG_NET_SCH_NETEM=m
	CONFIG_RPS=y
	CONFIG_SLUB_DEBUG=y
	CONFIG_VETH=m
EOF
timeout=$(sed -n 's/^KSFT_TIMEOUT[[:space:]]*?=[[:space:]]*\([0-9]*\)$/\1/p' "$ROOT/selftests/ksft-lib.mk")
[ -n "$timeout" ] || die "selftests/ksft-lib.mk: no KSFT_TIMEOUT"
echo "timeout=$timeout" >"$out/settings"

# -- the series in git, the patch on top -------------------------------------

export GIT_AUTHOR_NAME="SBPN developers" GIT_AUTHOR_EMAIL=sbpn@example.org
export GIT_COMMITTER_NAME="SBPN developers" GIT_COMMITTER_EMAIL=sbpn@example.org
export GIT_CONFIG_NOSYSTEM=1 HOME=$tmp
repo=$tmp/repo
git init -q "$repo"
cp -a "$CACHE/$ABI/source/." "$repo/"
git -C "$repo" add -A
GIT_AUTHOR_DATE="@0 +0000" GIT_COMMITTER_DATE="@0 +0000" \
	git -C "$repo" commit -q -m "the kernel source the series applies to"
start=
for p in "${SERIES_PARTS[@]}"; do
	[ "$p" != "$part" ] || start=$(git -C "$repo" rev-parse HEAD)
	mapfile -t series < <(series_patches "$PATCHES" | grep "/$p/")
	[ "${#series[@]}" -gt 0 ] || continue
	git -C "$repo" am -q --committer-date-is-author-date "${series[@]}" ||
		die "the $p series does not apply with git am"
done
[ -n "$start" ] || die "no $part part in $PATCHES"
date=$(git -C "$repo" log -1 --format='%ad' --date=raw)
cp -a "$tmp/tree/tools" "$repo/"
git -C "$repo" add "$TESTDIR"
GIT_AUTHOR_DATE=$date GIT_COMMITTER_DATE=$date git -C "$repo" commit -q -s -F - <<EOF
$SUBJECT

DCCP has no selftests.  Add the tests that these patches and the two
series they build on ("dccp: fixes to module unload, error paths,
TFRC's receiver and CCID 3" and "dccp: "Send Best Packet Next" queueing
policies") were tested with, as kselftest_harness programs.  Each
builds its own network namespaces, veth pairs between them with netem
where a test needs the feedback delayed, and removes them when it
exits; they need root, ip and tc (iproute2), and the options in config.

    make headers
    make -C tools/testing/selftests TARGETS=net/dccp run_tests

They come in one patch, at the end, because they are written against
the whole API: their shared helpers send with DCCP_SCM_EXPIRY and check
the counters' invariant with the frames given up, the last patch's
counter, so none of them builds on an earlier prefix.

What they test:

- the fixes, with the tests their cover letter names: dccp_release,
  dccp_transfer, dccp_reorder, dccp_ccid3_edges, sbpn_rtt and
  sbpn_rtt_ccid3 (the first feedback's RTT sample over a 400 ms
  handshake), sbpn_open_interval, and sbpn_close, which closes long
  queues, then unloads the modules (no DCCP slab cache may be left) and
  loads them again, so it runs last;
- this series' mechanisms, with the tests its cover letter names:
  sbpn_cmsg (PRIO's refusal), dccp_faster_restart, sbpn_last_rtt,
  sbpn_size_pacing and sbpn_size_pacing_loss, sbpn_predict, sbpn_owd,
  sbpn_edf, sbpn_newest, sbpn_frame, and sbpn_trace_limit for the parts
  of the limit in the drop tracepoint;
- the core series, in the others: the policies' order, the RTT/2 rule,
  expiry, admission and eviction on a full queue, tx_qlen, every EINVAL
  path, the counters, the tracepoint, poll(), the notices and the
  receive buffer they leave; sbpn_doc_example compiles and runs the
  sendmsg() example of Documentation/networking/dccp.rst.

Not here: the test of the two error-path fixes (it fails allocations
with fail-nth and needs a kernel with fault injection), a randomized
stress test, and the check of sock_diag's report, which runs a reader
of ours that is not in the tree.

net/dccp is not added to the selftests' default TARGETS: the lines
around it differ between v6.1 and v6.12, and this patch applies to both
unchanged.  settings gives each program $timeout s: under QEMU without
KVM the slowest take a few minutes.
EOF

# --zero-commit: the commit exists nowhere else, and its id would depend
# on the target's source, which the patch does not; --no-signature: git's
# default one is its version (2.39.5 on Debian 12, 2.47.3 on Debian 13),
# which would make the patch depend on the host's git
git -C "$repo" format-patch -q --cover-letter --zero-commit --no-signature \
	--subject-prefix="$prefix" -o "$tmp/fp" "$start..HEAD"

# -- into patches/ ------------------------------------------------------------

# subject FILE: its Subject: header, with its continuation lines
subject() { awk '/^Subject: / { s = 1; print; next } s && /^ / { print; next } s { exit }' "$1"; }

mapfile -t new < <(ls "$tmp"/fp/0*.patch)
mapfile -t old < <(series_patches "$PATCHES" | grep "/$part/")
[ ${#new[@]} -eq $((${#old[@]} + 2)) ] || die "format-patch wrote ${#new[@]} files for ${#old[@]} patches"
for i in "${!old[@]}"; do
	n=${new[$((i + 1))]}
	[ "${n##*/}" = "${old[$i]##*/}" ] || die "${old[$i]##*/} came out as ${n##*/}"
	{
		awk '/^Subject: / { exit } { print }' "${old[$i]}"
		subject "$n"
		awk '/^Subject: / { s = 1; next } s && /^ / { next } s { s = 0; o = 1 } o { print }' "${old[$i]}"
	} >"$tmp/patch"
	cat "$tmp/patch" >"${old[$i]}"
done
last=${new[${#new[@]} - 1]}
cp "$last" "$dir/"
# The cover letter: its prose as it is, the count and the part from the
# shortlog on git's (as /work/series' v3-sync.sh makes them).
start_line=$(grep -n '^SBPN developers (' "$cover" | cut -d: -f1)
new_start=$(grep -n '^SBPN developers (' "${new[0]}" | cut -d: -f1)
count=$(sed -n "s|^Subject: \[$prefix \(0*/[0-9]*\)\].*|\1|p" "${new[0]}")
{
	head -n $((start_line - 1)) "$cover" |
		sed "s|^Subject: \[$prefix 0*/[0-9]*\]|Subject: [$prefix $count]|"
	tail -n +"$new_start" "${new[0]}"
} >"$tmp/cover"
cat "$tmp/cover" >"$cover"
echo "series-selftests: ${last##*/} (${#programs[@]} programs) in patches/$part"
