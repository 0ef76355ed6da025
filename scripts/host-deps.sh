#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian packages the project needs on the host: compilers and
# make, QEMU (TCG, or KVM where it works), the tools the guest borrows from the host's root
# filesystem (ip, tc, python3 come over 9p), libnl-3 for dccp-qstat, libvpx
# for the VP8 call (sbpn-send --source vp8, vp8-score), what
# kernel builds need (the debug tier's kernel; pahole, which 6.12's module
# builds run: the kernel headers are unpacked, not installed, and bring
# none of their dependencies), clang with libFuzzer (make fuzz),
# docutils (the Documentation/ check), debootstrap (the Debian roots of the
# 7.3 build and of make dkms-install-check) and what builds the DKMS
# package (make dkms-deb: dpkg-buildpackage, debhelper, dh_dkms; dkms
# itself runs only in the throwaway roots, which install it).
# Idempotent: only packages that are missing are installed.
#
# The names depend on the release, which /etc/os-release gives
# (VERSION_CODENAME, or VERSION_ID 12 or 13): Debian 12 (bookworm) and 13
# (trixie) are supported, any other release stops with its name.
#
#   scripts/host-deps.sh                  install what is missing (root)
#   scripts/host-deps.sh --list [REL]     print REL's packages, one a line
#                                         (default: this host's release)
#   scripts/host-deps.sh --release        print this host's release
#   scripts/host-deps.sh --releases       print the supported releases
#   scripts/host-deps.sh --kvers          print the kernel targets this
#                                         host's archive has, the default
#                                         (KVER) first
#
# `make host-deps-check` looks every release's list up in that release's
# archive (scripts/host-deps-check.sh).  OS_RELEASE=FILE reads FILE instead
# of /etc/os-release (the host tests do).

set -euo pipefail

OS_RELEASE=${OS_RELEASE:-/etc/os-release}
RELEASES=(bookworm trixie)

# Every release's packages.
COMMON=(
	build-essential bc cpio xz-utils kmod perl git pkg-config
	qemu-system-x86 busybox-static udev
	iproute2 ethtool procps
	libnl-3-dev libvpx-dev
	python3-venv python3-docutils
	flex bison libelf-dev pahole
	clang
	debootstrap
	dpkg-dev debhelper dh-dkms
)

# Each release's own, in an array named after it: libFuzzer's runtime of
# the release's default clang (clang 14 in Debian 12, clang 19 in Debian 13).
BOOKWORM=(libclang-rt-14-dev)
TRIXIE=(libclang-rt-19-dev)

# The kernel targets (scripts/target.sh) each release's archive carries,
# the default first: Debian 12's carries its 6.1 and Debian 13's 6.12;
# Debian 13's has no 6.1, so a Debian 13 host targets 6.12.
declare -A KVERS=([bookworm]="6.1 6.12" [trixie]="6.12")

die() { echo "host-deps: error: $*" >&2; exit 1; }

os_field() { # field of os-release -> its value, quotes removed
	sed -n "s/^$1=//p" "$OS_RELEASE" | head -n1 | tr -d "\"'"
}

host_release() { # -> this host's release codename, or stop naming it
	local codename version name
	[ -r "$OS_RELEASE" ] || die "cannot read $OS_RELEASE: which Debian release is this?"
	codename=$(os_field VERSION_CODENAME)
	version=$(os_field VERSION_ID)
	name=$(os_field PRETTY_NAME)
	if [ -z "$codename" ]; then
		case $version in
		12) codename=bookworm ;;
		13) codename=trixie ;;
		esac
	fi
	supported "$codename" ||
		die "${name:-this system} (${codename:-no VERSION_CODENAME}${version:+, VERSION_ID $version}, from $OS_RELEASE) is not a supported release: the packages are known for Debian 12 (bookworm) and 13 (trixie)"
	echo "$codename"
}

supported() { # release -> true if it has a list
	local r
	for r in "${RELEASES[@]}"; do
		[ "$1" = "$r" ] && return 0
	done
	return 1
}

packages() { # release -> all its packages, one a line
	supported "$1" ||
		die "no package list for release '$1': the releases are ${RELEASES[*]}"
	local -n own=${1^^}
	printf '%s\n' "${COMMON[@]}" "${own[@]}"
}

case ${1:-} in
--list)
	[ $# -le 2 ] || die "usage: $0 --list [RELEASE]"
	rel=${2:-$(host_release)}
	packages "$rel"
	exit 0 ;;
--release)
	host_release
	exit 0 ;;
--releases)
	printf '%s\n' "${RELEASES[@]}"
	exit 0 ;;
--kvers)
	echo "${KVERS[$(host_release)]}"
	exit 0 ;;
"") ;;
*)	die "usage: $0 [--list [RELEASE] | --release | --releases | --kvers]" ;;
esac

rel=$(host_release)
mapfile -t PACKAGES < <(packages "$rel")

missing=()
for p in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "host-deps: need root to install: ${missing[*]}" >&2
	exit 1
fi

echo "host-deps: installing ${missing[*]} (Debian $rel)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
