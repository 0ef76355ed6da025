#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of sbpn-send --source vp8 (no socket: --dry-run).

The frame records against the packet records and the IVF (every coded
frame's bytes are its packets' payload past the header, in order; pts is
the capture index); the L1T3 pattern, each frame's references and the
priority of each layer; the same seed gives the same bitstream and another
seed another picture; the start rate sets the bitstream's rate; what
vp8-score decodes from the whole stream looks like the camera; bad models
and flags are refused with the field named.  build/vp8enc-test checks the
ladder and the rate a transport sets, which --dry-run never does.

host_tests.py runs these among its own (tests(tmp)).
"""
import os
import struct
import subprocess
import sys

US = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(US)
SEND, SCORE = f"{US}/bin/sbpn-send", f"{US}/bin/vp8-score"
ENC_TEST = f"{US}/build/vp8enc-test"
MODEL = f"{US}/models/vp8.model"
sys.path.insert(0, f"{ROOT}/scripts")
from sbpnlab import records  # noqa: E402

DURATION = 6    # s: 60 captures at the model's 10 frames/s


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def run(args):
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def table(path, magic):
    with open(path) as f:
        lines = [ln.rstrip("\n") for ln in f if not ln.startswith("#")]
    with open(path) as f:
        check(f.readline().rstrip("\n") == magic, f"{path}: not {magic}")
    head = lines[0].split("\t")
    return [dict(zip(head, ln.split("\t"))) for ln in lines[1:]]


def ivf(path):
    """(header fields, [(pts, bytes)])"""
    with open(path, "rb") as f:
        b = f.read()
    check(b[:4] == b"DKIF" and b[8:12] == b"VP80", f"{path}: not a VP8 IVF")
    w, h, rate, scale, n = struct.unpack_from("<HHIII", b, 12)
    out, off = [], 32
    while off < len(b):
        size, pts = struct.unpack_from("<IQ", b, off)
        out.append((pts, b[off + 12:off + 12 + size]))
        off += 12 + size
    return {"w": w, "h": h, "rate": rate, "scale": scale, "n": n}, out


def call(tmp, name, *extra, model=MODEL):
    base = os.path.join(tmp, name)
    p = run([SEND, "--dry-run", "--source", "vp8", "--model", model, "--flow", "v",
             "--duration", str(DURATION), "--out", base + ".send.rec",
             "--frames", base + ".frames.rec", "--bitstream", base + ".ivf", *extra])
    check(p.returncode == 0, f"sbpn-send: rc {p.returncode}: {p.stderr}")
    return (table(base + ".frames.rec", "# sbpn-frames 1"),
            table(base + ".send.rec", "# sbpn-records 1"), ivf(base + ".ivf"), base)


def model_with(tmp, name, **keys):
    """vp8.model with some keys replaced (or added)."""
    path = os.path.join(tmp, name)
    with open(MODEL) as f:
        lines = [ln for ln in f if ln.split("=")[0].strip() not in keys]
    with open(path, "w") as f:
        f.writelines(lines)
        f.writelines(f"{k} = {v}\n" for k, v in keys.items())
    return path


def t_frames_match_packets_and_ivf(tmp):
    frames, pkts, (hdr, ivf_frames), _ = call(tmp, "a")
    check(len(frames) == DURATION * 10, f"{len(frames)} captures, want {DURATION * 10}")
    coded = [f for f in frames if f["status"] == "coded"]
    check(len(coded) >= len(frames) - 2, f"only {len(coded)} of {len(frames)} coded")
    check([int(f["frame"]) for f in frames] == list(range(len(frames))), "captures not 0..n-1")
    check((hdr["w"], hdr["h"], hdr["rate"] / hdr["scale"], hdr["n"]) ==
          (320, 240, 10.0, len(coded)), f"IVF header {hdr}")
    check([p for p, _ in ivf_frames] == [int(f["frame"]) for f in coded], "IVF pts != captures")
    check([len(b) for _, b in ivf_frames] == [int(f["bytes"]) for f in coded],
          "IVF sizes != the frame records' bytes")
    video = [p for p in pkts if p["class"] == "video"]
    for f in coded:
        mine = [p for p in video if p["frame"] == f["frame"]]
        check(len(mine) == int(f["pieces"]), f"frame {f['frame']}: {len(mine)} packets, "
              f"pieces {f['pieces']}")
        check(sum(int(p["size"]) - 32 for p in mine) == int(f["bytes"]),
              f"frame {f['frame']}: payload past the headers != its bytes")
        check(all(int(p["size"]) <= 1026 for p in mine), "a piece above video_max_packet")
        check(all(p["planned_ns"] == f["capture_ns"] and p["key"] == f["key"] for p in mine),
              f"frame {f['frame']}: packets' planned time or key differ from its record")
    check({p["frame"] for p in video} == {f["frame"] for f in coded},
          "video packets of frames not coded")


def t_layers_refs_and_priorities(tmp):
    frames, pkts, _, _ = call(tmp, "b")
    coded = [f for f in frames if f["status"] == "coded"]
    check(coded[0]["key"] == "1" and coded[0]["refs"] == "-", "the first frame is not a key frame")
    pattern = [0, 2, 1, 2]
    last = {}       # buffer -> frame that wrote it: LAST by layer 0, GOLDEN by layer 1
    for i, f in enumerate(coded):
        n, layer = int(f["frame"]), int(f["layer"])
        if f["key"] == "1":
            last = {"last": n, "golden": n}
            continue
        check(layer == pattern[i % 4], f"frame {n}: layer {layer}, L1T3 wants {pattern[i % 4]}")
        want = {last["last"]} | ({last["golden"]} if i % 4 == 3 else set())
        got = {int(r) for r in f["refs"].split(",")}
        check(got == want, f"frame {n} (layer {layer}): refs {sorted(got)}, want {sorted(want)}")
        if layer == 0:
            last["last"] = n
        elif layer == 1:
            last["golden"] = n
    prio = {"0": "2", "1": "1", "2": "0"}
    for p in pkts:
        if p["class"] == "audio":
            check(p["prio"] == "3", f"audio priority {p['prio']}")
            continue
        f = frames[int(p["frame"])]
        want = "2" if f["key"] == "1" else prio[f["layer"]]
        check(p["prio"] == want, f"frame {f['frame']} layer {f['layer']}: prio {p['prio']}, "
              f"want {want}")


def t_seed_fixes_the_stream(tmp):
    a = call(tmp, "s1")[2][1]
    b = call(tmp, "s1b")[2][1]
    c = call(tmp, "s2", "--seed", "2")[2][1]
    check(a == b, "the same seed gave another bitstream")
    check(a != c, "another seed gave the same bitstream")


def t_start_rate_sets_the_rate(tmp):
    rates = {}
    for kbps in (100, 400):
        frames = call(tmp, f"r{kbps}", model=model_with(tmp, f"r{kbps}.model",
                                                         vp8_start_kbps=kbps))[0]
        # after the first second: the encoder's buffer has settled
        late = [f for f in frames if int(f["frame"]) >= 10]
        rates[kbps] = sum(int(f["bytes"]) for f in late) * 8 / (len(late) / 10) / 1000
        check(all(f["target_kbps"] == str(kbps) for f in frames),
              f"target_kbps not {kbps} throughout")
    for kbps, got in rates.items():
        check(0.6 * kbps <= got <= 1.3 * kbps, f"start {kbps} kbit/s: coded {got:.0f} kbit/s")


def t_decoded_stream_looks_like_the_camera(tmp):
    frames, _, _, base = call(tmp, "d")
    shown = [f["frame"] for f in frames if f["status"] == "coded"]
    with open(base + ".show", "w") as f:
        f.write("".join(s + "\n" for s in shown))
    p = run([SCORE, "--ivf", base + ".ivf", "--show", base + ".show", "--frames",
             str(len(frames)), "--fps", "10", "--width", "320", "--height", "240",
             "--seed", "1", "--out", base + ".screen"])
    check(p.returncode == 0, f"vp8-score: rc {p.returncode}: {p.stderr}")
    with open(base + ".screen") as f:
        lines = [ln.rstrip("\n").split("\t") for ln in f][1:]
    ssim = [float(r[3]) for r in lines]
    psnr = [float(r[2]) for r in lines]
    check(len(ssim) == len(frames), "one screen line per capture")
    check(min(ssim) > 0.6 and sum(ssim) / len(ssim) > 0.8,
          f"SSIM min {min(ssim):.3f} mean {sum(ssim) / len(ssim):.3f}: not the camera's picture")
    check(sum(psnr) / len(psnr) > 27, f"PSNR mean {sum(psnr) / len(psnr):.1f} dB")
    # against another scene the same stream must look wrong
    p = run([SCORE, "--ivf", base + ".ivf", "--show", base + ".show", "--frames",
             str(len(frames)), "--fps", "10", "--width", "320", "--height", "240",
             "--seed", "2", "--out", base + ".other"])
    with open(base + ".other") as f:
        other = [float(ln.split("\t")[3]) for ln in list(f)[1:]]
    check(sum(other) / len(other) < 0.5, f"scene 2 scores SSIM {sum(other) / len(other):.3f}")


def t_bad_input_is_refused(tmp):
    for keys, field in (({"vp8_layers": 4}, "vp8_layers"), ({"vp8_cpu_used": 17}, "vp8_cpu_used"),
                        ({"vp8_min_kbps": 500, "vp8_max_kbps": 100}, "vp8_min_kbps")):
        path = model_with(tmp, "bad.model", **keys)
        p = run([SEND, "--dry-run", "--source", "vp8", "--model", path, "--flow", "v",
                 "--out", os.path.join(tmp, "bad.rec")])
        check(p.returncode == 2 and field in p.stderr,
              f"{keys}: rc {p.returncode}, stderr {p.stderr!r}")
    p = run([SEND, "--dry-run", "--flow", "v", "--out", os.path.join(tmp, "x.rec"),
             "--frames", os.path.join(tmp, "x.frames")])
    check(p.returncode == 2 and "--source vp8" in p.stderr, f"--frames with ekiga: {p.stderr!r}")


def t_encoder_ladder_and_rate():
    p = run([ENC_TEST])
    check(p.returncode == 0, f"vp8enc-test: rc {p.returncode}: {p.stdout}{p.stderr}")


def tests(tmp):
    """(name, function) pairs for host_tests.py."""
    def bind(fn):
        def t():
            fn(tmp) if fn.__code__.co_argcount else fn()
        t.__name__ = fn.__name__[2:]
        return t
    return [bind(fn) for name, fn in sorted(globals().items())
            if name.startswith("t_") and callable(fn)]
