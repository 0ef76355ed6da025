# SPDX-License-Identifier: GPL-2.0
"""A campaign's runs as metric rows, and the comparisons they make.

scan() loads every complete run directory of a campaign (never runs
anything) and says why each other one cannot be used (failed,
incomplete, not run, unreadable) and which result files are of a newer
format; metrics() gives the runs' rows (stats.run_metrics()); group()
makes the comparisons (same scenario and setting: the sweep point except
the variant), key_title() names one; resolve() finds the variant that
--baseline or --headline means; read_index() reads campaign.json.  The
report, the sequential decision (decide), compare, friendliness and
decide-sim all read a campaign through these, so they see the same runs,
metrics and pairs by seed.  Needs the project's venv (scripts/venv.sh).
"""
import json
import os

from . import stats

# The jitter buffer of the audio loss-period levels, --jitter-buffer-ms's
# default; decide, compare, decidesim and friendliness use it too.
JITTER_BUFFER_MS = 40


def read_index(campaign_dir):
    """The campaign's campaign.json, or {} if it has none or it cannot be
    read (scan() says so)."""
    try:
        with open(os.path.join(campaign_dir, "campaign.json"), encoding="utf-8") as f:
            index = json.load(f)
        return index if isinstance(index, dict) else {}
    except (OSError, ValueError):
        return {}


def resolve(rows, wanted):
    """The row label that --baseline or --headline means: a variant's name,
    or the label a campaign without names gives a policy and its options
    ("sbpn2+sp+pd"), which names the one variant that has them; so a
    command written for either kind of campaign works on both."""
    if any(r["policy"] == wanted for r in rows):
        return wanted
    named = {r["policy"] for r in rows if r.get("label") == wanted}
    return named.pop() if len(named) == 1 else wanted


def scan(campaign_dir, out_dir):
    """(loaded Runs, [(run id, why not used)], [messages about newer formats])."""
    runs, unusable, too_new = [], [], []
    present = sorted(d for d in os.listdir(campaign_dir)
                     if os.path.isdir(os.path.join(campaign_dir, d))
                     and os.path.abspath(os.path.join(campaign_dir, d)) !=
                     os.path.abspath(out_dir))
    index = os.path.join(campaign_dir, "campaign.json")
    variants = None
    if os.path.exists(index):
        try:
            with open(index, encoding="utf-8") as f:
                listed = json.load(f)
            if listed.get("format", 0) > stats.RESULTS_FORMAT:
                too_new.append(f"{index}: format {listed['format']} is newer than this "
                               f"analysis (reads up to {stats.RESULTS_FORMAT})")
            unusable += [(r, "not run (listed in campaign.json, no directory)")
                         for r in listed.get("runs", []) if r not in present]
            variants = listed.get("variants")
        except (OSError, ValueError, AttributeError) as e:
            unusable.append(("campaign.json", f"unreadable: {e}"))
    for d in present:
        path = os.path.join(campaign_dir, d)
        if not os.path.exists(os.path.join(path, "meta.json")):
            if any(f.startswith(("media-", "tcp-")) for f in os.listdir(path)):
                unusable.append((d, "incomplete: no meta.json"))
            continue
        try:
            meta = stats.read_meta(path)
        except stats.TooNewError as e:
            too_new.append(str(e))
            continue
        except stats.FormatError as e:
            unusable.append((d, f"unreadable: {e}"))
            continue
        if meta.get("status") != "complete":
            unusable.append((d, f"{meta.get('status', 'no status')}: "
                             f"{meta.get('reason') or 'no reason given'}"))
            continue
        try:
            run = stats.Run(path, variants)
        except stats.FormatError as e:
            unusable.append((d, f"unreadable: {e}"))
            continue
        except KeyError as e:
            unusable.append((d, f"unreadable: meta.json has no {e}"))
            continue
        partial = [n for n, f in run.flows.items() if not f.complete]
        if partial:
            unusable.append((d, f"incomplete records of {', '.join(partial)}"))
        elif not run.flows:
            unusable.append((d, "no media records"))
        else:
            runs.append(run)
    return runs, unusable, too_new


def metrics(runs, buffer_s, unusable):
    """stats.run_metrics() of every run; a run whose meta.json lacks a field
    goes to unusable instead."""
    rows = []
    for r in runs:
        try:
            rows += stats.run_metrics(r, buffer_s)
        except KeyError as e:
            unusable.append((os.path.basename(r.dir), f"unreadable: meta.json has no {e}"))
    return rows


def group(rows):
    """{(scenario, params without policy, flow): [rows]}: one comparison each."""
    out = {}
    for r in rows:
        key = (r["scenario"], tuple(sorted((k, str(v)) for k, v in r["params"].items())),
               r["flow"])
        out.setdefault(key, []).append(r)
    return dict(sorted(out.items()))


def key_title(key):
    scenario, params, flow = key
    extra = " ".join(f"{k}={v}" for k, v in params)
    return f"{scenario} {extra} flow {flow}".replace("  ", " ")
