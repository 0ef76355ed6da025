# SPDX-License-Identifier: GPL-2.0
"""The table that opens Documentation/results.rst, made from the committed
summaries (Documentation/results/*-summary.csv, written by sbpn-lab report).

One row per setting and variant: the variant's difference from the
baseline paired by seed, mean ±95 % interval, in audio on time, whole
video frames on time and the competing TCP flows' goodput, the pairs,
and the campaign the summary comes from.  SOURCES names the summaries,
oldest first; where two have the same setting and variant the newer one
is shown.  Today they are the v13 campaigns, the newest result of every
setting and variant they cover: the campaigns before them measured the
"+sp" variants with the size pacing patch's earlier rules, and every
policy without "dccp: tfrc: count the open loss interval after the first
loss event", so their numbers are not the current code's (results.rst
keeps them, each in its section).

    sbpn-lab results-table            print the block
    sbpn-lab results-table --write    put it in results.rst, between BEGIN and END
    sbpn-lab results-table --check    exit 1 if results.rst's block differs

scripts/tests/test_results_table.py fails when the committed table is not
what this makes of the committed summaries.  Standard library only.
"""
import csv
import math
import os
import sys
import textwrap

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
RESULTS_RST = os.path.join(ROOT, "Documentation", "results.rst")
SUMMARIES = os.path.join(ROOT, "Documentation", "results")

BEGIN = (".. The table below is generated: scripts/sbpn-lab results-table --write\n"
         "   makes it from Documentation/results/*-summary.csv (named in\n"
         "   scripts/sbpnlab/resultstable.py).  Edit that, not the table.")
END = ".. End of the generated table."

# The settings in the order of the table, each with its label.
SETTINGS = [
    "1 Mbit/s, 80 ms (main)",
    "1 Mbit/s, 80 ms, qlen 32",
    "1 Mbit/s, 30 ms",
    "1 Mbit/s, 150 ms",
    "0.75 Mbit/s, 80 ms",
    "0.5 Mbit/s, 80 ms",
    "10 Mbit/s, 80 ms, 2 % loss",
    "1 Mbit/s, 30 ms, 12,500 B queue",
    "1 Mbit/s, 80 ms, 12,500 B queue",
    "1 Mbit/s, 150 ms, 12,500 B queue",
]

# (summary file, campaign, {comparison of the summary: setting}), oldest
# first: the commits that added them (results.rst's v13 sections).
SOURCES = [
    ("rfc-rtt80-q5-summary.csv", "v13-rfc-tcp-rtt80-q5",
     {"frame-tcp-rtt80-q5 flow call": "1 Mbit/s, 80 ms (main)"}),
    ("rfc-bytes-tcp-rtt-summary.csv", "v13-rfc-bytes-tcp-rtt",
     {"bytes-tcp-rtt rtt_ms=30 flow call": "1 Mbit/s, 30 ms, 12,500 B queue",
      "bytes-tcp-rtt rtt_ms=80 flow call": "1 Mbit/s, 80 ms, 12,500 B queue",
      "bytes-tcp-rtt rtt_ms=150 flow call": "1 Mbit/s, 150 ms, 12,500 B queue"}),
    ("rfc-tcp-rtt-summary.csv", "v13-rfc-tcp-rtt",
     {"frame-tcp-rtt rtt_ms=30 flow call": "1 Mbit/s, 30 ms",
      "frame-tcp-rtt rtt_ms=150 flow call": "1 Mbit/s, 150 ms"}),
    ("rfc-rate-summary.csv", "v13-rfc-rate",
     {"frame-rate rate=750kbit flow call": "0.75 Mbit/s, 80 ms",
      "frame-rate rate=500kbit flow call": "0.5 Mbit/s, 80 ms"}),
    ("rfc-tcp-rtt80-q32-summary.csv", "v13-rfc-tcp-rtt80-q32",
     {"frame-tcp-rtt80-q32 flow call": "1 Mbit/s, 80 ms, qlen 32"}),
    ("rfc-loss-summary.csv", "v13-rfc-loss",
     {"frame-loss flow call": "10 Mbit/s, 80 ms, 2 % loss"}),
]

