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
#   $CACHE/$ABI/headers/             linux-headers-$ABI, its -common package
#                                    and linux-kbuild unpacked as they would
#                                    be installed (usr/src/linux-headers-*,
#                                    usr/lib/linux-kbuild-*), their links and
#                                    the Makefile's include of -common made
#                                    relative, so that kbuild runs from the
#                                    cache alone; KDIR in $KVER.env is its
#                                    usr/src/linux-headers-$ABI
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
#                                    kernel build by the debug tier, and the
#                                    headers' for make dkms-install-check)
#   $CACHE/$KVER.env                 KVER=, ABI=, DEBVER= and KDIR= (the
#                                    headers' build directory) of the set in use
#
# Each target has a default ABI, overridden by the ABI variable; 6.12's
# depends on the host's release, as each archive has its own build.  If that
# ABI is not in the archive, the one the target's meta-package depends on is
# used instead, and we say so; an archive without a kernel of the target
# (Debian 13's has no 6.1) stops with that.  A warm cache makes this a no-op.
# Nothing is installed on the host: no kernel package, nothing in /boot or
# /lib/modules (the headers of 6.12 depend on its image: installing them
# would install a kernel that the boot loader then offers).

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

in_archive() { # package version -> true if the archive has that version
	apt-cache madison "$1" 2>/dev/null | awk -F' *[|] *' -v v="$2" '$2 == v { f = 1 } END { exit !f }'
}

headers() { # -> the build directory of the cached headers, or nothing
	[ -f "$CACHE/$ABI/headers/.complete" ] || return 0
	realpath "$CACHE/$ABI/headers/usr/src/linux-headers-$ABI"
}

warm() {
	[ -f "$CACHE/$ABI/.complete" ] && [ -n "$(headers)" ] &&
		[ "$(cat "$CACHE/$ABI/source/.complete" 2>/dev/null)" = "${SOURCE_PARTS[*]}" ]
}

write_env() { # the target's env file, read by the build, the VM and the tests
	local kdir
	kdir=$(headers)
	[ -n "$kdir" ] || die "no headers of $ABI in $CACHE/$ABI/headers"
	printf 'KVER=%s\nABI=%s\nDEBVER=%s\nKDIR=%s\n' "$KVER" "$ABI" "$DEBVER" "$kdir" \
		>"$CACHE/$KVER.env.tmp"
	mv "$CACHE/$KVER.env.tmp" "$CACHE/$KVER.env"
}

if warm; then
	. "$CACHE/$ABI/versions.env"
	write_env
	exit 0
fi

[ "$(id -u)" -eq 0 ] || die "need root to update apt's package lists (run as root)"
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

# The headers: linux-headers-$ABI and the packages of its dependencies
# that hold kernel files (linux-headers-*-common, linux-kbuild-*; the rest,
# the compiler, pahole, linux-base and 6.12's linux-image, are tools or
# not needed to build modules), unpacked into headers/ instead of
# installed.  -common at the same version; linux-kbuild at the same one
# where the archive still has it, else at its candidate, which must meet
# the dependency.
if [ ! -f "$dir/headers/.complete" ]; then
	debs=("$(fetch "linux-headers-$ABI" "$DEBVER")")
	while read -r name op want; do
		ver=$DEBVER
		in_archive "$name" "$ver" || ver=$(candidate "$name")
		[ -n "$ver" ] || die "linux-headers-$ABI needs $name, which is not in the archive"
		[ -z "$op" ] || dpkg --compare-versions "$ver" "$op" "$want" ||
			die "linux-headers-$ABI needs $name ($op $want); the archive has $ver"
		debs+=("$(fetch "$name" "$ver")")
	done < <(dpkg-deb -f "${debs[0]}" Depends | tr ',' '\n' | grep -v '|' |
		sed -n 's/^ *\(linux-\(headers\|kbuild\)-[^ ]*\)\( (\([<>=]*\) \([^)]*\))\)\{0,1\} *$/\1 \4 \5/p')
	[ "${#debs[@]}" -ge 3 ] ||
		die "linux-headers-$ABI depends on no -common and linux-kbuild package"
	rm -rf "$dir/headers" "$dir/headers.tmp"
	for deb in "${debs[@]}"; do
		dpkg-deb -x "$deb" "$dir/headers.tmp"
	done
	# The packages' absolute links (modules/$ABI/build and source ->
	# /usr/src/...) would lead out of the cache, to whatever the host has
	# installed there, or nowhere: make each relative, to the cached file.
	while IFS= read -r -d '' link; do
		to=$(readlink "$link")
		[ -e "$dir/headers.tmp$to" ] ||
			die "${link#"$dir/headers.tmp"} leads to $to, which none of ${debs[*]##*/} has"
		ln -sfn "$(realpath -ms --relative-to="$(dirname "$link")" "$dir/headers.tmp$to")" "$link"
	done < <(find "$dir/headers.tmp" -type l -lname '/*' -print0)
	# The flavour's Makefile includes -common's by its absolute path.
	kdir=$dir/headers.tmp/usr/src/linux-headers-$ABI
	[ -f "$kdir/Makefile" ] || die "linux-headers-$ABI has no usr/src/linux-headers-$ABI/Makefile"
	sed -i 's|^include /usr/src/|include $(dir $(lastword $(MAKEFILE_LIST)))../|' "$kdir/Makefile"
	! grep -n '/usr/src/' "$kdir/Makefile" >&2 ||
		die "usr/src/linux-headers-$ABI/Makefile still names /usr/src (above)"
	# The programs kbuild runs that installing the packages would have
	# brought: the kernel's compiler, and pahole where linux-kbuild
	# depends on it (scripts/host-deps.sh installs both).
	progs=$(sed -n 's/^CC = .*[) ]\([a-z0-9+-]*gcc-[0-9]*\)$/\1/p' "$kdir/.kernelvariables" 2>/dev/null || true)
	for deb in "${debs[@]}"; do
		if dpkg-deb -f "$deb" Depends | grep -qw pahole; then progs+=" pahole"; fi
	done
	for p in $progs; do
		command -v "$p" >/dev/null ||
			die "building modules for Linux $ABI needs $p, which is not installed: run scripts/host-deps.sh"
	done
	touch "$dir/headers.tmp/.complete"
	mv "$dir/headers.tmp" "$dir/headers"
fi

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
