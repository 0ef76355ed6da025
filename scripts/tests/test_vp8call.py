#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of the VP8 call's metrics: decodability by explicit
references, the frames decoded and those shown, freezes with the call's
leading and trailing gaps, and whole calls scored end to end
(sbpnlab.vp8call: the records, vp8-score on an IVF that libvpx made in the
test, sbpnlab.quality.call_quality); KTAP output.

Every expected number is worked by hand in the comment above its check
(Documentation/statistics.rst, "The VP8 call").  The end-to-end tests need
userspace/bin/vp8-score and userspace/build/vp8-ivf-test (make -C
userspace check builds both).
Run with the venv: scripts/venv.sh && .venv/bin/python scripts/tests/test_vp8call.py
Exit 1 if any test failed.
"""
import math
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, SCRIPTS)
import ktap  # noqa: E402 - beside this file
try:
    import numpy as np
    from sbpnlab import quality, records, stats, vp8call
except ImportError as e:
    print(f"Bail out! {e}: run scripts/venv.sh, then .venv/bin/python {sys.argv[0]}")
    sys.exit(1)

US = os.path.join(os.path.dirname(SCRIPTS), "userspace")
IVF_TEST = os.path.join(US, "build", "vp8-ivf-test")
INF = math.inf
TMP = tempfile.mkdtemp(prefix="sbpn-vp8call.")
test, tests = ktap.collector()
check = ktap.check


def close(got, want, tol, what):
    check(abs(got - want) <= tol, f"{what}: {got!r}, want {want} ±{tol}")


# L1T2 as vp8-ivf-test codes it: 0 key; even n references n - 2 (layer
# 0), odd n references n - 1 (layer 1, referenced by nothing).
def l1t2(n):
    return [[] if i == 0 else [i - 2] if i % 2 == 0 else [i - 1] for i in range(n)]


# ---- decodability -----------------------------------------------------------------

@test
def explicit_refs_differ_from_the_previous_frame_rule():
    refs, key = l1t2(8), [1] + [0] * 7
    # Frame 3 (layer 1) lost: nothing references it, 4 references 2, so
    # 4..7 stay decodable; the frame-1 rule loses 4..7 too.
    complete = [1, 1, 1, 0, 1, 1, 1, 1]
    got = quality.decodable_refs(complete, key, refs)
    check(list(got) == [1, 1, 1, 0, 1, 1, 1, 1], f"layer-1 loss, explicit: {list(got)}")
    old = quality.decodable(complete, key)
    check(list(old) == [1, 1, 1, 0, 0, 0, 0, 0], f"layer-1 loss, frame-1 rule: {list(old)}")
    # Frame 4 (layer 0) lost: 5 references 4, 6 references 4, 7 references
    # 6: none of them decodable; 3 (references 2) is.
    complete = [1, 1, 1, 1, 0, 1, 1, 1]
    got = quality.decodable_refs(complete, key, refs)
    check(list(got) == [1, 1, 1, 1, 0, 0, 0, 0], f"layer-0 loss: {list(got)}")
    # L1T3 (libvpx's pattern: 0 key, layer 2 at odd n references the
    # frame before, layer 1 at n = 2 mod 4 references n - 2, layer 0 at
    # n = 0 mod 4 references n - 4): lost layer-1 frame 2 breaks 3, not 4
    # or 5; lost layer-0 frame 4 breaks 5, 6 and 7 (7 references 6).
    refs3 = [[], [0], [0], [2], [0], [4], [4], [6], [4]]
    key3 = [1] + [0] * 8
    got = quality.decodable_refs([1, 1, 0, 1, 1, 1, 1, 1, 1], key3, refs3)
    check(list(got) == [1, 1, 0, 0, 1, 1, 1, 1, 1], f"L1T3 layer-1 loss: {list(got)}")
    got = quality.decodable_refs([1, 1, 1, 1, 0, 1, 1, 1, 1], key3, refs3)
    check(list(got) == [1, 1, 1, 1, 0, 0, 0, 0, 0], f"L1T3 layer-0 loss: {list(got)}")
    # A frame referencing two frames needs both: 3 references 1 and 2.
    got = quality.decodable_refs([1, 0, 1, 1], [1, 0, 0, 0], [[], [0], [0], [1, 2]])
    check(list(got) == [1, 0, 1, 0], f"two references: {list(got)}")


@test
def references_are_checked():
    for refs, what in (([[], [], [1]], "a P-frame without references"),
                       ([[], [2], [1]], "a reference to a later frame")):
        try:
            quality.decodable_refs([1, 1, 1], [1, 0, 0], refs)
        except ValueError:
            continue
        check(False, f"{what} accepted")


@test
def shown_frames_wait_for_their_references():
    # Frames 0, 1, 2 (L1T2: 1 and 2 reference 0), deadlines 0.2, 0.3,
    # 0.4; 0 arrives at 0.15, 1 at 0.25, 2 at 0.1.  Ready: 0.15, 0.25,
    # max(0.1, 0.15) = 0.15: all shown.
    deadline = np.array([.2, .3, .4])
    decoded, shown, ready = quality.shown_frames([1, 0, 0], [[], [0], [0]],
                                                 np.array([.15, .25, .1]), deadline)
    check(list(decoded) == list(shown) == [1, 1, 1] and list(ready) == [.15, .25, .15],
          f"{decoded} {shown} {ready}")
    # Deadlines out of capture order (0.5 for frame 0, 0.3 for 1): 1 is
    # complete at 0.25 but its reference is ready at 0.45 > 0.3: decoded,
    # not shown.
    decoded, shown, ready = quality.shown_frames([1, 0], [[], [0]], np.array([.45, .25]),
                                                 np.array([.5, .3]))
    check(list(decoded) == [1, 1] and list(shown) == [1, 0] and ready[1] == .45,
          f"late reference: {decoded} {shown} {ready}")


@test
def a_late_reference_is_decoded_for_the_frames_after_it():
    # L1T2 frames 0..4 captured at 0, 0.1, .. 0.4, deadlines capture + 0.2;
    # each arrives 0.05 after capture but layer-0 frame 2 (referenced by 3
    # and 4), complete at 0.45: after its own deadline 0.4, before 3's 0.5.
    # Decoded: all.  Ready: 0.05, 0.15, 0.45, max(0.35, 0.45), max(0.45,
    # 0.45).  Shown: 2 is not (0.45 > 0.4), 3 and 4 are (0.45 <= 0.5,
    # 0.6): the receiver decoded 2, only too late to show it.  With 2's
    # references to be shown, or its pieces to arrive by its deadline to
    # count, 3 and 4 would not be shown.
    refs, key = l1t2(5), [1, 0, 0, 0, 0]
    deadline = np.arange(5) / 10 + 0.2
    arrival = np.arange(5) / 10 + 0.05
    arrival[2] = 0.45
    decoded, shown, ready = quality.shown_frames(key, refs, arrival, deadline)
    check(list(decoded) == [1] * 5 and list(shown) == [1, 1, 0, 1, 1],
          f"late frame 2: decoded {list(decoded)} shown {list(shown)}")
    close(ready[3], 0.45, 1e-12, "ready 3")
    # 2 complete at 0.55, after 3's deadline too: 3 is not shown (ready
    # 0.55 > 0.5), 4 is (0.55 <= 0.6)
    arrival[2] = 0.55
    decoded, shown, _ = quality.shown_frames(key, refs, arrival, deadline)
    check(list(decoded) == [1] * 5 and list(shown) == [1, 1, 0, 0, 1],
          f"later frame 2: decoded {list(decoded)} shown {list(shown)}")
    # 2 lost (a piece never arrived): neither it nor 3 and 4, which
    # reference it, is decoded; 1 references 0 and is
    arrival[2] = math.nan
    decoded, shown, _ = quality.shown_frames(key, refs, arrival, deadline)
    check(list(decoded) == list(shown) == [1, 1, 0, 0, 0],
          f"lost frame 2: decoded {list(decoded)} shown {list(shown)}")


# ---- freezes over the whole call ---------------------------------------------------

@test
def freeze_gaps_lead_and_trail():
    # 100 slots at 10 fps from t = 0 (10 s), playout 0.2 s: the call runs
    # from 0.2 s (slot 0's display) to 10.2 s (slot 99's + 0.1).  Frames
    # 10..79 shown, rendered at 1.2 .. 8.1 s.
    #   leading gap 1.2 - 0.2 = 1.0 s; window 5 x 100 + 1000: mean 250,
    #     threshold max(750, 400) = 750 <= 1000: a freeze of 1.0 s
    #   69 delays of 100 ms: none
    #   trailing gap 10.2 - 8.1 = 2.1 s: window 29 x 100 + 2100 = 5000 /
    #     30 = 166, threshold max(498, 316): a freeze of 2.1 s
    # 3.1 s in 10 s: 18.6 s per minute.  Wrong versions: without the
    # leading gap 2.1 x 6 = 12.6, without the trailing 1.0 x 6 = 6.0, the
    # seconds not per minute 3.1, the leading gap from capture (not
    # display) 1.2 + 2.1 = 3.3 x 6 = 19.8, without the window's start
    # (the leading gap judged before five delays: none) 12.6.
    t = np.arange(100) / 10
    shown = (np.arange(100) >= 10) & (np.arange(100) < 80)
    count, secs = quality.call_freezes(t[shown] + 0.2, 0.2, 10.2, 0.1)
    check(count == 2, f"freezes {count}")
    close(secs, 3.1, 1e-9, "freeze seconds")
    screen = np.where(np.arange(100) < 10, -1, np.minimum(np.arange(100), 79))
    q = quality.call_quality(t, np.ones(100), np.arange(100) == 0, shown, screen,
                             np.full(100, 30.0), np.full(100, .9), 0.2, 0.1)
    close(q["freeze_s_per_min"], 18.6, 1e-9, "freeze_s_per_min")
    check(q["freezes"] == 2, f"freezes {q['freezes']}")
    # 70 of 100 coded frames shown; 100 coded in 10 s
    close(q["frames_shown_pct"], 70.0, 1e-9, "frames_shown_pct")
    close(q["coded_fps"], 10.0, 1e-9, "coded_fps")
    # Ages: slots 0..9 black (inf), 10..79 0.2 s, 80..99 frame 79's, 0.2
    # + 0.1 x (1..20) s: sorted 70 x 200 ms (0..69), 300 .. 2200 ms
    # (70..89), 10 x inf (90..99); h = 99 x 0.95 = 94.05: inf.
    check(q["frame_delay_p95_ms"] == INF, f"p95 {q['frame_delay_p95_ms']}")


@test
def a_blank_call_is_one_freeze_of_the_whole_call():
    # Nothing rendered in a 10 s call: one freeze of 10 s, 60 s per minute.
    check(quality.call_freezes([], 0.2, 10.2, 0.1) == (1, 10.0), "no render")
    t = np.arange(100) / 10
    q = quality.call_quality(t, np.ones(100), np.arange(100) == 0, np.zeros(100), np.full(100, -1),
                             np.full(100, 6.0), np.full(100, .05), 0.2, 0.1)
    close(q["freeze_s_per_min"], 60.0, 1e-9, "blank freeze_s_per_min")
    check(q["frames_shown_pct"] == 0 and q["frame_delay_p95_ms"] == INF, f"blank {q}")
    # Every frame shown: the leading gap is 0 (no delay), the trailing one
    # frame interval: no freeze; every slot's age is the playout delay.
    q = quality.call_quality(t, np.ones(100), np.arange(100) == 0, np.ones(100), np.arange(100),
                             np.full(100, 40.0), np.full(100, .95), 0.2, 0.1)
    check(q["freeze_s_per_min"] == 0 and q["frames_shown_pct"] == 100, f"all shown {q}")
    close(q["frame_delay_p95_ms"], 200, 1e-9, "all shown p95")


@test
def video_quality_counts_a_blank_call_as_frozen():
    # 100 frames at 10 fps, lifetime 0.2 s, every packet lost: the call
    # (0.2 .. 10.2 s on the render clock) is one freeze of 10 s, 60 s per
    # minute; before the gaps counted it was 0, the best value.
    planned = np.arange(100) / 10
    got = quality.video_quality(planned, np.full(100, math.nan), planned + 0.2)
    check(got["decodable_frac"] == 0 and got["freezes"] == 1, f"blank {got}")
    close(got["freeze_s_per_min"], 60.0, 1e-9, "blank freeze_s_per_min")
    # Frames 0..79 arrive, 80..99 lost: the trailing gap 10.2 - 8.1 = 2.1 s
    # is a freeze (as above): 2.1 x 6 = 12.6 s per minute.
    recv = planned + 0.05
    recv[80:] = math.nan
    got = quality.video_quality(planned, recv, planned + 0.2)
    close(got["freeze_s_per_min"], 12.6, 1e-9, "trailing loss freeze_s_per_min")


# ---- whole calls, end to end ---------------------------------------------------------

K, W, H, FPS, SEED, PIECES = 40, 160, 120, 10, 7, 2
T0, START = 10**12, 10**12 + 10**9
LIFETIME = 2 * 10**8
_ivf = {}


def ivf_frames():
    """The IVF's path and vp8-ivf-test's lines: n -> (key, layer, refs, bytes)."""
    if not _ivf:
        path = os.path.join(TMP, "call.ivf")
        p = subprocess.run([IVF_TEST, path, str(K), str(W), str(H), str(FPS), str(SEED)],
                           capture_output=True, text=True)
        check(p.returncode == 0, f"{IVF_TEST} (make -C userspace check): {p.stderr}")
        _ivf["path"] = path
        _ivf["frames"] = {int(n): (k, la, r, b) for n, k, la, r, b in
                          (line.split("\t") for line in p.stdout.splitlines())}
    return _ivf["path"], _ivf["frames"]


def make_call(name, arrives):
    """A run directory for one VP8 call of K captures, every one coded in
    PIECES packets; arrives(n) is the delay (s) of frame n's packets
    after their planned time, None if lost.  Returns (run_dir, MediaFlow)."""
    ivf, coded = ivf_frames()
    d = os.path.join(TMP, name)
    os.makedirs(d)
    base = os.path.join(d, "media-video")
    os.link(ivf, base + ".ivf")
    head = "# role: send\n# flow: video\n# start_ns: %d\n" % START
    with open(base + ".frames.rec", "w") as f:
        f.write(f"{records.FRAMES_FORMAT}\n{head}# codec: vp8\n# width: {W}\n# height: {H}\n"
                f"# fps: {FPS}\n# layers: 2\n# scene_seed: {SEED}\n# min_kbps: 100\n"
                f"# max_kbps: 800\n" + "\t".join(records.FRAMES_COLUMNS) + "\n")
        for n in range(K):
            key, layer, refs, size = coded[n]
            f.write(f"{n}\t{START + n * 10**8}\tcoded\t{key}\t{layer}\t{refs}\t{size}\t{PIECES}"
                    f"\t{W}\t{H}\t800\t{700 if n % 2 else '-'}\t20\t1000\n")
        f.write("# complete: 1\n")
    send, recv = [], []
    for n in range(K):
        t = START + n * 10**8
        for _ in range(PIECES):
            seq = len(send)
            send.append(f"{seq}\tvideo\t500\t1\t{t}\t{t}\t{t + LIFETIME}\tok\t{n}\t{coded[n][0]}")
            if arrives(n) is not None:
                recv.append(f"{seq}\tvideo\t500\t{t}\t{t + int(arrives(n) * 1e9)}")
    for role, cols, rows in (("send", records.SEND_CODED_COLUMNS, send),
                             ("recv", records.RECV_COLUMNS, recv)):
        with open(f"{base}.{role}.rec", "w") as f:
            f.write(f"{records.FORMAT}\n# role: {role}\n# flow: video\n# start_ns: {START}\n"
                    f"# lifetime_ns: {LIFETIME}\n" + "\t".join(cols) + "\n")
            f.write("".join(r + "\n" for r in rows) + "# complete: 1\n")
    flow = stats.MediaFlow("video", records.read(base + ".send.rec"),
                           records.read(base + ".recv.rec"), T0)
    return d, flow


def metrics(name, arrives):
    d, flow = make_call(name, arrives)
    # warm-up 0.5 s: slots 5..39 count
    return vp8call.flow_metrics(d, "video", flow, T0, flow.start + 0.5)


CALLS = {
    "all": lambda n: 0.05,
    # every layer-1 frame lost: half the frames, each slot at most 0.1 s old
    "layer1_lost": lambda n: None if n % 2 else 0.05,
    # layer-0 frame 20 lost: nothing from 20 on decodes
    "layer0_lost": lambda n: None if n == 20 else 0.05,
    # layer-1 frames 13, 15, 17 late (0.3 s > the 0.2 s lifetime)
    "late": lambda n: 0.3 if n in (13, 15, 17) else 0.05,
    # layer-0 frame 20 late (0.25 s), before 21's deadline (0.3 s after
    # 20's capture): decoded, not shown; 21 and 22, which reference it, shown
    "late_base": lambda n: 0.25 if n == 20 else 0.05,
    "blank": lambda n: None,
}
_calls = {}


def calls():
    if not _calls:
        _calls.update({name: metrics(name, fn) for name, fn in CALLS.items()})
    return _calls


@test
def a_blank_call_scores_worst_and_a_whole_one_best():
    got = calls()
    b, a = got["blank"], got["all"]
    # 35 slots after the warm-up (3.5 s): the blank call is one freeze of
    # 3.5 s, 60 s per minute; nothing shown; every slot black.
    check(b["frames_shown_pct"] == 0 and b["frame_delay_p95_ms"] == INF, f"blank {b}")
    close(b["freeze_s_per_min"], 60.0, 1e-9, "blank freeze_s_per_min")
    close(b["coded_fps"], 10.0, 1e-9, "coded_fps")
    # every frame shown: no freeze, every slot 0.2 s old
    check(a["frames_shown_pct"] == 100 and a["freeze_s_per_min"] == 0, f"all {a}")
    close(a["frame_delay_p95_ms"], 200, 1e-6, "all shown p95")
    check(a["ssim_mean"] > 0.9 and a["psnr_mean"] > 30, f"all shown scores {a}")
    higher_better = ("frames_shown_pct", "ssim_mean", "psnr_mean")
    for name, q in got.items():
        if name in ("blank", "all"):
            continue
        for m in higher_better:
            check(b[m] < q[m] < a[m], f"{m}: blank {b[m]}, {name} {q[m]}, all {a[m]}")
        for m in ("freeze_s_per_min", "frame_delay_p95_ms"):
            check(a[m] <= q[m] <= b[m], f"{m}: all {a[m]}, {name} {q[m]}, blank {b[m]}")
        check(q["frame_delay_p95_ms"] < INF and q["freeze_s_per_min"] < 60, f"{name}: {q}")
    # a layer-0 loss 1.5 s into the 3.5 s: a freeze of the last 2 s
    # (render of 19 at 2.1 s to the end, 4.2 s): 2.1 / 3.5 x 60 = 36
    close(got["layer0_lost"]["freeze_s_per_min"], 36.0, 1e-9, "layer0_lost freezes")
    # the rates: the target is 800 everywhere, allowed 700 where named
    check(a["target_kbps"] == 800 and a["allowed_kbps"] == 700 and a["key_frames"] == 0,
          f"rates and key frames {a}")


@test
def a_late_base_frame_is_decoded_not_shown():
    # Frame 20 (layer 0) is the only one not shown: 34 of the 35 frames
    # after the warm-up.  Slot 20 holds frame 19; every other slot is the
    # whole call's, as 21.. were decoded against frame 20 (had vp8-score
    # not decoded 20 they would be decoded against 18, and look wrong).
    q = calls()["late_base"]
    close(q["frames_shown_pct"], 100 * 34 / 35, 1e-9, "late_base frames_shown_pct")
    late, whole = (vp8call.read_screen(vp8call.paths(os.path.join(TMP, name), "video")["screen"],
                                       K) for name in ("late_base", "all"))
    check(late[3] == [20] and whole[3] == [], f"decoded, not shown: {late[3]}, {whole[3]}")
    check(late[0][20] == 19 and late[1][20] < whole[1][20], f"slot 20: {late[0][20]}")
    for k in (*range(20), *range(21, K)):
        check(late[0][k] == whole[0][k] and late[1][k] == whole[1][k]
              and late[2][k] == whole[2][k], f"slot {k}: {[x[k] for x in late[:3]]}, "
              f"whole call {[x[k] for x in whole[:3]]}")


@test
def screen_is_cached_until_an_input_changes():
    d, flow = make_call("cache", lambda n: 0.05)
    p = vp8call.paths(d, "video")
    vp8call.flow_metrics(d, "video", flow, T0, -INF)
    os.utime(p["screen"], (2e9, 2e9))
    for x in ("frames", "ivf", "send", "recv"):
        os.utime(p[x], (1e9, 1e9))
    # newer than its inputs and showing what they say: reused, untouched
    q = vp8call.flow_metrics(d, "video", flow, T0, -INF)
    check(os.path.getmtime(p["screen"]) == 2e9, "a fresh screen.tsv was rewritten")
    check(q["key_frames"] == 1 and q["frames_shown_pct"] == 100, f"cached {q}")
    # the receiver's records newer: made again
    os.utime(p["recv"], (3e9, 3e9))
    vp8call.flow_metrics(d, "video", flow, T0, -INF)
    check(os.path.getmtime(p["screen"]) != 2e9, "a stale screen.tsv was reused")
    # a screen that does not show what the records say: made again
    with open(p["screen"], "w") as f:
        f.write(vp8call.HIDDEN + "\nslot\tshown\tpsnr_y\tssim_y\n"
                + "".join(f"{k}\t-\t1\t0\n" for k in range(K)))
    q = vp8call.flow_metrics(d, "video", flow, T0, -INF)
    check(q["frames_shown_pct"] == 100 and q["ssim_mean"] > 0.9, f"wrong cache kept {q}")
    # the same frames shown, but made without decoding the late frame 20
    # (its first line naming none decoded and not shown): made again
    d, flow = make_call("cache-late", CALLS["late_base"])
    p = vp8call.paths(d, "video")
    vp8call.flow_metrics(d, "video", flow, T0, -INF)
    with open(p["screen"]) as f:
        first, rest = f.read().split("\n", 1)
    check(first == vp8call.HIDDEN + " 20", f"first line {first!r}")
    with open(p["screen"], "w") as f:
        f.write(vp8call.HIDDEN + "\n" + rest)
    os.utime(p["screen"], (2e9, 2e9))
    for x in ("frames", "ivf", "send", "recv"):
        os.utime(p[x], (1e9, 1e9))
    vp8call.flow_metrics(d, "video", flow, T0, -INF)
    check(os.path.getmtime(p["screen"]) != 2e9, "a screen made from other frames decoded kept")
    with open(p["screen"]) as f:
        check(f.readline() == vp8call.HIDDEN + " 20\n", "not remade with frame 20 decoded")


@test
def frame_records_are_checked():
    d, flow = make_call("bad", lambda n: 0.05)
    p = vp8call.paths(d, "video")
    with open(p["frames"]) as f:
        good = f.read()
    for old, new, what in (("\tcoded\t1\t0\t-\t", "\tcoded\t-\t0\t-\t", "coded without key"),
                           (f"\t{PIECES}\t{W}\t", f"\t{PIECES + 1}\t{W}\t", "pieces"),
                           (records.FRAMES_FORMAT, "# sbpn-frames 2", "version")):
        with open(p["frames"], "w") as f:
            f.write(good.replace(old, new, 1))
        try:
            vp8call.flow_metrics(d, "video", flow, T0, -INF)
        except ValueError:
            continue
        check(False, f"frame records with a wrong {what} accepted")


def main():
    return ktap.main(tests, TMP)


if __name__ == "__main__":
    sys.exit(main())