# Under the table; keep it true of SOURCES.
LEGEND = (
    "Each variant against {baseline} (unmodified DCCP): the difference paired by seed, "
    "mean ±95 % interval, of 60 s runs; the newest result of each setting and variant, "
    "all from the v13 campaigns (size pacing as RFC 5348 allows it, and the open loss "
    "interval counted after the first loss event; every earlier campaign, in the "
    "sections below, measured the \"+sp\" variants with the earlier rules).  Audio "
    "packets and whole video frames on time in percentage points, the two Reno flows' "
    "goodput summed in kbit/s (``-``: none competes).  sbpn2+sp+pd+owd+fw, the best "
    "variant, is SBPN2 with size pacing, the predicted departure, the one-way delay "
    "RTT - min RTT/2 and frames given up whole.  The "
    "sender's DCCP queue holds 5 packets unless qlen 32, the bottleneck's 20 unless "
    "12,500 B (100 under 2 % loss).  The summaries, in ``Documentation/results/``: "
    "{summaries}.")

# (heading, its second line, summary metric, scale): the paired
# differences shown.
COLUMNS = [
    ("audio", "on time, Δ pp", "paired_audio.on_time_frac", 100),
    ("whole frames", "on time, Δ pp", "paired_video.frames_on_time_frac", 100),
    ("competing TCP", "Δ kbit/s", "paired_tcp.goodput_kbps", 1),
]
PAIRS_FROM = "paired_audio.on_time_frac"    # the pairs column: this metric's n


def add_arguments(p):
    p.description = __doc__.split("\n\n")[0]
    g = p.add_mutually_exclusive_group()
    g.add_argument("--write", action="store_true",
                   help="replace the generated block in results.rst")
    g.add_argument("--check", action="store_true",
                   help="exit 1 if results.rst's block is not what the summaries make")
    p.add_argument("--rst", default=RESULTS_RST,
                   help="the page (default: this tree's Documentation/results.rst)")
    p.add_argument("--summaries", default=SUMMARIES,
                   help="directory of the summaries (default: this tree's "
                   "Documentation/results)")


def run(args):
    try:
        block = generate(args.summaries)
    except (OSError, ValueError) as e:
        print(f"sbpn-lab results-table: {e}", file=sys.stderr)
        return 1
    if not (args.write or args.check):
        print(block, end="")
        return 0
    with open(args.rst, encoding="utf-8") as f:
        text = f.read()
    try:
        old = committed(text)
    except ValueError as e:
        print(f"sbpn-lab results-table: {args.rst}: {e}", file=sys.stderr)
        return 1
    if args.check:
        if old == block:
            print(f"{args.rst}: the table is what the summaries make")
            return 0
        print(f"{args.rst}: the table differs from what the summaries make; "
              f"run scripts/sbpn-lab results-table --write", file=sys.stderr)
        return 1
    with open(args.rst, "w", encoding="utf-8") as f:
        f.write(text.replace(old, block, 1))
    print(f"{args.rst}: table {'unchanged' if old == block else 'written'}")
    return 0


def committed(text):
    """The generated block of results.rst's text, from BEGIN's first line
    (the marker: the rest of BEGIN may change) to END and the newline after
    it; ValueError unless there is exactly one."""
    mark = BEGIN.split("\n")[0]
    if text.count(mark) != 1 or text.count(END) != 1:
        raise ValueError(f"expected one generated table between the markers "
                         f"{mark!r} and {END!r}")
    start, stop = text.index(mark), text.index(END) + len(END) + 1
    if stop <= start:
        raise ValueError("the end marker comes before the start")
    return text[start:stop]


def read_summary(path):
    """{(comparison, variant, metric): row} of a summary.csv, the variant
    as its policy and options ("sbpn2+sp+pd+owd+fw"): the label column of
    a campaign whose scenario names its variants ("best"), else the policy
    column, so that one variant is one row whichever campaign measured it."""
    with open(path, encoding="utf-8", newline="") as f:
        return {(r["comparison"], r.get("label") or r["policy"], r["metric"]): r
                for r in csv.DictReader(f)}


