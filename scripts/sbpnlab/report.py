# SPDX-License-Identifier: GPL-2.0
"""`sbpn-lab report RESULTS_DIR`: the tables and figures of one campaign.

Reads every run directory of the campaign (never runs anything), lists the
runs it cannot use and why (failed, incomplete, not run, unreadable),
groups the complete runs into comparisons (same scenario and setting: the
sweep point except the variant), and for each prints a table with a row
per variant (named in the scenario's [[variant]] tables, which
campaign.json records; in a campaign run before, its policy and options):
on-time and received fraction of audio and video (mean, 95 % Student-t
interval, min/median/max over runs), the share of time CCID3's allowed
rate X was below the audio rate, the differences to the baseline policy
paired by seed, and audio loss against jitter-buffer size; for a VP8
call, what its viewer saw per variant, the differences of each compared
pair, and a figure of each variant's first run over time.  It opens with
a finding line per comparison that the scenario names ([scenario]
compare or baseline; --baseline and --headline choose others).  The same goes
to summary.txt, summary.md and summary.csv (every metric, long form) and
runs.csv (one row per run and flow) in the output directory, with the
figures of sbpnlab.plots.  Comparisons that differ in one numeric sweep
parameter get a sweep table too: on time per point and policy, and the
paired differences to the baseline per point.  Result files of a newer
format are refused.
Definitions: Documentation/statistics.rst.  Needs the project's venv
(scripts/venv.sh); the runner's command line imports this module only for
`sbpn-lab report`.
"""
import csv
import json
import math
import os
import re
import sys

import numpy as np

from . import decide, plots, stats
from .campaignrows import (JITTER_BUFFER_MS, group, key_title, metrics, read_index, resolve,
                           scan)
from .scenario import parse_rate

NOT_RUN_LISTED = 5
# Runs not used that compare and friendliness name, beyond which they count
LISTED = 5
# A run stalled when X was below the audio rate for this share of its time
STALLED = 0.5
MAIN_COLUMNS = (("audio", "on_time_frac", "audio on time %"),
                ("audio", "received_frac", "audio received %"),
                ("video", "on_time_frac", "video on time %"),
                ("video", "received_frac", "video received %"),
                ("video", "frames_on_time_frac", "video frames on time %"))


def add_arguments(parser):
    parser.add_argument("results_dir", metavar="RESULTS_DIR",
                        help="a campaign directory, results/<campaign>, with one "
                        "sub-directory per run")
    parser.add_argument("--out", metavar="DIR",
                        help="where tables and figures go (default RESULTS_DIR/report)")
    parser.add_argument("--baseline", metavar="VARIANT",
                        help="the variant the others are paired with by seed, and "
                        "whose findings against each other variant open the report "
                        "(default: the scenario's baseline; in a campaign without "
                        "named variants simple); a variant's name, or its policy and "
                        "options as campaigns without names label it (sbpn2+sp+pd)")
    parser.add_argument("--jitter-buffer-ms", type=float, default=JITTER_BUFFER_MS,
                        metavar="MS", help="jitter buffer for the audio loss-period levels "
                        f"(default {JITTER_BUFFER_MS})")
    parser.add_argument("--no-figures", action="store_true",
                        help="tables only (faster)")
    parser.add_argument("--runs", metavar="REGEX",
                        help="also draw the per-run figure (each packet's delay and fate, "
                        "CCID3's X, the queue; for a VP8 call also its rates and "
                        "screen) of every run whose id matches REGEX")
    parser.add_argument("--headline", metavar="VARIANT",
                        help="the one variant whose paired differences to the baseline "
                        "open the report, with whether their intervals allow a "
                        "conclusion (default: the comparisons the scenario names, "
                        "[scenario] compare or baseline; in a campaign without named "
                        "variants sbpn2; none if the campaign has no such runs)")
    parser.add_argument("--reference", metavar="CSV",
                        help="the summary.csv of a reference campaign (for example the "
                        "30-pair one in Documentation/results/): its paired differences "
                        "are shown under each finding, found by the variant's name or "
                        "its policy and options")


