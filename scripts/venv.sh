#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Create .venv (the analysis' Python environment) and install the pinned
# packages of scripts/requirements.txt into it.  Idempotent: when .venv was
# built from the current requirements.txt it does nothing, so every test
# script may call it first.  Usage: scripts/venv.sh   (then .venv/bin/python)

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV=$ROOT/.venv
REQ=$ROOT/scripts/requirements.txt
# A copy of the requirements the venv was built from: a changed pin rebuilds.
STAMP=$VENV/.requirements.txt

if [ -x "$VENV/bin/python" ] && cmp -s "$REQ" "$STAMP"; then
	exit 0
fi
python3 -m venv "$VENV" || {
	echo "venv.sh: python3 -m venv failed (Debian: apt-get install python3-venv)" >&2
	exit 1
}
"$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$REQ"
# --no-deps installs exactly the pins; check then says if one is missing.
"$VENV/bin/pip" check --disable-pip-version-check >/dev/null || {
	"$VENV/bin/pip" check --disable-pip-version-check >&2
	echo "venv.sh: $REQ does not pin every dependency" >&2
	exit 1
}
cp "$REQ" "$STAMP"
echo "venv.sh: $VENV ready with the pins of scripts/requirements.txt"
