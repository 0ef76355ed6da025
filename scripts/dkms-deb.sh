#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the DKMS package, build/dkms/sbpn-dccp-dkms_VERSION_all.deb
# (make dkms-deb; Documentation/dkms.rst):
#
#   scripts/dkms-deb.sh KVER...      the targets to ship a tree for
#
# For each target, scripts/build-tree.sh assembles the patched DCCP tree
# as make modules builds it (its kernel inputs must be there: make
# KVER=... inputs), into build/dkms/trees/KVER; its sources, and a SOURCE
# file naming the Debian uploads they come from, become src/SERIES of the
# package (6.1, 6.12, 7.3).  With scripts/dkms/Makefile (the build dkms runs),
# scripts/dccp-kbuild.mk, scripts/dkms/dkms.conf.in (the kernels the package
# accepts filled in) and scripts/dkms/debian (a changelog entry added),
# dpkg-buildpackage makes the binary package; nothing else is in it.
#
# The modules' "version" is SBPN_VERSION (git describe, as make modules
# has it); the package's is 0.N+gHASH, N the commits up to HEAD (so that a
# later commit upgrades an earlier one), ".dirty" appended for a tree with
# uncommitted changes.  Needs dpkg-dev, debhelper and dh-dkms
# (scripts/host-deps.sh).  Prints the package's path.

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/build/dkms

say() { echo "dkms-deb: $*" >&2; }
die() { say "error: $*"; exit 1; }

[ $# -gt 0 ] || die "usage: dkms-deb.sh KVER... (the targets to ship: 6.1, 6.12, 7.3)"
for k in "$@"; do
	case $k in
	6.1|6.12|7.3) ;;
	*) die "KVER $k: the targets are 6.1, 6.12 and 7.3" ;;
	esac
	[ "$(printf '%s\n' "$@" | grep -cxF "$k")" -eq 1 ] || die "KVER $k is given twice"
done
for tool in dpkg-buildpackage dh dh_dkms; do
	command -v "$tool" >/dev/null ||
		die "$tool is missing: scripts/host-deps.sh installs dpkg-dev, debhelper and dh-dkms"
done

SBPN_VERSION=${SBPN_VERSION:-$(git -C "$ROOT" describe --always --dirty)}
count=$(git -C "$ROOT" rev-list --count HEAD)
hash=$(git -C "$ROOT" rev-parse --short HEAD)
VERSION=0.$count+g$hash
case $SBPN_VERSION in *-dirty) VERSION+=.dirty ;; esac

pkg=$OUT/sbpn-dccp-$VERSION
rm -rf "$OUT"/sbpn-dccp-[0-9]* "$OUT"/sbpn-dccp*_*.deb "$OUT"/sbpn-dccp_*.buildinfo \
	"$OUT"/sbpn-dccp_*.changes
mkdir -p "$pkg/src"

# One tree per target, from the target's inputs, the way make modules
# assembles it; only its sources (.sources, which build-tree.sh writes)
# go into the package.
regex=
for k in "$@"; do
	env=$ROOT/.cache/kernel/$k.env
	[ -f "$env" ] || die "no kernel inputs for KVER=$k: run make KVER=$k inputs"
	trees=$OUT/trees/$k
	KVER=$k BUILD=$trees "$ROOT/scripts/build-tree.sh"
	mkdir "$pkg/src/$k"
	(cd "$trees/tree" && tar -cf - -T .sources) | tar -xf - -C "$pkg/src/$k"
	# shellcheck source=/dev/null
	origin=$(. "$env"
		if [ -n "${DCCP_SRC:-}" ]; then
			echo "linux-source-6.12 $DCCP_DEBVER, with functions of linux-source-7.3 $DEBVER"
		else
			echo "linux-source-$KVER $DEBVER"
		fi)
	echo "$origin" >"$pkg/src/$k/SOURCE"
	regex+="${regex:+|}${k//./[.]}"
	say "tree for Linux $k: $origin"
done

sed "s/@SBPN_VERSION@/$SBPN_VERSION/" "$ROOT/scripts/dkms/Makefile" >"$pkg/src/Makefile"
cp "$ROOT/scripts/dccp-kbuild.mk" "$pkg/src/"
# The kernels dkms may build for: their major.minor, e.g. ^(6[.]1|6[.]12)[.]
sed "s/@KERNEL_REGEX@/^($regex)[.]/" "$ROOT/scripts/dkms/dkms.conf.in" >"$pkg/dkms.conf"
cp -r "$ROOT/scripts/dkms/debian" "$pkg/"
{
	echo "sbpn-dccp ($VERSION) unstable; urgency=medium"
	echo
	echo "  * SBPN $SBPN_VERSION: DCCP for Linux ${*}."
	echo
	echo " -- SBPN developers <sbpn@example.org>  $(git -C "$ROOT" log -1 --format=%aD)"
} >"$pkg/debian/changelog"

say "building sbpn-dccp-dkms $VERSION (log: $OUT/build.log)"
(cd "$pkg" && dpkg-buildpackage -b -us -uc) >"$OUT/build.log" 2>&1 || {
	tail -n 30 "$OUT/build.log" >&2
	die "dpkg-buildpackage failed (log: $OUT/build.log)"
}
deb=$OUT/sbpn-dccp-dkms_${VERSION}_all.deb
[ -f "$deb" ] || die "dpkg-buildpackage made no $deb"
echo "$deb"
