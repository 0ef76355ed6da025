#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch.pl --strict (from the Debian source package of the target
# kernel) on the patch series (its three parts, scripts/series.sh) and on
# every kernel C file we keep outside it.
#
#   style.sh                     the series in patches/ and the C files
#   style.sh --patches PATCH...  those patches only (series-build-each.sh)

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/target.sh
. "$ROOT/scripts/target.sh"
# shellcheck source=scripts/series.sh
. "$ROOT/scripts/series.sh"
CHECKPATCH=$CACHE/$ABI/source/scripts/checkpatch.pl
# We never touch MAINTAINERS, and the kernel inputs carry no git history
# against which checkpatch could look up the commit of a Fixes: tag
# (reviewers check those against Linus' tree).  For the same reason a fix
# whose introducing commit we could not pin down carries no Fixes: tag
# rather than a guessed one; 6.12's checkpatch asks for one whenever a
# message names syzkaller (MISSING_FIXES_TAG), which review decides too.
# Everything else counts.
OPTS=(--strict --no-tree --quiet
	--ignore FILE_PATH_CHANGES,UNKNOWN_COMMIT_ID,MISSING_FIXES_TAG
	--show-types)

rc=0
files=()
if [ "${1:-}" = --patches ]; then
	shift
	patches=("$@")
else
	cd "$ROOT"
	mapfile -t patches < <(series_patches patches)
	mapfile -t files < <(git ls-files -co --exclude-standard 'kernel/*.[ch]' 'selftests/harness/warn/*.c')
fi
for p in "${patches[@]}"; do
	# checkpatch reads a file that git tracks as a source file, not as a
	# patch: hide the repository from it.
	GIT_DIR=/nonexistent perl "$CHECKPATCH" "${OPTS[@]}" "$p" ||
		{ rc=1; echo "style: ^ $p" >&2; }
done
for f in "${files[@]}"; do
	perl "$CHECKPATCH" "${OPTS[@]}" -f "$f" || rc=1
done
n=$(( ${#files[@]} + ${#patches[@]} ))
if [ $rc -eq 0 ]; then
	echo "style: checkpatch --strict clean on $n files"
else
	echo "style: checkpatch --strict found problems" >&2
fi
exit $rc
