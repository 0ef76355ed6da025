#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the debug kernel (KASAN, kmemleak, lockdep, atomic-sleep checks) from
# the same Debian linux-source-$KVER upload as the kernel inputs:
#
#   .cache/debug/<debver>/src/       the full source tree (from the cached .deb)
#   .cache/debug/<debver>/obj/       the kernel build (O=), .config included
#   .cache/debug/<debver>/image/     boot/vmlinuz-<release> and lib/modules/
#                                    <release>, laid out like the Debian image
#                                    cache (a symlink to usr/lib/modules when
#                                    kbuild installs there, as with a kmod
#                                    whose module directory is /usr/lib/modules),
#                                    for scripts/vm-run's VM_IMAGE
#
# `make check-debug` then builds our DCCP modules against obj/ (the same
# patch series and kbuild call as `make modules`) and boots image/.
# The .config is `make tinyconfig` merged with scripts/debug-kernel.config
# and, if it exists, scripts/debug-kernel-$KVER.config (what one kernel
# version needs besides: 6.12's tinyconfig chooses SLUB_TINY, which rules
# out SLUB_DEBUG and KASAN); the build stops if any option of a fragment
# did not stick.  A finished kernel is cached: a second run does nothing
# until a fragment changes.

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
FRAGMENTS=("$ROOT/scripts/debug-kernel.config")
# shellcheck source=scripts/target.sh
. "$ROOT/scripts/target.sh"
DEB=$CACHE/$ABI/debs/linux-source-${KVER}_${DEBVER}_all.deb
DIR=$ROOT/.cache/debug/$DEBVER
SRC=$DIR/src
OBJ=$DIR/obj
IMAGE=$DIR/image
[ ! -f "$ROOT/scripts/debug-kernel-$KVER.config" ] ||
	FRAGMENTS+=("$ROOT/scripts/debug-kernel-$KVER.config")

say() { echo "debug-kernel: $*" >&2; }
die() { say "error: $*"; exit 1; }
kmake() { nice -n 19 make -s -C "$SRC" O="$OBJ" ARCH=x86_64 "$@"; }

[ -f "$DEB" ] || die "no $DEB: run scripts/kernel-inputs.sh first"

if [ ! -f "$SRC/.complete" ]; then
	say "extracting linux-source-$KVER $DEBVER"
	rm -rf "$SRC"
	mkdir -p "$SRC"
	dpkg-deb --fsys-tarfile "$DEB" | tar -xO "./usr/src/linux-source-$KVER.tar.xz" |
		tar -xJ -C "$SRC" --strip-components=1
	touch "$SRC/.complete"
fi

stale=
for f in "${FRAGMENTS[@]}"; do
	if [ "$f" -nt "$IMAGE/.complete" ]; then stale=1; fi
done
if [ ! -f "$IMAGE/.complete" ] || [ -n "$stale" ]; then
	mkdir -p "$OBJ"
	kmake tinyconfig >"$OBJ/config.log" 2>&1
	"$SRC/scripts/kconfig/merge_config.sh" -m -O "$OBJ" "$OBJ/.config" "${FRAGMENTS[@]}" \
		>>"$OBJ/config.log" 2>&1
	kmake olddefconfig >>"$OBJ/config.log" 2>&1
	# Every option of the fragment must be in the final .config as asked.
	missing=0
	while read -r line; do
		case $line in
		CONFIG_*=*) want=$line ;;
		"# CONFIG_"*" is not set") want=$line ;;
		*) continue ;;
		esac
		if ! grep -qxF "$want" "$OBJ/.config"; then
			name=$(echo "$want" | grep -o 'CONFIG_[A-Z0-9_]*')
			say "did not stick: $want (got: $(grep -E "^$name=|^# $name is" "$OBJ/.config" || echo unset))"
			missing=1
		fi
	done < <(cat "${FRAGMENTS[@]}")
	[ "$missing" -eq 0 ] || die "the .config lacks options of ${FRAGMENTS[*]}"

	say "building the kernel (make -j2, niced)"
	start=$(date +%s)
	kmake -j2 bzImage modules
	release=$(kmake -s kernelrelease)
	rm -rf "$IMAGE"
	mkdir -p "$IMAGE/boot"
	cp "$OBJ/arch/x86/boot/bzImage" "$IMAGE/boot/vmlinuz-$release"
	kmake INSTALL_MOD_PATH="$IMAGE" modules_install >/dev/null
	if [ ! -e "$IMAGE/lib/modules" ] && [ -d "$IMAGE/usr/lib/modules" ]; then
		mkdir -p "$IMAGE/lib"
		ln -s ../usr/lib/modules "$IMAGE/lib/modules"
	fi
	[ -d "$IMAGE/lib/modules/$release" ] || die "modules_install left no modules for $release"
	rm -f "$IMAGE/lib/modules/$release"/{build,source}
	touch "$IMAGE/.complete"
	say "kernel $release built in $(($(date +%s) - start)) s"
fi
