#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A campaign split over two "hosts" and merged (Documentation/testbed.rst,
# Shards), end to end on one host: each shard runs `sbpn-lab run
# --shard K/2` in its own VM boot, into its own results directory, as two
# hosts would; `sbpn-lab merge` joins them on the host, and `sbpn-lab
# report` (the .venv, scripts/venv.sh) reads the merged directory.
# test_scenario.py tests the split and the merge's refusals without VMs;
# this checks that real runs from separate boots merge into a campaign the
# analysis reads whole.  Two 4 s runs of SIMPLE over CCID 3, one per
# shard: about 2 min under TCG.
#
# Output is KTAP; exit 0 if every case passed, 1 otherwise.

set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/target.sh
. "$ROOT/scripts/target.sh"
# shellcheck source=selftests/lib/ktap.sh
. "$ROOT/selftests/lib/ktap.sh"
LAB=$ROOT/scripts/sbpn-lab
TMP=$(mktemp -d "$BUILD/shards-test.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

cat >"$TMP/shards.toml" <<'EOF'
[scenario]
name = "shards"
duration_s = 4
warmup_s = 0
repetitions = 2
seed = 1
[link]
rate = "1mbit"
delay_fwd_ms = 10
delay_rev_ms = 10
[[media]]
name = "call"
source = "ekiga"
transport = "dccp"
ccid = 3
tx_qlen = 5
lifetime_ms = 200
policy = "simple"
EOF

ktap_plan 5

for k in 1 2; do
	"$ROOT/scripts/vm-run" --timeout 300 --out "$TMP/host$k" -- \
		"$LAB" run --shard "$k/2" "$TMP/shards.toml" >"$TMP/host$k.log" 2>&1
	rc=$?
	sed 's/^/# /' "$TMP/host$k.log" | tail -n 3
	check "shard $k/2 runs in its own VM boot (got $rc)" \
		sh -c "test $rc -eq 0 && test -f '$TMP/host$k/shards/rep=0$k/meta.json' &&
		       ! test -e '$TMP/host$k/shards/rep=0$((3 - k))'"
done

"$LAB" merge "$TMP/merged" "$TMP/host1/shards" >"$TMP/one.log" 2>&1
sed 's/^/# /' "$TMP/one.log"
check "merging one shard of two names the missing one" grep -q 'shards 2/2 are not among' "$TMP/one.log"

"$LAB" merge "$TMP/merged" "$TMP/host1/shards" "$TMP/host2/shards" >"$TMP/merge.log" 2>&1
rc=$?
sed 's/^/# /' "$TMP/merge.log"
check "the two shards merge into one campaign, every run complete (got $rc)" \
	sh -c "test $rc -eq 0 && grep -q '2 runs listed, 2 complete' '$TMP/merge.log'"

"$ROOT/.venv/bin/python" "$LAB" report "$TMP/merged" >"$TMP/report.log" 2>&1
rc=$?
check "report reads the merged campaign's two runs as one policy's (got $rc)" \
	sh -c "test $rc -eq 0 && awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[\$i] = i; next }
		\$c[\"policy\"] == \"simple\" && \$c[\"metric\"] == \"audio.on_time_frac\" && \$c[\"n\"] == 2 { ok = 1 }
		END { exit !ok }' '$TMP/merged/report/summary.csv'"

ktap_done
