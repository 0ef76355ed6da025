# SPDX-License-Identifier: GPL-2.0
"""Run every run of a scenario into results/<campaign>/<run-id>/.

Runs whose meta.json says "complete" are skipped (resume), unless forced.
With jobs > 1 several runs go at once, each in its own namespaces (the
slot number is part of their names).  A progress line with an ETA goes to
stderr after each run; a failed run does not stop the campaign, and the
failures are listed at the end.  campaign.json lists the runs the scenario
expands to, so an analysis can tell missing runs from absent ones.
"""
import concurrent.futures
import json
import os
import queue
import re
import sys
import threading
import time

from . import RESULTS_FORMAT
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


def write_index(scenario, camp_dir, name, only=None):
    """campaign.json: the runs this campaign is to have, those of --only
    when it is given (the report counts the others as not wanted, not as
    missing)."""
    runs = [r for r in scenario.runs() if not only or re.search(only, r.id)]
    index = {"format": RESULTS_FORMAT, "campaign": name,
             "scenario_file": os.path.abspath(scenario.path), "scenario": scenario.name,
             "sweep": scenario.sweep, "only": only,
             "repetitions": scenario.config["scenario"]["repetitions"],
             "runs": [r.id for r in runs]}
    tmp = os.path.join(camp_dir, ".campaign.json.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(index, f, indent=1)
        f.write("\n")
    os.replace(tmp, os.path.join(camp_dir, "campaign.json"))


def run_campaign(scenario, results_root, name=None, jobs=1, only=None, force=False,
                 out=sys.stderr):
    """Run the scenario's runs; return the list of (run id, reason) that failed."""
    name = name or scenario.name
    camp_dir = os.path.join(results_root, name)
    os.makedirs(camp_dir, exist_ok=True)
    write_index(scenario, camp_dir, name, only)
    runs = [r for r in scenario.runs() if not only or re.search(only, r.id)]
    todo = [r for r in runs
            if force or run_status(os.path.join(camp_dir, r.id)) != "complete"]
    skipped = len(runs) - len(todo)
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
            meta = execute(spec, os.path.join(camp_dir, spec.id), slot, name)
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
