#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Make one consistent set of Debian kernel inputs available for the target
# KVER (6.1, Debian 12's kernel; or 6.12, Debian 13's, which bookworm's
# archive also carries; the default is the host release's own, see
# scripts/kver.sh), from the host's archive.  KVER=7.3,
# Debian 13's newest kernel (trixie-backports, without DCCP), has inputs of
# another kind: scripts/kernel-inputs-7x.sh fetches them.
#
#   /lib/modules/$ABI/build          headers, installed with apt (Debian 13's
#                                    packages install them under /usr/lib/modules,
#                                    the same directory on a merged-/usr host;
#                                    KDIR in $KVER.env names the one found)
#   $CACHE/$ABI/image/               linux-image-$ABI-unsigned unpacked (vmlinuz,
#                                    modules, modules.dep made by depmod -b);
#                                    lib/modules/$ABI whether the package put
#                                    them there (Debian 12) or under usr/
#                                    (Debian 13 and its backports: lib/modules
#                                    is then a symlink to usr/lib/modules)
#   $CACHE/$ABI/source/              the parts of linux-source-$KVER we build
#                                    from: net/dccp, the dccp, inet_diag and
#                                    errqueue headers, dccp.rst,
#                                    checkpatch and the kselftest harness
#   $CACHE/$ABI/debs/                the downloaded .debs (kept for a full
#                                    kernel build by the debug tier)
#   $CACHE/$KVER.env                 KVER=, ABI=, DEBVER= and KDIR= (the
#                                    headers' build directory) of the set in use
#
# Each target has a default ABI, overridden by the ABI variable; 6.12's
# depends on the host's release, as each archive has its own build.  If that
# ABI is not in the archive, the one the target's meta-package depends on is
# used instead, and we say so; an archive without a kernel of the target
# (Debian 13's has no 6.1) stops with that.  A warm cache makes this a no-op.

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${CACHE:-$ROOT/.cache/kernel}
# shellcheck source=scripts/kver.sh
. "$ROOT/scripts/kver.sh"
[ "$KVER" != 7.3 ] || exec "$ROOT/scripts/kernel-inputs-7x.sh"

# The host's Debian release (bookworm or trixie), for the 6.12 default.
RELEASE=$("$ROOT/scripts/host-deps.sh" --release 2>/dev/null || echo bookworm)

# Per target: the default ABI, the meta-packages that may name the current
# one (the first that names a kernel of the target counts: bookworm carries
# 6.12 as linux-image-6.12-amd64, trixie as linux-image-amd64), and the
# source package.
case $KVER in
6.1)	DEFAULT_ABI=6.1.0-56-amd64 METAS=(linux-image-amd64) ;;
6.12)	DEFAULT_ABI=6.12.117+deb12-amd64
	[ "$RELEASE" != trixie ] || DEFAULT_ABI=6.12.117+deb13-amd64
	METAS=(linux-image-6.12-amd64 linux-image-amd64) ;;
*)	echo "kernel-inputs: error: KVER=$KVER: the targets are 6.1, 6.12 and 7.3" >&2
	exit 1 ;;
esac
ABI=${ABI:-$DEFAULT_ABI}
SRCPKG=linux-source-$KVER

# Parts of the source tarball we need (paths below $SRCPKG/).
SOURCE_PARTS=(
	net/dccp
	include/uapi/linux/dccp.h
	include/uapi/linux/inet_diag.h
	include/linux/inet_diag.h
	include/uapi/linux/errqueue.h
	include/linux/errqueue.h
	include/linux/dccp.h
	Documentation/networking/dccp.rst
	scripts/checkpatch.pl
	scripts/spelling.txt
	scripts/const_structs.checkpatch
	tools/testing/selftests/kselftest_harness.h
	tools/testing/selftests/kselftest.h
	tools/testing/selftests/lib.mk
	tools/testing/selftests/kselftest
)

say() { echo "kernel-inputs: $*" >&2; }
die() { say "error: $*"; exit 1; }

apt_updated=
apt_update() {
	[ -n "$apt_updated" ] && return
	DEBIAN_FRONTEND=noninteractive apt-get update -qq
	apt_updated=1
}

candidate() { # package -> candidate version or empty
	apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ { if ($2 != "(none)") print $2 }'
}

headers() { # -> the build directory of linux-headers-$ABI, or nothing
	local d
	for d in /lib/modules /usr/lib/modules; do
		[ -d "$d/$ABI/build" ] && { echo "$d/$ABI/build"; return; }
	done
	return 0
}

warm() {
	[ -f "$CACHE/$ABI/.complete" ] && [ -n "$(headers)" ] &&
		[ "$(cat "$CACHE/$ABI/source/.complete" 2>/dev/null)" = "${SOURCE_PARTS[*]}" ]
}

