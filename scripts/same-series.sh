#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# patches/ is the one source of truth for both kernel targets: the same
# series (fixes, core and optional, scripts/series.sh) is applied, exactly
# (build-tree.sh allows no fuzz), to Linux 6.1 and 6.12.  This checks that
# it also made the same change to each: for
# every file the series touches, the lines it adds and removes (the diff of
# the target's Debian source against its patched tree, without positions)
# must be the same on every target.  A change that reached one target and
# not the other, or that needs a different form on each, fails here, naming
# the file.  Needs both trees built (make check builds them).

set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/series.sh
. "$ROOT/scripts/series.sh"
KVERS=${KVERS:-6.1 6.12}

changes() { # kver file -> the lines the series adds and removes in file
	(
		KVER=$1 BUILD=
		# shellcheck source=scripts/target.sh
		. "$ROOT/scripts/target.sh"
		old=$CACHE/$ABI/source/$2
		[ -e "$old" ] || old=/dev/null
		[ -e "$BUILD/tree/$2" ] || { echo "missing: $BUILD/tree/$2"; exit 0; }
		diff -U0 "$old" "$BUILD/tree/$2" | grep -E '^[-+]' | grep -vE '^(\+\+\+|---) '
	)
}

mapfile -t patches < <(series_patches)
mapfile -t files < <(sed -n 's#^+++ b/##p' "${patches[@]}" | sort -u)
set -- $KVERS
first=$1
shift
bad=0
for f in "${files[@]}"; do
	for k in "$@"; do
		if ! cmp -s <(changes "$first" "$f") <(changes "$k" "$f"); then
			echo "same-series: $f: the series changes it differently on $first and $k:"
			diff <(changes "$first" "$f") <(changes "$k" "$f") | head -20
			bad=1
		fi
	done
done
if [ $bad -eq 0 ]; then
	echo "same-series: the same change on Linux ${KVERS// / and } in all ${#files[@]} files the series touches"
fi
exit $bad
