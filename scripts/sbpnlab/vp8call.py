# SPDX-License-Identifier: GPL-2.0
"""The VP8 call's video as its viewer saw it, per flow of a run.

Reads the flow's frame records (<base>.frames.rec, records.read_frames())
and joins them with its packets (a stats.MediaFlow: the sender's and the
receiver's records), decides which frames were decoded and which of those
shown (quality.shown_frames()), has vp8-score decode the former from
<base>.ivf, put the latter on screen and score the screen against the
camera, and gathers the metrics (quality.call_quality();
Documentation/statistics.rst, "The VP8 call").  vp8-score's output, under
a line naming the frames decoded but not shown, is kept as
<base>.screen.tsv and reused while it is newer than its inputs and was
made from the frames the records say were decoded and shown.  <base> is
the run directory's media-<flow>.
"""
import math
import os
import subprocess

import numpy as np

from . import quality, records

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VP8_SCORE = os.path.join(ROOT, "userspace", "bin", "vp8-score")
SCREEN_COLUMNS = ["slot", "shown", "psnr_y", "ssim_y"]
HIDDEN = "# decoded, not shown:"


def paths(run_dir, name):
    """The flow's files: {frames, ivf, screen, send, recv}."""
    base = os.path.join(run_dir, f"media-{name}")
    return {"frames": base + ".frames.rec", "ivf": base + ".ivf",
            "screen": base + ".screen.tsv", "send": base + ".send.rec",
            "recv": base + ".recv.rec"}


def frame_table(rec, t0_ns):
    """Arrays per capture index from read_frames() Records: capture (s
    from t0), coded, key, refs (lists of capture indices), pieces,
    target_kbps, allowed_kbps (NaN for "-").  The sender writes a row when
    its capture is settled, so a frame coded in the encoder's thread may
    come after the captures that fell due meanwhile: rows are taken in
    capture order, and ValueError is raised unless each of 0..n-1 has one,
    or on fields that do not fit their status."""
    where = rec.meta.get("flow", "frames")
    rows = sorted(rec.rows, key=lambda r: int(r["frame"]))
    if [int(r["frame"]) for r in rows] != list(range(len(rows))):
        raise ValueError(f"{where}: frame column is not 0..{len(rows) - 1}, each once")
    for r in rows:
        if r["status"] not in ("coded", "skipped", "dropped", "busy"):
            raise ValueError(f"{where}: frame {r['frame']}: status {r['status']!r}")
        if (r["status"] == "coded") == (r["key"] == "-"):
            raise ValueError(f"{where}: frame {r['frame']}: key {r['key']!r} "
                             f"for a frame {r['status']}")

    def num(col):
        return np.array([math.nan if r[col] == "-" else float(r[col]) for r in rows])

    coded = np.array([r["status"] == "coded" for r in rows], dtype=bool)
    return {"capture": (np.array([int(r["capture_ns"]) for r in rows], dtype=np.int64)
                        - t0_ns) / 1e9,
            "coded": coded, "key": np.array([r["key"] == "1" for r in rows]),
            "refs": [[] if r["refs"] == "-" else [int(x) for x in r["refs"].split(",")]
                     for r in rows],
            "pieces": np.array([int(r["pieces"]) for r in rows]),
            "target_kbps": num("target_kbps"), "allowed_kbps": num("allowed_kbps")}


def frame_arrivals(flow, table):
    """Per capture index, from the flow's video packets (flow.frame is the
    capture index): arrival (the last piece's, NaN if one is missing or
    the capture was not coded) and deadline (the earliest expiry of its
    pieces).  ValueError when a coded frame's packets are not its pieces,
    or a frame not coded has packets."""
    n = len(table["coded"])
    v = flow.cls == "video"
    idx, recv, expiry = flow.frame[v], flow.recv[v], flow.expiry[v]
    if len(idx) and (idx.min() < 0 or idx.max() >= n):
        raise ValueError(f"{flow.name}: video packets of frames outside 0..{n - 1}")
    count = np.bincount(idx, minlength=n)
    wrong = np.flatnonzero(count != np.where(table["coded"], table["pieces"], 0))
    if len(wrong):
        i = wrong[0]
        raise ValueError(f"{flow.name}: frame {i} has {count[i]} packets, its record "
                         f"says {table['pieces'][i] if table['coded'][i] else 0}")
    deadline = np.full(n, np.inf)
    np.minimum.at(deadline, idx, expiry)
    lost = np.zeros(n, dtype=bool)
    np.logical_or.at(lost, idx, np.isnan(recv))
    arrival = np.full(n, -np.inf)
    np.maximum.at(arrival, idx, np.where(np.isnan(recv), -np.inf, recv))
    arrival[lost | ~table["coded"]] = np.nan
    return arrival, deadline


