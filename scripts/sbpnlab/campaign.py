# SPDX-License-Identifier: GPL-2.0
"""Run every run of a scenario into results/<campaign>/<run-id>/.

Runs whose meta.json says "complete" are skipped (resume), unless forced.
With jobs > 1 several runs go at once, each in its own namespaces (the
slot number is part of their names).  A progress line with an ETA goes to
stderr after each run; a failed run does not stop the campaign, and the
failures are listed at the end.  campaign.json lists the runs the scenario
expands to, so an analysis can tell missing runs from absent ones.

A campaign can be split over hosts: shard K of N takes the repetitions r
with (r - 1) mod N = K - 1, every run of each (so pairs stay together), and
merge_campaigns() copies the shards' runs into one campaign directory that
the analysis reads as if it had run in one place.
"""
import concurrent.futures
import json
import os
import queue
import re
import shutil
import sys
import threading
import time

from . import RESULTS_FORMAT, autojobs
from .run import execute


def run_status(run_dir):
    """'complete', 'failed' or None (no readable meta.json)."""
    try:
        with open(os.path.join(run_dir, "meta.json"), encoding="utf-8") as f:
            return json.load(f).get("status")
    except (OSError, ValueError):
        return None


def _fmt_s(s):
    s = int(s)
    return f"{s // 3600}h{s // 60 % 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def _summary(meta):
    """A short human line about a finished run's media flows."""
    parts = []
    for name, m in meta.get("media", {}).items():
        recv, send = m.get("recv", {}), m.get("send", {})
        try:
            sched = int(send["packets"])
            parts.append(f"{name}: {int(recv['on_time'])}/{sched} on time")
        except (KeyError, ValueError):
            pass
    return ", ".join(parts)


def parse_shard(text):
    """'K/N' as (K, N) with 1 <= K <= N; ValueError otherwise."""
    m = re.fullmatch(r"(\d+)/(\d+)", text or "")
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise ValueError(f"expected K/N with 1 <= K <= N, got {text!r}")
    return int(m.group(1)), int(m.group(2))


def selected(scenario, only=None, shard=None):
    """The scenario's runs under --only (a regular expression on the run id)
    and shard (K, N): whole repetitions, (rep - 1) mod N = K - 1."""
    return [r for r in scenario.runs() if (not only or re.search(only, r.id)) and
            (not shard or (r.rep - 1) % shard[1] == shard[0] - 1)]


