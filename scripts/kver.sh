# SPDX-License-Identifier: GPL-2.0
#
# Sourced by target.sh and by kernel-inputs.sh, which runs before the
# target has inputs and so cannot source target.sh: the target kernel.
# KVER as given, else the host release's own, the first of
# scripts/host-deps.sh --kvers (6.1 on Debian 12, 6.12 on Debian 13), and
# 6.1 where host-deps.sh does not know the release.  Expects ROOT; sets
# KVER.

if [ -z "${KVER:-}" ]; then
	KVER=$("$ROOT/scripts/host-deps.sh" --kvers 2>/dev/null) || KVER=6.1
	KVER=${KVER%% *}
fi
