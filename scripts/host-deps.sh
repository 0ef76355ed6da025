#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian 12 packages the project needs on the host: compilers and
# make, QEMU (TCG, or KVM where it works), the tools the guest borrows from the host's root
# filesystem (ip, tc, python3 come over 9p), libnl-3 for dccp-qstat, what
# a kernel build needs (the debug tier), clang with libFuzzer (make fuzz) and
# docutils (the Documentation/ check).
# Idempotent: only packages that are missing are installed.

set -euo pipefail

PACKAGES=(
	build-essential bc cpio xz-utils kmod perl git pkg-config
	qemu-system-x86 busybox-static udev
	iproute2 ethtool procps
	libnl-3-dev
	python3-venv python3-docutils
	flex bison libelf-dev
	clang libclang-rt-14-dev
)

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

echo "host-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
