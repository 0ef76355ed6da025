# SPDX-License-Identifier: GPL-2.0
"""`sbpn-lab friendliness DIR...`: how TCP-friendly CCID 3 is on its own.

The TCP-friendliness benchmark (Documentation/testbed.rst) runs one greedy
DCCP sender against long-lived Reno flows.  This reads its campaigns and
prints one table of the normalised throughput (Documentation/statistics.rst,
Normalised throughput): per run, the DCCP flow's received payload rate
after warm-up over the mean forward TCP flow's goodput, so that 1 is a fair
share; per cell (bottleneck, Reno MSS, flows, RTT) and column (controller
and policy) the mean of those per-run values with its 95 % Student-t
interval.  The same goes to friendliness.csv, and every run's numbers to
friendliness-runs.csv.

The controller is read off the run: size pacing off is unmodified CCID 3;
on, the current size pacing patch ("dccp: ccid3: optionally space packets
by their own size": "new"), or its old version ("v2") when the campaign's
directory name ends in -v2, which is where `make friendliness` puts the
runs over the old modules.  The numbers come from stats.run_metrics(), the
report's own (recv_kbps, tcp.goodput_kbps, tcp.flows): this module divides,
groups and prints, and reads no record file itself.
"""
import math
import os
import sys

from . import campaignrows, report, stats

V2_SUFFIX = "-v2"
# The marker `make friendliness` puts into the old modules' version.
V2_VERSION_MARK = "+v2-"
CONTROLLERS = ("unmodified", "new", "v2", "unmodified, v2 modules")


def add_arguments(parser):
    parser.add_argument("dirs", metavar="DIR", nargs="+",
                        help="campaign directories of the benchmark; those whose name "
                        "ends in -v2 ran over the old size pacing patch's modules")
    parser.add_argument("--out", metavar="DIR",
                        help="where friendliness.csv and friendliness-runs.csv go "
                        "(default: the directory holding the first DIR)")


# ---- one run ----------------------------------------------------------------

def normalised(dccp_kbps, tcp_total_kbps, tcp_flows):
    """The DCCP flow's rate over the mean TCP flow's: 1 is a fair share.
    The TCP flows' total is divided by their number first; a DCCP flow
    that gets what each Reno flow gets scores 1 however many there are."""
    return dccp_kbps / (tcp_total_kbps / tcp_flows)


def controller(campaign, policy_label):
    """(controller, policy) of a run from its campaign's name and its row
    label ("sbpn2+sp"): "+sp" marks the size pacing patch, the campaign's
    -v2 suffix its old version."""
    base, *flags = policy_label.split("+")
    v2 = campaign.endswith(V2_SUFFIX)
    if "sp" in flags:
        flags.remove("sp")
        who = "v2" if v2 else "new"
    else:
        who = "unmodified, v2 modules" if v2 else "unmodified"
    return who, "+".join([base] + flags)


def cell(meta):
    """The benchmark cell of a run, from its resolved scenario config:
    (queue kind, link, Reno MSS, RTT ms); the number of flows is the
    row's tcp.flows."""
    link, groups = meta["config"]["link"], meta["config"]["tcp"]
    if "queue_bytes" in link:
        kind, limit = "bytes", f"{link['queue_bytes']} B"
    else:
        kind, limit = "packets", f"{link['queue_packets']} pkt"
    mss = sorted({str(g.get("mss", "kernel")) for g in groups
                  if g["direction"] == "forward" and g["flows"]})
    rtt = float(link["delay_fwd_ms"]) + float(link["delay_rev_ms"])
    return kind, f"{link['rate']} {limit}", "/".join(mss), rtt


def unfit(row, meta, campaign):
    """Why a run is not a sample of this benchmark, or None.  A run whose
    modules contradict its campaign's name (the old ones' version carries
    V2_VERSION_MARK) would put one controller's number in another's
    column."""
    v2, version = campaign.endswith(V2_SUFFIX), meta.get("dccp_version") or ""
    if (V2_VERSION_MARK in version) != v2:
        return (f"modules {version or '(none recorded)'}, but the campaign's name says "
                f"{'the old' if v2 else 'our'} modules")
    media = meta["config"]["media"]
    if len(media) != 1:
        return f"{len(media)} media flows: the benchmark has one DCCP sender"
    if media[0]["transport"] != "dccp":
        return f"the media flow runs over {media[0]['transport']}, not DCCP"
    if not row.get("tcp.flows"):
        return "no forward TCP flow to normalise by"
    if not row["tcp.goodput_kbps"] > 0:
        return "the TCP flows got nothing: no mean share to normalise by"
    return None


def sample(row, meta, campaign):
    """One run's numbers: its cell, column and normalised throughput."""
    who, policy = controller(campaign, row["policy"])
    kind, link, mss, rtt = cell(meta)
    return {"campaign": campaign, "run": row["run"], "seed": row["seed"],
            "kind": kind, "link": link, "mss": mss, "flows": int(row["tcp.flows"]),
            "rtt_ms": rtt, "controller": who, "policy": policy,
            "version": meta.get("dccp_version"), "kernel": meta.get("kernel"),
            "dccp_kbps": row["recv_kbps"], "tcp_kbps": row["tcp.goodput_kbps"],
            "normalised": normalised(row["recv_kbps"], row["tcp.goodput_kbps"],
                                     row["tcp.flows"])}


# ---- reading campaigns ------------------------------------------------------