write_env() { # the target's env file, read by the build, the VM and the tests
	local kdir
	kdir=$(headers)
	[ -n "$kdir" ] || die "linux-headers-$ABI gave no modules/$ABI/build directory"
	printf 'KVER=%s\nABI=%s\nDEBVER=%s\nKDIR=%s\n' "$KVER" "$ABI" "$DEBVER" "$kdir" \
		>"$CACHE/$KVER.env.tmp"
	mv "$CACHE/$KVER.env.tmp" "$CACHE/$KVER.env"
}

if warm; then
	. "$CACHE/$ABI/versions.env"
	write_env
	exit 0
fi

[ "$(id -u)" -eq 0 ] || die "need root to install linux-headers-$ABI (run as root)"
apt_update

DEBVER=$(candidate "linux-image-$ABI-unsigned")
if [ -z "$DEBVER" ]; then
	old=$ABI
	ABI=
	named=()
	for meta in "${METAS[@]}"; do
		abi=$({ apt-cache depends "$meta" 2>/dev/null || true; } |
			sed -n 's/^ *Depends: linux-image-\(.*\)$/\1/p' | head -n1)
		case $abi in
		"$KVER".*) ABI=$abi; break ;;
		?*) named+=("$meta names $abi") ;;
		esac
	done
	if [ -z "$ABI" ]; then
		hint=
		[ "$RELEASE" != trixie ] || hint=": Debian 13's kernel is KVER=6.12"
		die "ABI $old is not in the archive, nor any Linux $KVER (Debian $RELEASE; ${named[*]:-no ${METAS[*]}})$hint"
	fi
	DEBVER=$(candidate "linux-image-$ABI-unsigned")
	[ -n "$DEBVER" ] || die "no linux-image-$ABI-unsigned in the archive"
	say "ABI $old is not in the archive; using $ABI ($DEBVER) from $meta"
	warm && { write_env; exit 0; }
fi

say "ABI $ABI, Debian version $DEBVER"
dir=$CACHE/$ABI
mkdir -p "$dir/debs"

if [ -z "$(headers)" ]; then
	say "installing linux-headers-$ABI=$DEBVER"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		"linux-headers-$ABI=$DEBVER" >/dev/null
fi

fetch() { # package version -> path of the .deb in debs/
	local deb
	deb=$(find "$dir/debs" -name "${1}_*.deb" | head -n1)
	if [ -z "$deb" ]; then
		say "downloading $1=$2"
		(cd "$dir/debs" && apt-get download -qq -o APT::Sandbox::User=root "$1=$2")
		deb=$(find "$dir/debs" -name "${1}_*.deb" | head -n1)
	fi
	[ -n "$deb" ] || die "download of $1=$2 failed"
	echo "$deb"
}

if [ ! -f "$dir/image/.complete" ]; then
	deb=$(fetch "linux-image-$ABI-unsigned" "$DEBVER")
	rm -rf "$dir/image"
	dpkg-deb -x "$deb" "$dir/image"
	# Debian 13's packages (merged /usr) and its backports put the modules
	# under usr/lib/modules, Debian 12's under lib/modules: make lib/modules
	# lead to them either way, where depmod -b, vm-run and vm/prepare.sh look
	# (as /lib -> usr/lib does on a merged-/usr root).
	if [ ! -e "$dir/image/lib/modules" ] && [ -d "$dir/image/usr/lib/modules" ]; then
		mkdir -p "$dir/image/lib"
		ln -s ../usr/lib/modules "$dir/image/lib/modules"
	fi
	[ -d "$dir/image/lib/modules/$ABI" ] ||
		die "linux-image-$ABI-unsigned has no modules in lib/modules/$ABI or usr/lib/modules/$ABI"
	depmod -b "$dir/image" "$ABI"
	touch "$dir/image/.complete"
fi

# .complete lists the parts extracted: a cache made with fewer is redone.
if [ "$(cat "$dir/source/.complete" 2>/dev/null)" != "${SOURCE_PARTS[*]}" ]; then
	srcver=$(candidate "$SRCPKG")
	# The image and the source must be the same Debian upload.
	apt-cache show "$SRCPKG=$DEBVER" >/dev/null 2>&1 ||
		die "$SRCPKG=$DEBVER is not in the archive (candidate: $srcver)"
	deb=$(fetch "$SRCPKG" "$DEBVER")
	rm -rf "$dir/source" "$dir/source.tmp"
	mkdir -p "$dir/source.tmp"
	say "extracting ${#SOURCE_PARTS[@]} parts of the source"
	dpkg-deb --fsys-tarfile "$deb" |
		tar -xO "./usr/src/$SRCPKG.tar.xz" |
		tar -xJ -C "$dir/source.tmp" --strip-components=1 \
			"${SOURCE_PARTS[@]/#/$SRCPKG/}"
	mv "$dir/source.tmp" "$dir/source"
	echo "${SOURCE_PARTS[*]}" >"$dir/source/.complete"
fi

printf 'ABI=%s\nDEBVER=%s\n' "$ABI" "$DEBVER" >"$dir/versions.env"
write_env
touch "$dir/.complete"
say "ready in $dir"