def run(args):
    """Make the report; 0 ok, 1 no complete run to report, 2 bad input."""
    if not os.path.isdir(args.results_dir):
        print(f"sbpn-lab report: {args.results_dir}: not a directory", file=sys.stderr)
        return 2
    if args.jitter_buffer_ms < 0:
        print("sbpn-lab report: --jitter-buffer-ms: expected a number >= 0",
              file=sys.stderr)
        return 2
    out = args.out or os.path.join(args.results_dir, "report")
    runs, unusable, too_new = scan(args.results_dir, out)
    if too_new:
        for msg in too_new:
            print(f"sbpn-lab report: {msg}", file=sys.stderr)
        print("sbpn-lab report: refusing to report a campaign with result files of a "
              "newer format", file=sys.stderr)
        return 2
    rows = metrics(runs, args.jitter_buffer_ms / 1000, unusable)
    comparisons = group(rows)
    text, md, long_rows, figures = [], [], [], []
    index = read_index(args.results_dir)
    baseline, pairs = findings(rows, index, args.baseline, args.headline)
    # A campaign run with --decide (while campaign.json still has "decide":
    # resumed with --no-decide it runs every repetition): its sequential
    # decision, computed from these rows as `sbpn-lab decide` does, with
    # the settings it ran with; the runner leaves the last look to it.
    decision = decide.of_campaign(rows, index) if "decide" in index else None
    labels = {r["policy"]: r["label"] for r in rows}
    try:
        reference = {}
        for _, variant in pairs if args.reference else []:
            reference[variant] = read_reference(args.reference, variant)
            if not reference[variant]["_n"] and variant in labels:
                reference[variant] = read_reference(args.reference, labels[variant])
    except (OSError, ValueError) as e:
        print(f"sbpn-lab report: --reference: {e}", file=sys.stderr)
        return 2
    try:
        chosen = re.compile(args.runs) if args.runs else None
    except re.error as e:
        print(f"sbpn-lab report: --runs: not a regular expression: {e}", file=sys.stderr)
        return 2
    for key, crows in comparisons.items():
        for base, variant in pairs:
            lines = headline(crows, base, variant, key_title(key), reference.get(variant),
                             decide.comparison_of(decision, key_title(key), base, variant))
            text += lines + ([""] if lines else [])
            md += lines + ([""] if lines else [])
    # when and why each comparison stopped, and its runs never made for it
    if decision is not None:
        lines = decide.lines(decision)
        text += lines + [""]
        md += lines + [""]
        unusable = [(rid, "not run: its comparison stopped early (decision.json)"
                     if why.startswith("not run") else why) for rid, why in unusable]
    if runs:
        text += [provenance(runs), ""]
        md += [provenance(runs), ""]
    unusable.sort()
    # A partial campaign (sbpn-lab run --only) leaves many runs unmade: one
    # line for them beyond a handful.
    not_used = len(unusable)
    not_run = [u for u in unusable if u[1].startswith("not run")]
    if len(not_run) > NOT_RUN_LISTED:
        unusable = [u for u in unusable if not u[1].startswith("not run")] + [
            (f"{len(not_run)} runs", "not run (listed in campaign.json, no directory; "
             + ("their comparisons stopped early, decision.json" if decision is not None
                else "a partial campaign?") + f"): {not_run[0][0]} ... {not_run[-1][0]}")]
    if unusable:
        text.append(f"Runs not used ({not_used}):")
        md.append(f"## Runs not used ({not_used})\n")
        for run_id, why in unusable:
            text.append(f"  {run_id}: {why}")
            md.append(f"- `{run_id}`: {why}")
        text.append("")
        md.append("")
    if not comparisons:
        # Nothing to report: say why, and leave OUT alone (empty summary
        # files would pass for a report, and replace an earlier one).
        text.append(f"No complete run in {args.results_dir}: nothing written.")
        print("\n".join(text))
        return 1
    os.makedirs(out, exist_ok=True)
    by_dir = {r.dir: r for r in runs}
    vp8_drawn = set()       # (run directory, flow) of the VP8 figures drawn
    for key, crows in comparisons.items():
        t, m, lr = comparison_tables(key, crows, baseline, args.jitter_buffer_ms, pairs)
        text += t
        md += m
        long_rows += lr
        if not args.no_figures:
            figures += plots.draw_comparison(
                out, slug(key), key_title(key), crows,
                [r for r in runs if r.dir in {x["dir"] for x in crows}])
            firsts = first_runs(crows, "vp8.frames_shown_pct")
            drawn = [path for r in firsts
                     for path in plots.draw_vp8_run(out, by_dir[r["dir"]], r["flow"], r)]
            vp8_drawn |= {(r["dir"], r["flow"]) for r in firsts}
            if drawn:
                line = ("The VP8 call over time, the first run of each variant: "
                        + ", ".join(os.path.relpath(d, out) for d in drawn
                                    if d.endswith(".png")))
                text += [line, ""]
                md += [line, ""]
                figures += drawn
    for run in runs if chosen else []:
        if chosen.search(run.meta["run_id"]):
            for flow in run.flows:
                figures += plots.draw_run(out, run, flow)
                row = next((r for r in rows if r["dir"] == run.dir and r["flow"] == flow),
                           None)
                if (row and "vp8.frames_shown_pct" in row
                        and (run.dir, flow) not in vp8_drawn):
                    figures += plots.draw_vp8_run(out, run, flow, row)
    for (scenario, flow, param), points in sweeps(comparisons).items():
        title = f"{scenario} flow {flow}"
        t, m = sweep_table(title, param, points, baseline)
        text += t
        md += m
        if not args.no_figures:
            figures += plots.draw_sweep(out, slug((scenario, (), flow)), title, param, points,
                                        baseline)
    print("\n".join(text))
    write(out, "summary.txt", "\n".join(text) + "\n")
    write(out, "summary.md", "\n".join(md) + "\n")
    write_csv(os.path.join(out, "summary.csv"), long_rows)
    write_csv(os.path.join(out, "runs.csv"), [flat(r) for r in rows])
    if decision is not None:
        write(out, decide.FILE, json.dumps(decision, indent=1) + "\n")
    print(f"\nwritten: {out}/summary.txt, summary.md, summary.csv, runs.csv"
          + (f", {decide.FILE}" if decision is not None else "")
          + (f", {len(figures)} figures in figures/" if figures else ""))
    return 0 if comparisons else 1


# ---- reading the campaign ---------------------------------------------------

def findings(rows, index, baseline=None, headline=None):
    """(the paired tables' baseline, [(baseline, variant)] whose finding
    lines open the report): --headline alone against the baseline;
    --baseline against each other variant; by default the comparisons
    campaign.json records from the scenario ([scenario] compare or
    baseline).  A campaign without named variants: sbpn2 against
    simple, as before scenarios named them."""
    named = index.get("variants") and any(r.get("rank") is not None for r in rows)
    base = resolve(rows, baseline or (index.get("baseline") if named else None) or "simple")
    if headline:
        return base, [(base, resolve(rows, headline))]
    if not named:
        return base, [(base, "sbpn2")]
    if baseline:
        return base, [(base, v["name"]) for v in index["variants"] if v["name"] != base]
    return base, [tuple(p) for p in index.get("compare", [])]


