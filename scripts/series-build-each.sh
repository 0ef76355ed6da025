#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the DCCP modules at every prefix of the patch series, on every
# kernel target, so that a bisection never lands on a patch that does not
# build; and run checkpatch --strict (scripts/style.sh's) on each patch.
#
#   series-build-each.sh [--tip | --alone] [--from N] [PATCH...]
#   series-build-each.sh [--tip | --alone] [--from N] --git RANGE
#
# The series is the PATCH files in that order, or the commits of RANGE
# (e.g. base..HEAD) of the git repository in the current directory, or by
# default the series in patches/ (fixes, core, optional: scripts/series.sh).
# The unpatched source builds first: its warnings are the baseline, and a
# build fails on an error or on a warning that is not in it (compared
# without paths and line numbers).  Each build assembles the tree as
# build-tree.sh does (PATCHES: a directory of the patches to apply) and
# builds it with W=1, as `make modules` builds it, into
# build/series-each/<KVER>/, incrementally: kbuild recompiles what a patch
# changed, so a warning is reported by the patch that causes it.
#
#   --tip      only the whole series: for `git rebase --exec
#              'scripts/series-build-each.sh --tip --git base..HEAD'`; the
#              build directory and its baseline are kept from the last
#              call, so that each commit rebuilds what it changed
#   --alone    each patch alone on the unpatched source instead of the
#              prefixes: the fixes, which a stable tree may take one by one
#              (series-build-each.sh --alone patches/fixes/0*.patch)
#   --from N   start at prefix (or patch) N
#
# KVERS (default "6.1 6.12") names the targets; 7.3 is not one (its build
# needs patches/7.x on top of the whole series and a Debian 13 root).
# Prints one line per build and target; exits 1 at the first failure,
# with the build's output.

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/series.sh
. "$ROOT/scripts/series.sh"
KVERS=${KVERS:-6.1 6.12}
OUT=$ROOT/build/series-each

die() { echo "series-build-each: error: $*" >&2; exit 1; }

mode=prefix from=1 range=
while [ $# -gt 0 ]; do
	case $1 in
	--tip) mode=tip; shift ;;
	--alone) mode=alone; shift ;;
	--from) from=${2:?--from N}; shift 2 ;;
	--git) range=${2:?--git RANGE}; shift 2 ;;
	--) shift; break ;;
	-*) sed -n '4,34p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	*) break ;;
	esac
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "$range" ]; then
	git format-patch -q -o "$tmp/git" "$range"
	mapfile -t series < <(ls "$tmp"/git/0*.patch 2>/dev/null)
elif [ $# -gt 0 ]; then
	series=()
	for p; do
		# a cover letter (0000-cover-letter.patch) is no patch
		case ${p##*/} in 0000-*) ;; *) series+=("$p") ;; esac
	done
else
	mapfile -t series < <(series_patches)
fi
n=${#series[@]}
[ "$n" -gt 0 ] || die "no patches"
for p in "${series[@]}"; do
	[ -f "$p" ] || die "$p: no such patch"
done

# checkpatch, each patch once
"$ROOT/scripts/style.sh" --patches "${series[@]}" ||
	die "checkpatch --strict found problems (above)"

# The warnings of a build log, without the tree's path and line numbers.
warnings() {
	grep -E '(warning|error):' "$1" |
		sed -E 's#^[^ :]*/net/dccp/##; s#:[0-9]+(:[0-9]+)?:#:#' | sort -u || true
}

# build KVER LOG PATCH...: assemble the tree of these patches and build it
build() {
	local kver=$1 log=$2 dir=$OUT/$1 i=0 p
	shift 2
	rm -rf "$tmp/patches"
	mkdir -p "$tmp/patches" "$dir"
	for p; do
		i=$((i + 1))
		ln -s "$(realpath "$p")" "$tmp/patches/$(printf %04d $i).patch"
	done
	(
		KVER=$kver BUILD=$dir
		# shellcheck source=scripts/target.sh
		. "$ROOT/scripts/target.sh"
		[ "$KVER" != 7.3 ] || die "KVER=7.3 is not a target of this check"
		PATCHES=$tmp/patches nice -n 19 "$ROOT/scripts/build-tree.sh" &&
		nice -n 19 make -j1 --no-print-directory -C "$KDIR" M="$dir/tree/net/dccp" \
			NOSTDINC_FLAGS="-I$dir/tree/include -I$dir/tree/include/uapi" \
			CONFIG_IP_DCCP=m CONFIG_INET_DCCP_DIAG=m \
			CONFIG_IP_DCCP_CCID3=y CONFIG_IP_DCCP_TFRC_LIB=y \
			CONFIG_DEBUG_INFO_BTF_MODULES= SBPN_VERSION=series-each W=1 modules
	) >"$log" 2>&1
}

rc=0
for kver in $KVERS; do
	dir=$OUT/$kver
	# a clean baseline: every file compiles once without the series
	if [ "$mode" != tip ] || [ ! -f "$dir/baseline" ]; then
		rm -rf "$dir"
		mkdir -p "$dir"
		build "$kver" "$dir/build-0.log" ||
			{ cat "$dir/build-0.log" >&2; die "$kver: the unpatched source does not build"; }
		warnings "$dir/build-0.log" >"$dir/baseline"
		echo "series-build-each: $kver: baseline (no patch): $(wc -l <"$dir/baseline") warnings"
	fi
	start=$from
	[ "$mode" != tip ] || start=$n
	for ((k = start; k <= n; k++)); do
		name=$(basename "${series[$((k - 1))]}")
		log=$dir/build-$k.log
		if [ "$mode" = alone ]; then
			what="$k/$n alone"
			build "$kver" "$log" "${series[$((k - 1))]}" || { cat "$log" >&2; rc=1; }
		else
			what="$k/$n"
			build "$kver" "$log" "${series[@]:0:k}" || { cat "$log" >&2; rc=1; }
		fi
		if [ $rc -ne 0 ]; then
			echo "series-build-each: $kver: FAIL at $what ($name): does not build" >&2
			break
		fi
		new=$(comm -13 "$dir/baseline" <(warnings "$log"))
		if [ -n "$new" ]; then
			echo "$new" >&2
			echo "series-build-each: $kver: FAIL at $what ($name): new warnings (above)" >&2
			rc=1
			break
		fi
		echo "series-build-each: $kver: $what builds, W=1 clean: $name"
	done
	[ $rc -eq 0 ] || break
done
exit $rc
