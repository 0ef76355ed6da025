# SPDX-License-Identifier: GPL-2.0
"""`sbpn-lab decide CAMPAIGN`: where the sequential decision of a campaign
stands (Documentation/statistics.rst, Sequential decisions).

Reads the campaign as the report does (campaignrows.scan, metrics and
group: the same runs, metrics and pairs by seed), takes every
variant of each comparison against the baseline, and for each of the
finding's metrics (sequential.METRICS) that the settings decide ([decide]
metrics, all four by default) evaluates the confidence sequence
at the looks made so far (sequential.evaluate).  Writes
CAMPAIGN/decision.json, which `sbpn-lab run --decide` reads after each
round to know which comparisons still need runs, and which the report
prints.  Needs the project's venv.
"""
import json
import math
import os
import sys

from . import campaignrows, sequential, stats
from .scenario import ScenarioError, load

FORMAT = 1
FILE = "decision.json"
METHOD = ("Lai's t-mixture confidence sequence (Lai 1976) with Hall's skewness "
          "correction (Hall 1992) per metric, mixture c = "
          f"{sequential.MIXTURE:g}; Bonferroni over metrics x comparisons")


def add_arguments(parser):
    parser.add_argument("campaign", metavar="CAMPAIGN", help="a campaign directory")
    parser.add_argument("--scenario", metavar="FILE",
                        help="the scenario whose [decide] table gives the settings "
                        "(default: campaign.json's scenario_file, if it is there)")
    parser.add_argument("--through", type=int, metavar="REP",
                        help="the last repetition run so far (default: the highest "
                        "repetition of a complete run)")
    parser.add_argument("--baseline", metavar="POLICY", help="override the baseline")
    parser.add_argument("--dry-run", action="store_true",
                        help=f"print only; do not write {FILE}")


