#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of vp8-score: decode the frames decoded, score the screen
of the frames shown.

A small VP8 call made by build/vp8-ivf-test (libvpx, two temporal layers:
odd captures are layer 1 and reference nothing later frames need) is
scored with every frame shown, none, one missing, and one decoded but not
shown; its PSNR and SSIM
on pictures worked by hand are build/vp8-score-unit's; bad input exits 2
with a message, a frame libvpx cannot decode exits 1.

host_tests.py runs these among its own (tests(tmp)): make -C userspace
check.
"""
import os
import subprocess

US = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCORE = f"{US}/bin/vp8-score"
IVF_TEST = f"{US}/build/vp8-ivf-test"
UNIT = f"{US}/build/vp8-score-unit"
K, W, H, FPS, SEED = 12, 160, 120, 10, 7


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def run(args):
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def make_call(tmp, name="call", coded=()):
    """IVF of K captures (coded at the camera's size, or coded=(w, h))."""
    path = os.path.join(tmp, f"{name}.ivf")
    p = run([IVF_TEST, path, str(K), str(W), str(H), str(FPS), str(SEED), *map(str, coded)])
    check(p.returncode == 0, f"vp8-ivf-test: rc {p.returncode}: {p.stderr}")
    return path


def score(tmp, ivf, show, frames=K, extra=(), decode=None):
    """(returncode, rows as [slot, shown, psnr, ssim], stderr); --decode
    the list decode unless it is None."""
    lists = []
    for name, got in (("show", show), ("decode", decode)):
        if got is not None:
            with open(os.path.join(tmp, name), "w") as f:
                f.write("".join(f"{i}\n" for i in got))
            lists += [f"--{name}", os.path.join(tmp, name)]
    p = run([SCORE, "--ivf", ivf, *lists, "--frames", str(frames), "--fps", str(FPS),
             "--width", str(W), "--height", str(H), "--seed", str(SEED), *extra])
    if p.returncode:
        return p.returncode, None, p.stderr
    lines = p.stdout.splitlines()
    check(lines[0] == "slot\tshown\tpsnr_y\tssim_y", f"header {lines[0]!r}")
    rows = [(int(a), b, float(c), float(d)) for a, b, c, d in
            (line.split("\t") for line in lines[1:])]
    check([r[0] for r in rows] == list(range(frames)), f"slots {[r[0] for r in rows]}")
    return 0, rows, p.stderr


def tests(tmp):
    """The test functions, writing in tmp."""
    out = []

    def test(fn):
        out.append(fn)
        return fn

    @test
    def vp8_score_psnr_ssim_by_hand():
        p = run([UNIT])
        check(p.returncode == 0 and "not ok" not in p.stdout, f"vp8-score-unit:\n{p.stdout}")

    @test
    def vp8_score_every_frame_shown():
        rc, rows, err = score(tmp, make_call(tmp), range(K))
        check(rc == 0, f"rc {rc}: {err}")
        check([r[1] for r in rows] == [str(k) for k in range(K)], f"shown {rows}")
        check(all(r[2] > 25 and r[3] > 0.8 for r in rows), f"low scores {rows}")

    @test
    def vp8_score_nothing_shown_is_black():
        rc, rows, err = score(tmp, make_call(tmp), [])
        check(rc == 0, f"rc {rc}: {err}")
        check(all(r[1] == "-" for r in rows), f"shown {rows}")
        check(all(r[3] < 0.3 for r in rows), f"SSIM of a black screen {rows}")

    @test
    def vp8_score_missing_frame_freezes_the_last():
        # capture 5 is layer 1 (nothing references it): without it, slot 5
        # shows frame 4, and scores below slots 4 and 6, which show their own
        rc, rows, err = score(tmp, make_call(tmp), [k for k in range(K) if k != 5])
        check(rc == 0, f"rc {rc}: {err}")
        check([r[1] for r in rows[3:8]] == ["3", "4", "4", "6", "7"], f"shown {rows}")
        check(rows[5][3] < min(rows[4][3], rows[6][3]), f"SSIM at 4, 5, 6: {rows[4:7]}")
        check(rows[5][2] < min(rows[4][2], rows[6][2]), f"PSNR at 4, 5, 6: {rows[4:7]}")
        check(rows[6][2] > 25 and rows[6][3] > 0.8, f"slot 6 after the skip: {rows[6]}")
        # frame 4 on screen at slot 5 is a picture, not black: it scores as
        # it does at slot 5 of a call shown up to 4, and above a black screen
        _, upto4, _ = score(tmp, make_call(tmp), range(5), frames=6)
        _, black, _ = score(tmp, make_call(tmp), [], frames=6)
        check(rows[5][1:] == upto4[5][1:], f"slot 5: {rows[5]}, shown up to 4: {upto4[5]}")
        check(rows[5][3] > black[5][3] + 0.2, f"slot 5 {rows[5]} vs black {black[5]}")

    @test
    def vp8_score_decodes_only_the_frames_shown():
        # without layer-0 frame 4, frames 5.. are decoded against frame 2
        # (the decoder never saw 4): their pictures are wrong, which they
        # would not be had the frames not shown been decoded too
        rc, rows, err = score(tmp, make_call(tmp), [k for k in range(K) if k != 4])
        check(rc == 0, f"rc {rc}: {err}")
        check(rows[4][1] == "3" and all(r[3] < 0.8 for r in rows[5:8]), f"rows {rows[3:8]}")

    @test
    def vp8_score_decodes_a_frame_it_does_not_show():
        # layer-0 frame 4 decoded, not shown (it came too late): slot 4
        # holds frame 3 (and scores as slot 4 of a call shown up to 3), and
        # frames 5.. decode against frame 4 as when every frame is shown
        ivf = make_call(tmp)
        rc, rows, err = score(tmp, ivf, [k for k in range(K) if k != 4], decode=range(K))
        check(rc == 0, f"rc {rc}: {err}")
        _, whole, _ = score(tmp, ivf, range(K))
        _, upto3, _ = score(tmp, ivf, range(4), frames=5)
        check([r[1] for r in rows[3:6]] == ["3", "3", "5"], f"shown {rows[3:6]}")
        check(rows[4][1:] == upto3[4][1:] and rows[4][3] < whole[4][3],
              f"slot 4: {rows[4]}, shown up to 3: {upto3[4]}, every frame: {whole[4]}")
        check(rows[5:] == whole[5:] and rows[:4] == whole[:4],
              f"slots 5..: {rows[5:]}\nevery frame shown: {whole[5:]}")
        # --decode the same as --show: as without --decode
        _, same, _ = score(tmp, ivf, range(K), decode=range(K))
        check(same == whole, f"--decode = --show: {same}")

    @test
    def vp8_score_scales_a_smaller_frame():
        # coded at 80 x 60: the screen is the decoded picture scaled to
        # 160 x 120, still close to the camera's, and far from black
        rc, rows, err = score(tmp, make_call(tmp, "small", (80, 60)), range(K))
        check(rc == 0, f"rc {rc}: {err}")
        check(all(r[2] > 20 and r[3] > 0.5 for r in rows), f"scaled scores {rows}")

    @test
    def vp8_score_bad_input_exits_2():
        ivf = make_call(tmp)
        rc, _, err = score(tmp, ivf, [0, 3, 20], frames=30)
        check(rc == 2 and "shown frame 20 is not in" in err, f"index not in the IVF: {rc} {err}")
        rc, _, err = score(tmp, ivf, [0, 3], decode=[0, 1, 2])
        check(rc == 2 and "shown frame 3 is not in --decode" in err,
              f"shown, not decoded: {rc} {err}")
        rc, _, err = score(tmp, ivf, [0], decode=[0, 2, 1])
        check(rc == 2 and "not increasing" in err, f"--decode not increasing: {rc} {err}")
        rc, _, err = score(tmp, ivf, [0], decode=[0, 20], frames=30)
        check(rc == 2 and "decoded frame 20 is not in" in err,
              f"decoded index not in the IVF: {rc} {err}")
        rc, _, err = score(tmp, ivf, [0, 3, 2])
        check(rc == 2 and "not increasing" in err, f"indices not increasing: {rc} {err}")
        rc, _, err = score(tmp, ivf, [0, K])
        check(rc == 2 and "not below --frames" in err, f"index past --frames: {rc} {err}")
        rc, _, err = score(tmp, os.path.join(tmp, "absent.ivf"), [0])
        check(rc == 2 and "absent.ivf" in err, f"missing IVF: {rc} {err}")
        with open(ivf, "rb") as f:
            data = bytearray(f.read())
        data[8:12] = b"VP90"
        vp9 = os.path.join(tmp, "vp9.ivf")
        with open(vp9, "wb") as f:
            f.write(data)
        rc, _, err = score(tmp, vp9, [0])
        check(rc == 2 and "VP80" in err, f"not VP80: {rc} {err}")
        rc, _, err = score(tmp, ivf, [0], extra=["--fps", "0"])
        check(rc == 2 and "--fps" in err, f"--fps 0: {rc} {err}")

    @test
    def vp8_score_decoder_error_exits_1():
        # the key frame's bytes replaced by ones that are no VP8 frame
        with open(make_call(tmp), "rb") as f:
            data = bytearray(f.read())
        size = int.from_bytes(data[32:36], "little")
        data[44:44 + size] = bytes([0xff]) * size
        bad = os.path.join(tmp, "corrupt.ivf")
        with open(bad, "wb") as f:
            f.write(data)
        rc, _, err = score(tmp, bad, range(K))
        check(rc == 1 and "frame 0" in err, f"corrupt key frame: {rc} {err}")

    return out
