#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run a command in a build root (the 7.x target's Debian 13 root, KROOT;
# see kernel-inputs-7x.sh), with the repository at its own path inside:
#
#   scripts/in-root.sh ROOTDIR COMMAND [ARG...]
#
# The bind mount and /proc live in a mount namespace of their own, so they
# end with the command, whatever way it ends.  The environment is reset
# (the root's PATH): make's jobserver and the host's tools stay outside.
# Needs root.

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 2 ] || { echo "usage: in-root.sh ROOTDIR COMMAND [ARG...]" >&2; exit 2; }
R=$1
shift
[ -d "$R/usr/bin" ] || { echo "in-root: $R is no build root: run make KVER=7.3 inputs" >&2; exit 1; }

exec unshare -m sh -c '
	r=$1 repo=$2
	shift 2
	mkdir -p "$r$repo" && mount --bind "$repo" "$r$repo" &&
		mount -t proc proc "$r/proc" || exit 1
	exec chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 sh -c "cd \"\$0\" && exec \"\$@\"" "$PWD" "$@"
' in-root "$R" "$ROOT" "$@"
