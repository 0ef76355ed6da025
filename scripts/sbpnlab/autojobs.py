# SPDX-License-Identifier: GPL-2.0
"""--jobs auto: the most runs at once that leave the experiment undisturbed.

Runs at once share the guest's vCPUs.  What a shortage of CPU does to an
experiment shows first in two places: the media sender wakes late for its
packets (sent_ns - planned_ns in the sender's records), and the emulated
path gets slower (the forwarding, netem and tbf run in softirq on the same
vCPUs, so even a packet that meets no queue takes longer than the
configured delay).  So the probe is the campaign's own first run,
shortened to PROBE_S and judged on its second half: twice alone, then
LEVELS at once.  A level passes while every run completes and the median
of its runs' send lateness p99 is at most LATE_TOL_MS above the higher of
the two serial runs', and likewise their minimum one-way delay (the path's
base delay) within OWD_TOL_MS; the first level that fails ends the
search.  The median, not the worst run: a single run's p99 varies by a
few ms from run to run, and the worst of N grows with N by chance alone.
The probes run in a scratch directory and are deleted; their figures and
the choice go to jobs-auto.json in the campaign directory, and a resumed
campaign reuses that choice.
"""
import concurrent.futures
import copy
import json
import os
import shutil
import statistics
import sys
import tempfile

from . import records
from .run import execute

PROBE_S = 20
LATE_TOL_MS = 2.0
OWD_TOL_MS = 2.0
LEVELS = (2, 4, 6, 8, 12, 16, 24, 32)
FILE = "jobs-auto.json"


class ProbeFailed(Exception):
    """The probe run alone did not complete: nothing to compare with."""


def levels(cpus):
    """The concurrencies to try on a guest with cpus vCPUs."""
    return [n for n in LEVELS if n <= 4 * cpus]


def shortened(spec, secs=PROBE_S):
    """A copy of spec lasting at most secs, its traffic's start and stop
    times scaled with it (the link schedule keeps its own times), its
    first half a warm-up."""
    p = copy.copy(spec)
    p.config = cfg = copy.deepcopy(spec.config)
    dur = cfg["scenario"]["duration_s"]
    f = min(1.0, secs / dur)
    cfg["scenario"]["duration_s"] = dur * f
    # Judged on the second half only: a level's runs all start at once, and
    # under TCG the starts (processes, code translation, handshakes) delay
    # everything for several seconds, which a campaign's staggered runs do
    # not see after its first few.
    cfg["scenario"]["warmup_s"] = dur * f / 2
    for m in cfg["media"]:
        m["start_s"] *= f
    for g in cfg["tcp"]:
        g["start_s"] *= f
        g["stop_s"] = max(g["start_s"] + 1, g["stop_s"] * f)
    return p


def _percentile(xs, q):
    """numpy.percentile's default (linear interpolation), as stats.py's
    send_late_p99_ms computes it; the guest has no numpy."""
    if len(xs) == 1:
        return xs[0]
    return statistics.quantiles(xs, n=100, method="inclusive")[q - 1]


def measure(run_dir):
    """(send lateness p99, minimum one-way delay) in ms over the run's media
    flows, their first warm-up seconds left out; None if the run did not
    complete or sent nothing."""
    try:
        with open(os.path.join(run_dir, "meta.json"), encoding="utf-8") as f:
            meta = json.load(f)
    except (OSError, ValueError):
        return None
    if meta.get("status") != "complete":
        return None
    warm_ns = meta["t0_ns"] + round(meta["config"]["scenario"]["warmup_s"] * 1e9)
    late, owd = [], []
    for m in meta["config"]["media"]:
        base = os.path.join(run_dir, f"media-{m['name']}")
        send, recv = records.read(base + ".send.rec"), records.read(base + ".recv.rec")
        late += [int(r["sent_ns"]) - int(r["planned_ns"]) for r in send.rows
                 if int(r["planned_ns"]) >= warm_ns]
        owd += [int(r["recv_ns"]) - int(r["sent_ns"]) for r in recv.rows
                if int(r["sent_ns"]) >= warm_ns]
    if not late or not owd:
        return None
    return _percentile(late, 99) / 1e6, min(owd) / 1e6


