#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Check that every package scripts/host-deps.sh installs exists in each
# Debian release it supports (`make host-deps-check`):
#
#   scripts/host-deps-check.sh [RELEASE...]    default: host-deps.sh --releases
#
# For each release it fetches that release's package lists (main, with its
# -updates and -security suites) into .cache/apt/<release>/ with apt-get
# update, with a sources file, lists and cache of its own: the host's apt
# setup is left alone and no root is needed.  The mirror is the one the
# host's /etc/apt/sources.list(.d) uses for its own release (MIRROR= and
# SECURITY_MIRROR= override it).  Then it looks up each package of
# `host-deps.sh --list <release>`: a package that is not there, or only a
# virtual one, fails the check, named with its release; so does a
# libclang-rt-N-dev whose N is not the release's default clang's.
# Needs the archive, as host-deps.sh does.

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
HOST_DEPS=$ROOT/scripts/host-deps.sh
CACHE=${CACHE:-$ROOT/.cache/apt}

say() { echo "host-deps-check: $*" >&2; }
die() { say "error: $*"; exit 1; }

# The host's deb sources, one "URI SUITE SIGNED-BY" a line (SIGNED-BY "-"
# when not given), from both formats: one-line .list and deb822 .sources.
host_sources() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk '$1 == "deb" {
			sb = "-"; i = 2
			if ($2 ~ /^\[/) {
				for (; i <= NF; i++) {
					if ($i ~ /^\[?signed-by=/) { sb = $i; sub(/^\[?signed-by=/, "", sb); sub(/\]$/, "", sb) }
					if ($i ~ /\]$/) { i++; break }
				}
			}
			print $i, $(i + 1), sb
		}' "$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk 'function flush(  u, s, nu, ns, i, j) {
			if (types ~ /(^| )deb( |$)/ && enabled != "no") {
				nu = split(uris, u, " "); ns = split(suites, s, " ")
				for (i = 1; i <= nu; i++)
					for (j = 1; j <= ns; j++)
						print u[i], s[j], (signedby == "" ? "-" : signedby)
			}
			types = uris = suites = signedby = enabled = ""
		}
		/^#/ { next }
		/^[ \t]*$/ { flush(); next }
		{ key = tolower($1); val = $0; sub(/^[^:]*:[ \t]*/, "", val) }
		key == "types:" { types = val }
		key == "uris:" { uris = val }
		key == "suites:" { suites = val }
		key == "signed-by:" { signedby = val }
		key == "enabled:" { enabled = tolower(val) }
		END { flush() }' "$f"
	done
}

# The mirrors of the host's own release (e.g. bookworm and bookworm-security).
host_rel=$("$HOST_DEPS" --release 2>/dev/null || true)
sources=$(host_sources)
pick() { # suite -> "URI SIGNED-BY" of the first host source for it
	[ -n "$1" ] || return 0
	echo "$sources" | awk -v s="$1" '$2 == s { print $1, $3; exit }'
}
read -r main_uri main_sb <<<"$(pick "$host_rel")" || true
read -r sec_uri sec_sb <<<"$(pick "$host_rel-security")" || true
MIRROR=${MIRROR:-${main_uri:-http://deb.debian.org/debian}}
SECURITY_MIRROR=${SECURITY_MIRROR:-${sec_uri:-http://deb.debian.org/debian-security}}
[ -n "${main_uri:-}" ] ||
	say "no source for the host release ${host_rel:-(unknown)} in /etc/apt: using $MIRROR"
# A keyring file the host names for its archive, else apt's trusted keys.
keyring() {
	case $1 in /*) [ -f "$1" ] && echo "signed-by=$1 " ;; esac
}

apt_release() { # release, apt command and arguments: run it on release's lists
	local rel=$1 dir=$CACHE/$1
	shift
	"$@" -o Dir::Etc::sourcelist="$dir/sources.list" \
		-o Dir::Etc::sourceparts=/dev/null \
		-o Dir::State::Lists="$dir/lists" \
		-o Dir::Cache="$dir/cache" \
		-o Dir::State::status=/dev/null \
		-o Acquire::Languages=none
}

update() { # release -> its lists fetched into $CACHE/<release>
	local rel=$1 dir=$CACHE/$1 log
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
	{
		echo "deb [$(keyring "${main_sb:-}")target=Packages] $MIRROR $rel main"
		echo "deb [$(keyring "${main_sb:-}")target=Packages] $MIRROR $rel-updates main"
		echo "deb [$(keyring "${sec_sb:-}")target=Packages] $SECURITY_MIRROR $rel-security main"
	} >"$dir/sources.list"
	log=$dir/update.log
	if ! apt_release "$rel" apt-get update >"$log" 2>&1 || grep -q '^E:' "$log"; then
		cat "$log" >&2
		die "$rel: apt-get update from $MIRROR failed (log: $log)"
	fi
	grep '^W:' "$log" >&2 || true
}

check() { # release -> 0 if all its packages are real packages there
	local rel=$1 pkgs p v clang_major rt
	local -a missing=()
	mapfile -t pkgs < <("$HOST_DEPS" --list "$rel")
	[ ${#pkgs[@]} -gt 0 ] || die "host-deps.sh --list $rel printed nothing"
	# "NAME VERSION" for each package with a candidate ("(none)" if virtual)
	declare -A cand=()
	while read -r p v; do
		cand[$p]=$v
	done < <(apt_release "$rel" apt-cache policy "${pkgs[@]}" 2>/dev/null |
		awk '/^[^ ].*:$/ { p = substr($0, 1, length($0) - 1) }
		     /^  Candidate:/ { print p, $2 }')
	for p in "${pkgs[@]}"; do
		case ${cand[$p]:-(none)} in
		"(none)") missing+=("$p") ;;
		esac
	done
	[ ${#missing[@]} -eq 0 ] || say "$rel: not in the archive: ${missing[*]}"
	# libFuzzer's runtime must be the default clang's: clang depends on clang-N.
	rt=$(printf '%s\n' "${pkgs[@]}" | grep -m1 '^libclang-rt-.*-dev$' || true)
	clang_major=$(apt_release "$rel" apt-cache depends clang 2>/dev/null |
		sed -n 's/^ *Depends: clang-\([0-9]*\)$/\1/p' | head -n1)
	if [ -n "$rt" ] && [ -n "$clang_major" ] && [ "$rt" != "libclang-rt-$clang_major-dev" ]; then
		say "$rel: $rt is not the runtime of its clang (clang-$clang_major): libclang-rt-$clang_major-dev is"
		return 1
	fi
	[ ${#missing[@]} -eq 0 ] || return 1
	say "$rel: all ${#pkgs[@]} packages found (clang ${cand[clang]:-?}${rt:+, $rt ${cand[$rt]:-?}})"
}

if [ $# -gt 0 ]; then
	releases=("$@")
else
	mapfile -t releases < <("$HOST_DEPS" --releases)
fi

say "mirrors $MIRROR and $SECURITY_MIRROR, lists in $CACHE"
bad=()
for rel in "${releases[@]}"; do
	update "$rel"
	check "$rel" || bad+=("$rel")
done
[ ${#bad[@]} -eq 0 ] || die "host-deps.sh names packages that are not in: ${bad[*]}"
say "every package of host-deps.sh exists in ${releases[*]}"
