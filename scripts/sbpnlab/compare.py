# SPDX-License-Identifier: GPL-2.0
"""`sbpn-lab compare A B`: does campaign B repeat campaign A?

Pairs each complete run of campaign B with the run of campaign A that has
the same run id and flow: the same scenario, sweep point and seed, so the
same call over the same link.  Prints B minus A per policy and over all
pairs, mean, 95 % Student-t interval and min/median/max: the on-time
fractions of audio and video, CCID3's median allowed rate, the link's
utilisation, the competing TCP flows' goodput and the sender's lateness,
then the means of both; with --figures DIR, DIR/compare.png shows
every pair on one axis per metric.  Runs that
are not complete in both campaigns are listed and left out (runs never made
in a partial campaign only counted).  This is how one checks that a way of
running (--jobs, another host, another module version) changes nothing
measurable; Documentation/results.rst does it for --jobs.
"""
import math
import os
import sys

from . import campaignrows, report, stats

COLUMNS = (("audio.on_time_frac", 100, "audio on time", "pp"),
           ("video.on_time_frac", 100, "video on time", "pp"),
           ("x_median_kbps", 1, "X median", "kbit/s"),
           ("utilisation", 100, "utilisation", "pp"),
           ("tcp.goodput_kbps", 1, "competing TCP", "kbit/s"),
           ("send_late_p99_ms", 1, "send late p99", "ms"))
# A VP8 call's, where both campaigns have them: what its decoder showed
VP8_COLUMNS = (("vp8.frames_shown_pct", 1, "VP8 frames shown", "pp"),
               ("vp8.ssim_mean", 1, "VP8 SSIM", ""))


def digits(metric):
    """Decimals of a metric in the tables: the report's for a VP8 one
    (SSIM's three), one for the others."""
    return next((d for m, _, _, d in report.VP8_COLUMNS if m == metric), 1)


def columns_of(pairs):
    """COLUMNS, then VP8_COLUMNS if every pair has them."""
    vp8 = all(m in x and m in y for x, y in pairs for m, *_ in VP8_COLUMNS)
    return COLUMNS + (VP8_COLUMNS if pairs and vp8 else ())


def add_arguments(parser):
    parser.add_argument("first", metavar="A", help="the campaign directory compared with")
    parser.add_argument("second", metavar="B", help="the campaign directory whose runs "
                        "are compared with A's of the same run id")
    parser.add_argument("--figures", metavar="DIR",
                        help="also draw DIR/compare.png (and .svg): each metric's value "
                        "in A and in B for every run both made, on one axis")


def load(campaign_dir):
    """({(run id, flow): metric row}, [(run id, why not used)], [newer-format
    messages]) of one campaign."""
    runs, unusable, too_new = campaignrows.scan(campaign_dir,
                                                os.path.join(campaign_dir, "report"))
    rows = {(row["run"], row["flow"]): row
            for row in campaignrows.metrics(runs, campaignrows.JITTER_BUFFER_MS / 1000,
                                             unusable)}
    return rows, unusable, too_new


def pair(a, b):
    """([(A row, B row)], [(run id, why not paired)]) over the run ids and
    flows of either campaign."""
    pairs, unpaired = [], []
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key), b.get(key)
        if x is None or y is None:
            unpaired.append((key[0], f"complete only in {'B' if x is None else 'A'}"))
        elif (x["scenario"], x["label"]) != (y["scenario"], y["label"]):
            # the options, not the names: a campaign run before scenarios
            # named their variants pairs with one run after
            unpaired.append((key[0], f"A is {x['scenario']}/{x['label']}, "
                             f"B is {y['scenario']}/{y['label']}"))
        else:
            pairs.append((x, y))
    return pairs, unpaired


def table(pairs, columns=COLUMNS):
    """Rows of the differences table: one per variant (as B names it), then
    all pairs."""
    groups = {p: [xy for xy in pairs if xy[1]["policy"] == p]
              for p in stats.policies([y for _, y in pairs])}
    if len(groups) > 1:
        groups["all"] = pairs
    out = []
    for label, group in groups.items():
        row = [label, str(len(group))]
        for metric, scale, _, _ in columns:
            s = stats.summary([y.get(metric, math.nan) - x.get(metric, math.nan)
                               for x, y in group])
            row.append(report.cell(s, scale, digits(metric)))
        out.append(row)
    return out


def run(args):
    """Print the comparison; 0 ok, 1 no pair of runs, 2 bad input."""
    for d in (args.first, args.second):
        if not os.path.isdir(d):
            print(f"sbpn-lab compare: {d}: not a directory", file=sys.stderr)
            return 2
    (a, bad_a, new_a), (b, bad_b, new_b) = load(args.first), load(args.second)
    if new_a or new_b:
        for msg in new_a + new_b:
            print(f"sbpn-lab compare: {msg}", file=sys.stderr)
        return 2
    pairs, unpaired = pair(a, b)
    print(f"B minus A, runs with the same id (the same seed and sweep point)\n"
          f"A: {args.first} ({len({k[0] for k in a})} complete runs)\n"
          f"B: {args.second} ({len({k[0] for k in b})} complete runs)")
    not_used = sorted(set(unpaired + [(r, f"A: {why}") for r, why in bad_a] +
                          [(r, f"B: {why}") for r, why in bad_b]))
    for line in report.left_out(not_used, "Not paired", "listed in campaign.json but "
                                "never made (a partial campaign)"):
        print(line)
    if not pairs:
        print("No run is complete in both campaigns.")
        return 1
    columns = columns_of(pairs)
    head = ["policy", "pairs"] + [f"Δ {c[2]} {c[3]}".rstrip() for c in columns]
    print("mean ±95 % CI (Student's t) (min/median/max) of B - A")
    print("\n".join(report.aligned(head, table(pairs, columns))))
    means = []
    for metric, scale, label, unit in columns:
        a_mean, b_mean = (stats.summary([r.get(metric, math.nan) for r in side])["mean"]
                          * scale for side in zip(*pairs))
        unit = "%" if unit == "pp" else f" {unit}"
        means.append(f"{label} {report.fmt(a_mean, digits(metric))} / "
                     f"{report.fmt(b_mean, digits(metric))}{unit}".rstrip())
    print("means of A / B over the pairs: " + ", ".join(means))
    if args.figures:
        from . import plots     # matplotlib: only when a figure is asked for
        paths = plots.draw_compare(args.figures, pairs, columns, args.first, args.second)
        print(f"figure: {paths[0]}")
    return 0