def run(args):
    """0 ok, 1 no complete run, 2 bad input."""
    camp = args.campaign
    if not os.path.isdir(camp):
        print(f"sbpn-lab decide: {camp}: not a directory", file=sys.stderr)
        return 2
    index = {}
    try:
        with open(os.path.join(camp, "campaign.json"), encoding="utf-8") as f:
            index = json.load(f)
    except (OSError, ValueError):
        pass
    # the settings the campaign ran with (campaign.json, as the report
    # takes them), unless a scenario is named
    path = args.scenario or (None if "decide" in index else index.get("scenario_file"))
    table = index.get("decide")
    if path and os.path.exists(path):
        try:
            table = load(path).decide
        except ScenarioError as e:
            print(f"sbpn-lab decide: {e}", file=sys.stderr)
            return 2
    elif args.scenario:
        print(f"sbpn-lab decide: {args.scenario}: no such file", file=sys.stderr)
        return 2
    conf = sequential.settings(table)
    if args.baseline:
        conf["baseline"] = args.baseline
    runs, unusable, too_new = campaignrows.scan(camp, os.path.join(camp, "report"))
    if too_new:
        for msg in too_new:
            print(f"sbpn-lab decide: {msg}", file=sys.stderr)
        return 2
    rows = campaignrows.metrics(runs, campaignrows.JITTER_BUFFER_MS / 1000, unusable)
    if not rows:
        print(f"sbpn-lab decide: no complete run in {camp}", file=sys.stderr)
        return 1
    # a variant's name, or its options' label (campaignrows.resolve)
    conf["baseline"] = campaignrows.resolve(rows, conf["baseline"])
    maximum = index.get("repetitions") or max(r["repetition"] for r in rows)
    through = args.through or max(r["repetition"] for r in rows)
    decision = analyse(rows, conf, maximum, through)
    decision["campaign"] = os.path.basename(os.path.normpath(camp))
    for line in lines(decision):
        print(line)
    if not args.dry_run:
        tmp = os.path.join(camp, f".{FILE}.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(decision, f, indent=1)
            f.write("\n")
        os.replace(tmp, os.path.join(camp, FILE))
    return 0


def of_campaign(rows, index, baseline=None):
    """The decision of a campaign run with --decide, from the report's
    metric rows and its campaign.json (index): the settings it ran with,
    its repetitions the maximum, the looks made through its highest
    repetition of a complete run; what `sbpn-lab decide CAMPAIGN` writes.
    None without complete rows."""
    if not rows:
        return None
    conf = sequential.settings(index.get("decide"))
    conf["baseline"] = campaignrows.resolve(rows, baseline or conf["baseline"])
    through = max(r["repetition"] for r in rows)
    decision = analyse(rows, conf, index.get("repetitions") or through, through)
    decision["campaign"] = index.get("campaign") or "campaign"
    return decision


def comparison_of(decision, title, baseline, variant):
    """The decision's comparison of variant against baseline in the
    report's comparison title, or None."""
    return next((c for c in (decision or {}).get("comparisons", [])
                 if (c["title"], c["baseline"], c["variant"]) == (title, baseline, variant)),
                None)


def verdict_text(m, status):
    """A decided metric's verdict for the finding line: 'higher (decided:
    +5.9..+11.4 points)' or 'no verdict by the maximum (-9.0..+13.6 points,
    margin ±5)'."""
    lo = "-inf" if m["lo"] is None else f"{m['lo']:+.1f}"
    hi = "+inf" if m["hi"] is None else f"{m['hi']:+.1f}"
    span = f"{lo}..{hi} {_unit(m['metric'])}"
    if m["verdict"]:
        return f"{m['verdict']} (decided: {span})"
    when = "by the maximum" if status == "maximum" else "yet"
    return f"no verdict {when} ({span}, margin ±{m['margin']:g})"


def series_of(rows, baseline, variant, metric, scale):
    """[(repetition, variant - baseline)] of the pairs (same seed and
    repetition) that both have with a finite value, by repetition."""
    def by_key(p):
        return {r["key"]: r.get(metric, math.nan) for r in rows if r["policy"] == p}

    base, other = by_key(baseline), by_key(variant)
    out = [(key[1], (other[key] - base[key]) * scale) for key in sorted(set(base) & set(other))]
    return sorted((rep, d) for rep, d in out if math.isfinite(d))


def analyse(rows, conf, maximum, through, interval=sequential.confidence_sequence):
    """The decision as a dict (decision.json) from the report's metric rows:
    every comparison (the report's groups) of a variant against the
    baseline, each with its metrics' verdicts."""
    cutoffs = sequential.looks(conf["min_pairs"], conf["step"], maximum)
    baseline = conf["baseline"]
    todo = []
    for key, crows in campaignrows.group(rows).items():
        have = {r["policy"] for r in crows}
        if baseline not in have:
            continue
        for variant in (p for p in stats.policies(crows) if p != baseline):
            series, margins = {}, {}
            for metric, name, scale, *_ in sequential.METRICS:
                if name not in conf["metrics"]:
                    continue
                s = series_of(crows, baseline, variant, metric, scale)
                if s:
                    series[metric], margins[metric] = s, float(conf["margins"][name])
            if series:
                todo.append((key, variant, series, margins))
    family = sum(len(series) for _, _, series, _ in todo)
    alpha = conf["alpha"] / family if family else conf["alpha"]
    comparisons = []
    for (scenario, params, flow), variant, series, margins in todo:
        result = sequential.evaluate(series, cutoffs, margins, alpha, through, interval)
        comparisons.append({
            "title": campaignrows.key_title((scenario, params, flow)), "scenario": scenario,
            "params": dict(params), "flow": flow, "baseline": baseline, "variant": variant,
            "status": result["status"], "look": result["look"] + 1,
            "repetition": result["repetition"], "why": why(result),
            "metrics": [dict(metric=m, **{k: _json(v) for k, v in st.items()})
                        for m, st in result["metrics"].items()]})
    return {"format": FORMAT, "method": METHOD, "alpha": conf["alpha"], "family": family,
            "alpha_each": alpha, "mixture": sequential.MIXTURE,
            "metrics": [m[0] for m in sequential.METRICS if m[1] in conf["metrics"]],
            "min_pairs": conf["min_pairs"], "step": conf["step"], "maximum": maximum,
            "looks": cutoffs, "through": through, "baseline": baseline,
            "margins": conf["margins"], "comparisons": comparisons,
            "open": sum(c["status"] == "open" for c in comparisons)}


def _json(v):
    """A number JSON can hold: infinities as None."""
    return None if isinstance(v, float) and not math.isfinite(v) else v


def why(result):
    status = result["status"]
    if status == "decided":
        return "every metric has a verdict"
    undecided = ", ".join(_label(m) for m, st in result["metrics"].items()
                          if not st["verdict"])
    if status == "maximum":
        return f"the maximum of repetitions, without a verdict on {undecided}"
    return f"still open: no verdict yet on {undecided}"


def _label(metric):
    return next(m[4] for m in sequential.METRICS if m[0] == metric)


def _unit(metric):
    return next(m[3] for m in sequential.METRICS if m[0] == metric)


def metric_text(m):
    """'audio on time: higher, +8.9 [+4.1, +13.7] points (margin 2; 10 pairs, since rep 10)'."""
    if m["mean"] is None:
        # before the first look (a campaign still in its first round)
        return f"{_label(m['metric'])}: no look yet (margin ±{m['margin']:g})"
    lo = "-inf" if m["lo"] is None else f"{m['lo']:+.1f}"
    hi = "+inf" if m["hi"] is None else f"{m['hi']:+.1f}"
    since = f", since repetition {m['first']}" if m["first"] else ""
    return (f"{_label(m['metric'])}: {m['verdict'] or 'no verdict'}, {m['mean']:+.1f} "
            f"[{lo}, {hi}] {_unit(m['metric'])} (margin ±{m['margin']:g}; {m['n']} pairs"
            f"{since})")


def lines(decision):
    """The decision as text: the method, then per comparison when and why
    it stopped and each metric's verdict with its interval."""
    out = [f"Sequential decision ({decision.get('campaign', 'campaign')}): {decision['method']}"
           f"; alpha {decision['alpha']:g} over {decision['family']} = "
           f"{decision['alpha_each']:.4g} each; looks after repetitions "
           f"{', '.join(map(str, decision['looks']))}; made through repetition "
           f"{decision['through']}."]
    decided = decision.get("metrics", [m[0] for m in sequential.METRICS])
    if len(decided) < len(sequential.METRICS):
        out.append("  Decided: " + ", ".join(map(_label, decided)) + "; the finding's "
                   "other metrics are reported with their 95 % intervals, not decided.")
    for c in decision["comparisons"]:
        when = (f"stopped at look {c['look']} (repetition {c['repetition']})"
                if c["status"] != "open" else
                f"open after look {c['look']} (repetition {c['repetition']})"
                if c["repetition"] else "open: no look yet")
        out.append(f"  {c['title']}: {c['variant']} against {c['baseline']}: {when}: "
                   f"{c['why']}.")
        out += [f"    {metric_text(m)}" for m in c["metrics"]]
    return out


def read(camp):
    """A campaign's decision.json, or None if it has none (or cannot be read)."""
    try:
        with open(os.path.join(camp, FILE), encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
