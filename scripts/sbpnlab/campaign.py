# SPDX-License-Identifier: GPL-2.0
"""Run every run of a scenario into results/<campaign>/<run-id>/.

Runs whose meta.json says "complete" are skipped (resume), unless forced.
With jobs > 1 several runs go at once, each in its own namespaces (the
slot number is part of their names).  The first line says how long the
runs should take (estimate_s()), a progress line with an ETA goes to
stderr after each run; a failed run does not stop the campaign, and the
failures are listed at the end.  campaign.json lists the runs the scenario
expands to, so an analysis can tell missing runs from absent ones.

A campaign can be split over hosts: shard K of N takes the repetitions r
with (r - 1) mod N = K - 1, every run of each (so pairs stay together), and
merge_campaigns() copies the shards' runs into one campaign directory that
the analysis reads as if it had run in one place.
"""
import collections
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

from . import RESULTS_FORMAT, autojobs, hostlook
from .run import ROOT, execute
from .scenario import flow_label, setting_of

# The analysis' Python (scripts/venv.sh); the VM sees it over 9p.
VENV_PYTHON = os.path.join(ROOT, ".venv", "bin", "python")

# Wall time of a run beyond its duration_s: namespaces, links, qdiscs and
# tools set up and torn down, records written.  Under TCG on our 2-core
# machines about 3 s alone and 9 s at 8 at once (Documentation/results.rst,
# Wall time: 2280 runs of 60 s in 40 h; 180 in 26 min at --jobs 8).
RUN_OVERHEAD_S = 10
# What scripts/vm-run --timeout allows beyond twice the estimate: the boot,
# module loads, the analysis between the rounds of run --decide.
VM_SLACK_S = 600