def first_runs(rows, metric):
    """The row of each variant's first run (smallest seed and repetition)
    among the rows that have metric, in the variants' order."""
    return [min((r for r in rows if r["policy"] == p and metric in r), key=lambda r: r["key"])
            for p in stats.policies([r for r in rows if metric in r])]


def _numeric(value):
    """A sweep value as a number: a rate in bit/s, else float(); None if
    it is neither."""
    try:
        return float(parse_rate(value))
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        return None


def sweeps(comparisons):
    """{(scenario, flow, param): [(x, label, rows)] by x} for the comparisons
    of a scenario and flow whose sweep points differ in one numeric
    parameter only (policy aside), when there are at least three points."""
    by = {}
    for (scenario, params, flow), rows in comparisons.items():
        by.setdefault((scenario, flow), []).append((dict(params), rows))
    out = {}
    for (scenario, flow), pts in by.items():
        names = {k for params, _ in pts for k in params}
        varying = [k for k in names if len({params.get(k) for params, _ in pts}) > 1]
        if len(pts) < 3 or len(varying) != 1:
            continue
        param = varying[0]
        xs = [_numeric(params.get(param)) for params, _ in pts]
        if None in xs:
            continue
        out[scenario, flow, param] = sorted(
            ((x, params[param], rows) for x, (params, rows) in zip(xs, pts)),
            key=lambda p: p[0])
    return out


def sweep_table(title, param, points, baseline):
    """(text lines, markdown lines): on-time fractions per sweep point and
    policy, mean ±95 % CI over runs; then, per sweep point, each policy's
    paired differences to the baseline."""
    order = stats.policies([r for _, _, rows in points for r in rows])
    head = [param] + [f"{p} {c[0]}" for p in order for c in stats.CLASSES]
    table = []
    for _, label, rows in points:
        row = [label]
        for p in order:
            for cls in stats.CLASSES:
                s = stats.summary([r[f"{cls}.on_time_frac"] for r in rows
                                   if r["policy"] == p])
                row.append(mean_ci(s))
        table.append(row)
    note = (f"on time % against {param} (a: audio, v: video), mean ±95 % CI over runs")
    text = [f"== {title}: sweep over {param}", note] + aligned(head, table) + [""]
    md = [f"## {title}: sweep over {param}", "", note, ""] + markdown(head, table) + [""]
    others = [p for p in order if p != baseline]
    if baseline not in order or not others:
        return text, md
    head = [param] + [f"{p} {c[0]}" for p in others for c in stats.CLASSES] + ["pairs"]
    table = []
    for _, label, rows in points:
        row, pairs = [label], set()
        for p in others:
            for cls in stats.CLASSES:
                s = stats.paired_policies(rows, baseline, p, f"{cls}.on_time_frac")
                pairs.add(s["n"])
                row.append(mean_ci(s))
        table.append(row + ["/".join(str(n) for n in sorted(pairs))])
    note = (f"differences to {baseline} against {param}, percentage points of on-time "
            "packets, mean ±95 % CI over runs with the same seed")
    text += [note] + aligned(head, table) + [""]
    md += [note, ""] + markdown(head, table) + [""]
    return text, md


def slug(key):
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", key_title(key)).strip("_")


# ---- tables -----------------------------------------------------------------

def cell(s, scale=100, digits=1):
    """'71.2 ±3.1 (66.0/71.5/75.2)': mean ±95 % CI (min/median/max)."""
    if s["n"] == 0:
        return "-"
    spread = "/".join(fmt(s[k] * scale, digits) for k in ("min", "median", "max"))
    return f"{mean_ci(s, scale, digits)} ({spread})"


def mean_ci(s, scale=100, digits=1):
    """'71.2 ±3.1': mean ±95 % CI; the mean alone for one run, "-" for none."""
    if s["n"] == 0:
        return "-"
    ci = "" if math.isnan(s["ci"]) else f" ±{fmt(s['ci'] * scale, digits)}"
    return f"{fmt(s['mean'] * scale, digits)}{ci}"


def fmt(x, digits=1):
    """A number for a table: "-" if there is none, never "-0.0"."""
    if math.isnan(x):
        return "-"
    return f"{x:.{digits}f}" if round(x, digits) != 0 else f"{0:.{digits}f}"


def comparison_tables(key, rows, baseline, buffer_ms, pairs=None):
    """(text lines, markdown lines, long csv rows) of one comparison; pairs:
    the (base, variant) pairs the VP8 call's differences are given for
    (default: each variant against baseline)."""
    by_policy = {p: [r for r in rows if r["policy"] == p] for p in stats.policies(rows)}
    # Every numeric metric any row has (UDP flows have no qpolicy counters).
    metrics = list(dict.fromkeys(k for r in rows for k, v in r.items()
                                 if isinstance(v, (int, float))
                                 and k not in ("seed", "repetition", "rank")))
    summaries = {(p, m): stats.summary([r.get(m, math.nan) for r in rs])
                 for p, rs in by_policy.items() for m in metrics}
    title = key_title(key)
    tables = [main_table(by_policy, summaries),
              paired_table(rows, baseline, summaries),
              jitter_table(by_policy, summaries, buffer_ms),
              ipdv_table(by_policy),
              where_table(by_policy, summaries),
              rate_table(by_policy, summaries),
              quality_table(by_policy, summaries),
              paired_quality_table(rows, baseline, summaries)]
    if any("vp8.frames_shown_pct" in r for r in rows):
        tables += [vp8_table(by_policy, summaries),
                   paired_vp8_table(rows, pairs if pairs is not None else
                                    [(baseline, p) for p in by_policy], baseline,
                                    summaries)]
    if any("short.flows" in r for r in rows):
        tables.append(short_table(by_policy, summaries))
    text, md = [f"== {title}"], [f"## {title}", ""]
    labels = {r["policy"]: r["label"] for r in rows}
    if any(name != label for name, label in labels.items()):
        note = "variants: " + "; ".join(f"{p} = {labels[p]}" for p in by_policy)
        text += [note, ""]
        md += [note, ""]
    for note, head, table in tables:
        text += [note] + (aligned(head, table) if table else []) + [""]
        md += [note, ""] + (markdown(head, table) if table else []) + [""]
    long_rows = [{"comparison": title, "policy": p, "label": labels[p], "metric": m,
                  "n": s["n"],
                  "mean": s["mean"], "ci95": s["ci"], "min": s["min"],
                  "median": s["median"], "max": s["max"]}
                 for (p, m), s in summaries.items()]
    return text, md, long_rows


