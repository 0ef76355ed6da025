# SPDX-License-Identifier: GPL-2.0
"""`sbpn-lab decide-sim`: the sequential decision (sbpnlab.sequential) by
simulation: how often it says something wrong, and how many runs it saves.

Two parts (Documentation/statistics.rst, Sequential decisions):

synthetic  campaigns of one sweep point, a baseline and two variants (two
           comparisons x the four metrics, the family of the main
           setting), paired differences drawn with known means and the
           standard deviations of our 30-pair main-setting campaign:
           no effect, effects at +-margin, inside it, large; normal,
           skewed and heavy-tailed; and the same loop with a fixed-sample
           interval at each look, the rule it must not be, and (for the
           skewed and heavy-tailed shapes) with the confidence sequence
           without its skewness correction.
resample   each 30-pair campaign given (its report/runs.csv, else its runs):
           whole repetitions drawn with replacement, so every comparison
           of the campaign keeps its pairs and their correlation, each
           comparison's 30-pair mean taken as the truth; as measured,
           centred to no effect, and shifted to exactly +margin.  A
           decided campaign is drawn from the repetitions all its
           comparisons made (its first round's, at least min_pairs).
design     one scenario's own decision (--scenario: its [decide] table,
           variants and repetitions, as `make demo` runs demo.toml) on
           repetitions resampled in the same way from one campaign of the
           same setting and run length (--campaign): how often each
           decided metric of each comparison reaches a verdict by the
           maximum, which, how often wrongly, and the rounds, runs and
           waves of --jobs runs at once that it took.

For each: the share of campaigns with any wrong verdict (a sign where the
truth is 0 or the other sign, "equivalent" where |truth| >= margin), the
share of comparisons that stopped with every verdict, and the runs made
against the runs of the full campaign.  Reads result files only.
"""
import csv
import glob
import json
import math
import os
import sys

import numpy as np

from . import campaignrows, report, sequential, stats
from .decide import series_of
from .scenario import ScenarioError, flow_label, load, setting_of
from .stats import t_quantile

# The standard deviations of the paired differences of our main setting's
# 30-pair campaign (results/v13-rfc-tcp-rtt80-q5, sbpn2+sp+pd+owd+fw -
# simple), in each metric's unit, and its mean differences.
MAIN_SD = {"audio.on_time_frac": 3.9, "video.on_time_frac": 10.6,
           "video.frames_on_time_frac": 10.2, "tcp.goodput_kbps": 28.1}
MAIN_MEAN = {"audio.on_time_frac": 8.9, "video.on_time_frac": -4.9,
             "video.frames_on_time_frac": 2.3, "tcp.goodput_kbps": 12.6}
DEFAULT_CAMPAIGNS = ("results/v13-rfc-*", "results/v12-*")


def add_arguments(parser):
    parser.add_argument("--sims", type=int, default=2000, metavar="N",
                        help="simulated campaigns per case (default 2000)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--part", choices=("synthetic", "resample", "all", "design"),
                        default="all", help="all: synthetic and resample; design: "
                        "--scenario's decision on --campaign's repetitions")
    parser.add_argument("--campaign", action="append", metavar="DIR",
                        help="a campaign to resample, of 30 pairs or decided (repeatable; "
                        f"default: those of {', '.join(DEFAULT_CAMPAIGNS)}); with --part "
                        "design, the one campaign whose repetitions are drawn")
    parser.add_argument("--scenario", metavar="FILE",
                        help="--part design: the scenario whose decision is simulated; "
                        "the other parts: the scenario whose [decide] settings (looks, "
                        "metrics, margins) they simulate (default: the defaults)")
    parser.add_argument("--comparisons", type=int, default=2, metavar="N",
                        help="synthetic: comparisons per campaign (default 2, the main "
                        "setting's; the paper's rate sweep has 24)")
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="--part design: runs at once, to count waves (default 1)")
    parser.add_argument("--out", metavar="CSV", help="also write the table as CSV")


