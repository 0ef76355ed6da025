#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Assemble $BUILD/tree (build/tree for Linux 6.1, build/6.12/tree for 6.12;
# see target.sh), a minimal kernel tree to build DCCP out of tree:
#
#   1. copy net/dccp and the dccp headers/documentation from the Debian
#      source package (see kernel-inputs.sh; for 7.3, 6.12's: DCCP_SRC),
#   2. apply the series in order: patches/fixes, patches/core and
#      patches/optional, the 0*.patch of each in order, without its cover letter
#      (scripts/series.sh; PATCHES names another directory of the series),
#   3. for 7.3 only: copy the functions 7.x no longer exports out of the
#      fetched sources (scripts/carry.py, patches/7.x/carry.list) into
#      net/dccp/compat/, with compat/alias.h, which renames them, then
#      apply patches/7.x/0*.patch, which adapt DCCP to 7.x and those
#      copies to DCCP, and check that no copy still uses TCP's state,
#   4. add our out-of-tree glue from kernel/ into net/dccp/.
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
# shellcheck source=scripts/series.sh
. "$ROOT/scripts/series.sh"
SRC=${DCCP_SRC:-$CACHE/$ABI/source}
TREE=$BUILD/tree
PATCHES=${PATCHES:-$ROOT/patches}
NEW=$BUILD/tree.new

PARTS=(
	net/dccp
	include/uapi/linux/dccp.h
	include/linux/dccp.h
	Documentation/networking/dccp.rst
)
# The inet_diag headers (our series adds an attribute) and the errqueue
# headers (it adds a notice origin) are the target kernel's: 7.x's
# inet_diag API is not 6.12's (struct inet_diag_handler lost a member, the
# uapi header gained the timer enum), nor is its errqueue.h (a timestamp
# type more), so on 7.x they come from 7.3's source, not DCCP's.  Both of
# each pair must be in the tree, or NOSTDINC_FLAGS would find the uapi
# header for <linux/inet_diag.h> or <linux/errqueue.h>.
TARGET_PARTS=(
	include/uapi/linux/inet_diag.h
	include/linux/inet_diag.h
	include/uapi/linux/errqueue.h
	include/linux/errqueue.h
)
# 7.x removed CCID 3's shared header along with DCCP.
if [ -z "${DCCP_SRC:-}" ]; then
	PARTS+=("${TARGET_PARTS[@]}")
else
	PARTS+=(include/linux/tfrc.h)
fi

die() { echo "build-tree: error: $*" >&2; exit 1; }

# What no adapted copy may use (7.x target): TCP's own tables, counters,
# request handling and request sock fields.
TCP_ONLY='tcp_get_hashinfo|tcp_death_row|tcp_orphan_count_(inc|dec)|tcp_rtx_synack'
TCP_ONLY+='|tcp_syn_ack_timeout|tcp_twsk_unique|tcp_reqsk_timeout|tcp_timeout_init'
TCP_ONLY+='|rsk_is_mptcp|mptcp_subflow_reqsk_clone|accecn_ok|txhash|md5sig_info'
TCP_ONLY+='|tcp_clear_sock_ops_cb_flags'
TCP_ONLY+='|inet_lookup_run_sk_lookup|inet6_lookup_run_sk_lookup'

rm -rf "$NEW"
mkdir -p "$NEW"
for p in "${PARTS[@]}"; do
	mkdir -p "$NEW/$(dirname "$p")"
	cp -a "$SRC/$p" "$NEW/$p"
done
if [ -n "${DCCP_SRC:-}" ]; then
	for p in "${TARGET_PARTS[@]}"; do
		mkdir -p "$NEW/$(dirname "$p")"
		cp -a "$CACHE/$ABI/source/$p" "$NEW/$p"
	done
fi

apply() { # patch files, in order
	local patch
	for patch; do
		if ! out=$(patch -p1 -d "$NEW" --batch --forward --fuzz=0 --dry-run -i "$patch" 2>&1); then
			echo "$out" >&2
			die "patch does not apply: ${patch#"$ROOT"/}"
		fi
		patch -p1 -d "$NEW" --batch --forward --fuzz=0 --no-backup-if-mismatch --quiet -i "$patch"
	done
}
mapfile -t series < <(series_patches "$PATCHES")
apply "${series[@]}"

if [ -n "${DCCP_SRC:-}" ]; then
	mkdir -p "$NEW/net/dccp/compat"
	"$ROOT/scripts/carry.py" --list "$ROOT/patches/7.x/carry.list" \
		--out "$NEW/net/dccp/compat" \
		--src "7.3=$CACHE/$ABI/source=linux-source-7.3 $DEBVER" \
		--src "6.12=$DCCP_SRC=linux-source-6.12 $DCCP_DEBVER" \
		--aliases "$NEW/net/dccp/compat/alias.h" ||
		die "scripts/carry.py failed"
	mapfile -t adapt < <(series_patches "$ROOT/patches/7.x")
	apply "${adapt[@]}"
	# The copies must not reach TCP's tables or counters, nor TCP's fields
	# of DCCP's sockets (Documentation/dccp-on-7x.rst): one of these names
	# in the code (comments aside) of an adapted copy means that a patch
	# missed it.
	if grep -nwE "$TCP_ONLY" "$NEW"/net/dccp/compat/*.c |
		grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/?\*|//)' >&2; then
		die "a carried copy still uses TCP's state (above): adapt it in patches/7.x"
	fi
fi

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