def load(campaign_dir):
    """(samples, [(run id, why not used)], [newer-format messages]) of one
    campaign, read as the report reads it (campaignrows.scan and metrics)."""
    campaign = os.path.basename(os.path.normpath(campaign_dir))
    runs, unusable, too_new = campaignrows.scan(campaign_dir,
                                                os.path.join(campaign_dir, "report"))
    meta = {r.dir: r.meta for r in runs}
    samples = []
    for row in campaignrows.metrics(runs, campaignrows.JITTER_BUFFER_MS / 1000, unusable):
        why = unfit(row, meta[row["dir"]], campaign)
        if why:
            unusable.append((row["run"], why))
        else:
            samples.append(sample(row, meta[row["dir"]], campaign))
    return samples, [(f"{campaign}/{r}", why) for r, why in unusable], too_new


# ---- across runs ------------------------------------------------------------

def cell_key(s):
    """Table order: per-packet bottleneck first, full-size segments first
    (RFC 4828's reference TCP), then flows and RTT."""
    mss = [int(m) for m in s["mss"].split("/") if m.isdigit()]
    return ({"packets": 0, "bytes": 1}[s["kind"]], s["link"], -max(mss, default=0),
            s["mss"], s["flows"], s["rtt_ms"])


def column_key(column):
    """Column order: by controller (CONTROLLERS), then policy as the report
    orders them (SIMPLE before SBPN2)."""
    who, policy = column
    base = policy.split("+")[0]
    known = base in stats.POLICY_ORDER
    return (CONTROLLERS.index(who), not known,
            stats.POLICY_ORDER.index(base) if known else 0, policy)


def summarise(samples):
    """{(cell, column): stats.summary of the runs' normalised throughput}:
    the mean of per-run ratios, each run one sample."""
    groups = {}
    for s in samples:
        groups.setdefault((cell_key(s), (s["controller"], s["policy"])), []).append(s)
    return {k: stats.summary([s["normalised"] for s in v]) for k, v in groups.items()}


def table(samples, summaries):
    """(head, rows) of the printed table: a row per cell, a column per
    controller and policy, each "mean ±ci (n)"."""
    cells = {cell_key(s): s for s in samples}
    columns = sorted({k[1] for k in summaries}, key=column_key)
    head = ["bottleneck", "Reno MSS", "flows", "RTT ms"] + [f"{w} {p}" for w, p in columns]
    rows = []
    for key in sorted(cells):
        s = cells[key]
        row = [s["link"], s["mss"], str(s["flows"]), f"{s['rtt_ms']:g}"]
        for col in columns:
            row.append(mean_ci_n(summaries.get((key, col), stats.summary([]))))
        rows.append(row)
    return head, rows


def mean_ci_n(s):
    """'1.23 ±0.08 (10)'; the mean alone for one run, '-' for none."""
    if s["n"] == 0:
        return "-"
    ci = "" if math.isnan(s["ci"]) else f" ±{report.fmt(s['ci'], 2)}"
    return f"{report.fmt(s['mean'], 2)}{ci} ({s['n']})"


def long_rows(samples, summaries):
    """friendliness.csv: one row per cell and column."""
    cells = {cell_key(s): s for s in samples}
    out = []
    for (key, (who, policy)), s in sorted(summaries.items(),
                                          key=lambda kv: (kv[0][0], column_key(kv[0][1]))):
        c = cells[key]
        out.append({"bottleneck": c["kind"], "link": c["link"], "reno_mss": c["mss"],
                    "flows": c["flows"], "rtt_ms": c["rtt_ms"], "controller": who,
                    "policy": policy, "n": s["n"], "mean": s["mean"], "ci95": s["ci"],
                    "min": s["min"], "median": s["median"], "max": s["max"]})
    return out


def provenance(samples):
    """A line per controller: the modules' versions and kernels it ran on."""
    lines = []
    for who in CONTROLLERS:
        mine = [s for s in samples if s["controller"] == who]
        if mine:
            versions = ", ".join(sorted({str(s["version"]) for s in mine}))
            kernels = ", ".join(sorted({str(s["kernel"]) for s in mine}))
            lines.append(f"  {who}: modules {versions} on Linux {kernels} ({len(mine)} runs)")
    return lines


# ---- the command ------------------------------------------------------------

NOTE = ("normalised throughput: the DCCP flow's received payload rate after warm-up "
        "over the mean forward TCP flow's goodput (their total / their number) in "
        "the same window, per run; mean ±95 % CI (Student's t) over runs (n)")


def run(args):
    """Print the table and write the CSVs; 0 ok, 1 no usable run, 2 bad input."""
    for d in args.dirs:
        if not os.path.isdir(d):
            print(f"sbpn-lab friendliness: {d}: not a directory", file=sys.stderr)
            return 2
    samples, unusable, too_new = [], [], []
    for d in args.dirs:
        s, u, t = load(d)
        samples, unusable, too_new = samples + s, unusable + u, too_new + t
    if too_new:
        for msg in too_new:
            print(f"sbpn-lab friendliness: {msg}", file=sys.stderr)
        return 2
    for line in report.left_out(sorted(unusable), "Runs not used",
                                "runs listed in campaign.json but never made"):
        print(line)
    if not samples:
        print("No usable run.")
        return 1
    summaries = summarise(samples)
    head, rows = table(samples, summaries)
    print(NOTE)
    print("\n".join(report.aligned(head, rows)))
    print("\n".join(["Ran with:"] + provenance(samples)))
    out = args.out or os.path.dirname(os.path.abspath(os.path.normpath(args.dirs[0])))
    os.makedirs(out, exist_ok=True)
    report.write_csv(os.path.join(out, "friendliness.csv"), long_rows(samples, summaries))
    report.write_csv(os.path.join(out, "friendliness-runs.csv"),
                     sorted(samples, key=lambda s: (cell_key(s), s["campaign"], s["run"])))
    print(f"\nwritten: {out}/friendliness.csv, friendliness-runs.csv")
    return 0