def naive_interval(values, alpha):
    """The rule a sequential design must not be: the fixed-sample Student-t
    interval, as if each look were the only one."""
    n, mean, sd = sequential.mean_sd(values)
    if n < 2:
        return n, mean, -math.inf, math.inf
    w = t_quantile(1 - alpha / 2, n - 1) * sd / math.sqrt(n)
    return n, mean, mean - w, mean + w


def simulate_campaign(points, truths, margins, conf, maximum, interval):
    """One simulated campaign.  points: [[series of each comparison at the
    point]], series = {metric: [(rep, diff)]}; truths, margins: per
    comparison (in the same order, flattened), {metric: value}.  Returns
    (any wrong verdict, [wrong per comparison], [decided per comparison],
    runs made, runs of the full campaign)."""
    cutoffs = sequential.looks(conf["min_pairs"], conf["step"], maximum)
    family = sum(len(s) for pt in points for s in pt)
    alpha = conf["alpha"] / family
    wrong, decided, runs, full, i = [], [], 0, 0, 0
    for pt in points:
        stops = []
        for series in pt:
            res = sequential.evaluate(series, cutoffs, margins[i], alpha, maximum, interval)
            wrong.append(any(sequential.wrong(st["verdict"], truths[i][m], margins[i][m])
                             for m, st in res["metrics"].items()))
            decided.append(res["status"] == "decided")
            stops.append(res["repetition"])
            i += 1
        # the variants' runs, and the baseline's as long as one needs it
        runs += sum(stops) + max(stops)
        full += (len(pt) + 1) * maximum
    return any(wrong), wrong, decided, runs, full


def synthetic_cases(conf=None, comparisons=2):
    """(name, means per comparison, noise) of the synthetic part: the
    metrics conf decides, in each of comparisons comparisons."""
    conf = conf or sequential.settings()
    margin = {m[0]: float(conf["margins"][m[1]]) for m in sequential.METRICS
              if m[1] in conf["metrics"]}
    zero = {m: 0.0 for m in margin}
    k = comparisons
    main = {m: v for m, v in MAIN_MEAN.items() if m in margin}
    return [("no effect, normal", [zero] * k, "normal"),
            ("no effect, skewed as our worst (skewness 1.75)", [zero] * k, "lognormal"),
            ("no effect, skewed more (skewness 3.7)", [zero] * k, "lognormal-3.7"),
            ("no effect, heavy tails (t, 3 df)", [zero] * k, "t3"),
            ("every effect at +margin", [margin] * k, "normal"),
            ("every effect at -margin", [{m: -v for m, v in margin.items()}] * k, "normal"),
            ("every effect at margin/2", [{m: v / 2 for m, v in margin.items()}] * k,
             "normal"),
            ("the main setting's estimates", [main] * k, "normal"),
            ("every effect at 3 margins", [{m: 3 * v for m, v in margin.items()}] * k,
             "normal")]


def noise(rng, kind, size):
    """Unit-variance, zero-mean draws."""
    if kind == "normal":
        return rng.standard_normal(size)
    if kind.startswith("lognormal"):
        # sigma 0.5: skewness 1.75, the most of our campaigns' differences
        # (1.7); sigma 0.8: skewness 3.7
        s = 0.8 if kind.endswith("3.7") else 0.5
        x = rng.lognormal(0, s, size)
        return (x - math.exp(s * s / 2)) / math.sqrt((math.exp(s * s) - 1) * math.exp(s * s))
    x = rng.standard_t(3, size)
    return x / math.sqrt(3.0)


def synthetic(conf, sims, rng, interval=sequential.confidence_sequence, cases=None,
              comparisons=2):
    """Rows of the synthetic part."""
    maximum = 30
    margins = {m[0]: float(conf["margins"][m[1]]) for m in sequential.METRICS}
    out = []
    for name, means, kind in cases or synthetic_cases(conf, comparisons):
        stats_ = _new()
        for _ in range(sims):
            series = []
            for mean in means:
                draws = {m: mean[m] + MAIN_SD[m] * noise(rng, kind, maximum) for m in mean}
                series.append({m: list(enumerate(draws[m].tolist(), 1)) for m in mean})
            _add(stats_, simulate_campaign([series], means, [margins] * len(means), conf,
                                           maximum, interval))
        out.append(_row("synthetic", name, stats_))
    return out