# The headline's metrics: (metric, scale, unit, what it is)
HEADLINE = (("audio.on_time_frac", 100, "points", "audio on time"),
            ("video.on_time_frac", 100, "points", "video on time"),
            ("video.frames_on_time_frac", 100, "points", "whole video frames on time"),
            ("tcp.goodput_kbps", 1, "kbit/s", "competing TCP goodput"))
# What a viewer and a listener get, after them on the finding line:
# (metric, scale, unit, what it is, decimals).  Not among
# the sequential decision's metrics (sequential.METRICS = HEADLINE): they
# are reported, not decided.  Freezes are there with or without coding
# dependencies (without them a frame lost or late is a gap of its own).
# A VP8 call's (those of "The VP8 call" table) come first: what its
# decoder showed and how the screen looked, the video's verdict where the
# Ekiga call's whole frames cannot say it.
QUALITY_HEADLINE = (("vp8.frames_shown_pct", 1, "points", "VP8 frames shown", 1),
                    ("vp8.ssim_mean", 1, "SSIM", "the VP8 screen", 3),
                    ("vp8.freeze_s_per_min", 1, "s/min", "VP8 freezes", 2),
                    ("video.freeze_s_per_min", 1, "s/min", "video freezes", 2),
                    ("audio.mos", 1, "MOS", "voice quality", 2))


def finding_metrics():
    """The finding line's metrics in order: HEADLINE's, then
    QUALITY_HEADLINE's, as (metric, scale, unit, what, decimals)."""
    return [h + (1,) for h in HEADLINE] + list(QUALITY_HEADLINE)


def verdict(s):
    """Whether a paired difference's 95 % interval allows a conclusion."""
    if s["n"] < 2 or math.isnan(s["ci"]):
        return "no interval from fewer than two pairs"
    if s["mean"] - s["ci"] > 0:
        return "higher (the interval is above 0)"
    if s["mean"] + s["ci"] < 0:
        return "lower (the interval is below 0)"
    return "cannot tell (the interval includes 0)"


def signed(s, scale, decimals=1):
    """'+7.3 ±1.1': a paired mean with its sign and its 95 % interval."""
    ci = "" if math.isnan(s["ci"]) else f" ±{fmt(s['ci'] * scale, decimals)}"
    return f"{s['mean'] * scale:+.{decimals}f}{ci}"


def provenance(runs):
    """One line: the kernels, DCCP module versions and VM the runs used."""
    def values(get):
        return ", ".join(sorted({str(get(r.meta)) for r in runs}))
    return (f"Ran on Linux {values(lambda m: m.get('kernel'))}, our DCCP modules "
            f"{values(lambda m: m.get('dccp_version'))}, VM accelerator "
            f"{values(lambda m: (m.get('vm') or {}).get('accel') or 'not recorded')}"
            f" ({len(runs)} runs).")


def headline(rows, baseline, policy, title, reference=None, decided=None):
    """The report's first lines: policy against baseline, paired by seed,
    for each HEADLINE metric and then each QUALITY_HEADLINE one the runs
    have, and whether each interval allows a conclusion; then the
    reference campaign's numbers, if given.  decided: the comparison's
    sequential decision (decide.comparison_of()), whose verdicts replace
    those of the 95 % intervals for the metrics it decides: after a
    sequential design those intervals are descriptive only."""
    have = {r["policy"] for r in rows}
    if baseline not in have or policy not in have or policy == baseline:
        return []
    found, verdicts, n = [], [], 0
    by_decision = {m["metric"]: m for m in (decided or {}).get("metrics", [])}
    for metric, scale, unit, what, decimals in finding_metrics():
        s = (stats.paired_policies(rows, baseline, policy, metric)
             if all(metric in r for r in rows) else stats.summary([]))
        if s["n"] == 0:
            continue
        n = max(n, s["n"])
        found.append(f"{signed(s, scale, decimals)} {unit} of {what}")
        if metric in by_decision:
            decided_text = decide.verdict_text(by_decision[metric], decided["status"])
            verdicts.append(f"{what}: {decided_text}")
        else:
            verdicts.append(f"{what}: {verdict(s)}")
    if not found:
        return []
    lines = [f"Finding ({title}): {policy} against {baseline}, {n} runs of each paired by "
             f"seed, mean difference ±95 % CI: " + "; ".join(found) + ".",
             "  " + "; ".join(verdicts) + "."]
    if reference is not None:
        ref = [f"{signed(reference[m], scale, decimals)} {unit} of {what}"
               for m, scale, unit, what, decimals in finding_metrics()
               if m in reference and not math.isnan(reference[m]["mean"])]
        lines.append(f"  Reference ({reference['_source']}, {reference['_n']} pairs): "
                     + ("; ".join(ref) if ref else f"no {policy} in it") + ".")
    return lines