def cell(row, scale):
    """'+8.9 ±1.5': a paired difference as report.py writes it (signed()),
    the mean alone for one pair, '-' for none."""
    n, mean, ci = int(row["n"]), float(row["mean"]) * scale, float(row["ci95"]) * scale
    if n == 0 or math.isnan(mean):
        return "-"
    if math.isnan(ci):
        return f"{mean:+.1f}"
    return f"{mean:+.1f} ±{ci:.1f}" if round(ci, 1) != 0 else f"{mean:+.1f} ±0.0"


def rows(summaries=SUMMARIES):
    """The table's rows, in SETTINGS order: dicts of setting, variant,
    baseline, campaign, summary, pairs and each COLUMNS metric's cell."""
    newest = {}
    for name, campaign, settings in SOURCES:
        data = read_summary(os.path.join(summaries, name))
        comparisons = list(dict.fromkeys(c for c, _, _ in data))
        unknown = [c for c in comparisons if c not in settings]
        missing = [c for c in settings if c not in comparisons]
        if unknown or missing:
            raise ValueError(f"{name}: comparisons {unknown} have no setting in "
                             f"resultstable.SOURCES, {missing} are not in the summary")
        for comparison in comparisons:
            policies = list(dict.fromkeys(p for c, p, _ in data if c == comparison))
            paired = [p for p in policies if (comparison, p, PAIRS_FROM) in data]
            baseline = [p for p in policies if p not in paired]
            if len(baseline) != 1:
                raise ValueError(f"{name}: {comparison}: expected one baseline (a policy "
                                 f"without paired rows), found {baseline}")
            setting = settings[comparison]
            if setting not in SETTINGS:
                raise ValueError(f"{name}: setting {setting!r} is not in SETTINGS")
            for policy in paired:
                row = {"setting": setting, "variant": policy, "baseline": baseline[0],
                       "campaign": campaign, "summary": name,
                       "pairs": data[comparison, policy, PAIRS_FROM]["n"]}
                for _, _, metric, scale in COLUMNS:
                    if (comparison, policy, metric) not in data:
                        raise ValueError(f"{name}: {comparison}: {policy} has no {metric}")
                    row[metric] = cell(data[comparison, policy, metric], scale)
                newest[setting, policy] = row       # a later source replaces an earlier
    order = {s: i for i, s in enumerate(SETTINGS)}
    variants = list(dict.fromkeys(p for _, p in newest))
    return sorted(newest.values(), key=lambda r: (order[r["setting"]],
                                                  variants.index(r["variant"])))


def simple_table(headings, body):
    """An RST simple table: headings (one row per line, columns aligned),
    then the body rows; every cell of the first column must be filled."""
    width = [max(len(str(r[i])) for r in headings + body) for i in range(len(headings[0]))]
    rule = "  ".join("=" * w for w in width)

    def line(r):
        return "  ".join(str(c).ljust(w) for c, w in zip(r, width)).rstrip()
    return [rule] + [line(r) for r in headings] + [rule] + [line(r) for r in body] + [rule]


def generate(summaries=SUMMARIES):
    """The generated block: BEGIN, the table and its legend, END."""
    rs = rows(summaries)
    baselines = sorted({r["baseline"] for r in rs})
    if len(baselines) != 1:
        raise ValueError(f"the summaries pair with different baselines: {baselines}")
    headings = [["setting", "variant"] + [h for h, _, _, _ in COLUMNS] + ["pairs", "campaign"],
                ["", ""] + [h2 for _, h2, _, _ in COLUMNS] + ["", ""]]
    body = [[r["setting"], r["variant"]] + [r[m] for _, _, m, _ in COLUMNS]
            + [r["pairs"], r["campaign"]] for r in rs]
    table = simple_table(headings, body)
    legend = LEGEND.format(baseline=baselines[0].upper(), summaries=", ".join(
        f"``{s}`` ({c})" for c, s in dict.fromkeys((r["campaign"], r["summary"]) for r in rs)))
    legend = textwrap.wrap(legend, 76, break_on_hyphens=False)
    return "\n".join([BEGIN, "", ".. table:: The newest result per setting and variant", ""]
                     + ["   " + x for x in table] + ["", *legend, "", END, ""])