def _probe(spec, n, scratch, campaign):
    """Run n copies of spec at once; their measures (None for a failed one)."""
    def one(slot):
        d = os.path.join(scratch, f"n{n}-{slot}")
        execute(spec, d, slot, campaign, jobs=n)
        return measure(d)
    with concurrent.futures.ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(one, range(n)))


def choose(runs, camp_dir, campaign, cpus=None, out=sys.stderr, probe=None):
    """The concurrency for runs; probes only if camp_dir has no choice yet."""
    path = os.path.join(camp_dir, FILE)
    try:
        with open(path, encoding="utf-8") as f:
            jobs = int(json.load(f)["jobs"])
        print(f"--jobs auto: {jobs}, chosen when this campaign started ({path})",
              file=out, flush=True)
        return jobs
    except (OSError, ValueError, KeyError, TypeError):
        pass
    cpus, probe = cpus or os.cpu_count(), probe or _probe
    spec = shortened(runs[0])
    scratch = tempfile.mkdtemp(prefix="sbpnlab-jobs-")
    print(f"--jobs auto: probing with {spec.id} for "
          f"{spec.config['scenario']['duration_s']:g} s: twice alone, then "
          f"{', '.join(map(str, levels(cpus)))} at once", file=out, flush=True)
    alone = probe(spec, 1, scratch, campaign) + probe(spec, 1, scratch, campaign)
    if None in alone:
        raise ProbeFailed(f"a probe run alone failed (left in {scratch})")
    limit = (max(a[0] for a in alone) + LATE_TOL_MS, max(a[1] for a in alone) + OWD_TOL_MS)
    tried, jobs, why = [{"jobs": 1, "send_late_p99_ms": [a[0] for a in alone],
                         "owd_min_ms": [a[1] for a in alone]}], 1, None
    print("  1: send late p99 " + ", ".join(f"{a[0]:.1f}" for a in alone) +
          " ms; one-way delay min " + ", ".join(f"{a[1]:.1f}" for a in alone) + " ms",
          file=out, flush=True)
    for n in levels(cpus):
        got = probe(spec, n, scratch, campaign)
        ok = [g for g in got if g is not None]
        row = {"jobs": n, "failed": len(got) - len(ok),
               "send_late_p99_ms": [g[0] for g in ok], "owd_min_ms": [g[1] for g in ok]}
        tried.append(row)
        late = statistics.median(row["send_late_p99_ms"]) if ok else None
        owd = statistics.median(row["owd_min_ms"]) if ok else None
        if row["failed"]:
            why = f"{row['failed']} of {n} probe runs failed"
        elif late > limit[0]:
            why = f"send late p99 {late:.1f} ms > {limit[0]:.1f}"
        elif owd > limit[1]:
            why = f"one-way delay min {owd:.1f} ms > {limit[1]:.1f}"
        print(f"  {n}: " + (f"send late p99 {late:.1f} ms, one-way delay min {owd:.1f} ms "
                            "(medians)" if ok else "")
              + (f" -> too many: {why}" if why else ""), file=out, flush=True)
        if why:
            break
        jobs = n
    shutil.rmtree(scratch, ignore_errors=True)
    print(f"--jobs auto: {jobs}" + (f" ({tried[-1]['jobs']} disturbed the runs)" if why
                                    else " (the most tried)"), file=out, flush=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"jobs": jobs, "cpus": cpus, "probe": spec.id,
                   "probe_s": spec.config["scenario"]["duration_s"],
                   "late_tol_ms": LATE_TOL_MS, "owd_tol_ms": OWD_TOL_MS,
                   "limits_ms": {"send_late_p99": limit[0], "owd_min": limit[1]},
                   "tried": tried, "stopped_by": why}, f, indent=1)
        f.write("\n")
    return jobs