def _new():
    return {"sims": 0, "fwer": 0, "wrong": 0, "comparisons": 0, "decided": 0, "runs": 0,
            "full": 0}


def _add(s, result):
    anywrong, wrong, decided, runs, full = result
    s["sims"] += 1
    s["fwer"] += anywrong
    s["wrong"] += sum(wrong)
    s["comparisons"] += len(wrong)
    s["decided"] += sum(decided)
    s["runs"] += runs
    s["full"] += full


def _row(part, case, s):
    n = s["sims"]
    p = s["fwer"] / n
    return {"part": part, "case": case, "campaigns": n,
            "error_rate": p, "error_ci95": 1.96 * math.sqrt(max(p * (1 - p), 1 / n) / n),
            "comparison_error_rate": s["wrong"] / s["comparisons"],
            "decided_share": s["decided"] / s["comparisons"],
            "runs_mean": s["runs"] / n, "runs_full": s["full"] / n,
            "runs_saved_pct": 100 * (1 - s["runs"] / s["full"])}


def campaign_rows(camp):
    """The report's metric rows of a campaign (identity and the finding's
    metrics), from its report/runs.csv when there is one, else computed."""
    path = os.path.join(camp, "report", "runs.csv")
    if not os.path.exists(path):
        runs, unusable, _ = campaignrows.scan(camp, os.path.join(camp, "report"))
        return campaignrows.metrics(runs, campaignrows.JITTER_BUFFER_MS / 1000, unusable)
    rows = []
    with open(path, newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            params = setting_of({k[6:]: v for k, v in r.items()
                                 if k.startswith("param.") and v != ""})
            row = {"scenario": r["scenario"], "params": params, "flow": r["flow"],
                   "policy": r["policy"], "repetition": int(r["repetition"]),
                   "key": (int(r["seed"]), int(r["repetition"]))}
            for m in sequential.METRICS:
                try:
                    row[m[0]] = float(r.get(m[0]) or "nan")
                except ValueError:
                    row[m[0]] = math.nan
            rows.append(row)
    return rows


def campaign_points(rows, conf):
    """[[(variant, {metric: {repetition: diff}})]] per sweep point (and
    flow) with a baseline, in the metrics' units."""
    points = []
    for _, crows in campaignrows.group(rows).items():
        if conf["baseline"] not in {r["policy"] for r in crows}:
            continue
        pt = []
        for variant in (p for p in stats.policies(crows) if p != conf["baseline"]):
            diffs = {}
            for metric, name, scale, *_ in sequential.METRICS:
                if name not in conf["metrics"]:
                    continue
                s = series_of(crows, conf["baseline"], variant, metric, scale)
                if s:
                    diffs[metric] = dict(s)
            if diffs:
                pt.append((variant, diffs))
        if pt:
            points.append(pt)
    return points


def modes(comparisons, margins):
    """The truths the resample and design parts judge verdicts against.
    comparisons: each one's pairs, {metric: {repetition: difference}};
    margins: {metric: margin}.  Yields, per mode, (mode, truths, moved):
    each comparison's pairs moved so that their mean, its truth, is as
    measured, 0 (centred) or +margin (shifted), in the order given."""
    for mode in ("as measured", "centred: no effect", "shifted: every effect at +margin"):
        truths, moved = [], []
        for pairs in comparisons:
            truth, shifted = {}, {}
            for m, d in pairs.items():
                mean = sum(d.values()) / len(d)
                shift = (0.0 if mode == "as measured" else
                         -mean + (margins[m] if mode.startswith("shifted") else 0.0))
                truth[m] = mean + shift
                shifted[m] = {r: x + shift for r, x in d.items()}
            truths.append(truth)
            moved.append(shifted)
        yield mode, truths, moved


def draw(comparisons, reps, maximum, rng):
    """One resampled campaign: maximum repetitions drawn from reps with
    replacement, the same for every comparison, so that each keeps its
    pairs and their correlation; per comparison {metric: [(k, the k-th
    drawn repetition's difference)]}, k from 1."""
    picked = rng.choice(reps, size=maximum).tolist()
    return [{m: [(k, d[r]) for k, r in enumerate(picked, 1) if r in d] for m, d in pairs.items()}
            for pairs in comparisons]


def resample(camp, conf, sims, rng, interval=sequential.confidence_sequence):
    """Rows of the resampling part for one campaign: its repetitions that
    every comparison has are the population, drawn up to the campaign's
    repetitions (campaign.json), so a decided campaign is resampled from
    the pairs all its comparisons made (at least min_pairs).  None if
    fewer (a campaign still in its first round)."""
    rows = campaign_rows(camp)
    points = campaign_points(rows, conf)
    comparisons = [diffs for pt in points for _, diffs in pt]
    if not comparisons:
        return None
    common = sorted(set.intersection(*(set(d) for c in comparisons for d in c.values())))
    try:
        with open(os.path.join(camp, "campaign.json"), encoding="utf-8") as f:
            maximum = int(json.load(f)["repetitions"])
    except (OSError, ValueError, KeyError, TypeError):
        maximum = max(r["repetition"] for r in rows)
    if len(common) < min(conf["min_pairs"], maximum):
        return None
    points = [[(v, {m: {r: d[r] for r in common} for m, d in diffs.items()})
               for v, diffs in pt] for pt in points]
    comparisons = [diffs for pt in points for _, diffs in pt]
    margin = {m: float(conf["margins"][name]) for m, name, *_ in sequential.METRICS}
    margins = [{m: margin[m] for m in diffs} for diffs in comparisons]
    ncomp = len(comparisons)
    name = os.path.basename(os.path.normpath(camp))
    part = (f"resample {name} ({ncomp} comparisons)" if len(common) >= maximum else
            f"resample {name} ({ncomp} comparisons, the {len(common)} pairs all made)")
    out = []
    for mode, truths, moved in modes(comparisons, margin):
        s = _new()
        for _ in range(sims):
            drawn = iter(draw(moved, common, maximum, rng))
            pts = [[next(drawn) for _ in pt] for pt in points]
            _add(s, simulate_campaign(pts, truths, margins, conf, maximum, interval))
        out.append(_row(part, mode, s))
    return out


def _design_arms(sc, conf, rows):
    """The scenario's comparisons (each variant against the baseline) as
    (variant name, the campaign's row label for it), and the baseline's
    label: the campaign's rows name a variant by its name or, run before
    names, by its policy and options."""
    have = {r["policy"] for r in rows}
    labels = {}
    for spec in sc.runs(reps=1):
        if len(spec.config["media"]) != 1:
            raise ValueError(f"{sc.path}: one media flow, for one comparison per variant")
        label = flow_label(spec.config["media"][0])
        if spec.variant in have:
            labels[spec.variant] = spec.variant
        elif label in have:
            labels[spec.variant] = label
        else:
            raise ValueError(f"the campaign has no runs of {spec.variant} ({label})")
    base = conf["baseline"]
    if base not in labels:
        raise ValueError(f"the baseline {base} is not a variant of {sc.path}")
    return [(v, labels[v]) for v in labels if v != base], labels[base]


def design_pairs(sc, conf, camp):
    """{variant: {metric: {repetition: difference}}} of the campaign's
    pairs for the scenario's comparisons and decided metrics, over the
    repetitions every one of them has.  ValueError if the campaign is not
    of the scenario's run length, or lacks a variant."""
    if len(sc.points()) != 1:
        raise ValueError(f"{sc.path}: one setting (no [sweep]), for one comparison each")
    rows = campaign_rows(camp)
    if not rows:
        raise ValueError(f"{camp}: no complete run")
    if len(campaignrows.group(rows)) != 1:
        raise ValueError(f"{camp}: more than one setting or media flow")
    metas = sorted(glob.glob(os.path.join(camp, "*", "meta.json")))
    if not metas:
        raise ValueError(f"{camp}: no run directory with a meta.json")
    with open(metas[0], encoding="utf-8") as f:
        length = json.load(f)["config"]["scenario"]
    want = sc.config["scenario"]
    if (length["duration_s"], length["warmup_s"]) != (want["duration_s"], want["warmup_s"]):
        raise ValueError(f"{camp}: runs of {length['duration_s']:g} s ({length['warmup_s']:g} "
                         f"s warm-up), the scenario's of {want['duration_s']:g} s "
                         f"({want['warmup_s']:g} s): the pairs' spread depends on it")
    arms, base = _design_arms(sc, conf, rows)
    pairs = {}
    for variant, label in arms:
        pairs[variant] = {metric: dict(series_of(rows, base, label, metric, scale))
                          for metric, name, scale, *_ in sequential.METRICS
                          if name in conf["metrics"]}
    common = set.intersection(*(set(d) for m in pairs.values() for d in m.values()))
    if len(common) < 2:
        raise ValueError(f"{camp}: fewer than two repetitions with every pair")
    return {v: {m: {r: d[r] for r in sorted(common)} for m, d in ms.items()}
            for v, ms in pairs.items()}


def design(sc, camp, jobs, sims, rng, interval=sequential.confidence_sequence):
    """Rows of the design part: per mode (as measured, centred, shifted
    to +margin) one row per comparison and decided metric, and one for
    the whole campaign (metric "all")."""
    conf = sc.decide or sequential.settings()
    maximum = sc.config["scenario"]["repetitions"]
    cutoffs = sequential.looks(conf["min_pairs"], conf["step"], maximum)
    pairs = design_pairs(sc, conf, camp)
    margins = {m: float(conf["margins"][name]) for m, name, *_ in sequential.METRICS}
    family = sum(len(ms) for ms in pairs.values())
    alpha = conf["alpha"] / family
    reps = sorted(next(iter(next(iter(pairs.values())).values())))
    out = []
    for mode, truths, moved in modes(list(pairs.values()), margins):
        truth = {(v, m): x for v, t in zip(pairs, truths) for m, x in t.items()}
        tally = {k: {"verdict": 0, "wrong": 0, "first": 0, **{x: 0 for x in sequential.VERDICTS}}
                 for k in truth}
        total = {"wrong": 0, "runs": 0, "max_runs": 0, "waves": 0, "max_waves": 0,
                 "rounds": 0, "decided": 0}
        for _ in range(sims):
            stops, anywrong = [], False
            for (v, ms), series in zip(pairs.items(), draw(moved, reps, maximum, rng)):
                res = sequential.evaluate(series, cutoffs, {m: margins[m] for m in ms}, alpha,
                                          maximum, interval)
                stops.append(res["repetition"])
                total["decided"] += res["status"] == "decided"
                for m, st in res["metrics"].items():
                    t = tally[v, m]
                    if st["verdict"]:
                        t["verdict"] += 1
                        t[st["verdict"]] += 1
                        t["first"] += st["first"]
                    bad = sequential.wrong(st["verdict"], truth[v, m], margins[m])
                    t["wrong"] += bad
                    anywrong |= bad
            runs = waves = rounds = 0
            prev = 0
            for cut in cutoffs:
                still = sum(stop > prev for stop in stops)
                if not still:
                    break
                n = (still + 1) * (cut - prev)        # the variants open, and the baseline
                runs, waves, rounds = runs + n, waves + -(-n // jobs), rounds + 1
                prev = cut
            total["wrong"] += anywrong
            total["runs"] += runs
            total["waves"] += waves
            total["rounds"] += rounds
            total["max_runs"] = max(total["max_runs"], runs)
            total["max_waves"] = max(total["max_waves"], waves)
        lo, hi = wilson(total["wrong"], sims)
        out.append({"part": "design", "mode": mode, "comparison": "all", "metric": "all",
                    "sims": sims, "error_rate": total["wrong"] / sims, "error_lo": lo,
                    "error_hi": hi,
                    "decided_share": total["decided"] / (sims * len(pairs)),
                    "rounds_mean": total["rounds"] / sims, "runs_mean": total["runs"] / sims,
                    "runs_max": total["max_runs"], "waves_mean": total["waves"] / sims,
                    "waves_max": total["max_waves"]})
        for (v, m), t in tally.items():
            lo, hi = wilson(t["verdict"], sims)
            out.append({"part": "design", "mode": mode, "comparison": v, "metric": m,
                        "sims": sims, "truth": truth[v, m], "verdict_share": t["verdict"] / sims,
                        "verdict_lo": lo, "verdict_hi": hi,
                        **{f"{x}_share": t[x] / sims for x in sequential.VERDICTS},
                        "first_mean": t["first"] / t["verdict"] if t["verdict"] else math.nan,
                        "wrong_share": t["wrong"] / sims})
    return out


def wilson(k, n, z=1.96):
    """Wilson's 95 % score interval (lo, hi) of a share of k in n: unlike
    p +- 1.96 sqrt(p (1 - p) / n) it does not shrink to nothing at 0 or n."""
    p = k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, mid - half), min(1.0, mid + half)


def design_table(rows):
    head = ["mode", "comparison", "metric", "truth", "verdict %", "higher", "lower",
            "equivalent", "first at", "wrong %"]
    lines = []
    for r in rows:
        if r["metric"] == "all":
            continue
        label = next(m[4] for m in sequential.METRICS if m[0] == r["metric"])
        lines.append([r["mode"], r["comparison"], label, f"{r['truth']:+.1f}",
                      f"{100 * r['verdict_share']:.2f} ({100 * r['verdict_lo']:.2f}-"
                      f"{100 * r['verdict_hi']:.2f})",
                      *(f"{100 * r[x + '_share']:.1f}" for x in sequential.VERDICTS),
                      "-" if math.isnan(r["first_mean"]) else f"{r['first_mean']:.1f}",
                      f"{100 * r['wrong_share']:.2f}"])
    out = report.aligned(head, lines) + [""]
    head = ["mode", "campaigns", "error %", "decided %", "rounds", "runs", "max", "waves",
            "max"]
    lines = [[r["mode"], str(r["sims"]),
              f"{100 * r['error_rate']:.2f} ({100 * r['error_lo']:.2f}-{100 * r['error_hi']:.2f})",
              f"{100 * r['decided_share']:.1f}", f"{r['rounds_mean']:.2f}",
              f"{r['runs_mean']:.1f}", str(r["runs_max"]), f"{r['waves_mean']:.2f}",
              str(r["waves_max"])] for r in rows if r["metric"] == "all"]
    return out + report.aligned(head, lines)


def run_design(args, rng):
    if not args.scenario or not args.campaign or len(args.campaign) != 1:
        print("sbpn-lab decide-sim: --part design: give --scenario and one --campaign",
              file=sys.stderr)
        return 2
    if args.jobs < 1:
        print("sbpn-lab decide-sim: --jobs: expected a number >= 1", file=sys.stderr)
        return 2
    try:
        sc = load(args.scenario)
        rows = design(sc, args.campaign[0], args.jobs, args.sims, rng)
    except (ScenarioError, ValueError, OSError) as e:
        print(f"sbpn-lab decide-sim: {e}", file=sys.stderr)
        return 2
    conf = sc.decide or sequential.settings()
    maximum = sc.config["scenario"]["repetitions"]
    family = sum(r["metric"] != "all" for r in rows if r["mode"] == rows[0]["mode"])
    print(f"{sc.name}'s decision ({args.scenario}): alpha {conf['alpha']:g} over "
          f"{family} metrics x comparisons, looks "
          "after repetitions " + ", ".join(map(str, sequential.looks(
              conf["min_pairs"], conf["step"], maximum))) + f", margins {conf['margins']}; "
          f"repetitions drawn with replacement from {args.campaign[0]}; {args.sims} "
          f"campaigns per mode, seed {args.seed}, waves of {args.jobs} runs at once.  "
          "verdict: comparisons whose metric had one by the maximum (95 % interval), of which "
          "higher, lower, equivalent (%); first at: the mean repetition of the first "
          "verdict; wrong: verdicts that contradict the truth (the campaign's mean, "
          "shifted as the mode says); error: campaigns with any wrong verdict (95 % interval); "
          "decided: "
          "comparisons that stopped with every verdict; rounds, runs, waves (ceil(runs of "
          "a round / jobs), summed): per campaign, mean and maximum")
    for line in design_table(rows):
        print(line)
    if args.out:
        report.write_csv(args.out, rows)
    return 0


def table(rows):
    head = ["part", "case", "campaigns", "error %", "per comparison %", "decided %",
            "runs", "of", "saved %"]
    lines = [[r["part"], r["case"], str(r["campaigns"]),
              f"{100 * r['error_rate']:.2f} ±{100 * r['error_ci95']:.2f}",
              f"{100 * r['comparison_error_rate']:.2f}", f"{100 * r['decided_share']:.0f}",
              f"{r['runs_mean']:.1f}", f"{r['runs_full']:.0f}", f"{r['runs_saved_pct']:.0f}"]
             for r in rows]
    return report.aligned(head, lines)


def run(args):
    if args.sims < 1:
        print("sbpn-lab decide-sim: --sims: expected a number >= 1", file=sys.stderr)
        return 2
    rng = np.random.default_rng(args.seed)
    if args.part == "design":
        return run_design(args, rng)
    conf = sequential.settings()
    if args.scenario:
        try:
            conf = load(args.scenario).decide or conf
        except ScenarioError as e:
            print(f"sbpn-lab decide-sim: {e}", file=sys.stderr)
            return 2
    if args.comparisons < 1:
        print("sbpn-lab decide-sim: --comparisons: expected a number >= 1", file=sys.stderr)
        return 2
    rows = []
    if args.part in ("synthetic", "all"):
        rows += synthetic(conf, args.sims, rng, comparisons=args.comparisons)
        naive = [c for c in synthetic_cases(conf, args.comparisons)
                 if c[0] in ("no effect, normal", "every effect at +margin")]
        rows += [dict(r, case=r["case"] + " [fixed-sample t at each look]")
                 for r in synthetic(conf, args.sims, rng, naive_interval, naive)]
        # the no-effect cases come first: drawn again from the seed, the
        # uncorrected sequence sees the very differences the corrected one
        # saw (a paired comparison), and the resampling's draws stay as
        # they were
        same = [c for c in synthetic_cases(conf, args.comparisons)
                if c[0].startswith("no effect")]
        rows += [dict(r, case=r["case"] + " [without the skewness correction]")
                 for r in synthetic(conf, args.sims, np.random.default_rng(args.seed),
                                    sequential.t_mixture, same)[1:]]
    if args.part in ("resample", "all"):
        camps = args.campaign or sorted(d for pattern in DEFAULT_CAMPAIGNS
                                        for d in glob.glob(pattern) if os.path.isdir(d))
        for camp in camps:
            got = resample(camp, conf, args.sims, rng)
            if got is None:
                print(f"{camp}: left out: its comparisons have fewer than "
                      f"{conf['min_pairs']} pairs in common (still in its first round?)")
                continue
            rows += got
    print(f"sequential decisions of {', '.join(conf['metrics'])}, alpha {conf['alpha']:g} "
          f"(Bonferroni over metrics x comparisons; synthetic: {args.comparisons} "
          f"comparisons), looks after repetitions {conf['min_pairs']}, +{conf['step']}, "
          f"... 30; margins {conf['margins']}; {args.sims} campaigns per case, seed "
          f"{args.seed}.  error: campaigns with any wrong verdict (±95 % CI); per "
          "comparison: comparisons with one; decided: comparisons that stopped with every "
          "verdict; runs: mean runs made, of the full campaign's")
    for line in table(rows):
        print(line)
    if args.out:
        report.write_csv(args.out, rows)
    return 0