def read_reference(path, policy="sbpn2"):
    """A reference campaign's paired differences of policy (a row label:
    a variant's name, or its policy and options), from its summary.csv:
    {metric: summary} plus '_source' and '_n'."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    out = {"_source": os.path.basename(path), "_n": 0}
    for r in rows:
        if (policy in (r.get("policy"), r.get("label")) and
                r.get("metric", "").startswith("paired_")):
            metric = r["metric"].removeprefix("paired_")
            if metric in out:
                continue
            try:
                out[metric] = {k: float(r[v]) for k, v in
                               (("n", "n"), ("mean", "mean"), ("ci", "ci95"))}
            except (KeyError, ValueError):
                raise ValueError(f"{path}: row {r!r} is not a summary") from None
            out["_n"] = max(out["_n"], int(out[metric]["n"]))
    return out


def left_out(items, heading, never_made):
    """Lines for the runs a command could not use, (run id, why) each: one
    line counting those never made (a partial campaign), then the others
    under heading, LISTED of them named.  compare and friendliness print
    these; the report lists every run."""
    never = [u for u in items if "not run" in u[1]]
    rest = [u for u in items if "not run" not in u[1]]
    lines = [f"Left out: {len(never)} {never_made}"] if never else []
    if rest:
        lines.append(f"{heading} ({len(rest)}):")
        lines += [f"  {run_id}: {why}" for run_id, why in rest[:LISTED]]
        if len(rest) > LISTED:
            lines.append(f"  ... and {len(rest) - LISTED} more")
    return lines


def stalled_runs(rows):
    """How many of the runs stalled: X below the audio rate for at least
    half of the time after warm-up (Documentation/statistics.rst); "-"
    where no run has a CCID3 log."""
    known = [r["stall"] for r in rows if math.isfinite(r.get("stall", math.nan))]
    return str(sum(v >= STALLED for v in known)) if known else "-"


def main_table(by_policy, summaries):
    head = (["policy", "runs"] + [c[2] for c in MAIN_COLUMNS]
            + ["X < audio rate %", "stalled runs", "competing TCP kbit/s"])
    table = [[p, str(len(rs))] + [cell(summaries[p, f"{c}.{m}"]) for c, m, _ in MAIN_COLUMNS]
             + [cell(summaries[p, "stall"]), stalled_runs(rs),
                cell(summaries.get((p, "tcp.goodput_kbps"), stats.summary([])), 1)]
             for p, rs in by_policy.items()]
    return ("mean ±95 % CI (Student's t) (min/median/max) over runs; warm-up discarded; "
            "competing TCP: the forward TCP flows' goodput together",
            head, table)


def paired_summary(rows, baseline, policy, metric, summaries):
    """policy - baseline in metric over the runs with the same seed (the
    same media schedule; none when a run lacks the metric), kept in
    summaries as paired_<metric>: the tables that show one pairing
    (paired_table, paired_quality_table) compute it once."""
    key = policy, f"paired_{metric}"
    if key not in summaries:
        summaries[key] = (stats.paired_policies(rows, baseline, policy, metric)
                          if all(metric in r for r in rows) else stats.summary([]))
    return summaries[key]


def paired_table(rows, baseline, summaries):
    """Differences to the baseline of runs with the same seed (the same media
    schedule); the summaries are added to summaries as paired_<metric>."""
    if not any(r["policy"] == baseline for r in rows):
        return f"no run of the baseline policy '{baseline}': no paired differences", [], []
    columns = [(f"{c}.{m}", 100) for c, m, _ in MAIN_COLUMNS[::2]]  # on-time fractions
    head = (["policy", "pairs"] + [f"Δ {label[:-2]} pp" for _, _, label in MAIN_COLUMNS[::2]]
            + ["Δ competing TCP kbit/s"])
    columns.append(("tcp.goodput_kbps", 1))
    table = []
    for p in stats.policies(rows):
        if p == baseline:
            continue
        row = [p, ""]
        for metric, scale in columns:
            s = paired_summary(rows, baseline, p, metric, summaries)
            row[1] = row[1] or str(s["n"])
            row.append(cell(s, scale))
        # the finding's quality metrics: summary.csv only, for a later
        # report's --reference
        for metric, *_ in QUALITY_HEADLINE:
            if any(metric in r for r in rows):
                paired_summary(rows, baseline, p, metric, summaries)
        table.append(row)
    return (f"differences to {baseline} of runs with the same seed, percentage points "
            "(TCP: kbit/s)", head, table)


def jitter_table(by_policy, summaries, buffer_ms):
    head = ["policy"] + [f"{b} ms" for b in stats.JITTER_BUFFERS_MS] + [
        f"levels 0-1 @{buffer_ms:g} ms"]
    table = [[p] + [fmt(summaries[p, f"audio.loss_jb{b}"]["mean"] * 100)
                    for b in stats.JITTER_BUFFERS_MS]
             + [fmt(summaries[p, "audio.acceptable"]["mean"] * 100)] for p in by_policy]
    return ("audio lost or later than min delay + jitter buffer, % (mean over runs); "
            "last column: packets at loss-period level 0 or 1, %", head, table)


def where_table(by_policy, summaries):
    """Where the packets went and how the link was shared (means over runs)."""
    head = ["policy", "refused %", "expired", "evicted", "frame", "notices", "reordered",
            "Jain", "utilisation %"]
    table = []
    for p, rs in by_policy.items():
        scheduled = sum(r[f"{c}.scheduled"] for r in rs for c in stats.CLASSES)
        accepted = sum(r[f"{c}.accepted"] for r in rs for c in stats.CLASSES)
        # A kernel without the counters gives none: "-".
        mean = {m: summaries.get((p, m), {"mean": math.nan})["mean"] for m in
                ("qpolicy_expired", "qpolicy_evicted", "qpolicy_frame", "notices", "reordered",
                 "jain", "utilisation")}
        table.append([p, fmt(100 * (1 - accepted / scheduled)), fmt(mean["qpolicy_expired"]),
                      fmt(mean["qpolicy_evicted"]), fmt(mean["qpolicy_frame"]),
                      fmt(mean["notices"]), fmt(mean["reordered"]),
                      fmt(mean["jain"], 2), fmt(100 * mean["utilisation"])])
    return ("refused: packets sendmsg() did not accept (EAGAIN), after warm-up; expired, "
            "evicted (in the sender's kernel queue), frame (given up with their frame, "
            "DCCP_QPOLICY_F_FRAME) and reordered: packets per run, whole "
            "call; notices: the drop notices the sender read from its error queue, which "
            "must equal expired + evicted + frame (+ CCID errors) unless the queue overflowed; "
            "Jain and utilisation: over the call's window, of every flow crossing the forward "
            "bottleneck (media, forward TCP, each short-flow group)", head, table)


def rate_table(by_policy, summaries):
    """What the flow got through: packets per second of each class, payload
    rate and CCID3's median allowed rate (means over runs)."""
    head = ["policy", "audio pkt/s", "video pkt/s", "total pkt/s", "payload kbit/s",
            "X median kbit/s", "RTT/2 ms", "audio delay p50 ms"]
    table = []
    for p in by_policy:
        mean = {m: summaries[p, m]["mean"] for m in
                ("audio.recv_pps", "video.recv_pps", "recv_kbps", "x_median_kbps",
                 "rtt_median_ms", "audio.delay_p50_ms")}
        table.append([p, fmt(mean["audio.recv_pps"]), fmt(mean["video.recv_pps"]),
                      fmt(mean["audio.recv_pps"] + mean["video.recv_pps"]),
                      fmt(mean["recv_kbps"], 0), fmt(mean["x_median_kbps"], 0),
                      fmt(mean["rtt_median_ms"] / 2), fmt(mean["audio.delay_p50_ms"])])
    return ("received after warm-up, per second, and the median of CCID3's allowed rate "
            "X (means over runs); CCID3 sends a packet every s/X with s the mean packet "
            "size, so a small audio packet uses as much of X as a large video packet.  "
            "RTT/2: half CCID3's median RTT, the one-way delay the SBPN policies judge "
            "expiry by; audio delay p50: the audio's median one-way delay, sendmsg to "
            "arrival", head, table)


