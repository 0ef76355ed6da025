#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Assemble $BUILD/tree (build/tree for Linux 6.1, build/6.12/tree for 6.12;
# see target.sh), a minimal kernel tree to build DCCP out of tree:
#
#   1. copy net/dccp and the dccp headers/documentation from the Debian
#      source package (see kernel-inputs.sh),
#   2. apply patches/0*.patch in order (the cover letter is skipped),
#   3. add our out-of-tree glue from kernel/ into net/dccp/.
#
# The result is assembled aside and then synchronised into build/tree file by
# file, so that unchanged files keep their mtimes and kbuild rebuilds only
# what a patch really changed.  A patch that does not apply stops the build
# with its name; no fuzz is allowed, so that the same series makes the same
# change on every kernel target (scripts/same-series.sh checks it).

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/target.sh
. "$ROOT/scripts/target.sh"
SRC=$CACHE/$ABI/source
TREE=$BUILD/tree
PATCHES=${PATCHES:-$ROOT/patches}
NEW=$BUILD/tree.new

PARTS=(
	net/dccp
	include/uapi/linux/dccp.h
	include/uapi/linux/inet_diag.h
	include/linux/inet_diag.h
	include/linux/dccp.h
	Documentation/networking/dccp.rst
)

die() { echo "build-tree: error: $*" >&2; exit 1; }

rm -rf "$NEW"
mkdir -p "$NEW"
for p in "${PARTS[@]}"; do
	mkdir -p "$NEW/$(dirname "$p")"
	cp -a "$SRC/$p" "$NEW/$p"
done

for patch in "$PATCHES"/0*.patch; do
	[ -e "$patch" ] || break
	case $(basename "$patch") in 0000-*) continue ;; esac
	if ! out=$(patch -p1 -d "$NEW" --batch --forward --fuzz=0 --dry-run -i "$patch" 2>&1); then
		echo "$out" >&2
		die "patch does not apply: patches/$(basename "$patch")"
	fi
	patch -p1 -d "$NEW" --batch --forward --fuzz=0 --no-backup-if-mismatch --quiet -i "$patch"
done

cp "$ROOT"/kernel/* "$NEW/net/dccp/"

# Synchronise: copy what changed, delete sources that disappeared.
mkdir -p "$TREE"
(cd "$NEW" && find . -type f | sort) >"$NEW.list"
while read -r f; do
	if ! cmp -s "$NEW/$f" "$TREE/$f"; then
		mkdir -p "$(dirname "$TREE/$f")"
		cp "$NEW/$f" "$TREE/$f"
	fi
done <"$NEW.list"
if [ -f "$TREE/.sources" ]; then
	comm -23 "$TREE/.sources" "$NEW.list" | while read -r f; do
		rm -f "$TREE/$f"
	done
fi
mv "$NEW.list" "$TREE/.sources"
rm -rf "$NEW"