def estimate_s(runs, jobs):
    """Wall seconds the runs (of one campaign) take, jobs at once: every
    run the length of the longest, ceil(len / jobs) after one another;
    "auto" counts as 1 (the slowest it can choose) plus its probe."""
    if not runs:
        return 0
    each = max(r.config["scenario"]["duration_s"] for r in runs) + RUN_OVERHEAD_S
    if jobs == "auto":
        probe = (2 + len(autojobs.LEVELS)) * (autojobs.PROBE_S + RUN_OVERHEAD_S)
        return int(len(runs) * each + probe)
    return int(-(-len(runs) // jobs) * each)


def vm_timeout_s(estimate):
    """scripts/vm-run --timeout for runs estimated to take estimate s: twice
    that (a host half as fast as ours, or busy) and VM_SLACK_S."""
    return 2 * int(estimate) + VM_SLACK_S


def run_status(run_dir):
    """'complete', 'failed' or None (no readable meta.json)."""
    try:
        with open(os.path.join(run_dir, "meta.json"), encoding="utf-8") as f:
            return json.load(f).get("status")
    except (OSError, ValueError):
        return None


class OtherLength(Exception):
    """Complete runs in the campaign directory of another length than the
    scenario's runs now; str() says which and what to do."""


def check_lengths(runs, camp_dir):
    """Raise OtherLength if a complete run of runs lasted another
    duration_s or warmup_s than its scenario now gives: resuming would
    pair it with runs of the new length, whose metrics spread differently
    (an older `make demo`'s 16 s runs under the same ids as its 60 s ones
    now).  Other settings are not compared: a run id already names the
    variant and setting, and a scenario's text changes in ways that do not
    matter (its description, the absolute path of a model file)."""
    other = []
    for r in runs:
        try:
            with open(os.path.join(camp_dir, r.id, "meta.json"), encoding="utf-8") as f:
                meta = json.load(f)
            was = meta["config"]["scenario"]
            was = (was["duration_s"], was["warmup_s"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        now = r.config["scenario"]["duration_s"], r.config["scenario"]["warmup_s"]
        if meta.get("status") == "complete" and was != now:
            other.append((r.id, was, now))
    if other:
        rid, was, now = other[0]
        raise OtherLength(
            f"{camp_dir}: {len(other)} complete runs of another length than the scenario's "
            f"(such as {rid}: {was[0]:g} s with {was[1]:g} s of warm-up, now {now[0]:g} s with "
            f"{now[1]:g} s): a resumed campaign would pair them with runs of the new length.  "
            "Move or remove that directory to start afresh, or name another campaign "
            "(--campaign); --force redoes them.")


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


def matches(spec, only):
    """Whether --only's regular expression finds the run id or the run's
    variant name ('^best$' picks a variant, 'rep=01$' a repetition)."""
    return bool(re.search(only, spec.id) or
                (spec.variant is not None and re.search(only, spec.variant)))


def selected(scenario, only=None, shard=None):
    """The scenario's runs under --only (matches()) and shard (K, N): whole
    repetitions, (rep - 1) mod N = K - 1."""
    return [r for r in scenario.runs() if (not only or matches(r, only)) and
            (not shard or (r.rep - 1) % shard[1] == shard[0] - 1)]


def _write_json(camp_dir, index):
    tmp = os.path.join(camp_dir, ".campaign.json.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(index, f, indent=1)
        f.write("\n")
    os.replace(tmp, os.path.join(camp_dir, "campaign.json"))


def write_index(scenario, camp_dir, name, only=None, shard=None, decide=None):
    """campaign.json: the runs this campaign (or shard of it) is to have,
    those of --only when it is given (the report counts the others as not
    wanted, not as missing), the scenario's variants (each name with its
    part of the run ids, which the report labels the runs by) and
    comparisons, and the settings of run --decide, if given (runs of
    comparisons that stopped early stay unmade)."""
    named = ({"variants": [{"name": v["name"], "point": v["point"]}
                           for v in scenario.variants],
              "baseline": scenario.baseline, "compare": scenario.comparisons}
             if scenario.variants else {})
    _write_json(camp_dir, {
        "format": RESULTS_FORMAT, "campaign": name,
        "scenario_file": os.path.abspath(scenario.path), "scenario": scenario.name,
        "sweep": scenario.sweep, **named, "only": only,
        "repetitions": scenario.config["scenario"]["repetitions"],
        "shard": f"{shard[0]}/{shard[1]}" if shard else None,
        "runs": [r.id for r in selected(scenario, only, shard)],
        **({"decide": decide} if decide else {})})


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
    same = ("scenario", "sweep", "variants", "only", "repetitions")
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


def arms(spec):
    """What a run is part of: {(comparison key, row label)} for each of
    its media flows, as campaignrows.group() and stats.run_metrics() make them
    from meta.json and campaign.json: the key is (scenario, the setting's
    sweep values, flow), the label the variant's name; without variants,
    the key is the sweep point's setting (scenario.setting_of) and the
    label the flow's policy and options (scenario.flow_label)."""
    if spec.variant is not None:
        params = {k: v for k, v in spec.point.items()
                  if k not in spec.scenario.variants[0]["point"]}
    else:
        params = setting_of(spec.point)
    key = tuple(sorted((k, str(v)) for k, v in params.items()))
    out = set()
    for m in spec.config["media"]:
        out.add(((spec.scenario.name, key, m["name"]), spec.variant or flow_label(m)))
    return out


def needed(decision):
    """{(comparison key, label)} of the arms the open comparisons of a
    decision (decide.py's decision.json) still need: the variant and its
    baseline."""
    out = set()
    for c in decision["comparisons"]:
        if c["status"] == "open":
            key = (c["scenario"], tuple(sorted((k, str(v)) for k, v in c["params"].items())),
                   c["flow"])
            out |= {(key, c["variant"]), (key, c["baseline"])}
    return out


def decide_command(camp_dir, scenario_path, through):
    """The look through repetition `through`: `sbpn-lab decide` with the
    project's venv (the analysis needs numpy, which the runner does
    without), in the VM or on the host (hostlook)."""
    return [VENV_PYTHON, os.path.join(ROOT, "scripts", "sbpn-lab"), "decide", camp_dir,
            "--scenario", os.path.abspath(scenario_path), "--through", str(through)]


def _decision(camp_dir, rc, output, out):
    print(output.rstrip(), file=out, flush=True)
    if rc != 0:
        raise RuntimeError(f"sbpn-lab decide exited {rc}")
    with open(os.path.join(camp_dir, "decision.json"), encoding="utf-8") as f:
        return json.load(f)


def analyse_in_venv(camp_dir, scenario, through, out=sys.stderr):
    """Look here: run decide_command() and return the decision it wrote;
    RuntimeError if it failed."""
    p = subprocess.run(decide_command(camp_dir, scenario.path, through),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return _decision(camp_dir, p.returncode, p.stdout, out)


def analyse_on_host(camp_dir, scenario, through, out=sys.stderr):
    """Ask `sbpn-lab serve-looks` on the host for the look (hostlook);
    look here if no server takes the request."""
    try:
        rc, output = hostlook.ask(camp_dir, scenario.path, through)
    except hostlook.NotTaken as e:
        print(f"campaign {os.path.basename(camp_dir)}: {e}: looking in the VM", file=out,
              flush=True)
        return analyse_in_venv(camp_dir, scenario, through, out)
    except TimeoutError as e:
        raise RuntimeError(str(e)) from None
    return _decision(camp_dir, rc, output, out)


def run_decided(scenario, results_root, name=None, jobs=1, only=None, force=False,
                out=sys.stderr, settings=None, analyse=analyse_in_venv, slots=None):
    """Run the scenario in rounds (sbpn-lab run --decide): the repetitions
    up to settings' min_pairs, then step at a time, up to the scenario's
    repetitions; after each round but the last, analyse(camp_dir,
    scenario, last repetition) says (decision.json) which comparisons are
    still open, and the next round runs only the runs of those: whole
    pairs, the variant and its baseline.  Stops when none is open.  After
    the last round nothing is left to choose, so the last look is left to
    the host (the report computes the decision from the runs): under TCG
    the analysis (numpy and scipy loaded, every run's records read over
    9p) would only delay the VM's end.  slots: as run_campaign()'s; the
    campaign's weight for them is the runs its open comparisons could
    still need, up to the last repetition.
    Returns the failed runs as run_campaign() does."""
    from .sequential import looks
    settings = settings or scenario.decide
    name = name or scenario.name
    camp_dir = os.path.join(results_root, name)
    os.makedirs(camp_dir, exist_ok=True)
    write_index(scenario, camp_dir, name, only, None, settings)
    runs = selected(scenario, only)
    reps = scenario.config["scenario"]["repetitions"]
    cutoffs = looks(settings["min_pairs"], settings["step"], reps)
    failed, prev, want, backlog = [], 0, None, Backlog()
    for k, cut in enumerate(cutoffs, 1):
        rest = [r for r in runs if r.rep > prev and (want is None or arms(r) & want)]
        these = [r for r in rest if r.rep <= cut]
        backlog.n = sum(1 for r in rest if force or
                        run_status(os.path.join(camp_dir, r.id)) != "complete")
        print(f"campaign {name}: round {k} of at most {len(cutoffs)}: repetitions "
              f"{prev + 1}-{cut}, {len(these)} runs", file=out, flush=True)
        failed += run_campaign(scenario, results_root, name, jobs, only, force, out,
                               runs=these, decide=settings, slots=slots, backlog=backlog)
        if k == len(cutoffs):
            print(f"campaign {name}: the last look, after repetition {cut}, is the host's: "
                  "sbpn-lab report (or decide) computes it from the runs", file=out, flush=True)
            break
        t = time.monotonic()
        try:
            decision = analyse(camp_dir, scenario, cut, out=out)
        except (RuntimeError, OSError, ValueError) as e:
            print(f"campaign {name}: the analysis after round {k} failed ({e}): the "
                  "remaining rounds run in full", file=out, flush=True)
            decision = None
        print(f"campaign {name}: the analysis after round {k} took "
              f"{time.monotonic() - t:.0f} s", file=out, flush=True)
        want = needed(decision) if decision is not None else None
        if want is not None and not want:
            print(f"campaign {name}: every comparison stopped after repetition {cut} "
                  f"(decision.json)", file=out, flush=True)
            break
        prev = cut
    return failed


class Slots:
    """The slot numbers 0..jobs-1: a run takes one to run in (get()) and
    gives it back (put()); namespaces are named by it (run.execute()).
    A slot given back goes to the campaign with the largest backlog
    (Backlog: the runs it could still need, read when the slot is handed
    over) among those with a run waiting or about to ask (expect());
    among equals, to a run already waiting, the one that has waited
    longest, not to the thread that gave it back and asks again at once
    (as a queue.Queue would let it).  So campaigns that share the slots
    take turns, and the one that could still need the most runs goes
    first: the longest-first rule (Graham 1969), which keeps the end from
    being one campaign's rounds alone on a few slots while the others
    have long finished."""

    def __init__(self, jobs):
        self._lock = threading.Lock()
        self._free = collections.deque(range(jobs))
        self._waiting = []
        self._kept = {}
        self._expected = []

    def expect(self, backlog, runs):
        """runs of backlog's campaign will ask for a slot: until they have,
        a slot given back may be kept for them (a campaign whose runs hold
        every slot has nobody waiting when one of them ends), one for
        each run still to ask."""
        with self._lock:
            backlog.pending = runs
            if backlog not in self._expected:
                self._expected.append(backlog)

    def forget(self, backlog):
        """backlog's campaign asks no more (its round is over): the slots
        kept for it, if any, go to the others."""
        with self._lock:
            backlog.pending = 0
            kept = self._kept.pop(backlog, [])
        for slot in kept:
            self.put(slot)

    def get(self, backlog=None):
        """A slot, waiting for one if need be; backlog: the caller's
        campaign's Backlog, one less once the slot is the caller's."""
        with self._lock:
            if backlog is not None:
                backlog.pending = max(0, backlog.pending - 1)
            kept = self._kept.get(backlog)
            if kept or (self._free and not self._waiting):
                _started(backlog)
                return kept.pop() if kept else self._free.popleft()
            me = [threading.Event(), None, backlog]
            self._waiting.append(me)
        me[0].wait()
        return me[1]

    def put(self, slot):
        with self._lock:
            # (weight, a run waiting, how long it waited): the largest wins
            best, to = None, None
            for i, w in enumerate(self._waiting):
                key = (w[2].n if w[2] else 0, 1, -i)
                if best is None or key > best:
                    best, to = key, w
            for b in self._expected:
                if (b.pending > len(self._kept.get(b, ())) and
                        (best is None or (b.n, 0, 0) > best)):
                    best, to = (b.n, 0, 0), b
            if to is None:
                self._free.append(slot)
            elif isinstance(to, Backlog):
                self._kept.setdefault(to, []).append(slot)
            else:
                self._waiting.remove(to)
                _started(to[2])
                to[1] = slot
                to[0].set()


def _started(backlog):
    if backlog is not None:
        backlog.n = max(0, backlog.n - 1)


class Backlog:
    """How many runs a campaign could still need (n): the runs of its
    selection not yet started (run_campaign) or, deciding, those of its
    open comparisons up to the last repetition (run_decided); Slots weighs
    campaigns by it, and counts a run as started when it gets its slot.
    pending: the runs of its current round that have not yet asked for a
    slot (Slots.expect)."""

    def __init__(self, n=0):
        self.n = n
        self.pending = 0


def run_campaign(scenario, results_root, name=None, jobs=1, only=None, force=False,
                 out=sys.stderr, shard=None, runs=None, decide=None, slots=None,
                 backlog=None):
    """Run the scenario's runs (of shard (K, N) only, if given; the list
    runs of them, if given), jobs at once ("auto": autojobs.choose());
    return the list of (run id, reason) that failed.  slots: a Slots
    shared with campaigns run at the same time, so that all of them
    together run no more than jobs at once; jobs slots of its own by
    default; backlog: the campaign's Backlog, taken one from as each run
    starts (its runs to do by default).  OtherLength if a
    complete run is of another length (check_lengths()), unless force."""
    name = name or scenario.name
    camp_dir = os.path.join(results_root, name)
    os.makedirs(camp_dir, exist_ok=True)
    write_index(scenario, camp_dir, name, only, shard, decide)
    runs = selected(scenario, only, shard) if runs is None else runs
    if not force:
        check_lengths(runs, camp_dir)
    todo = [r for r in runs
            if force or run_status(os.path.join(camp_dir, r.id)) != "complete"]
    skipped = len(runs) - len(todo)
    if jobs == "auto":
        jobs = autojobs.choose(todo, camp_dir, name, out=out) if todo else 1
    print(f"campaign {name}: {len(runs)} runs, {skipped} already complete, "
          f"{len(todo)} to do, {jobs} at a time, about {_fmt_s(estimate_s(todo, jobs))} "
          f"-> {camp_dir}", file=out, flush=True)
    if slots is None:
        slots = Slots(jobs)
    if backlog is None:
        backlog = Backlog(len(todo))
    lock = threading.Lock()
    done, failed, started = [], [], time.monotonic()

    slots.expect(backlog, len(todo))

    def one(spec):
        slot = slots.get(backlog)
        try:
            t = time.monotonic()
            meta = execute(spec, os.path.join(camp_dir, spec.id), slot, name, jobs)
            return spec, meta, time.monotonic() - t
        finally:
            slots.put(slot)

    try:
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
                    print(f"[{len(done)}/{len(todo)}] {name}/{spec.id} {word} in {wall:.0f} s"
                          f"{extra}{'; ' + info if info else ''}; ETA {_fmt_s(eta)}",
                          file=out, flush=True)
    finally:
        slots.forget(backlog)
    print(f"campaign {name}: {len(done) - len(failed)} complete, {len(failed)} failed, "
          f"{skipped} skipped as complete, wall time {_fmt_s(time.monotonic() - started)}",
          file=out, flush=True)
    for rid, reason in failed:
        print(f"  failed: {rid}: {reason}", file=out)
    return failed