def worst(values, digits=0):
    """'95 (80/95/inf)': median (min/median/max) over runs of a metric
    that may be infinite (a frame never rendered; a difference to a run
    that never rendered one), printed "inf" or "-inf", never dropped; NaN
    values (no metric) are left out, "-" when none is left."""
    v = np.sort([x for x in values if not math.isnan(x)])
    if len(v) == 0:
        return "-"

    def f(x):
        return ("inf" if x > 0 else "-inf") if math.isinf(x) else fmt(x, digits)
    return f"{f(float(np.median(v)))} ({f(v[0])}/{f(float(np.median(v)))}/{f(v[-1])})"


# Metrics that are infinite in a run that did not show enough (the 95th
# percentile of a delay whose frames were never rendered, or whose screen
# stayed black): a mean over runs, which would have to drop them, is
# never printed; the median over runs (min/median/max) is, inf included
# (worst()), and so are their paired differences (paired_differences()).
UNBOUNDED = ("video.frame_delay_p95_ms", "vp8.frame_delay_p95_ms")


def quality_table(by_policy, summaries):
    """What a viewer and a listener get (sbpnlab.quality): decodable video
    frames, WebRTC's freezes, the 95th-percentile frame delay, the audio's
    E-model R and MOS."""
    head = ["policy", "decodable frames %", "freezes", "freeze s/min",
            "frame delay p95 ms", "R", "MOS", "R at 0"]
    table = [[p, cell(summaries[p, "video.decodable_frac"]),
              cell(summaries[p, "video.freezes"], 1),
              cell(summaries[p, "video.freeze_s_per_min"], 1),
              worst([r["video.frame_delay_p95_ms"] for r in rs]),
              cell(summaries[p, "audio.r"], 1), fmt(summaries[p, "audio.mos"]["mean"], 2),
              str(sum(r.get("audio.emodel_clamped", 0) == 1 for r in rs))]
             for p, rs in by_policy.items()]
    return ("video frames decodable by their deadline (every piece on time and the "
            "reference chain back to the key frame decodable; without coding dependencies "
            "every frame stands alone), freezes per run and freeze seconds per minute "
            "(WebRTC: a gap between rendered frames >= max(3 x mean, mean + 150 ms)), "
            "95th-percentile frame delay (median (min/median/max) over runs; inf: more than "
            "5 % of frames never rendered); audio R and MOS of the ITU-T G.107 E-model, "
            "G.711 with PLC (Ie 0, Bpl 25.1), one-way delay = minimum + "
            f"{stats.EMODEL_BUFFER_MS} ms jitter buffer, loss after it, R on G.107's 0-100 "
            "scale (R at 0: runs whose loss took the E-model past its range, Ie-eff capped "
            "at 95 or R below 0); mean ±95 % CI "
            "(min/median/max) over runs; Documentation/statistics.rst defines each",
            head, table)


