#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# In the VM (make dkms-vm boots it with the modules that dkms built in
# scripts/dkms-check.sh's root as the guest's DCCP): those modules work.
#
#   scripts/dkms-vm-check.sh EXPECT PROGRAM
#
# EXPECT is dkms-check.sh's record of them (ABI, SBPN_VERSION,
# SRCVERSION_<module>); PROGRAM is one SBPN selftest.
#
#   1. the guest runs the kernel they were built for
#   2. modprobe loads dccp, dccp_ipv4, dccp_ipv6 and dccp_diag
#   3. each loaded module is dkms's build: its version and srcversion in
#      /sys/module are the ones recorded
#   4. a DCCP connection over loopback, in a network namespace of its own,
#      carries a datagram
#   5. PROGRAM passes (its KTAP nested under "# ")
#
# KTAP; exit 0 if all passed.

set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=selftests/lib/ktap.sh
. "$ROOT/selftests/lib/ktap.sh"
MODULES=(dccp dccp_ipv4 dccp_ipv6 dccp_diag)

[ $# -eq 2 ] || { echo "usage: dkms-vm-check.sh EXPECT PROGRAM" >&2; exit 2; }
expect=$1
prog=$2
[ -f "$expect" ] || { echo "dkms-vm-check: no $expect: run make dkms-install-check" >&2; exit 2; }
[ -x "$prog" ] || { echo "dkms-vm-check: no selftest $prog: run make selftests" >&2; exit 2; }
# shellcheck source=/dev/null
. "$expect"

ktap_plan 5

echo "# running $(uname -r), the modules were built for $ABI"
check "the guest runs the kernel dkms built for" [ "$(uname -r)" = "$ABI" ]

check "modprobe loads ${MODULES[*]}" modprobe -a "${MODULES[@]}"

ours() {
	local m want rc=0
	for m in "${MODULES[@]}"; do
		want=SRCVERSION_$m
		echo "# $m: version $(cat "/sys/module/$m/version" 2>&1)," \
			"srcversion $(cat "/sys/module/$m/srcversion" 2>&1); dkms built ${!want}"
		[ "$(cat "/sys/module/$m/version" 2>/dev/null)" = "$SBPN_VERSION" ] || rc=1
		[ "$(cat "/sys/module/$m/srcversion" 2>/dev/null)" = "${!want}" ] || rc=1
	done
	return $rc
}
check "the loaded modules are the ones dkms built (SBPN $SBPN_VERSION, their srcversions)" ours

# SOCK_DCCP 6, IPPROTO_DCCP 33; the service code is 0 on both ends.
connect() {
	timeout 30 unshare -n sh -c 'ip link set lo up && exec python3 -c "
import socket
lst = socket.socket(socket.AF_INET, 6, 33)
lst.bind((\"127.0.0.1\", 0))
lst.listen(1)
cli = socket.socket(socket.AF_INET, 6, 33)
cli.connect(lst.getsockname())
srv, _ = lst.accept()
cli.send(b\"sbpn-dccp\")
got = srv.recv(64)
print(\"# received\", got)
assert got == b\"sbpn-dccp\"
"'
}
check "a DCCP connection over loopback carries a datagram" connect

selftest() {
	"$prog" 2>&1 | sed 's/^/# /'
	return "${PIPESTATUS[0]}"
}
check "$(basename "$prog") passes" selftest

ktap_done
