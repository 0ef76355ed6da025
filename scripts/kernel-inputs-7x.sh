#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel inputs of the 7.x target (KVER=7.3): Debian 13's newest
# kernel, from trixie-backports, which has no DCCP.  Called by
# kernel-inputs.sh for KVER=7.3; the layout matches the other targets':
#
#   $CACHE/apt-trixie/               trixie and trixie-backports package
#                                    lists, apart from the host's apt setup;
#                                    MIRROR= overrides the
#                                    mirror (default deb.debian.org)
#   $CACHE/$ABI/debs/                the .debs, all of Debian version $DEBVER
#   $CACHE/$ABI/image/               linux-binary-unsigned, linux-modules and
#                                    linux-base unpacked: Debian 13 keeps the
#                                    kernel in usr/lib/modules/$ABI/vmlinuz,
#                                    linked from boot/vmlinuz-$ABI where
#                                    vm-run looks; lib/modules as for 6.12
#   $CACHE/$ABI/root/                a Debian 13 build root (debootstrap
#                                    minbase, make, binutils) with
#                                    linux-headers-$ABI installed: the headers'
#                                    kbuild programs and gcc-14 are trixie's,
#                                    and a Debian 12 host can run neither its
#                                    libc nor its compiler flags, so the
#                                    modules are built in it (scripts/in-root.sh)
#   $CACHE/$ABI/source/              the parts of linux-source-7.3 we need:
#                                    checkpatch, the kselftest harness, the
#                                    inet_diag and errqueue headers DCCP builds against
#                                    (7.x's API is not 6.12's), and the files
#                                    patches/7.x/carry.list takes functions
#                                    from
#   $CACHE/$ABI/source-6.12/         DCCP itself and the 6.12 files of
#                                    carry.list, from the 6.12 target's
#                                    linux-source-6.12 (its inputs are fetched
#                                    first): DCCP's last long-term release
#   $CACHE/7.3.env                   KVER, ABI, DEBVER, KDIR (inside the root),
#                                    KROOT (the root), DCCP_SRC and DCCP_DEBVER
#
# Needs root (debootstrap, chroot) and the archive; a warm cache is a no-op.

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${CACHE:-$ROOT/.cache/kernel}
KVER=${KVER:-7.3}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
CARRY_LIST=$ROOT/patches/7.x/carry.list

case $KVER in
7.3)	DEFAULT_ABI=7.3.4+deb13-amd64 SRCPKG=linux-source-7.3 ;;
*)	echo "kernel-inputs-7x: error: KVER=$KVER is no 7.x target (7.3)" >&2
	exit 1 ;;