# The quality table's metrics paired to the baseline: (metric, scale,
# column, decimals).
PAIRED_QUALITY = (("video.decodable_frac", 100, "Δ decodable frames pp", 1),
                  ("video.freeze_s_per_min", 1, "Δ freeze s/min", 1),
                  ("audio.mos", 1, "Δ MOS", 2))


def paired_quality_table(rows, baseline, summaries):
    """What a viewer and a listener get, as differences to the baseline of
    runs with the same seed (the quality table's decodable frames, freeze
    seconds per minute and MOS); the summaries are added to summaries as
    paired_<metric>."""
    if not any(r["policy"] == baseline for r in rows):
        return f"no run of the baseline policy '{baseline}': no paired differences", [], []
    pairs = [(baseline, p) for p in stats.policies(rows) if p != baseline]
    head, table = paired_columns(rows, pairs, baseline, summaries, PAIRED_QUALITY)
    return (f"the quality table's decodable frames, freeze seconds per minute and MOS: "
            f"differences to {baseline} of runs with the same seed, mean ±95 % CI "
            "(min/median/max)", head, table)


def paired_differences(rows, baseline, policy, metric):
    """policy - baseline in metric per seed both have, as paired_policies()
    pairs them, infinities kept: a run that showed nothing against one
    that did is +inf; two equal values (inf and inf too) differ by 0; a
    run without the metric leaves its pair out."""
    def by_key(p):
        return {r["key"]: r.get(metric, math.nan) for r in rows if r["policy"] == p}

    base, other = by_key(baseline), by_key(policy)
    diffs = [0.0 if other[k] == base[k] else other[k] - base[k]
             for k in sorted(set(base) & set(other))]
    return [d for d in diffs if not math.isnan(d)]


def paired_columns(rows, pairs, baseline, summaries, columns):
    """(head, table) of paired differences, a row per (base, variant) of
    pairs that both ran, named by the variant ("variant - base" when base
    is not baseline), its pairs, then a cell per (metric, scale, column,
    decimals) of columns: mean ±95 % CI (min/median/max), or for an
    UNBOUNDED metric the median (min/median/max), infinities kept.  The
    pairings with baseline go to summaries as paired_<metric> (once:
    paired_summary()), the others to a table of their own."""
    have = set(stats.policies(rows))
    others = {}
    head = ["policy", "pairs"] + [c for _, _, c, _ in columns]
    table = []
    for base, p in pairs:
        if base not in have or p not in have or p == base:
            continue
        kept = summaries if base == baseline else others.setdefault(base, {})
        row, n = [p if base == baseline else f"{p} - {base}"], 0
        for metric, scale, _, digits in columns:
            if metric in UNBOUNDED:
                d = paired_differences(rows, base, p, metric)
                n = max(n, len(d))
                row.append(worst([x * scale for x in d], digits))
            else:
                s = paired_summary(rows, base, p, metric, kept)
                n = max(n, s["n"])
                row.append(cell(s, scale, digits))
        table.append(row[:1] + [str(n)] + row[1:])
    return head, table


def column_table(by_policy, summaries, columns):
    """(head, table): a row per variant, its runs, then a cell per
    (metric, scale, column, decimals) of columns: mean ±95 % CI
    (min/median/max) over runs, or for an UNBOUNDED metric the median
    (min/median/max), infinities kept (worst())."""
    head = ["policy", "runs"] + [c for _, _, c, _ in columns]
    table = [[p, str(len(rs))]
             + [worst([r.get(m, math.nan) * scale for r in rs], digits) if m in UNBOUNDED
                else cell(summaries.get((p, m), stats.summary([])), scale, digits)
                for m, scale, _, digits in columns]
             for p, rs in by_policy.items()]
    return head, table


# The VP8 call's table (Documentation/statistics.rst, "The VP8 call"):
# (metric, scale, column, decimals).
VP8_COLUMNS = (("vp8.frames_shown_pct", 1, "frames shown %", 1),
               ("vp8.coded_fps", 1, "coded frames/s", 1),
               ("vp8.freeze_s_per_min", 1, "freeze s/min", 1),
               ("vp8.ssim_mean", 1, "SSIM", 3),
               ("vp8.psnr_mean", 1, "PSNR dB", 1),
               ("vp8.frame_delay_p95_ms", 1, "on-screen delay p95 ms", 0),
               ("vp8.key_frames", 1, "key frames", 1),
               ("vp8.target_kbps", 1, "target kbit/s", 0),
               ("vp8.allowed_kbps", 1, "allowed kbit/s", 0))
# How the call followed the link's rate steps, in runs whose link had a
# rate schedule (Documentation/statistics.rst, "Steps of the link's rate").
VP8_STEP_COLUMNS = (("vp8.settle_up_s", 1, "settle up s", 1),
                    ("vp8.settle_down_s", 1, "settle down s", 1),
                    ("vp8.not_settled", 1, "not settled", 1),
                    ("vp8.link_util_pct", 1, "link used %", 1))
# Its paired differences, beside the paired table's audio on time and
# competing TCP goodput (the same pairings, made once).
PAIRED_VP8 = (("vp8.frames_shown_pct", 1, "Δ frames shown pp", 1),
              ("vp8.freeze_s_per_min", 1, "Δ freeze s/min", 1),
              ("vp8.ssim_mean", 1, "Δ SSIM", 3),
              ("vp8.frame_delay_p95_ms", 1, "Δ on-screen delay p95 ms", 0),
              ("audio.on_time_frac", 100, "Δ audio on time pp", 1),
              ("tcp.goodput_kbps", 1, "Δ competing TCP kbit/s", 1))