def read_screen(path, n):
    """A kept screen: (screen, psnr, ssim) arrays of n slots (vp8-score's
    rows) and the frames decoded but not shown (a list, from the line
    above them); ValueError if the file is not that."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    if (len(lines) < 2 or not lines[0].startswith(HIDDEN)
            or lines[1].split("\t") != SCREEN_COLUMNS):
        raise ValueError(f"{path}: not a screen kept from vp8-score")
    hidden = [int(x) for x in lines[0][len(HIDDEN):].split()]
    rows = [line.split("\t") for line in lines[2:]]
    if len(rows) != n or any(len(r) != 4 or int(r[0]) != k for k, r in enumerate(rows)):
        raise ValueError(f"{path}: expected slots 0..{n - 1}")
    return (np.array([-1 if r[1] == "-" else int(r[1]) for r in rows]),
            np.array([float(r[2]) for r in rows]), np.array([float(r[3]) for r in rows]),
            hidden)


def screen(p, meta, decoded, shown, score_bin=VP8_SCORE):
    """(screen, psnr, ssim) per slot: <screen> if it is newer than every
    input and was made from the frames decoded and shown (the frames on
    it are those shown, its first line names the others decoded), else
    vp8-score's, kept there."""
    n = len(shown)
    lists = {"decode": np.flatnonzero(decoded).tolist(), "show": np.flatnonzero(shown).tolist()}
    hidden = sorted(set(lists["decode"]) - set(lists["show"]))
    inputs = [p["frames"], p["ivf"], p["send"], p["recv"], score_bin]
    try:
        if os.path.getmtime(p["screen"]) > max(os.path.getmtime(x) for x in inputs):
            *got, was_hidden = read_screen(p["screen"], n)
            if sorted(set(got[0][got[0] >= 0].tolist())) == lists["show"] \
                    and was_hidden == hidden:
                return tuple(got)
    except (OSError, ValueError):
        pass
    cmd = [score_bin, "--ivf", p["ivf"]]
    for name, frames in lists.items():
        path = f"{p['screen']}.{name}"
        with open(path, "w", encoding="utf-8") as f:
            f.write("".join(f"{i}\n" for i in frames))
        cmd += [f"--{name}", path]
    cmd += ["--frames", str(n), "--fps", meta["fps"], "--width", meta["width"],
            "--height", meta["height"], "--seed", meta["scene_seed"]]
    r = subprocess.run(cmd, capture_output=True, text=True)
    for name in lists:
        os.remove(f"{p['screen']}.{name}")
    if r.returncode:
        raise ValueError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
    tmp = p["screen"] + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(" ".join([HIDDEN, *map(str, hidden)]) + "\n" + r.stdout)
    os.replace(tmp, p["screen"])
    return read_screen(p["screen"], n)[:3]


def flow_metrics(run_dir, name, flow, t0_ns, since, score_bin=VP8_SCORE):
    """The VP8 call's metrics (quality.call_quality()) of flow (a
    stats.MediaFlow of the run in run_dir), over the slots captured at or
    after since (s from t0: the flow's start + the warm-up), with the
    means of the encoder's target and the rate the transport allowed the
    video (kbit/s, over those slots' records that name one)."""
    p = paths(run_dir, name)
    rec = records.read_frames(p["frames"])
    if rec.meta.get("codec") != "vp8":
        raise ValueError(f"{p['frames']}: codec {rec.meta.get('codec')!r}, expected vp8")
    lifetime = int(flow.meta.get("lifetime_ns", 0)) / 1e9
    if lifetime <= 0:
        raise ValueError(f"{name}: no lifetime_ns in the sender's records: no playout delay")
    table = frame_table(rec, t0_ns)
    arrival, deadline = frame_arrivals(flow, table)
    decoded, shown, _ = quality.shown_frames(table["key"], table["refs"], arrival, deadline)
    on_screen, psnr, ssim = screen(p, rec.meta, decoded, shown, score_bin)
    fps = float(rec.meta["fps"])
    out = quality.call_quality(table["capture"], table["coded"], table["key"], shown,
                               on_screen, psnr, ssim, lifetime, 1 / fps, since)
    sel = table["capture"] >= since
    for col in ("target_kbps", "allowed_kbps"):
        x = table[col][sel]
        out[col] = float(np.nanmean(x)) if np.isfinite(x).any() else math.nan
    return out
