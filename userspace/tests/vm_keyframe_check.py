#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of one vm_keyframe.sh case: BASE.send.tsv, BASE.notices.tsv,
BASE.recv.tsv when the sources include receiver, the sources given and
sbpn-send's exit status.  Each source given must have forced a frame.
Prints what is wrong; exit 0 when nothing is."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "scripts"))
from sbpnlab import records  # noqa: E402

base, sources, rc = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
bad = []
if rc != 0:
    bad.append(f"sbpn-send exit {rc}")
snd = records.read(base + ".send.tsv")
notices = records.read_notices(base + ".notices.tsv")
frames = {}
for x in snd.rows:
    if x["class"] == "video":
        frames.setdefault(int(x["frame"]), (x["key"], x["forced"], int(x["seq"])))
by_seq = {int(x["seq"]): x for x in snd.rows}
video_notices = [int(n["seq"]) for n in notices.rows if n["class"] == "video"]
forced = {f: why for f, (k, why, _) in frames.items() if why != "-"}
if not video_notices:
    bad.append("no video drop notice: the path did not make the policy drop video")
if "notice" in sources and not any(w == "notice" for w in forced.values()):
    bad.append(f"no frame forced by a notice ({len(video_notices)} video notices)")
if "receiver" in sources:
    # with notices too, the notice usually tells first and the receiver's
    # later report of the same loss is ignored (traffic.rst): whether one
    # of its requests still forces a frame in a short run is chance, so
    # only the receiver alone must have forced one
    if sources == ["receiver"] and not any(w == "receiver" for w in forced.values()):
        bad.append("no frame forced by a receiver's request")
    rcv = records.read(base + ".recv.tsv")
    if int(rcv.trailer.get("keyframe_requests_sent", 0)) < 1:
        bad.append(f"the receiver sent no request: {rcv.trailer}")
    if int(snd.trailer.get("keyframes_forced_receiver", -1)) != sum(w == "receiver" for w in forced.values()):
        bad.append(f"trailer {snd.trailer.get('keyframes_forced_receiver')} != receiver-forced frames")
if set(forced.values()) - set(sources):
    bad.append(f"forced by {set(forced.values())}, only {sources} asked")
# each notice-forced frame follows a video notice of an earlier frame
noticed = sorted(int(by_seq[s]["frame"]) for s in video_notices if s in by_seq)
for f, why in forced.items():
    if why == "notice" and not any(g < f for g in noticed):
        bad.append(f"frame {f} forced by a notice before any video notice")
if int(snd.trailer.get("keyframes_forced_notice", -1)) != sum(w == "notice" for w in forced.values()):
    bad.append(f"trailer {snd.trailer.get('keyframes_forced_notice')} != forced frames")
print(f"{len(forced)} forced ({sorted(set(forced.values()))}), {len(video_notices)} video notices")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