def _write_json(camp_dir, index):
    tmp = os.path.join(camp_dir, ".campaign.json.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(index, f, indent=1)
        f.write("\n")
    os.replace(tmp, os.path.join(camp_dir, "campaign.json"))


def write_index(scenario, camp_dir, name, only=None, shard=None):
    """campaign.json: the runs this campaign (or shard of it) is to have,
    those of --only when it is given (the report counts the others as not
    wanted, not as missing)."""
    _write_json(camp_dir, {
        "format": RESULTS_FORMAT, "campaign": name,
        "scenario_file": os.path.abspath(scenario.path), "scenario": scenario.name,
        "sweep": scenario.sweep, "only": only,
        "repetitions": scenario.config["scenario"]["repetitions"],
        "shard": f"{shard[0]}/{shard[1]}" if shard else None,
        "runs": [r.id for r in selected(scenario, only, shard)]})


def merge_campaigns(dest, sources, out=sys.stderr):
    """Copy the runs of the campaign directories sources (shards of one
    campaign, or parts of one run elsewhere) into dest, which gets a
    campaign.json listing every run of them all.  A run complete in two
    sources, or sources of different scenarios, sweeps or --only, is an
    error (ValueError, nothing copied); a run already in dest is kept
    unless dest's copy is not complete.  Returns the number copied."""
    indexes = []
    for src in sources:
        try:
            with open(os.path.join(src, "campaign.json"), encoding="utf-8") as f:
                indexes.append(json.load(f))
        except (OSError, ValueError) as e:
            raise ValueError(f"{src}: no readable campaign.json ({e})") from None
    same = ("scenario", "sweep", "only", "repetitions")
    for src, ix in zip(sources[1:], indexes[1:]):
        for k in same:
            if ix.get(k) != indexes[0].get(k):
                raise ValueError(f"{src}: {k} {ix.get(k)!r} differs from "
                                 f"{sources[0]}'s {indexes[0].get(k)!r}")
    owner, wanted = {}, []      # owner: run id -> (source, its status there)
    for src, ix in zip(sources, indexes):
        for rid in ix["runs"]:
            if rid not in wanted:
                wanted.append(rid)
            status = run_status(os.path.join(src, rid))
            if status is None:
                continue
            if rid in owner and owner[rid][1] == status == "complete":
                raise ValueError(f"{rid} is complete in both {owner[rid][0]} and {src}")
            if rid not in owner or status == "complete":
                owner[rid] = (src, status)
    # repetition-major, as one campaign lists them
    wanted.sort(key=lambda rid: int(rid.rsplit("rep=", 1)[1]))
    shards = sorted({ix.get("shard") for ix in indexes if ix.get("shard")})
    counts = {ix["shard"].split("/")[1] for ix in indexes if ix.get("shard")}
    if len(counts) == 1:
        n = int(counts.pop())
        missing = [f"{k}/{n}" for k in range(1, n + 1) if f"{k}/{n}" not in shards]
        if missing:
            print(f"merge: shards {', '.join(missing)} are not among the sources: their "
                  "runs will be missing", file=out)
    os.makedirs(dest, exist_ok=True)
    copied = 0
    for rid, (src, _) in owner.items():
        target = os.path.join(dest, rid)
        if os.path.exists(target):
            if run_status(target) == "complete":
                continue
            shutil.rmtree(target)
        shutil.copytree(os.path.join(src, rid), target)
        copied += 1
    index = dict(indexes[0], shard=None, runs=wanted,
                 merged_from=[os.path.abspath(s) for s in sources],
                 shards=shards or None)
    _write_json(dest, index)
    print(f"merge: {copied} runs copied into {dest}; {len(wanted)} runs listed, "
          f"{sum(run_status(os.path.join(dest, r)) == 'complete' for r in wanted)} complete",
          file=out)
    return copied


def run_campaign(scenario, results_root, name=None, jobs=1, only=None, force=False,
                 out=sys.stderr, shard=None):
    """Run the scenario's runs (of shard (K, N) only, if given), jobs at
    once ("auto": autojobs.choose()); return the list of (run id, reason)
    that failed."""
    name = name or scenario.name
    camp_dir = os.path.join(results_root, name)
    os.makedirs(camp_dir, exist_ok=True)
    write_index(scenario, camp_dir, name, only, shard)
    runs = selected(scenario, only, shard)
    todo = [r for r in runs
            if force or run_status(os.path.join(camp_dir, r.id)) != "complete"]
    skipped = len(runs) - len(todo)
    if jobs == "auto":
        jobs = autojobs.choose(todo, camp_dir, name, out=out) if todo else 1
    print(f"campaign {name}: {len(runs)} runs, {skipped} already complete, "
          f"{len(todo)} to do, {jobs} at a time -> {camp_dir}", file=out, flush=True)
    slots = queue.Queue()
    for s in range(jobs):
        slots.put(s)
    lock = threading.Lock()
    done, failed, started = [], [], time.monotonic()

    def one(spec):
        slot = slots.get()
        try:
            t = time.monotonic()
            meta = execute(spec, os.path.join(camp_dir, spec.id), slot, name, jobs)
            return spec, meta, time.monotonic() - t
        finally:
            slots.put(slot)

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for fut in concurrent.futures.as_completed([pool.submit(one, r) for r in todo]):
            spec, meta, wall = fut.result()
            with lock:
                done.append(wall)
                if meta["status"] != "complete":
                    failed.append((spec.id, meta["reason"]))
                left = len(todo) - len(done)
                eta = (time.monotonic() - started) / len(done) * left
                word = meta["status"]
                extra = "" if word == "complete" else f": {meta['reason']}"
                info = _summary(meta)
                print(f"[{len(done)}/{len(todo)}] {spec.id} {word} in {wall:.0f} s"
                      f"{extra}{'; ' + info if info else ''}; ETA {_fmt_s(eta)}",
                      file=out, flush=True)
    print(f"campaign {name}: {len(done) - len(failed)} complete, {len(failed)} failed, "
          f"{skipped} skipped as complete, wall time {_fmt_s(time.monotonic() - started)}",
          file=out, flush=True)
    for rid, reason in failed:
        print(f"  failed: {rid}: {reason}", file=out)
    return failed
