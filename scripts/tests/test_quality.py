#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of sbpnlab.quality: decodable frames, WebRTC freezes, the
95th-percentile frame delay and the ITU-T G.107 E-model; KTAP output.

Every expected number is worked by hand in the comment above its check
(from the definitions in Documentation/statistics.rst), not computed by
the code under test.
Run with the venv: scripts/venv.sh && .venv/bin/python scripts/tests/test_quality.py
Exit 1 if any test failed.
"""
import math
import os
import sys

sys.dont_write_bytecode = True
SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, SCRIPTS)
import ktap  # noqa: E402 - beside this file
try:
    import numpy as np
    from sbpnlab import quality
except ImportError as e:
    print(f"Bail out! {e}: run scripts/venv.sh, then .venv/bin/python {sys.argv[0]}")
    sys.exit(1)

NAN, INF = math.nan, math.inf
test, tests = ktap.collector()
check = ktap.check


def close(got, want, tol, what):
    check(abs(got - want) <= tol, f"{what}: {got!r}, want {want} ±{tol}")


# ---- video ----------------------------------------------------------------------

@test
def frames_group_pieces_and_judge_them_whole():
    # Three frames at 0, 0.1, 0.2 s, deadlines 0.2, 0.3, 0.4 s:
    #   frame 0: pieces at 0.05 and 0.19 -> complete, arrival 0.19
    #   frame 1: pieces at 0.15 and 0.31 (late: 0.31 > 0.3) -> not complete
    #   frame 2: pieces at 0.25 and lost -> not complete, arrival NaN
    planned = [0, 0, .1, .1, .2, .2]
    recv = [.05, .19, .15, .31, .25, NAN]
    expiry = [.2, .2, .3, .3, .4, .4]
    f = quality.frames(planned, recv, expiry)
    check(list(f["complete"]) == [True, False, False], f"complete {f['complete']}")
    check(f["arrival"][0] == .19 and f["arrival"][1] == .31 and math.isnan(f["arrival"][2]),
          f"arrival {f['arrival']}")
    check(list(f["key"]) == [True] * 3, "without key flags every frame stands alone")
    # With the records' frame and key columns: frame 0 key, 1 and 2 P.
    f = quality.frames(planned, recv, expiry, frame=[0, 0, 1, 1, 2, 2], key=[1, 1, 0, 0, 0, 0])
    check(list(f["key"]) == [True, False, False], f"key {f['key']}")


@test
def decodable_follows_the_reference_chain():
    # key      1 0 0 0 1 0
    # complete 1 1 0 1 1 1
    # frame 2 is incomplete, so 3 (complete, references 2) is not
    # decodable either; the key frame 4 restarts the chain:
    # decodable 1 1 0 0 1 1
    got = quality.decodable([1, 1, 0, 1, 1, 1], [1, 0, 0, 0, 1, 0])
    check(list(got) == [True, True, False, False, True, True], f"decodable {list(got)}")
    # A P-frame before the first key frame has no reference: 0 0 1 1
    got = quality.decodable([1, 1, 1, 1], [0, 0, 1, 0])
    check(list(got) == [False, False, True, True], f"before the first key frame {list(got)}")
    # No coding dependencies (every frame a key frame): decodable = complete
    got = quality.decodable([1, 0, 1], [1, 1, 1])
    check(list(got) == [True, False, True], f"independent frames {list(got)}")


@test
def ready_time_waits_for_the_reference():
    # arrivals 0.05 (key), 0.30, 0.20 (P, P): frame 1 is ready at 0.30 and
    # frame 2, which arrived at 0.20, only when its reference is: 0.30.
    got = quality.ready_times([.05, .30, .20], [1, 0, 0], [True, True, True])
    check(list(got) == [.05, .30, .30], f"ready {list(got)}")


@test
def freezes_by_webrtcs_definition():
    def at(gaps_ms):
        return np.cumsum([0] + gaps_ms) / 1000

    # Ten frames 100 ms apart, then a gap of 400 ms: the window holds nine
    # delays of 100 and the 400 itself, mean (900 + 400) / 10 = 130 ms;
    # threshold max(3 x 130, 130 + 150) = 390 <= 400: one freeze of 0.4 s.
    count, secs = quality.freezes(at([100] * 9 + [400] + [100] * 5))
    check((count, round(secs, 9)) == (1, 0.4), f"400 ms gap: {count}, {secs}")
    # The same with 300 ms: mean (900 + 300) / 10 = 120, threshold
    # max(360, 270) = 360 > 300: no freeze (with the mean taken before the
    # delay joins the window it would be 100, threshold 300: a freeze).
    count, secs = quality.freezes(at([100] * 9 + [300] + [100] * 5))
    check((count, secs) == (0, 0.0), f"300 ms gap: {count}, {secs}")
    # Fewer than five delays so far: never a freeze (the fourth delay,
    # 2000 ms, would be one by any threshold).
    count, _ = quality.freezes(at([100, 100, 100, 2000]))
    check(count == 0, f"a freeze before five samples: {count}")
    # The window is the last 30 delays: 40 delays of 100 ms, then 200 ms
    # and 1000 ms.  At the 1000: window = 28 x 100 + 200 + 1000 = 4000 / 30
    # = 133.3 -> 133 (rounded down), threshold max(399, 283) = 399: a
    # freeze of 1 s.  At the 200: mean (29 x 100 + 200) / 30 = 103,
    # threshold 309: none.
    count, secs = quality.freezes(at([100] * 40 + [200, 1000]))
    check((count, round(secs, 9)) == (1, 1.0), f"long run: {count}, {secs}")
    # Only the last 30 delays count: 100 delays of 100 ms, 30 of 300 ms,
    # then 700 ms.  Window at the 700: 29 x 300 + 700 = 9400 / 30 = 313,
    # threshold max(939, 463) = 939 > 700: no freeze (over all 131 delays
    # the mean would be 19700 / 131 = 150, threshold 450: a freeze).  None
    # of the 300s is one: the first has 29 x 100 + 300 = 3200 / 30 = 106,
    # threshold 318, and the mean only grows after it.
    count, _ = quality.freezes(at([100] * 100 + [300] * 30 + [700]))
    check(count == 0, f"700 ms after 30 x 300: {count} freezes")
    # The mean is rounded down to a whole ms: 4 x 100 then 599: window
    # (400 + 599) / 5 = 199.8 -> 199, threshold max(597, 349) = 597 <= 599:
    # a freeze (unrounded, 3 x 199.8 = 599.4 > 599 would be none).
    count, _ = quality.freezes(at([100] * 4 + [599]))
    check(count == 1, f"599 ms after 4 x 100: {count}")


@test
def p95_counts_frames_never_rendered_as_latest():
    # 99 frames with delays 1..99 ms and one never rendered (inf): sorted
    # they are 1..99, inf; h = (100 - 1) x 0.95 = 94.05, between the 95th
    # (95 ms) and 96th (96 ms) values: 95 + 0.05 = 95.05 ms.
    close(quality.p95(list(range(1, 100)) + [INF]), 95.05, 1e-9, "one frame never rendered")
    # 94 frames 1..94 ms and 6 never rendered: h = 94.05 lies between the
    # 95th value (inf) and the 96th (inf): inf.
    check(quality.p95(list(range(1, 95)) + [INF] * 6) == INF, "six never rendered: not inf")
    # 5 never rendered of 100 (1..95 ms): h = 94.05 between 95 ms (index
    # 94) and inf (index 95): touches inf, so inf.
    check(quality.p95(list(range(1, 96)) + [INF] * 5) == INF, "five never rendered: not inf")
    check(math.isnan(quality.p95([])), "no frames: not NaN")


@test
def video_quality_of_a_flow():
    # 10 frames every 100 ms from t = 0, one piece each, lifetime 200 ms,
    # key frames 0 and 5; every piece arrives 50 ms after its planned time
    # except frame 2 (lost).  Warm-up: frames from 0.1 s count (9 frames).
    #   decodable: 0 1 . . . 5 6 7 8 9  (2 lost, 3 and 4 follow it)
    #   after the warm-up: frames 1..9, decodable 1, 5, 6, 7, 8, 9 = 6 of 9
    #   rendered at their deadlines 0.3, 0.7, 0.8, 0.9, 1.0, 1.1 s: delays
    #   400, 100, 100, 100, 100 ms; at the fifth delay the window is 800 /
    #   5 = 160 -> threshold max(480, 310) = 480 > 100, and the 400 came
    #   before five samples: no freeze.
    #   frame delays: 50 ms for each decodable frame, inf for 2, 3, 4; of
    #   nine values, sorted 50 x 6, inf x 3: h = 8 x 0.95 = 7.6 -> inf.
    planned = np.arange(10) / 10
    recv = planned + 0.05
    recv[2] = NAN
    key = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0]
    got = quality.video_quality(planned, recv, planned + 0.2, frame=range(10), key=key,
                                since=0.1)
    close(got["decodable_frac"], 6 / 9, 1e-12, "decodable_frac")
    check(got["freezes"] == 0 and got["freeze_s_per_min"] == 0, f"freezes {got}")
    check(got["frame_delay_p95_ms"] == INF, f"p95 {got['frame_delay_p95_ms']}")
    # 100 frames, one lost every tenth frame from frame 20 (20, 30, .., 90),
    # all key frames (no dependencies): 92 decodable.  Gaps of 200 ms:
    # window e.g. at frame 21 (render 2.1 s after 1.9 s): delays 100 x 18,
    # 200 -> mean 2000 / 19 = 105 -> threshold 315 > 200: no freeze.
    # p95 over 100 values (92 x 50 ms, 8 x inf): h = 94.05 -> inf.
    planned = np.arange(100) / 10
    recv = planned + 0.05
    recv[20::10] = NAN
    got = quality.video_quality(planned, recv, planned + 0.2)
    close(got["decodable_frac"], 0.92, 1e-12, "decodable_frac, independent frames")
    check(got["freezes"] == 0, f"freezes {got['freezes']}")
    # Three frames lost in a row (40, 41, 42) instead: the gap 3.9 -> 4.3 s
    # = 400 ms, mean (39 x 100 ... last 30: 29 x 100 + 400) / 30 = 110 ->
    # threshold 330 <= 400: one freeze of 0.4 s.  Span: 0 .. 9.9 s + 0.1 =
    # 10 s = 1/6 minute: 0.4 x 6 = 2.4 freeze seconds per minute.  Delays:
    # 97 x 50 ms and 3 x inf: h = 94.05 between 50 ms and 50 ms = 50 ms.
    recv = planned + 0.05
    recv[40:43] = NAN
    got = quality.video_quality(planned, recv, planned + 0.2)
    check(got["freezes"] == 1, f"three lost in a row: {got['freezes']} freezes")
    close(got["freeze_s_per_min"], 2.4, 1e-9, "freeze_s_per_min")
    close(got["frame_delay_p95_ms"], 50, 1e-9, "frame_delay_p95_ms")


# ---- voice: G.107 -----------------------------------------------------------------

@test
def emodel_defaults_give_r_93_2():
    # G.107 table 1 defaults, worked by hand:
    #   Nos = 35 - 8 - 3 - 100 + 0.004 (35 - 10 - 3 - 14)^2 = -75.744
    #   Pre = 35 + 10 lg(1 + 10^-0.8) = 35.6389
    #   Nor = 2 - 121 + 35.6389 + 0.008 x 0.6389^2 = -83.3578
    #   Nfo = -64 + 2 = -62
    #   No = 10 lg(10^-7 + 10^-7.5744 + 10^-8.3358 + 10^-6.2) = -61.18
    #   Ro = 15 - 1.5 (8 - 61.18) = 94.77
    #   Xolr = 10 + 0.2 (64 - 61.18 - 2) = 10.164, Iolr = 20 ((1 +
    #   1.2705^8)^(1/8) - 1.2705) = 0.44; Ist = 0.00 (STMRo = 15);
    #   Q = 37, G = 93.03, Y = -5.209, Z = -0.7924, Iq = 15 lg(1 + 10^-5.209
    #   + 10^-0.7924) = 0.975; Is = 1.41
    #   Idle (Tr = 0): Rle = 10.5 x 117 = 1228.5, Ro - Rle = -1133.7,
    #   Idle = -566.9 + sqrt(566.9^2 + 169) = 0.149; Idte = 0 (T = 0)
    #   R = 94.77 - 1.41 - 0.15 = 93.2, the default R G.107 states.
    close(quality.noise_no(), -61.18, 0.01, "No")
    close(quality.ro(), 94.77, 0.01, "Ro")
    close(quality.impairment_is(), 1.41, 0.01, "Is")
    close(quality.idle(0), 0.149, 0.001, "Idle(0)")
    close(quality.r_factor(0), 93.2, 0.01, "R with the defaults")
    # MOS(93.2) = 1 + 0.035 x 93.2 + 93.2 x 33.2 x 6.8 x 7e-6 = 4.262 +
    # 0.1473 = 4.409
    close(quality.mos(93.2), 4.409, 0.001, "MOS(93.2)")


@test
def emodel_delay_impairment():
    # Idd: Ta <= 100 ms: 0.  Ta = 200: X = 1, 25 (2^(1/6) - 3 (1 +
    # 3^-6)^(1/6) + 2) = 25 (1.122462 - 3.000685 + 2) = 3.044.
    # Ta = 400: X = 2, 25 (65^(1/6) - 3 (1 + (2/3)^6)^(1/6) + 2) =
    # 25 (2.005175 - 3.042370 + 2) = 24.07.
    check(quality.idd(100) == 0, "Idd(100 ms) not 0")
    close(quality.idd(200), 3.044, 0.001, "Idd(200 ms)")
    close(quality.idd(400), 24.07, 0.01, "Idd(400 ms)")
    # Idte, T = 150: TERV = 65 - 40 lg(16 / 2) = 28.876, Re = 80 + 2.5
    # (14.876) = 117.19, Roe = -1.5 (-61.18 - 2) = 94.77, Roe - Re =
    # -22.42: Idte = -11.21 + sqrt(125.7 + 100) - 1 = 2.81.
    close(quality.idte(150), 2.81, 0.01, "Idte(150 ms)")
    # Idle, Tr = 300: Rle = 1228.5 / 301^0.25 = 294.9, Ro - Rle = -200.1,
    # Idle = -100.07 + sqrt(100.07^2 + 169) = 0.84.
    close(quality.idle(300), 0.84, 0.01, "Idle(300 ms)")
    # R at Ta = T = 150, Tr = 300: Idd(150): X = 0.585, 25 ((1 +
    # 0.0400)^(1/6) - 3 (1 + 5.5e-5)^(1/6) + 2) = 0.16; Is = 1.41 (STMRo
    # still 15): R = 94.77 - 1.41 - (2.81 + 0.84 + 0.16) = 89.54.
    close(quality.r_factor(150), 89.54, 0.02, "R at 150 ms")


@test
def emodel_packet_loss_impairment():
    # G.711 with PLC: Ie = 0, Bpl = 25.1.  Ppl = 2 %, random (BurstR 1):
    # 95 x 2 / (2 + 25.1) = 7.011; bursty, BurstR = 2: 95 x 2 / (1 +
    # 25.1) = 7.280; without PLC (Bpl 4.3): 95 x 2 / 6.3 = 30.16.
    close(quality.ie_eff(2), 7.011, 0.001, "Ie-eff, 2 % random")
    close(quality.ie_eff(2, 2), 7.280, 0.001, "Ie-eff, 2 %, BurstR 2")
    close(quality.ie_eff(2, 1, 0, 4.3), 30.16, 0.01, "Ie-eff, 2 %, no PLC")
    # R at Ta = 0 with 2 % random loss: 93.21 - 7.01 = 86.19
    close(quality.r_factor(0, 2), 86.19, 0.02, "R, 2 % loss")
    # MOS(50) = 1 + 1.75 + 50 x (-10) x 50 x 7e-6 = 2.575; the ends
    close(quality.mos(50), 2.575, 1e-9, "MOS(50)")
    check(quality.mos(-3) == 1 and quality.mos(120) == 4.5, "MOS outside 0..100")


@test
def emodel_stays_on_its_scale():
    # Ie-eff's limit under random loss is 95: 95 x 1e6 / (1e6 + 25.1)
    # -> 95.  Bursty, BurstR 4, Ppl 80 %: 95 x 80 / (20 + 25.1) = 168.5,
    # beyond it (Ppl > 25.1 x 4 / 3 = 33.5 %): capped at 95.  Below the
    # crossing it is the formula: Ppl 30 %, BurstR 4: 2850 / 32.6 = 87.42.
    close(quality.ie_eff(80, 4), 95, 1e-12, "Ie-eff, 80 %, BurstR 4")
    close(quality.ie_eff(30, 4), 87.42, 0.01, "Ie-eff, 30 %, BurstR 4")
    check(quality.ie_eff(1e6) < 95, "random loss never reaches the cap")
    # R at Ta = 0 with it: 93.21 - 95 = -1.79; on the scale: 0, MOS 1
    close(quality.r_factor(0, 80, 4), -1.79, 0.02, "R at the cap")
    check(quality.r_scale(-1.79) == 0 and quality.r_scale(120) == 100
          and quality.r_scale(41.0) == 41.0 and math.isnan(quality.r_scale(NAN)), "r_scale")
    # Eight of ten packets lost in one burst (a late one counts): Ppl 80 %,
    # BurstR = 8 x 0.2 = 1.6: 95 x 80 / (50 + 25.1) = 101.2 -> 95; R < 0:
    # reported 0 with clamped = 1, MOS 1 (R = -3.5; -9.7 without the cap).
    d = np.array([20, NAN, NAN, NAN, NAN, NAN, NAN, NAN, 900, 20]) / 1000
    got = quality.audio_quality(d, 0.040)
    check(got["r"] == 0 and got["mos"] == 1 and got["clamped"] == 1, f"80 % lost: {got}")
    ok = quality.audio_quality(np.array([20, 25, 30, 20]) / 1000, 0.040)
    check(ok["clamped"] == 0 and ok["r"] > 80, f"no loss: {ok}")


@test
def burst_ratio_of_a_loss_pattern():
    # 0110001100: 4 of 10 lost (P = 0.4) in 2 bursts of 2: mean burst 2;
    # random loss would give bursts of 1 / (1 - 0.4) = 1.667:
    # BurstR = 2 / 1.667 = 2 x 0.6 = 1.2.
    close(quality.burst_ratio([0, 1, 1, 0, 0, 0, 1, 1, 0, 0]), 1.2, 1e-12, "BurstR")
    # 1010000000 (starts lost): 2 bursts of 1, P = 0.2: 1 x 0.8 = 0.8
    close(quality.burst_ratio([1, 0, 1, 0, 0, 0, 0, 0, 0, 0]), 0.8, 1e-12, "BurstR < 1")
    check(quality.burst_ratio([0] * 5) == 1 and quality.burst_ratio([1] * 5) == 1,
          "BurstR without loss or with all lost")


@test
def audio_quality_with_a_jitter_buffer():
    # Ten packets, delays 20, 25, 30, 90 (late), lost, 20, 20, 20, 21, 20
    # ms; jitter buffer 40 ms: base 20, playout at 60 ms, so Ta = 60 ms and
    # packets 4 and 5 are lost after the buffer: Ppl = 20 %, one burst of
    # 2, BurstR = 2 x 0.8 = 1.6.
    # R = Ro - Is - Idte(60) - Idle(120) - 0 - Ie-eff, with
    #   Idte(60): TERV = 65 - 40 lg(7 / 1.4) = 37.04, Re = 137.6, Roe - Re
    #   = -42.83: -21.42 + sqrt(458.6 + 100) - 1 = 1.22
    #   Idle(120): Rle = 1228.5 / 121^0.25 = 370.4, Ro - Rle = -275.6:
    #   -137.8 + sqrt(137.8^2 + 169) = 0.61
    #   Ie-eff = 95 x 20 / (20 / 1.6 + 25.1) = 1900 / 37.6 = 50.53
    #   R = 94.77 - 1.41 - 1.22 - 0.61 - 50.53 = 41.0
    #   MOS(41.0) = 1 + 1.435 + 41 x (-19) x 59 x 7e-6 = 2.113
    d = np.array([20, 25, 30, 90, NAN, 20, 20, 20, 21, 20]) / 1000
    got = quality.audio_quality(d, 0.040)
    close(got["ta_ms"], 60, 1e-9, "Ta")
    close(got["ppl"], 20, 1e-9, "Ppl")
    close(got["burst_r"], 1.6, 1e-12, "BurstR")
    close(got["r"], 41.0, 0.05, "R")
    close(got["mos"], 2.113, 0.005, "MOS")
    check(math.isnan(quality.audio_quality([NAN, NAN], 0.04)["r"]), "nothing arrived: R not NaN")


@test
def stats_reads_key_columns_of_the_records():
    # Records with coding dependencies through stats.MediaFlow: frames
    # 0 (key), 1, 2 (P) every 100 ms from t0 + 1 s, one piece each,
    # lifetime 200 ms, frame 1 lost: decodable 0 only, 1 of 3 (the frames
    # on time would be 2 of 3).  Without the key column: 2 of 3.  Without
    # the frame-before rule (a VP8 call's): NaN.
    import tempfile
    from sbpnlab import records, stats
    tmp = tempfile.mkdtemp(prefix="sbpn-quality.")
    t0 = 10**12
    for coded in (True, False):
        send, recv = os.path.join(tmp, "s.rec"), os.path.join(tmp, "r.rec")
        cols = records.SEND_CODED_COLUMNS if coded else records.SEND_COLUMNS
        with open(send, "w") as f:
            f.write("# sbpn-records 1\n# role: send\n# start_ns: %d\n" % t0 + "\t".join(cols) + "\n")
            for i in range(3):
                t = t0 + 10**9 + i * 10**8
                row = [i, "video", 500, 1, t, t, t + 2 * 10**8, "ok"] + ([i, int(i == 0)] if coded else [])
                f.write("\t".join(map(str, row)) + "\n")
            f.write("# complete: 1\n")
        with open(recv, "w") as f:
            f.write("# sbpn-records 1\n# role: recv\n" + "\t".join(records.RECV_COLUMNS) + "\n")
            for i in (0, 2):
                t = t0 + 10**9 + i * 10**8
                f.write(f"{i}\tvideo\t500\t{t}\t{t + 5 * 10**7}\n")
            f.write("# complete: 1\n")
        flow = stats.MediaFlow("call", records.read(send), records.read(recv), t0)
        got = stats.quality_metrics(flow, 0)["video.decodable_frac"]
        close(got, 1 / 3 if coded else 2 / 3, 1e-12, f"decodable, coded={coded}")
        # a VP8 call's frames do not reference the frame before: no such rule
        got = stats.quality_metrics(flow, 0, frame_chain=False)
        check(all(math.isnan(got[f"video.{k}"]) for k in ("decodable_frac", "freezes",
                                                          "freeze_s_per_min",
                                                          "frame_delay_p95_ms")),
              "the frame-before rule applied to a VP8 call")


def main():
    return ktap.main(tests)


if __name__ == "__main__":
    sys.exit(main())
