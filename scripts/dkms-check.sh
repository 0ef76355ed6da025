#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the DKMS package in a throwaway Debian root with the target's
# kernel (KVER, see target.sh) and check what it does there, as a
# developer's `apt install ./PACKAGE.deb` would on Debian 12 or 13
# (make dkms-install-check; Documentation/dkms.rst):
#
#   scripts/dkms-check.sh DEB
#
# The root is an overlay.  Its lower layer, left as it is, is a Debian root
# of a release whose archive has the target's kernel: for 6.1 and 6.12
# build/dkms/root-RELEASE (this host's release, debootstrap --variant=minbase,
# made on first use), for 7.3 the target's Debian 13 build root (KROOT).
# Its upper layer, OUT/upper (OUT: the target's build directory's
# dkms-check/), starts empty on each run and takes every change: nothing is
# installed on the host, neither in /lib/modules nor in /var/lib/dkms.
# The target kernel's stock modules (the cached linux-image, linked) are in
# the root's modules directory, as an installed kernel has them; apt's
# downloads are kept in build/dkms/apt-RELEASE for the next run.  Then, in
# the root:
#
#   1. apt-get install ./DEB: dkms comes with it; no kernel has headers,
#      so nothing is built (a lower root that has the target's headers,
#      7.3's, loses them first)
#   2. apt-get install linux-headers-ABI, as a kernel upgrade does (6.12's
#      bring their kernel image, and with it a whole upgrade): dkms's
#      kernel hook builds and installs our modules for ABI
#   3. apt-get remove the package: the stock modules are back
#   4. apt-get install ./DEB again, the headers there: the package's
#      postinst builds and installs them
#   5. apt-get remove the package: the stock modules are back
#
# After 2 and 4: dkms says installed; modinfo -k ABI (modules.dep, as
# modprobe reads it) finds each of the four in updates/dkms, with the
# stock modules' vermagic and the package's SBPN version; 4's are the same
# build as 2's (srcversion).  After 3 and 5: dkms has nothing, and modinfo
# finds Debian's modules in kernel/net/dccp again (7.3, which has no DCCP:
# none).  The modules of 2 go to OUT/modules (decompressed), their version
# and srcversions to OUT/expect, for the VM (make dkms-vm); 7.3's are
# checked with carry.py --check, as make modules checks them.
#
# KTAP on stdout, the log of test N in OUT/logs/N.log; exit 0 if all passed.
# Needs root, debootstrap and the archive (MIRROR, SECURITY_MIRROR override
# deb.debian.org's).  dkms builds with one job (parallel_jobs=1) at nice 19.

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/target.sh
. "$ROOT/scripts/target.sh"
MIRROR=${MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${SECURITY_MIRROR:-http://deb.debian.org/debian-security}
OUT=$TARGET_BUILD/dkms-check
MODULES=(dccp dccp_ipv4 dccp_ipv6 dccp_diag)

say() { echo "dkms-check: $*" >&2; }
die() { say "error: $*"; exit 1; }

[ $# -eq 1 ] || die "usage: dkms-check.sh DEB (make dkms-deb builds it)"
DEB=$(realpath "$1")
[ -f "$DEB" ] || die "no package $1: run make dkms-deb"
[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, chroot, mount)"
command -v debootstrap >/dev/null || die "debootstrap is missing: run scripts/host-deps.sh"

# The package's version is its dkms version too (dh_dkms -V).
VERSION=$(dpkg-deb -f "$DEB" Version)
SBPN_VERSION=$(dpkg-deb --fsys-tarfile "$DEB" |
	tar -xO "./usr/src/sbpn-dccp-$VERSION/Makefile" |
	sed -n 's/^SBPN_VERSION[[:space:]]*:= //p')
[ -n "$SBPN_VERSION" ] || die "$DEB has no usr/src/sbpn-dccp-$VERSION/Makefile with an SBPN_VERSION"

if [ -n "${KROOT:-}" ]; then	# 7.3's build root, a Debian 13 root
	BASE=$KROOT
	RELEASE=trixie
else
	RELEASE=$("$ROOT/scripts/host-deps.sh" --release)
	BASE=$ROOT/build/dkms/root-$RELEASE
fi
ARCHIVES=$ROOT/build/dkms/apt-$RELEASE
UPPER=$OUT/upper
WORK=$OUT/work
MERGED=$OUT/root
# The target's headers: the cached .deb (the kernel inputs keep it), else
# the archive's, of the image's version.
HEADERS_DEB=$(find "$CACHE/$ABI/debs" -name "linux-headers-${ABI}_*.deb" 2>/dev/null | head -n1)

# One run at a time (they share the roots and apt's downloads).
if [ -z "${DKMS_CHECK_NS:-}" ]; then
	mkdir -p "$ROOT/build/dkms"
	exec 9>"$ROOT/build/dkms/check.lock"
	flock -n 9 || die "another dkms-check is running (it holds build/dkms/check.lock)"

	if [ ! -f "$BASE/.complete" ]; then
		[ -z "${KROOT:-}" ] || die "no build root $KROOT: run make KVER=7.3 inputs"
		rm -rf "$BASE" "$BASE.tmp"
		say "making a Debian $RELEASE root in $BASE (debootstrap, about a minute)"
		debootstrap --variant=minbase "$RELEASE" "$BASE.tmp" "$MIRROR" \
			>"$ROOT/build/dkms/debootstrap-$RELEASE.log" 2>&1 ||
			die "debootstrap failed (log: build/dkms/debootstrap-$RELEASE.log)"
		printf 'deb %s %s main\ndeb %s %s-updates main\ndeb %s %s-security main\n' \
			"$MIRROR" "$RELEASE" "$MIRROR" "$RELEASE" "$SECURITY_MIRROR" "$RELEASE" \
			>"$BASE.tmp/etc/apt/sources.list"
		mv "$BASE.tmp" "$BASE"
		touch "$BASE/.complete"
	fi
fi
# A merged-/usr root (debootstrap's default since Debian 12) keeps the
# modules under usr/lib/modules, /lib being a link there.
if [ -L "$BASE/lib" ]; then MODDIR=usr/lib/modules; else MODDIR=lib/modules; fi

# A new upper layer; then the rest runs in a mount namespace of its own:
# the overlay and the root's mounts end with the script, whatever way it
# ends.
if [ -z "${DKMS_CHECK_NS:-}" ]; then
	rm -rf "$UPPER" "$WORK" "$OUT/modules" "$OUT/logs" "$OUT/expect"
	mkdir -p "$UPPER/$MODDIR" "$UPPER/etc" "$WORK" "$MERGED" "$ARCHIVES" "$OUT/logs"
	# a directory made in the upper layer hides the lower one's mode
	install -d -m 1777 "$UPPER/tmp"
	# The installed kernel's modules: hard links into the cache, as
	# scripts/vm/prepare.sh makes them (depmod replaces its files, it
	# never writes into them).
	cp -al "$CACHE/$ABI/image/lib/modules/$ABI" "$UPPER/$MODDIR/$ABI"
	cp "$DEB" "$UPPER/tmp/"
	[ -z "$HEADERS_DEB" ] || cp "$HEADERS_DEB" "$UPPER/tmp/"
	cp /etc/resolv.conf "$UPPER/etc/resolv.conf"
	DKMS_CHECK_NS=1 exec unshare -m "$0" "$@"
fi

mount -t overlay overlay -o "lowerdir=$BASE,upperdir=$UPPER,workdir=$WORK" "$MERGED"
mount -t proc proc "$MERGED/proc"
mkdir -p "$MERGED/var/cache/apt/archives"
mount --bind "$ARCHIVES" "$MERGED/var/cache/apt/archives"

in_root() { # command... -> run in the root, as root, with dkms's one job
	nice -n 19 chroot "$MERGED" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive parallel_jobs=1 "$@"
}

n=0
failed=0
echo "TAP version 13"
result() { # status description [diagnostics file]
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n $2"
	else
		failed=$((failed + 1))
		echo "not ok $n $2"
		[ -z "${3:-}" ] || sed 's/^/# /' "$3"
	fi
}

run_step() { # description command... -> ok, or not ok and stop
	local desc=$1 log start rc=0
	shift
	log=$OUT/logs/$((n + 1)).log
	start=$SECONDS
	in_root "$@" >"$log" 2>&1 || rc=$?
	if [ $rc -eq 0 ]; then
		result 0 "$desc ($((SECONDS - start)) s)"
		return
	fi
	# dkms keeps a failed build's output in its build directory
	find "$MERGED/var/lib/dkms" -name make.log -exec tail -n 40 {} + >>"$log" 2>/dev/null || true
	tail -n 60 "$log" >"$log.tail"
	result 1 "$desc (exit $rc, $((SECONDS - start)) s; log: $log)" "$log.tail"
	echo "Bail out! the checks after it would only repeat its failure"
	echo "1..$n"
	exit 1
}

# The state checks run in the root with its own dkms and kmod.  Each prints
# what it found and returns 0 if it is what it should be.
installed() { # abi dkms-version sbpn-version module... : modprobe finds ours
	local abi=$1 dv=$2 sv=$3 m f v ref rc=0
	shift 3
	dkms status -m sbpn-dccp
	dkms status -m sbpn-dccp -v "$dv" -k "$abi" | grep -q ': installed' || rc=1
	ref=$(modinfo -k "$abi" -F vermagic inet_diag)
	echo "the stock modules' vermagic: $ref"
	for m; do
		f=$(modinfo -k "$abi" -F filename "$m" 2>&1) || true
		v=$(modinfo -k "$abi" -F vermagic "$m" 2>&1) || true
		echo "$m: $f, vermagic $v, version $(modinfo -k "$abi" -F version "$m" 2>&1)"
		case $f in */modules/"$abi"/updates/dkms/"$m".ko*) ;; *) rc=1 ;; esac
		[ "$v" = "$ref" ] || rc=1
		[ "$(modinfo -k "$abi" -F version "$m")" = "$sv" ] || rc=1
	done
	return $rc
}
stock() { # abi dkms-state stock-dir module... : modprobe finds the kernel's own
	# dkms-state: "added" (registered, built for no kernel) or "" (unknown
	# to dkms); stock-dir: where the kernel keeps them, "" for none at all
	local abi=$1 state=$2 dir=$3 f m rc=0 status
	shift 3
	status=$(dkms status -m sbpn-dccp)
	echo "dkms status: ${status:-nothing}"
	if [ -n "$state" ]; then
		[ -n "$status" ] && ! echo "$status" | grep -v ": $state\$" | grep -q . || rc=1
	else
		[ -z "$status" ] || rc=1
	fi
	for f in /lib/modules/"$abi"/updates/dkms/dccp*; do
		[ -e "$f" ] || continue
		echo "left behind: $f"
		rc=1
	done
	for m; do
		f=$(modinfo -k "$abi" -F filename "$m" 2>&1) || f=none
		echo "$m: $f"
		if [ -n "$dir" ]; then
			case $f in */modules/"$abi"/"$dir"/"$m".ko*) ;; *) rc=1 ;; esac
			[ -z "$(modinfo -k "$abi" -F version "$m")" ] || rc=1
		else
			[ "$f" = none ] || rc=1
		fi
	done
	return $rc
}
check() { # description function args... -> ok/not ok, with what it found
	local desc=$1 fn=$2 log rc=0
	shift 2
	log=$OUT/logs/$((n + 1)).log
	in_root bash -c "$(declare -f "$fn"); $fn \"\$@\"" "$fn" "$@" >"$log" 2>&1 || rc=$?
	result $rc "$desc" "$log"
}
check_installed() { # description
	check "$1" installed "$ABI" "$VERSION" "$SBPN_VERSION" "${MODULES[@]}"
}
check_stock() { # description dkms-state
	check "$1" stock "$ABI" "$2" "$STOCK_DIR" "${MODULES[@]}"
}
srcversions() { # -> "module srcversion" for each of ours in the root
	local m
	for m in "${MODULES[@]}"; do
		echo "$m $(in_root modinfo -k "$ABI" -F srcversion "$m")"
	done
}

