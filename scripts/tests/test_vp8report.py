#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of the report's VP8 call (sbpnlab.report's VP8 tables,
sbpnlab.plots.draw_vp8()); KTAP output.

The tables are made from metric rows written here, as stats.run_metrics()
gives them, with a variant whose runs showed nothing: it must come out
worst on every column, its infinite on-screen delay printed "inf", never
dropped.  The figure is drawn from a small run directory written here
(Documentation/records.rst, "Frame records"; a kept screen).
Run with the venv: scripts/venv.sh && .venv/bin/python scripts/tests/test_vp8report.py
Exit 1 if any test failed.
"""
import math
import os
import sys
import tempfile
import warnings

sys.dont_write_bytecode = True
SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, SCRIPTS)
import ktap  # noqa: E402 - beside this file
try:
    import numpy as np
    from sbpnlab import plots, records, report, stats, vp8call
except ImportError as e:
    print(f"Bail out! {e}: run scripts/venv.sh, then .venv/bin/python {sys.argv[0]}")
    sys.exit(1)

INF = math.inf
TMP = tempfile.mkdtemp(prefix="sbpn-vp8report.")
test, tests = ktap.collector()
check = ktap.check

# Per variant, the VP8 metrics of seeds 1, 2, 3: "blank" showed nothing
# (no frame shown, one freeze as long as the call, a black screen scored
# against the camera, no picture on screen ever).
VP8 = {
    "simple": {"frames_shown_pct": (90, 95, 100), "coded_fps": (9, 10, 8),
               "freeze_s_per_min": (3, 2, 1), "ssim_mean": (0.80, 0.85, 0.90),
               "psnr_mean": (30, 32, 34), "frame_delay_p95_ms": (250, 300, INF),
               "key_frames": (2, 3, 4), "target_kbps": (300, 320, 340),
               "allowed_kbps": (310, 330, 350)},
    "sbpn2": {"frames_shown_pct": (97, 98, 99), "coded_fps": (10, 10, 10),
              "freeze_s_per_min": (1, 1, 1), "ssim_mean": (0.88, 0.90, 0.92),
              "psnr_mean": (33, 34, 35), "frame_delay_p95_ms": (220, 230, 240),
              "key_frames": (2, 2, 2), "target_kbps": (330, 330, 330),
              "allowed_kbps": (340, 340, 340)},
    "blank": {"frames_shown_pct": (0, 0, 0), "coded_fps": (10, 10, 10),
              "freeze_s_per_min": (60, 60, 60), "ssim_mean": (0.07, 0.07, 0.07),
              "psnr_mean": (6.7, 6.7, 6.7), "frame_delay_p95_ms": (INF, INF, INF),
              "key_frames": (30, 30, 30), "target_kbps": (100, 100, 100),
              "allowed_kbps": (math.nan, math.nan, math.nan)},
}
AUDIO = {"simple": 0.90, "sbpn2": 0.95, "blank": 0.80}   # + 0.01 * seed
TCP = {"simple": 600.0, "sbpn2": 590.0, "blank": 650.0}  # + seed


def vp8_rows():
    return [{"policy": p, "key": (seed, 1),
             **{f"vp8.{m}": v[seed - 1] for m, v in VP8[p].items()},
             "audio.on_time_frac": AUDIO[p] + 0.01 * seed, "tcp.goodput_kbps": TCP[p] + seed}
            for seed in (1, 2, 3) for p in VP8]


def number(cell):
    """The first number of a printed cell ("inf" and "-inf" included)."""
    return float(cell.split()[0])


@test
def vp8_table_blank_worst():
    rows = vp8_rows()
    by_policy = {p: [r for r in rows if r["policy"] == p] for p in VP8}
    summaries = {(p, m): stats.summary([r[m] for r in rs]) for p, rs in by_policy.items()
                 for m in rs[0] if m.startswith("vp8.")}
    note, head, table = report.vp8_table(by_policy, summaries)
    check(head == ["policy", "runs", "frames shown %", "coded frames/s", "freeze s/min",
                   "SSIM", "PSNR dB", "on-screen delay p95 ms", "key frames",
                   "target kbit/s", "allowed kbit/s"], f"head {head}")
    got = {r[0]: dict(zip(head, r)) for r in table}
    check(list(got) == ["simple", "sbpn2", "blank"], f"rows {list(got)}")
    s = got["simple"]
    # frames shown 90, 95, 100: mean 95, sd 5, CI 4.3027 x 5 / sqrt 3 = 12.4;
    # SSIM sd 0.05: 0.124; the p95 delays 250, 300, inf: median 300, the
    # inf run printed as the maximum
    check(s["frames shown %"] == "95.0 ±12.4 (90.0/95.0/100.0)" and
          s["SSIM"] == "0.850 ±0.124 (0.800/0.850/0.900)" and
          s["on-screen delay p95 ms"] == "300 (250/300/inf)" and
          s["target kbit/s"] == "320 ±50 (300/320/340)", f"simple: {s}")
    b = got["blank"]
    check(b["frames shown %"] == "0.0 ±0.0 (0.0/0.0/0.0)" and
          b["freeze s/min"] == "60.0 ±0.0 (60.0/60.0/60.0)" and
          b["on-screen delay p95 ms"] == "inf (inf/inf/inf)" and
          b["allowed kbit/s"] == "-" and b["runs"] == "3", f"blank: {b}")
    # worst of the three in each column a viewer judges by
    for col, worst in (("frames shown %", min), ("freeze s/min", max), ("SSIM", min),
                       ("PSNR dB", min), ("on-screen delay p95 ms", max)):
        values = {p: number(r[col]) for p, r in got.items()}
        check(worst(values.values()) == values["blank"] and
              list(values.values()).count(values["blank"]) == 1,
              f"{col}: blank is not the one worst: {values}")


@test
def paired_vp8_blank_worst_and_pairs_reused():
    rows = vp8_rows()
    # sbpn2's second run showed nothing too: inf against simple's 300 and
    # against blank's inf (equal: 0)
    next(r for r in rows if r["policy"] == "sbpn2" and r["key"] == (2, 1))[
        "vp8.frame_delay_p95_ms"] = INF
    summaries = {}
    report.paired_table(rows, "simple", summaries)
    made = []
    real = stats.paired_policies
    stats.paired_policies = lambda rows, base, p, m: (made.append((base, p, m))
                                                      or real(rows, base, p, m))
    try:
        note, head, table = report.paired_vp8_table(
            rows, [("simple", "sbpn2"), ("simple", "blank"), ("sbpn2", "blank"),
                   ("simple", "absent")], "simple", summaries)
    finally:
        stats.paired_policies = real
    check(head == ["policy", "pairs", "Δ frames shown pp", "Δ freeze s/min", "Δ SSIM",
                   "Δ on-screen delay p95 ms", "Δ audio on time pp",
                   "Δ competing TCP kbit/s"], f"head {head}")
    got = {r[0]: dict(zip(head, r)) for r in table}
    check(list(got) == ["sbpn2", "blank", "blank - sbpn2"] and "a - b" in note,
          f"rows {list(got)}: {note}")
    b = got["blank"]
    # blank - simple: frames shown -90, -95, -100; freezes +57, +58, +59;
    # on-screen delay inf - 250, inf - 300: inf, and inf - inf: 0
    check(b["pairs"] == "3" and b["Δ frames shown pp"] == "-95.0 ±12.4 (-100.0/-95.0/-90.0)"
          and b["Δ freeze s/min"] == "58.0 ±2.5 (57.0/58.0/59.0)"
          and b["Δ on-screen delay p95 ms"] == "inf (0/inf/inf)", f"blank: {b}")
    # sbpn2 - simple: 220 - 250, inf - 300, 240 - inf
    check(got["sbpn2"]["Δ on-screen delay p95 ms"] == "-30 (-inf/-30/inf)",
          f"sbpn2: {got['sbpn2']}")
    # blank - sbpn2: inf - 220, inf - inf, inf - 240
    check(got["blank - sbpn2"]["Δ on-screen delay p95 ms"] == "inf (0/inf/inf)",
          f"blank - sbpn2: {got['blank - sbpn2']}")
    for col in ("Δ frames shown pp", "Δ SSIM"):
        check(number(b[col]) < 0 and number(got["blank - sbpn2"][col]) < 0, f"{col}: {got}")
    # audio on time and the competing TCP's goodput, already paired with
    # simple by the paired table, are not paired again; against sbpn2
    # they are, and kept apart from simple's
    check(not [m for m in made if m[0] == "simple" and not m[2].startswith("vp8.")] and
          ("sbpn2", "blank", "audio.on_time_frac") in made, f"pairings made: {made}")
    check(got["blank"]["Δ audio on time pp"] == "-10.0 ±0.0 (-10.0/-10.0/-10.0)" and
          got["blank - sbpn2"]["Δ audio on time pp"] == "-15.0 ±0.0 (-15.0/-15.0/-15.0)" and
          math.isclose(summaries["blank", "paired_audio.on_time_frac"]["mean"], -0.1),
          f"audio on time: {got}")
    check(not any(m == "paired_vp8.frame_delay_p95_ms" for _, m in summaries),
          "an infinite metric's pairing kept as a summary that drops its infinities")


@test
def comparison_has_vp8_tables_only_with_vp8_rows():
    rows = vp8_rows()
    for r in rows:
        r.update(FILLER, label=r["policy"], rank=None)
        r["audio.ipdv"] = r["video.ipdv"] = np.zeros(3)
    key = ("vp8-test", (), "call")
    text, md, long_rows = report.comparison_tables(key, rows, "simple", 40,
                                                   [("simple", "blank")])
    at = text.index(next(line for line in text if line.startswith("The VP8 call: frames")))
    check(text[at + 1].split()[:2] == ["policy", "runs"] and
          [line.split()[0] for line in text[at + 2:at + 5]] == ["simple", "sbpn2", "blank"],
          f"VP8 table: {text[at:at + 5]}")
    paired = text.index(next(line for line in text
                             if line.startswith("The VP8 call: differences")))
    check(text[paired + 2].split()[:2] == ["blank", "3"] and text[paired + 3] == "",
          f"compare's pair alone: {text[paired:paired + 4]}")
    check(any(r["metric"] == "paired_vp8.ssim_mean" and r["policy"] == "blank"
              for r in long_rows), "summary.csv lacks the VP8 pairings")
    old = [{k: v for k, v in r.items() if not k.startswith("vp8.")} for r in rows]
    text, _, _ = report.comparison_tables(key, old, "simple", 40)
    check(not any("VP8" in line for line in text), "a VP8 table without VP8 rows")


# Every other metric the comparison's tables read, as a constant
FILLER = {f"{c}.{m}": 0.5 for c in stats.CLASSES for m in (
    "on_time_frac", "received_frac", "frames_on_time_frac", "scheduled", "accepted",
    "recv_pps", "delay_p50_ms", "decodable_frac", "freezes", "freeze_s_per_min",
    "frame_delay_p95_ms")}
FILLER.update({f"audio.loss_jb{b}": 0.1 for b in stats.JITTER_BUFFERS_MS})
FILLER.update({"stall": 0.0, "audio.acceptable": 0.9, "recv_kbps": 200.0,
               "x_median_kbps": 210.0, "rtt_median_ms": 80.0, "audio.r": 80.0,
               "audio.mos": 4.0, "audio.emodel_clamped": 0})


# ---- the figure -------------------------------------------------------------

T0_NS = 5_000_000_000
FPS = 10


def write_call(d, screen=True):
    """A 6 s call at 10 fps whose capture n is at T0 + 0.5 s + n / 10:
    coded but every fourth skipped by the ladder; frames 20..29 lost; the
    screen black up to slot 4, then the newest shown frame."""
    os.makedirs(d, exist_ok=True)
    n = 60
    coded = [i % 4 != 3 for i in range(n)]
    lines = [records.FRAMES_FORMAT, "# role: send", "# flow: call",
             f"# start_ns: {T0_NS + 500_000_000}", "# codec: vp8", "# width: 320",
             "# height: 240", f"# fps: {FPS}", "# layers: 1", "# scene_seed: 1",
             "\t".join(records.FRAMES_COLUMNS)]
    last = None
    for i in range(n):
        t = T0_NS + 500_000_000 + i * 100_000_000
        if coded[i]:
            key = "1" if i == 0 else "0"
            refs = "-" if i == 0 else str(last)
            size = 6000 if i == 0 else 1500 + 10 * i
            lines.append(f"{i}\t{t}\tcoded\t{key}\t0\t{refs}\t{size}\t{size // 1400 + 1}"
                         f"\t320\t240\t{200 + i}\t{210 + i}\t30\t5000")
            last = i
        else:
            lines.append(f"{i}\t{t}\tskipped\t-\t-\t-\t0\t0\t320\t240\t{200 + i}\t{210 + i}"
                         "\t-\t10")
    lines += ["# coded: 45", "# skipped: 15", "# dropped: 0", "# complete: 1"]
    with open(os.path.join(d, "media-call.frames.rec"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    if not screen:
        return
    shown, on, rows = -1, [], [vp8call.HIDDEN, "\t".join(vp8call.SCREEN_COLUMNS)]
    for i in range(n):
        if coded[i] and i >= 4 and not 20 <= i < 30:
            shown = i
        on.append(shown)
        ssim = 0.07 if shown < 0 else 0.9 - 0.05 * (i - shown)
        rows.append(f"{i}\t{'-' if shown < 0 else shown}\t{20 + 10 * ssim:.3f}\t{ssim:.6f}")
    with open(os.path.join(d, "media-call.screen.tsv"), "w", encoding="utf-8") as f:
        f.write("\n".join(rows) + "\n")


@test
def slot_kinds_by_hand():
    # slot:    0   1   2   3   4  5  6
    # coded:   y   y   n   y   y  n  y
    # screen: -1  -1   1   1   4  4  6 (3 coded but not shown)
    screen = np.array([-1, -1, 1, 1, 4, 4, 6])
    coded = np.array([1, 1, 0, 1, 1, 0, 1], dtype=bool)
    new, not_coded, not_shown, black = plots.slot_kinds(screen, coded)
    check(list(np.flatnonzero(new)) == [4, 6] and list(np.flatnonzero(not_coded)) == [2, 5]
          and list(np.flatnonzero(not_shown)) == [3] and list(np.flatnonzero(black)) == [0, 1],
          f"kinds {new} {not_coded} {not_shown} {black}")
    check(len(plots.SLOT_KINDS) == 4, "a kind without its colour")


@test
def vp8_figure_from_a_run_directory():
    d = os.path.join(TMP, "run")
    write_call(d)
    drawn = []
    real = plots._save
    plots._save = lambda fig, fig_dir, name: drawn.append(fig) or real(fig, fig_dir, name)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")     # a layout matplotlib cannot make
            paths = plots.draw_vp8(TMP, d, "call", "vp8-run-call", T0_NS, 0.2, 1.5,
                                   "test call")
    finally:
        plots._save = real
    want = [os.path.join(TMP, "figures", f"vp8-run-call.{e}") for e in ("png", "svg")]
    check(paths == want, f"paths {paths}")
    with open(want[0], "rb") as f:
        check(f.read(8) == b"\x89PNG\r\n\x1a\n" and os.path.getsize(want[0]) > 20000,
              f"{want[0]}: not a PNG of a figure")
    # every legend inside its axes (one running past the figure's edge is
    # a known complaint), and the strip's kinds all named
    fig = drawn[0]
    fig.canvas.draw()
    legends = [(ax, ax.get_legend()) for ax in fig.axes if ax.get_legend()]
    check(len(legends) == 2, f"{len(legends)} legends")
    for ax, leg in legends:
        box, inside = leg.get_window_extent(), ax.get_window_extent()
        check(box.x0 >= inside.x0 and box.x1 <= inside.x1 and box.y0 >= inside.y0
              and box.y1 <= inside.y1, f"legend {box} outside its axes {inside}")
    labels = [t.get_text() for t in legends[1][1].get_texts()]
    # after the warm-up (captures at 1.5 s on: slots 10..59, 50): not
    # coded 11, 15, ..., 59: 13 = 26 %; coded, not shown 20..29 less 23
    # and 27: 8 = 16 %; new frames the other 29 = 58 %
    check(labels[1:] == ["new frame (58 %)", "held: not coded (26 %)",
                         "held: coded, not shown (16 %)", "black (0 %)"], f"labels {labels}")
    # a run whose metrics were never computed has no screen: the rates alone
    d = os.path.join(TMP, "no-screen")
    write_call(d, screen=False)
    paths = plots.draw_vp8(TMP, d, "call", "vp8-none-call", T0_NS, 0.2, 1.5, "no screen")
    check(all(os.path.getsize(p) > 5000 for p in paths), f"no screen: {paths}")


def main():
    return ktap.main(tests, TMP)


if __name__ == "__main__":
    sys.exit(main())
