# SPDX-License-Identifier: GPL-2.0
#
# Sourced by the scripts that build, boot or test: which kernel they are for.
#
# KVER selects the target, 6.1 (Debian 12's kernel), 6.12 (Debian 13's) or
# 7.3 (Debian 13's newest, trixie-backports: no DCCP of its own; 6.12's DCCP
# with the carried functions of patches/7.x, built in a Debian 13 root,
# KROOT; see kernel-inputs-7x.sh); the default is the host release's own
# (scripts/kver.sh).  scripts/kernel-inputs.sh describes the
# target's inputs in
# $CACHE/$KVER.env (ABI, DEBVER); its build outputs go to build/ for 6.1 and
# to build/$KVER/ for another target, so that both can be built side by side.
# BUILD may be set to another directory for the modules and the VM's files
# (make bench and check-debug do); TARGET_BUILD stays the target's own.
# Expects ROOT; sets and exports KVER and BUILD, sets TARGET_BUILD, CACHE,
# ABI, DEBVER and KDIR (the headers' build directory); for 7.3 also KROOT,
# DCCP_SRC and DCCP_DEBVER (where DCCP's source comes from).

# shellcheck source=scripts/kver.sh
. "$ROOT/scripts/kver.sh"
CACHE=${CACHE:-$ROOT/.cache/kernel}
if [ "$KVER" = 6.1 ]; then
	TARGET_BUILD=$ROOT/build
else
	TARGET_BUILD=$ROOT/build/$KVER
fi
BUILD=${BUILD:-$TARGET_BUILD}
if [ ! -f "$CACHE/$KVER.env" ]; then
	echo "${0##*/}: no kernel inputs for KVER=$KVER: run make KVER=$KVER first" >&2
	exit 2
fi
# shellcheck source=/dev/null
. "$CACHE/$KVER.env"
export KVER BUILD