# Where the kernel keeps its own DCCP modules; 7.x has none.
STOCK_DIR=kernel/net/dccp
STOCK="the stock DCCP modules"
if [ "$KVER" = 7.3 ]; then
	STOCK_DIR=
	STOCK="no DCCP module (Linux $KVER has none of its own)"
fi
APT=(apt-get -y -q -o Dpkg::Use-Pty=0 --no-install-recommends)
headers=linux-headers-$ABI=$DEBVER
[ -z "$HEADERS_DEB" ] || headers=/tmp/$(basename "$HEADERS_DEB")
say "Linux $ABI, Debian $RELEASE root, sbpn-dccp-dkms $VERSION (SBPN $SBPN_VERSION)"

run_step "apt-get update in a Debian $RELEASE root" "${APT[@]}" update
# A root whose lower layer has the target's headers (7.3's build root) loses
# them first, so that they can arrive the way a new kernel's do.
if in_root dpkg-query -W -f '${Status}' "linux-headers-$ABI" 2>/dev/null | grep -q 'ok installed'; then
	run_step "remove linux-headers-$ABI of the lower root, to install it anew" \
		dpkg --remove "linux-headers-$ABI"
fi
run_step "apt install ./$(basename "$DEB") with no kernel headers: dkms installed, nothing built" \
	"${APT[@]}" install "/tmp/$(basename "$DEB")"
