#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of vm_vp8.sh's run: BASE.send.tsv, BASE.recv.tsv, BASE.frames and
BASE.ivf, the model, sbpn-send's exit status and the path's rate (kbit/s).

  - both ends finished: exit 0 and the receiver's "complete";
  - the rate came from CCID 3: after its first RTT sample every capture
    has the rate CCID 3 allowed the video, and every frame coded with one
    has a target within the encoder's 5 % dead band of that rate bounded
    to the model's vp8_min_kbps..vp8_max_kbps; before it, the start rate;
    over the run's second half the median target is below the start rate
    and the path's rate (the call adapted down to the path);
  - every video packet left with its frame's layer's priority (key frames
    and the base layer video_priority, the layers above _t1 and _t2);
  - the IVF holds every coded frame, and video packets arrived.
Prints what is wrong; exit 0 when nothing is."""
import os
import statistics
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "scripts"))
from sbpnlab import records  # noqa: E402

base, model_path, rc, path_kbps = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
model = {}
with open(model_path, encoding="utf-8") as f:
    for line in f:
        k, sep, v = line.split("#")[0].partition("=")
        if sep:
            model[k.strip()] = v.strip()
lo, hi, start = (int(model[k]) for k in ("vp8_min_kbps", "vp8_max_kbps", "vp8_start_kbps"))
prio = {0: int(model["video_priority"]), 1: int(model["video_priority_t1"]),
        2: int(model["video_priority_t2"])}

bad = []
if rc != 0:
    bad.append(f"sbpn-send exit {rc}")
snd = records.read(base + ".send.tsv")
rcv = records.read(base + ".recv.tsv")
frames = records.read_frames(base + ".frames")
if rcv.trailer.get("complete") != "1":
    bad.append(f"the receiver did not complete: {rcv.trailer}")

coded = sorted((x for x in frames.rows if x["status"] == "coded"), key=lambda x: int(x["frame"]))
if len(coded) < 10:
    bad.append(f"only {len(coded)} frames coded")
known = [x for x in coded if x["allowed_kbps"] != "-"]
if not known:
    bad.append("no frame was coded with a rate from CCID 3")
else:
    first = int(known[0]["frame"])
    early = [x for x in coded if int(x["frame"]) < first and int(x["target_kbps"]) != start]
    if early:
        bad.append(f"before CCID 3's first RTT sample a target is not the start rate {start}: "
                   f"frame {early[0]['frame']} {early[0]['target_kbps']}")
    late = [x for x in coded if int(x["frame"]) >= first and x["allowed_kbps"] == "-"]
    if late:
        bad.append(f"frame {late[0]['frame']} coded without CCID 3's rate after frame {first}")
    off = []
    for x in known:
        want = round(min(max(float(x["allowed_kbps"]), lo), hi))
        if abs(int(x["target_kbps"]) - want) > 0.05 * int(x["target_kbps"]) + 1:
            off.append(f"frame {x['frame']}: target {x['target_kbps']}, allowed "
                       f"{x['allowed_kbps']} (bounded {want})")
    if off:
        bad.append(f"{len(off)} of {len(known)} targets do not follow CCID 3: " + "; ".join(off[:3]))
    half = [int(x["target_kbps"]) for x in coded if int(x["frame"]) >= len(frames.rows) // 2]
    if half and not statistics.median(half) < min(start, path_kbps):
        bad.append(f"the second half's median target {statistics.median(half)} kbit/s is not "
                   f"below the start rate {start} and the path's {path_kbps:g}")

layer = {int(x["frame"]): (x["key"] == "1", int(x["layer"])) for x in coded}
video = [x for x in snd.rows if x["class"] == "video"]
wrong = [x for x in video if int(x["frame"]) not in layer or int(x["prio"]) !=
         (prio[0] if layer[int(x["frame"])][0] else prio[layer[int(x["frame"])][1]])]
if not video or wrong:
    bad.append(f"{len(wrong)} of {len(video)} video packets without their layer's priority"
               + (f": seq {wrong[0]['seq']} frame {wrong[0]['frame']} prio {wrong[0]['prio']}"
                  if wrong else ""))
layers = {v[1] for v in layer.values()}
if layers != {0, 1, 2}:
    bad.append(f"the frames coded are of layers {sorted(layers)}, not 0, 1 and 2")

with open(base + ".ivf", "rb") as f:
    head = f.read(32)
n_ivf = struct.unpack_from("<I", head, 24)[0] if len(head) == 32 and head[:4] == b"DKIF" else -1
if n_ivf != len(coded):
    bad.append(f"the IVF says {n_ivf} frames, the records {len(coded)} coded")
got = sum(1 for x in rcv.rows if x["class"] == "video")
if not got:
    bad.append("no video packet arrived")

print("\n".join(bad) if bad else
      f"{len(coded)} frames coded, {len(known)} with CCID 3's rate (median "
      f"{statistics.median(float(x['allowed_kbps']) for x in known):.0f} kbit/s), "
      f"{len(video)} video packets sent, {got} received")
sys.exit(1 if bad else 0)