esac
ABI=${ABI:-$DEFAULT_ABI}
FLAVOUR=${ABI##*+deb13-}		# amd64
KBASE=${ABI%-"$FLAVOUR"}		# 7.3.4+deb13: kbuild and -common

say() { echo "kernel-inputs-7x: $*" >&2; }
die() { say "error: $*"; exit 1; }

# Parts of linux-source-7.3 and of linux-source-6.12 (paths below the
# tarball's top directory): the fixed ones, and each "FILE VERSION" of
# carry.list, sorted by version.
SOURCE_PARTS=(
	scripts/checkpatch.pl
	scripts/spelling.txt
	scripts/const_structs.checkpatch
	tools/testing/selftests/kselftest_harness.h
	tools/testing/selftests/kselftest.h
	tools/testing/selftests/lib.mk
	tools/testing/selftests/kselftest
	include/uapi/linux/inet_diag.h
	include/linux/inet_diag.h
	include/uapi/linux/errqueue.h
	include/linux/errqueue.h
)
DCCP_PARTS=(
	net/dccp
	include/uapi/linux/dccp.h
	include/linux/dccp.h
	include/linux/tfrc.h
	Documentation/networking/dccp.rst
)
carried() { # version -> the upstream files carry.list takes from it
	[ -f "$CARRY_LIST" ] || return 0
	awk -v v="$1" '!/^#/ && NF >= 3 && $2 == v { print $3 }' "$CARRY_LIST" | sort -u
}
mapfile -t -O ${#SOURCE_PARTS[@]} SOURCE_PARTS < <(carried 7.3)
mapfile -t -O ${#DCCP_PARTS[@]} DCCP_PARTS < <(carried 6.12)

dir=$CACHE/$ABI
lists=$CACHE/apt-trixie
APT_OPTS=(-o Dir::Etc::sourcelist="$lists/sources.list" -o Dir::Etc::sourceparts=/dev/null
	-o Dir::State::Lists="$lists/lists" -o Dir::Cache="$lists/cache"
	-o Dir::State::status=/dev/null -o Acquire::Languages=none)

write_env() {
	# shellcheck source=/dev/null
	. "$dir/versions.env"
	printf 'KVER=%s\nABI=%s\nDEBVER=%s\nKDIR=%s\nKROOT=%s\nDCCP_SRC=%s\nDCCP_DEBVER=%s\n' \
		"$KVER" "$ABI" "$DEBVER" "/usr/lib/modules/$ABI/build" "$dir/root" \
		"$dir/source-6.12" "$DCCP_DEBVER" >"$CACHE/$KVER.env.tmp"
	mv "$CACHE/$KVER.env.tmp" "$CACHE/$KVER.env"
}

warm() {
	[ -f "$dir/.complete" ] && [ -f "$dir/root/.complete" ] &&
		[ "$(cat "$dir/source/.complete" 2>/dev/null)" = "${SOURCE_PARTS[*]}" ] &&
		[ "$(cat "$dir/source-6.12/.complete" 2>/dev/null)" = "${DCCP_PARTS[*]}" ]
}
if warm; then
	write_env
	exit 0
fi
[ "$(id -u)" -eq 0 ] || die "need root for the build root (debootstrap, chroot)"

# DCCP comes from the 6.12 target's source package: fetch that target first.
KVER=6.12 ABI= CACHE=$CACHE "$ROOT/scripts/kernel-inputs.sh"
# shellcheck source=/dev/null
DCCP_DEB=$(. "$CACHE/6.12.env" && find "$CACHE/$ABI/debs" -name 'linux-source-6.12_*.deb' | head -n1)
DCCP_DEBVER=$(. "$CACHE/6.12.env" && echo "$DEBVER")
[ -n "$DCCP_DEB" ] || die "the 6.12 target's inputs have no linux-source-6.12 .deb"

mkdir -p "$lists/lists/partial" "$lists/cache/archives/partial" "$dir/debs"
if [ ! -f "$lists/.updated" ] || [ -n "$(find "$lists/.updated" -mmin +1440)" ]; then
	printf 'deb [signed-by=%s] %s %s main\n' "$KEYRING" "$MIRROR" trixie \
		"$KEYRING" "$MIRROR" trixie-backports >"$lists/sources.list"
	say "updating the trixie and trixie-backports lists in $lists"
	apt-get "${APT_OPTS[@]}" update -qq || die "apt-get update from $MIRROR failed"
	touch "$lists/.updated"
fi
version_of() { # package -> its newest version in the lists, or nothing
	apt-cache "${APT_OPTS[@]}" show "$1" 2>/dev/null |
		awk '/^Version:/ { print $2 }' | sort -V | tail -n1
}
DEBVER=$(version_of "linux-headers-$ABI")
if [ -z "$DEBVER" ]; then
	have=$(apt-cache "${APT_OPTS[@]}" search --names-only "^linux-headers-7\.[0-9.]*\+deb13-$FLAVOUR\$" |
		awk '{ print $1 }' | sed "s/^linux-headers-//" | sort -V | tr '\n' ' ')
	die "ABI $ABI is not in trixie-backports (there: ${have:-none}); set ABI="
fi
say "ABI $ABI, Debian version $DEBVER; DCCP from linux-source-6.12 $DCCP_DEBVER"

fetch() { # package -> path of its .deb ($DEBVER) in debs/
	local deb
	deb=$(find "$dir/debs" -name "${1}_*.deb" | head -n1)
	if [ -z "$deb" ]; then
		say "downloading $1=$DEBVER"
		(cd "$dir/debs" && apt-get "${APT_OPTS[@]}" download -qq \
			-o APT::Sandbox::User=root "$1=$DEBVER")
		deb=$(find "$dir/debs" -name "${1}_*.deb" | head -n1)
	fi
	[ -n "$deb" ] || die "download of $1=$DEBVER failed"
	echo "$deb"
}

if [ ! -f "$dir/image/.complete" ]; then
	rm -rf "$dir/image"
	for p in "linux-binary-unsigned-$ABI" "linux-modules-$ABI" "linux-base-$ABI"; do
		dpkg-deb -x "$(fetch "$p")" "$dir/image"
	done
	[ -f "$dir/image/usr/lib/modules/$ABI/vmlinuz.unsigned" ] ||
		die "linux-binary-unsigned-$ABI has no usr/lib/modules/$ABI/vmlinuz.unsigned"
	mkdir -p "$dir/image/lib" "$dir/image/boot"
	ln -s ../usr/lib/modules "$dir/image/lib/modules"
	ln -s "../usr/lib/modules/$ABI/vmlinuz.unsigned" "$dir/image/boot/vmlinuz-$ABI"
	depmod -b "$dir/image" "$ABI"
	touch "$dir/image/.complete"
fi

in_root() { # command... -> run in the build root with /proc, as root
	unshare -m sh -c 'mount -t proc proc "$0/proc" && exec chroot "$0" "$@"' \
		"$dir/root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		DEBIAN_FRONTEND=noninteractive "$@"
}
if [ ! -f "$dir/root/.complete" ]; then
	rm -rf "$dir/root" "$dir/root.tmp"
	say "making a Debian 13 build root (debootstrap, about 2 minutes)"
	debootstrap --variant=minbase trixie "$dir/root.tmp" "$MIRROR" >"$dir/debootstrap.log" 2>&1 ||
		die "debootstrap failed (log: $dir/debootstrap.log)"
	mv "$dir/root.tmp" "$dir/root"
	mkdir -p "$dir/root/tmp/debs"
	for p in "linux-headers-$ABI" "linux-headers-$KBASE-common" "linux-kbuild-$KBASE" \
		"linux-base-$ABI"; do
		cp "$(fetch "$p")" "$dir/root/tmp/debs/"
	done
	say "installing linux-headers-$ABI and the toolchain in the build root"
	in_root sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends \
		make binutils /tmp/debs/*.deb >/tmp/install.log 2>&1 || { cat /tmp/install.log; exit 1; }' ||
		die "installing the headers in the build root failed"
	rm -rf "$dir/root/tmp/debs"
	[ -d "$dir/root/usr/lib/modules/$ABI/build" ] || die "no /usr/lib/modules/$ABI/build in the root"
	touch "$dir/root/.complete"
fi

extract() { # deb srcpkg destdir parts... : the parts of the source tarball
	local deb=$1 pkg=$2 dest=$3
	shift 3
	rm -rf "$dest" "$dest.tmp"
	mkdir -p "$dest.tmp"
	say "extracting $# parts of $pkg"
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$pkg.tar.xz" |
		tar -xJ -C "$dest.tmp" --strip-components=1 "${@/#/$pkg/}"
	mv "$dest.tmp" "$dest"
	echo "$*" >"$dest/.complete"
}
[ "$(cat "$dir/source/.complete" 2>/dev/null)" = "${SOURCE_PARTS[*]}" ] ||
	extract "$(fetch "$SRCPKG")" "$SRCPKG" "$dir/source" "${SOURCE_PARTS[@]}"
[ "$(cat "$dir/source-6.12/.complete" 2>/dev/null)" = "${DCCP_PARTS[*]}" ] ||
	extract "$DCCP_DEB" linux-source-6.12 "$dir/source-6.12" "${DCCP_PARTS[@]}"

printf 'ABI=%s\nDEBVER=%s\nDCCP_DEBVER=%s\n' "$ABI" "$DEBVER" "$DCCP_DEBVER" >"$dir/versions.env"
write_env
touch "$dir/.complete"
say "ready in $dir"
