# SPDX-License-Identifier: GPL-2.0
#
# Sourced by the scripts that read the patch series: the order of its
# patches.  The series is sent as three, each with its own cover letter
# (0000-cover-letter.patch) in a directory of patches/:
#
#   fixes/     [PATCH net]: fixes to DCCP as it is in v6.1, each on its own
#   core/      [PATCH net-next], on top of fixes: qpolicy made complete, the
#              expiry, the counters, the tracepoint, the SBPN policies,
#              poll(), notices and sock_diag
#   optional/  on top of core: mechanisms a socket asks for
#
# and applied in that order.  A directory without these (a checkout of an
# older commit, whose patches/ held one series) is one series of its own.
# patches/7.x/ is not part of the series: build-tree.sh applies it after
# the series for the 7.3 target.

SERIES_PARTS=(fixes core optional)

# series_patches [DIR]: the series' patches in DIR (default patches/), one
# path a line, in the order they apply, without the cover letters.
series_patches() {
	local dir=${1:-$ROOT/patches} part p found=
	for part in "${SERIES_PARTS[@]}"; do
		[ -d "$dir/$part" ] || continue
		found=1
		for p in "$dir/$part"/0*.patch; do
			[ -e "$p" ] || continue
			case ${p##*/} in 0000-*) continue ;; esac
			echo "$p"
		done
	done
	[ -z "$found" ] || return 0
	for p in "$dir"/0*.patch; do
		[ -e "$p" ] || continue
		case ${p##*/} in 0000-*) continue ;; esac
		echo "$p"
	done
}
