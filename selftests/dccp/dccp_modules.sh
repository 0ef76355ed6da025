#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The DCCP modules loaded are the ones this project built: each of dccp,
# dccp_ipv4, dccp_ipv6 and dccp_diag has /sys/module/<m>/version (Debian's
# have no version) equal to the "version" modinfo field of
# $BUILD/modules/<m>.ko (the target's build directory: build/ for 6.1,
# build/6.12/ for 6.12), and the same srcversion.  Exit 0 pass, 1 fail: modules that are missing or
# do not load are a failure, not a reason to skip.

ROOT=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
MODS=(dccp dccp_ipv4 dccp_ipv6 dccp_diag)
KVER=${KVER:-6.1}
[ "$KVER" = 6.1 ] && BUILD=${BUILD:-$ROOT/build} || BUILD=${BUILD:-$ROOT/build/$KVER}

[ -f "$BUILD/modules/dccp.ko" ] || { echo "# modules not built (make)"; exit 1; }
modprobe -a "${MODS[@]}" || { echo "# cannot load ${MODS[*]}"; exit 1; }

rc=0
for m in "${MODS[@]}"; do
	want_v=$(modinfo -F version "$BUILD/modules/$m.ko")
	want_s=$(modinfo -F srcversion "$BUILD/modules/$m.ko")
	have_v=$(cat "/sys/module/$m/version" 2>/dev/null || echo "(none)")
	have_s=$(cat "/sys/module/$m/srcversion" 2>/dev/null || echo "(none)")
	echo "$m: loaded version $have_v srcversion $have_s; built $want_v $want_s"
	if [ -z "$want_v" ] || [ "$have_v" != "$want_v" ] || [ "$have_s" != "$want_s" ]; then
		echo "$m: not our module"
		rc=1
	fi
done
exit $rc