check_stock "dkms has sbpn-dccp $VERSION, built for no kernel; modprobe finds $STOCK" added

run_step "install linux-headers-$ABI (a kernel upgrade): dkms's hook builds ours" \
	"${APT[@]}" install "$headers"
check_installed "after the kernel upgrade, modprobe finds ours in updates/dkms, built for $ABI"
rm -rf "$OUT/modules"
mkdir -p "$OUT/modules"
for f in "$MERGED/$MODDIR/$ABI/updates/dkms"/*.ko*; do
	case $f in
	*.xz) xz -dc "$f" >"$OUT/modules/$(basename "${f%.xz}")" ;;
	*) cp "$f" "$OUT/modules/" ;;
	esac
done
first=$(srcversions)
{
	echo "ABI=$ABI"
	echo "SBPN_VERSION=$SBPN_VERSION"
	echo "$first" | awk '{ print "SRCVERSION_" $1 "=" $2 }'
} >"$OUT/expect"
if [ "$KVER" = 7.3 ]; then
	kos=()
	for m in "${MODULES[@]}"; do kos+=("$OUT/modules/$m.ko"); done
	rc=0
	"$ROOT/scripts/carry.py" --list "$ROOT/patches/7.x/carry.list" --check "${kos[@]}" \
		>"$OUT/logs/$((n + 1)).log" 2>&1 || rc=$?
	result $rc "no module dkms built binds a carried function to the kernel's own (carry.py --check)" \
		"$OUT/logs/$((n + 1)).log"
fi

run_step "apt remove sbpn-dccp-dkms" "${APT[@]}" remove sbpn-dccp-dkms
check_stock "after removal, dkms has no sbpn-dccp and modprobe finds $STOCK again" ""

run_step "apt install ./$(basename "$DEB") with the headers there: the postinst builds ours" \
	"${APT[@]}" install "/tmp/$(basename "$DEB")"
check_installed "after installation, modprobe finds ours in updates/dkms, built for $ABI"
second=$(srcversions)
printf 'after the kernel upgrade:\n%s\nafter the installation:\n%s\n' "$first" "$second" \
	>"$OUT/logs/$((n + 1)).log"
[ "$first" = "$second" ] && rc=0 || rc=1
result $rc "the same build as after the kernel upgrade (srcversion)" "$OUT/logs/$((n + 1)).log"

run_step "apt remove sbpn-dccp-dkms" "${APT[@]}" remove sbpn-dccp-dkms
check_stock "after removal, dkms has no sbpn-dccp and modprobe finds $STOCK again" ""

echo "1..$n"
say "$((n - failed)) passed, $failed failed; the modules dkms built at the kernel upgrade in $OUT/modules; logs in $OUT/logs"
[ "$failed" -eq 0 ]