PAIRED_VP8_STEP = (("vp8.settle_up_s", 1, "Δ settle up s", 1),
                   ("vp8.settle_down_s", 1, "Δ settle down s", 1),
                   ("vp8.not_settled", 1, "Δ not settled", 1),
                   ("vp8.link_util_pct", 1, "Δ link used pp", 1))
STEP_NOTE = ("; over the link's rate steps after warm-up, the mean time (s, to 1 s) the "
             "call's offered rate took to reach 90 % of its new level after a step up and "
             "to fall to 110 % of it after a step down (its level: its mean rate over the "
             "phase's last half), a step not settled counted as its phase's length, and "
             "how many steps did not settle; its received bits over what the link could "
             "carry (\"Steps of the link's rate\")")


def has_steps(rows):
    """Whether any row has the step-response metrics (a VP8 call over a
    link whose rate changed)."""
    return any("vp8.settle_up_s" in r for r in rows)


def vp8_table(by_policy, summaries):
    """The VP8 call as its viewer saw it, per variant; with a rate
    schedule, how it followed the link's steps."""
    steps = has_steps(r for rs in by_policy.values() for r in rs)
    head, table = column_table(by_policy, summaries,
                               VP8_COLUMNS + (VP8_STEP_COLUMNS if steps else ()))
    return ("The VP8 call: frames shown of those coded %, frames coded per second, "
            "freeze seconds per minute (WebRTC's, with the call's leading and trailing "
            "gaps: 60 for a call that showed nothing), mean SSIM and PSNR of the screen's "
            "luma against the camera's at each capture slot, the 95th-percentile age of "
            "the picture on screen (median (min/median/max) over runs; inf: the screen "
            "was black for more than 5 % of the slots), key frames coded, the means of "
            "the encoder's target and of the rate CCID 3 allowed the video (kbit/s)"
            + (STEP_NOTE if steps else "") + "; mean ±95 % CI (min/median/max) over runs; "
            "after warm-up; Documentation/statistics.rst, \"The VP8 call\"", head, table)


def paired_vp8_table(rows, pairs, baseline, summaries):
    """The VP8 call's frames shown, freezes, SSIM and on-screen delay,
    audio on time and competing TCP goodput (with a rate schedule, the
    step metrics too): differences of each pair (base, variant) of pairs,
    paired by seed."""
    steps = has_steps(rows)
    head, table = paired_columns(rows, pairs, baseline, summaries,
                                 PAIRED_VP8 + (PAIRED_VP8_STEP if steps else ()))
    if not table:
        return "the VP8 call: no pair of variants to compare", [], []
    named = "; a row \"a - b\": a against b" if any(" - " in r[0] for r in table) else ""
    return (f"The VP8 call: differences to {baseline} of runs with the same seed{named}, "
            "mean ±95 % CI (min/median/max); on-screen delay: median (min/median/max), "
            "inf where only the variant's screen was black for more than 5 % of the "
            "slots (-inf: only the baseline's), 0 where both were"
            + ("; settling times, steps not settled and link used as in the VP8 table"
               if steps else ""), head, table)


def short_table(by_policy, summaries):
    """The short TCP flows that competed with the call (means over runs),
    all groups together and, when there are several, each group."""
    labels = next((r["short.groups"] for rs in by_policy.values() for r in rs
                   if r.get("short.groups")), {})
    groups = [("all", "short")] + ([(f"{g} {labels[g]}", f"short.g{g}") for g in labels]
                                   if len(labels) > 1 else [])
    head = ["policy", "group", "flows", "completed %", "FCT p50 ms", "FCT p95 ms"]
    table = [[p, name, fmt(summaries[p, f"{k}.flows"]["mean"], 0),
              fmt(100 * summaries[p, f"{k}.completed_frac"]["mean"]),
              fmt(summaries[p, f"{k}.fct_p50_ms"]["mean"], 0),
              fmt(summaries[p, f"{k}.fct_p95_ms"]["mean"], 0)]
             for p in by_policy for name, k in groups if (p, f"{k}.flows") in summaries]
    return ("short TCP flows per run: completed, and the completion time (start to the "
            "server's answer) of those that completed, all groups together, then each "
            "group (index, initial window, size, congestion control); means over runs",
            head, table)


def ipdv_table(by_policy):
    """IPDV pooled over runs, as Jarvinen et al.'s table 1; pairs are formed
    within each run only."""
    head = ["policy", "class"] + [{0: "min", 100: "max"}.get(q, f"{q}%")
                                  for q in stats.PERCENTILES]
    table = []
    for p, rs in by_policy.items():
        for cls in stats.CLASSES:
            v = np.concatenate([r[f"{cls}.ipdv"] for r in rs]) * 1000
            table.append([p, cls] + [fmt(x) for x in stats.percentiles(v, stats.PERCENTILES)])
    return "IPDV, consecutive-packet form (RFC 3393), ms, all runs pooled", head, table


def aligned(head, table):
    widths = [max(len(str(x)) for x in col) for col in zip(head, *table)]
    return ["  ".join(str(x).ljust(w) for x, w in zip(line, widths)).rstrip()
            for line in [head] + table]


def markdown(head, table):
    return ["| " + " | ".join(line) + " |" for line in
            [head, ["---"] * len(head)] + table]


def flat(row):
    """A runs.csv row: the scalar metrics of a run and flow."""
    out = {k: v for k, v in row.items()
           if k != "dir" and isinstance(v, (str, int, float))}
    out.update({f"param.{k}": v for k, v in row["params"].items()})
    return out


def write(out, name, text):
    with open(os.path.join(out, name), "w", encoding="utf-8") as f:
        f.write(text)


def write_csv(path, rows):
    fields = []
    for r in rows:
        fields += [k for k in r if k not in fields]
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
