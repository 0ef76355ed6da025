#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Prepare what the test VM boots with, under build/vm/:
#
#   initramfs.cpio.gz   busybox (static), the guest init, and the virtio and
#                       9p modules the init needs to mount the host's root
#   modroot/            lib/modules/<abi>: Debian's modules (hard links into
#                       the cache) with our DCCP modules in updates/, which
#                       depmod ranks above the stock ones
#
# Both are rebuilt only when an input changed.

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/target.sh
. "$ROOT/scripts/target.sh"
# VM_IMAGE: another kernel and its modules (see vm-run).
IMAGE=${VM_IMAGE:-$CACHE/$ABI/image}
[ -z "${VM_IMAGE:-}" ] || ABI=$(ls "$IMAGE/lib/modules")
VM=$BUILD/vm
BOOT_MODULES=(virtio_pci 9pnet_virtio 9p virtio-rng)

mkdir -p "$VM"

newer() { # target sources... -> true if target is missing or older
	local t=$1 s
	shift
	[ -e "$t" ] || return 0
	for s in "$@"; do
		[ "$s" -nt "$t" ] && return 0
	done
	return 1
}

initrd=$VM/initramfs.cpio.gz
if newer "$initrd" "$ROOT/scripts/vm/init" "$0" "$(command -v busybox)" "$IMAGE/.complete"; then
	stage=$(mktemp -d "$VM/initramfs.XXXXXX")
	mkdir -p "$stage"/{bin,dev,proc,sys,modules}
	mknod "$stage/dev/console" c 5 1
	cp "$(command -v busybox)" "$stage/bin/busybox"
	cp "$ROOT/scripts/vm/init" "$stage/init"
	# A kernel with these drivers built in needs none of them.
	: >"$stage/modules/order"
	for m in "${BOOT_MODULES[@]}"; do
		modprobe -d "$IMAGE" -S "$ABI" --show-depends "$m"
	done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' |
	while read -r ko; do
		# busybox's insmod takes plain modules; Debian's 6.12 has .ko.xz
		name=$(basename "${ko%.xz}")
		case $ko in
		*.xz) xz -dc "$ko" >"$stage/modules/$name" ;;
		*) cp "$ko" "$stage/modules/$name" ;;
		esac
		echo "$name" >>"$stage/modules/order"
	done
	(cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) >"$initrd.tmp"
	mv "$initrd.tmp" "$initrd"
	rm -rf "$stage"
fi

modroot=$VM/modroot
ours=("$BUILD"/modules/*.ko)
[ -e "${ours[0]}" ] || { echo "vm-prepare: no modules in build/modules: run make" >&2; exit 1; }
if newer "$modroot/.stamp" "${ours[@]}" "$IMAGE/.complete"; then
	rm -rf "$modroot"
	mkdir -p "$modroot/lib/modules"
	cp -al "$IMAGE/lib/modules/$ABI" "$modroot/lib/modules/$ABI"
	mkdir -p "$modroot/lib/modules/$ABI/updates/sbpn"
	cp "${ours[@]}" "$modroot/lib/modules/$ABI/updates/sbpn/"
	depmod -b "$modroot" "$ABI"
	touch "$modroot/.stamp"
fi
