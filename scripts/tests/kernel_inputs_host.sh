#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetching the kernel inputs leaves the host's kernels alone: no
# linux-image, linux-headers or linux-kbuild package is installed, removed
# or upgraded, and /boot and /lib/modules stay as they were, so the machine
# boots what it booted before.  Between two snapshots of those (dpkg-query,
# a listing of /boot with sizes and times, the kernels in /lib/modules),
# scripts/kernel-inputs.sh runs for each target of this host (KVERS,
# default scripts/host-deps.sh --kvers) into a fresh cache under .cache/,
# so that it fetches the headers, whose packages used to be installed (and
# 6.12's with them its kernel), whether the project's cache is warm or
# cold: about 15 MB a target.  The image and the source, which that
# script only downloads and unpacks, are linked from the project's cache
# ready unpacked where it has them (cp -al; the ABI is the one the target
# uses there), to spare a minute of unpacking.  Then a module (the harness's) builds against each fresh
# cache's headers with /usr/src and /lib/modules hidden, in a mount
# namespace of its own: the build needs nothing installed there.  Under
# a minute; the fresh caches are removed.
#
#   scripts/tests/kernel_inputs_host.sh
#
# Output is KTAP; exit 0 if every case passed, 1 otherwise.  Needs root
# (kernel-inputs.sh updates apt's lists; unshare, mount).

set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=selftests/lib/ktap.sh
. "$ROOT/selftests/lib/ktap.sh"
CACHE=$ROOT/.cache/kernel
KVERS=${KVERS:-$("$ROOT/scripts/host-deps.sh" --kvers 2>/dev/null || echo 6.1 6.12)}
mkdir -p "$ROOT/.cache"
TMP=$(mktemp -d "$ROOT/.cache/kernel-inputs-test.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

# What decides which kernel the machine boots, and which kernels it has.
snapshot() {
	echo "# packages (not those dpkg only knows of, un and pn)"
	dpkg-query -W -f '${db:Status-Abbrev} ${Package} ${Version}\n' \
		'linux-image-*' 'linux-headers-*' 'linux-kbuild-*' 2>/dev/null |
		grep -v '^[up]n ' | sort
	echo "# /boot"
	find /boot -printf '%y %p %s %T@ %l\n' 2>/dev/null | sort
	echo "# /lib/modules"
	find /lib/modules/ -mindepth 1 -maxdepth 1 -printf '%y %p %l\n' 2>/dev/null | sort
}

# shellcheck disable=SC2086	# the targets are words
set -- $KVERS
ktap_plan $((2 * $# + 1))

snapshot >"$TMP/before"
for k; do
	abi=
	# shellcheck source=/dev/null
	[ ! -f "$CACHE/$k.env" ] || abi=$(. "$CACHE/$k.env" && echo "$ABI")
	fresh=$TMP/$k
	mkdir -p "$fresh/$abi"
	for d in image source; do
		[ -z "$abi" ] || [ ! -d "$CACHE/$abi/$d" ] || cp -al "$CACHE/$abi/$d" "$fresh/$abi/$d"
	done
	env KVER="$k" ABI="$abi" CACHE="$fresh" "$ROOT/scripts/kernel-inputs.sh" \
		>"$TMP/inputs-$k.log" 2>&1
	rc=$?
	sed 's/^/# /' "$TMP/inputs-$k.log"
	check "kernel-inputs.sh KVER=$k${abi:+ ABI=$abi} fills a fresh cache (got $rc)" \
		test "$rc" -eq 0 -a -f "$fresh/$k.env"
done
snapshot >"$TMP/after"

for k; do
	kdir=
	# shellcheck source=/dev/null
	[ ! -f "$TMP/$k/$k.env" ] || kdir=$(. "$TMP/$k/$k.env" && echo "$KDIR")
	cp -r "$ROOT/selftests/harness/warn" "$TMP/warn-$k"
	if [ -n "$kdir" ]; then
		unshare -m sh -c 'for d in /usr/src /lib/modules /usr/lib/modules; do
				[ ! -d "$d" ] || mount -t tmpfs none "$d" || exit
				[ ! -d "$d" ] || [ -z "$(ls -A "$d")" ] || exit
			done
			nice -n 19 make -s -C "$0" M="$1" modules' "$kdir" "$TMP/warn-$k" \
			>"$TMP/build-$k.log" 2>&1
		rc=$?
	else
		echo "no KDIR in the fresh cache's $k.env" >"$TMP/build-$k.log"
		rc=1
	fi
	sed 's/^/# /' "$TMP/build-$k.log" | tail -n 20
	check "a module builds for $k against the fresh cache's headers alone (got $rc)" \
		test "$rc" -eq 0 -a -f "$TMP/warn-$k/vmrun_warn.ko"
done

if diff -U0 "$TMP/before" "$TMP/after" >"$TMP/changed"; then
	ok "no kernel package installed or changed, /boot and /lib/modules as they were"
else
	echo "# fetching the kernel inputs changed what the host boots or has:"
	grep -E '^[-+][^-+]' "$TMP/changed" | sed 's/^/#   /'
	not_ok "no kernel package installed or changed, /boot and /lib/modules as they were"
fi

ktap_done
