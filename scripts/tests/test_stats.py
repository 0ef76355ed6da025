#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of the analysis (sbpnlab.stats, .report, .plots); KTAP output.

Each statistic is checked against values computed by hand; the report is
run on a small synthetic campaign this file writes (complete runs of two
policies and three seeds, a failed run, a run listed but never made, a
run with a broken record file, and, in a copy, a file of a newer format);
the figures must come out as non-empty PNG and SVG files, each legend
inside its figure; `compare` pairs it with a second campaign whose
differences are known.
Run with the venv: scripts/venv.sh && .venv/bin/python scripts/tests/test_stats.py
Exit 1 if any test failed.
"""
import argparse
import contextlib
import csv
import io
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, SCRIPTS)
import ktap  # noqa: E402 - beside this file
try:
    import numpy as np
    from sbpnlab import compare, decide, plots, report, stats
except ImportError as e:
    print(f"Bail out! {e}: run scripts/venv.sh, then .venv/bin/python {sys.argv[0]}")
    sys.exit(1)

TMP = tempfile.mkdtemp(prefix="sbpn-stats.")
test, tests = ktap.collector()
check = ktap.check


def close(a, b, tol=1e-9):
    return np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), atol=tol,
                       equal_nan=True)


# ---- statistics against hand-computed values --------------------------------

@test
def t_quantiles():
    # Student's t table, two-sided 95 %.
    for df, want in ((1, 12.706), (2, 4.303), (4, 2.776), (29, 2.045)):
        got = stats.t_quantile(0.975, df)
        check(abs(got - want) < 5e-4, f"t(0.975, {df}) = {got}, want {want}")


@test
def summary_interval():
    s = stats.summary([1, 2, 3, 4, 5])
    # s = sqrt(2.5); half width = 2.776445 * 1.581139 / sqrt(5) = 1.963243
    check(s["n"] == 5 and close(s["mean"], 3) and close(s["ci"], 1.963243, 1e-6),
          f"summary {s}")
    check((s["min"], s["median"], s["max"]) == (1, 3, 5), f"min/median/max {s}")
    one = stats.summary([0.7])
    check(one["n"] == 1 and math.isnan(one["ci"]) and one["mean"] == 0.7, f"n=1: {one}")
    check(stats.summary([float("nan"), 2.0])["n"] == 1, "NaN values are not counted")


@test
def paired_by_seed():
    base = {1: 0.5, 2: 0.6, 3: 0.7}
    other = {1: 0.6, 2: 0.8, 3: 0.7, 4: 0.9}     # seed 4 has no partner
    s = stats.paired(base, other)
    # differences 0.1, 0.2, 0.0: mean 0.1, sd 0.1, ci 4.302653 * 0.1 / sqrt(3)
    check(s["n"] == 3 and close(s["mean"], 0.1) and close(s["ci"], 0.248414, 1e-6),
          f"paired {s}")


@test
def ipdv_forms():
    d = np.array([10, 12, np.nan, 15, 11]) / 1000
    got = stats.ipdv(d)
    # consecutive pairs with both received: 12-10 = 2, 11-15 = -4
    check(close(got["consecutive"][[0, 2, 7]] * 1000, [-4, -1, 2]),
          f"consecutive {got['consecutive'] * 1000}")
    # vs minimum: 0, 2, 5, 1 -> min 0, median 1.5, max 5
    check(close(got["vs_min"][[0, 2, 7]] * 1000, [0, 1.5, 5]), f"vs_min {got['vs_min']}")
    check(np.isnan(stats.ipdv([np.nan, 0.01])["consecutive"]).all(), "no pair -> NaN")


@test
def loss_period_levels():
    F, T = False, True
    lost = [F, T, F, T, T, F, T, T, T, F, T, T, T, T, F, T, T, T, T, T, F] + \
        [T] * 6 + [F] + [T] * 9 + [F] + [T] * 10 + [F, T]
    want = [0, 1, 0, 2, 2, 0, 2, 2, 2, 0, 3, 3, 3, 3, 0, 3, 3, 3, 3, 3, 0] + \
        [4] * 6 + [0] + [4] * 9 + [0] + [5] * 10 + [0, 1]
    got = stats.loss_period_levels(lost, 0.020)
    check(list(got) == want, f"levels {list(got)}")
    # With 10 ms packets, two lost packets are a 20 ms gap: level 1.
    check(list(stats.loss_period_levels([T, T, F], 0.010)) == [1, 1, 0], "10 ms packets")


@test
def short_flow_rates_and_link_share():
    # edges 0, 0.4, 0.8 s.  Group 0: 1000 B over 0-0.4 s (8000 bits in bin
    # 0) and 2000 B over 0.2-0.6 s (8000 bits in each bin): 40000, 20000
    # bit/s.  Group 1: 500 B over 0-0.8 s (2000 bits per bin, 5000 bit/s)
    # and a flow whose end is unknown (nothing).
    short = {"group": np.array([0, 0, 1, 1]), "start": np.array([0.0, 0.2, 0.0, 0.1]),
             "end": np.array([0.4, 0.6, 0.8, np.nan]),
             "delivered": np.array([1000.0, 2000.0, 500.0, 0.0])}
    r = stats.short_rates(short, np.array([0.0, 0.4, 0.8]))
    check(sorted(r) == [0, 1] and close(r[0], [40000, 20000]) and close(r[1], [5000, 5000]),
          f"short rates {r}")
    goodput = {"call": np.array([15000.0, 15000.0]), **{f"short.g{g}": v for g, v in r.items()}}
    cap = np.array([100000.0, 100000.0])
    # means 15000, 30000, 5000: J = 50000^2 / (3 (15000^2 + 30000^2 + 5000^2))
    # = 2.5e9 / 3.45e9; utilisation (0.6 + 0.4) / 2
    share = stats.link_share(goodput, cap, np.array([True, True]))
    check(close(share["jain"], 2.5 / 3.45) and close(share["utilisation"], 0.5),
          f"both bins {share}")
    # bin 1 alone: 15000, 20000, 5000: J = 40000^2 / (3 * 6.5e8), 0.4
    share = stats.link_share(goodput, cap, np.array([False, True]))
    check(close(share["jain"], 1.6 / 1.95) and close(share["utilisation"], 0.4),
          f"bin 1 {share}")


@test
def jain_index():
    check(close(stats.jain([1, 1, 1, 1]), 1), "equal shares")
    check(close(stats.jain([1, 0, 0, 0]), 0.25), "one flow takes all")
    check(close(stats.jain([1, 2, 3]), 36 / 42), "1,2,3")
    try:
        stats.jain([0, 0])
    except ValueError:
        pass
    else:
        raise AssertionError("all-zero rates must be refused")


@test
def jitter_buffer_loss():
    d = np.array([10, 20, 50, np.nan]) / 1000
    u = stats.usable(d, 0.030)       # base 10 ms: usable up to 40 ms
    check(list(u) == [True, True, False, False], f"usable {u}")
    check(not stats.usable(np.array([np.nan, np.nan]), 1).any(), "nothing received")
    x, y = stats.cdf(np.array([3, 1, np.nan, 2]))
    check(close(x, [1, 2, 3]) and close(y, [1 / 3, 2 / 3, 1]), f"cdf {x} {y}")


@test
def jitter_buffer_and_loss_period_edges():
    # Base 125 ms, the smallest delay though not the first; a buffer of
    # 125 ms plays up to 250 ms inclusive, not a hair more (binary
    # fractions: exact).  From the first packet's delay (250 ms) it would
    # play 375 ms too; without the base (d <= 125 ms) or with "<", the
    # 250 ms packet would be lost.
    d = np.array([0.25, 0.125, np.nan, 0.25 + 2 ** -20, 0.375])
    u = stats.usable(d, 0.125)
    check(list(u) == [True, True, False, False, False], f"usable {u}")
    # Packets 25 ms apart: runs of 1, 2, 3, 5, 7 and 8 unusable packets are
    # 25, 50, 75, 125, 175 and 200 ms: levels 1, 2, 3, 4, 4, 5 (counted as
    # if 20 ms apart, or in packets, the run of 3 would be level 2 and the
    # run of 8 level 4).  The first packet is lost: its run counts too.
    F, T = False, True
    runs = (1, 2, 3, 5, 7, 8)
    lost = sum(([F] + [T] * n for n in runs), [])[1:]
    want = sum(([0] + [lv] * n for n, lv in zip(runs, (1, 2, 3, 4, 4, 5))), [])[1:]
    got = stats.loss_period_levels(lost, 0.025)
    check(list(got) == want, f"levels at 25 ms {list(got)}")
    # The report's levels use its --jitter-buffer-ms: with 250 ms the 3
    # audio packets 250 ms late (base 30 ms) are usable, leaving the 27
    # lost in a row (540 ms, level 5) of simple's seed 1.
    run = stats.Run(os.path.join(campaign(), "policy=simple,rep=01"))
    (row,) = stats.run_metrics(run, 0.250)
    check(close(row["audio.level5"], 27 / 150) and close(row["audio.acceptable"], 123 / 150),
          f"levels with a 250 ms buffer {row['audio.level5']} {row['audio.acceptable']}")


@test
def stall_threshold():
    # The flow starts 0.5 s after t0, warm-up 1 s: samples from 1.5 s
    # count.  X below 10700 B/s in 3 of those 5 (10700 itself is not
    # below): 0.6 (from t0 + warm-up, 4 of 6; at or below, 0.8).
    cc = {"t": np.array([0.5, 1.0, 1.5, 1.6, 1.7, 1.8, 1.9]),
          "x": np.array([0, 0, 10600, 10700, 5000, 20000, 0.0])}
    check(close(stats.stall_fraction(cc, 10700, 1.0, 0.5), 0.6), "stall share")
    # A run stalled when its share is at least one half.
    rows = [{"stall": v} for v in (0.49, 0.5, 0.51, math.nan)] + [{}]
    check(report.stalled_runs(rows) == "2", f"stalled runs {report.stalled_runs(rows)}")
    check(report.stalled_runs([{"stall": math.nan}, {}]) == "-", "no CCID3 log: '-'")
    # In a run the threshold is the audio's payload rate, 214 B x 50/s =
    # 10700 B/s: X of 10600 (stalled), 20000 (not, though below the audio
    # and video together, 25960 B/s) and 85000 B/s (not, though below
    # 85600, the audio's rate in bit/s), 10 samples each after warm-up.
    d = write_run(os.path.join(TMP, "stall"), "sbpn2", 5)
    with open(os.path.join(d, "media-call.cc.log"), "w") as f:
        f.write("# sbpn-cc 1\n# role: send\nt_ns\tx_Bps\tx_recv_Bps\tx_calc_Bps\trtt_us\tp"
                "\trto_us\tipi_us\n")
        for k in range(DURATION_S * 10):
            x = (10600, 20000, 85000)[k // 10 - 1] if k >= 10 else 0
            f.write(f"{START_NS + k * 100_000_000}\t{x}\t{x}\t0\t40000\t0.01\t200000\t0\n")
        f.write("# complete: 1\n")
    (row,) = stats.run_metrics(stats.Run(d), 0.040)
    check(close(row["stall"], 1 / 3), f"stall {row['stall']}")


def times_ns(packet, start_ns):
    """(planned, sent, expiry) in ns of a packet (class, size, t_s, result
    [, late_s [, lifetime_s]]): sent late_s after it was planned (0 if not
    given), its deadline planned + lifetime_s (200 ms if not given; None:
    no expiry, written as 0, as sbpn-send does)."""
    planned = start_ns + round(packet[2] * 1e9)
    late = round(packet[4] * 1e9) if len(packet) > 4 else 0
    life = packet[5] if len(packet) > 5 else 0.2
    return planned, planned + late, 0 if life is None else planned + round(life * 1e9)


def send_lines(packets, start_ns, late_ns=0):
    """Record-file text of a sender: packets = [(class, size, t_s, result
    [, late_s [, lifetime_s]])] (times_ns()), each sent late_ns more."""
    lines = ["# sbpn-records 1", "# role: send", "# flow: call", "# transport: dccp",
             f"# start_ns: {start_ns}",
             "seq\tclass\tsize\tprio\tplanned_ns\tsent_ns\texpiry_ns\tresult"]
    for i, p in enumerate(packets):
        cls, size, _, result = p[:4]
        planned, sent, expiry = times_ns(p, start_ns)
        lines.append(f"{i}\t{cls}\t{size}\t{2 if cls == 'audio' else 1}\t{planned}\t"
                     f"{sent + late_ns}\t{expiry}\t{result}")
    return "\n".join(lines + ["# complete: 1", ""])


def recv_lines(packets, start_ns, delays, order=None):
    """Receiver text: delays = {seq: seconds after the packet's late_s} of
    the packets that arrived, in seq order or in the order given (which may
    repeat a seq)."""
    lines = ["# sbpn-records 1", "# role: recv", "# flow: call", "# transport: dccp",
             f"# start_ns: {start_ns}", "seq\tclass\tsize\tsent_ns\trecv_ns"]
    for i in order or sorted(delays):
        cls, size = packets[i][:2]
        d = delays[i]
        _, ns, _ = times_ns(packets[i], start_ns)
        lines.append(f"{i}\t{cls}\t{size}\t{ns}\t{ns + round(d * 1e9)}")
    return "\n".join(lines + ["# complete: 1", ""])


def flow_of(packets, delays, order=None, start_ns=5_000_000_000):
    paths = []
    for name, text in (("s", send_lines(packets, start_ns)),
                       ("r", recv_lines(packets, start_ns, delays, order))):
        paths.append(os.path.join(TMP, f"flow-{name}.rec"))
        with open(paths[-1], "w") as f:
            f.write(text)
    from sbpnlab import records
    return stats.MediaFlow("call", records.read(paths[0]), records.read(paths[1]), start_ns)


@test
def on_time_after_warmup():
    # Audio every 20 ms for 2 s; warm-up 1 s leaves 50.  Of those 5 are
    # lost, 3 arrive after their 200 ms deadline; every warm-up packet is
    # lost, which must not count.
    packets = [("audio", 214, i * 0.02, "ok") for i in range(100)]
    delays = {i: 0.030 for i in range(50, 100)}
    for i in (60, 61, 62, 70, 99):
        del delays[i]
    for i in (80, 81, 90):
        delays[i] = 0.250
    f = flow_of(packets, delays)
    got = stats.delivery(f, "audio", 1.0)
    want = {"scheduled": 50, "accepted": 50, "received": 45, "on_time": 42}
    check({k: got[k] for k in want} == want, f"delivery {got}")
    check(close(got["received_frac"], 0.9) and close(got["on_time_frac"], 0.84),
          f"fractions {got}")
    check(stats.delivery(f, "video", 1.0)["scheduled"] == 0, "no video")
    d = stats.delays(f, "audio", 1.0)
    check(len(d) == 50 and np.isnan(d).sum() == 5 and close(np.nanmin(d), 0.030),
          "delays of the selected packets")


@test
def frames_and_bytes_on_time():
    # Ten video frames 100 ms apart, each cut into 1026 + 1026 + 300 bytes
    # planned for the same instant.  Frame 2's small piece arrives late and
    # frame 5's first piece is lost: 8 of 10 frames whole and on time, 28 of
    # 30 pieces, and all bytes but 300 + 1026.
    packets = [("video", size, f * 0.1, "ok") for f in range(10) for size in (1026, 1026, 300)]
    delays = {i: 0.030 for i in range(30)}
    delays[3 * 2 + 2] = 0.250
    del delays[3 * 5]
    got = stats.delivery(flow_of(packets, delays), "video", 0)
    check(got["frames"] == 10 and got["frames_on_time"] == 8 and
          close(got["frames_on_time_frac"], 0.8), f"frames {got}")
    check(close(got["on_time_frac"], 28 / 30), f"packets {got}")
    check(close(got["bytes_on_time_frac"], 1 - 1326 / (10 * 2352)), f"bytes {got}")
    # An audio packet is a frame of its own.
    audio = [("audio", 214, i * 0.02, "ok") for i in range(10)]
    got = stats.delivery(flow_of(audio, {i: 0.03 for i in range(9)}), "audio", 0)
    check(got["frames"] == 10 and got["frames_on_time"] == 9, f"audio frames {got}")


@test
def on_time_definitions():
    # Eleven audio packets, 20 ms apart, lifetime 150 ms (expiry_ns =
    # planned + 150 ms) unless none; delays are sendmsg -> arrival:
    #   0  sent on time, 30 ms            on time
    #   1  sent 50 ms late, 120 ms        late: arrives planned + 170 > 150
    #                                     (on time if the deadline ran from
    #                                     the send time, or were 200 ms)
    #   2  sent 100 ms late, 40 ms        on time (planned + 140)
    #   3, 4  refused (EAGAIN)            scheduled, never accepted
    #   5  no expiry, 900 ms              on time: no deadline
    #   6  no expiry, lost
    #   7  180 ms                         late (on time if 200 ms were assumed)
    #   8  lost
    #   9  30 ms                          on time
    #  10  150 ms: arrives at its expiry  on time (recv <= expiry)
    # On time 5 of 11 scheduled (5/9 of the accepted, 5/7 of the received).
    L = 0.150
    packets = [("audio", 214, i * 0.02, "EAGAIN" if i in (3, 4) else "ok",
                (0.050 if i == 1 else 0.100 if i == 2 else 0), None if i in (5, 6) else L)
               for i in range(11)]
    delays = {0: 0.030, 1: 0.120, 2: 0.040, 5: 0.900, 7: 0.180, 9: 0.030, 10: 0.150}
    f = flow_of(packets, delays)
    got = stats.delivery(f, "audio", 0)
    want = {"scheduled": 11, "accepted": 9, "received": 7, "on_time": 5, "frames": 11,
            "frames_on_time": 5}
    check({k: got[k] for k in want} == want, f"counts {got}")
    check(close(got["on_time_frac"], 5 / 11) and close(got["received_frac"], 7 / 11) and
          close(got["frames_on_time_frac"], 5 / 11) and close(got["bytes_on_time_frac"], 5 / 11),
          f"fractions {got}")
    # One-way delay from sendmsg() to arrival (not from the planned time,
    # which would give 170 and 140 ms for packets 1 and 2).
    d = stats.delays(f, "audio", 0) * 1000
    check(close(d, [30, 120, 40, np.nan, np.nan, 900, np.nan, 180, np.nan, 30, 150], 1e-6),
          f"delays {d}")
    # The per-packet figure's fates use the same deadline.
    fate = list(stats.fates(f))
    check(fate == ["on time", "late", "on time", "refused", "refused", "on time",
                   "lost in the network", "late", "lost in the network", "on time", "on time"],
          f"fates {fate}")
    # A kernel discard named by a drop notice: "predicted_late" (QPOLICY_F_PREDICT)
    # is one the kernel counts as expired, not a packet that arrived late.
    f.dropped = {6: "predicted_late", 8: "frame"}
    fate = list(stats.fates(f))
    check(fate[6] == "expired" and fate[8] == "given up with frame", f"notice fates {fate}")


@test
def notice_reasons_one_list():
    # The reasons the run totals (records.NOTICE_REASONS) are those the
    # Python binding decodes and those the fates know: one list, so that a
    # reason added to one is not missed by the others.
    sys.path.insert(0, os.path.join(os.path.dirname(SCRIPTS), "userspace", "lib"))
    import sbpn
    from sbpnlab import records
    named = set(sbpn.DROP_REASONS.values())
    check(named == set(records.NOTICE_REASONS), f"sbpn.py {sorted(named)}, "
          f"records {sorted(records.NOTICE_REASONS)}")
    for r in records.NOTICE_REASONS:
        f = flow_of([("video", 1000, 0.0, "ok")], {})
        f.dropped = {0: r}
        check(list(stats.fates(f))[0] in stats.FATES, f"{r}: {list(stats.fates(f))}")


@test
def arrival_order():
    packets = [("audio", 214, i * 0.02, "ok") for i in range(4)]
    f = flow_of(packets, {i: 0.03 for i in range(4)})
    check(f.duplicates == 0 and f.reordered == 0, "in order")
    # The receiver saw seq 0, 2, 1, 1 again, 3: one reordered, one duplicate.
    f = flow_of(packets, {i: 0.03 for i in range(4)}, order=(0, 2, 1, 1, 3))
    check(f.duplicates == 1 and f.reordered == 1, f"dup {f.duplicates} reord {f.reordered}")
    check(stats.delivery(f, "audio", 0)["received"] == 4, "a duplicate counts once")


@test
def send_lateness_is_the_p99_after_warmup():
    # 50 warm-up packets (1 s), each handed to the socket 500 ms late,
    # then 100: 98 sent 1 ms late, one 10 ms, one 50 ms; one refused
    # (EAGAIN) 1 ms late too.  numpy's p99 of the 100 (linear between the
    # 99th and 100th): 10 + 0.01 x 40 = 10.4 ms.  Counting the warm-up
    # gives 500, the maximum 50, the median 1.
    packets = ([("audio", 214, i * 0.02, "ok", 0.5) for i in range(50)] +
               [("audio", 214, 1 + i * 0.02, "EAGAIN" if i == 7 else "ok", 0.001)
                for i in range(100)])
    packets[60] = packets[60][:4] + (0.010,)
    packets[130] = packets[130][:4] + (0.050,)
    f = flow_of(packets, {})
    got = stats.send_late_p99_ms(f, 1.0)
    check(close(got, 10.4), f"send lateness p99 {got} ms, want 10.4")
    check(math.isnan(stats.send_late_p99_ms(f, 10.0)), "nothing after the warm-up: NaN")


@test
def the_stall_threshold_is_the_audio_rate_while_it_sends():
    # Audio every 20 ms for 1 s, silent for 1 s, then 1 s more, a tenth of
    # it refused: the threshold is 214 B / 20 ms = 10700 B/s, the rate
    # while the voice sends, scheduled.  Averaged over the 3 s, silence
    # included, it would be 200 x 214 / 3 = 14267 x 0.5 = 7133 B/s (with
    # what was accepted alone, less).
    packets = ([("audio", 214, i * 0.02, "EAGAIN" if i % 10 == 3 else "ok")
                for i in range(50)] +
               [("audio", 214, 2 + i * 0.02, "ok") for i in range(50)] +
               [("video", 1000, 0.05 + i * 0.1, "ok") for i in range(30)])
    f = flow_of(packets, {})
    got = stats.class_rate_Bps(f, "audio")
    check(close(got, 10700), f"audio rate {got} B/s, want 10700")


@test
def rate_bins():
    packets = [("video", 1000, 0.1, "ok"), ("video", 500, 0.3, "ok"),
               ("video", 1000, 0.5, "EAGAIN"), ("audio", 250, 0.79, "ok")]
    f = flow_of(packets, {0: 0.01, 3: 0.01})
    edges = stats.bin_edges(0.8)
    check(close(edges, [0, 0.4, 0.8]), f"edges {edges}")
    r = stats.media_rates(f, edges)
    # bin 0: sent 8000 + 4000 bits, the 4000 lost; bin 1: 2000 bits (the
    # EAGAIN packet never left the application)
    check(close(r["throughput"], [30000, 5000]), f"throughput {r['throughput']}")
    # a packet planned in bin 0 and handed to the socket in bin 1 counts
    # in bin 1, when it was sent, not when it was planned
    late = stats.media_rates(flow_of([("video", 1000, 0.35, "ok", 0.1)], {0: 0.01}), edges)
    check(close(late["throughput"], [0, 20000]), f"by the time sent {late['throughput']}")
    check(close(r["goodput"], [20000, 5000]), f"goodput {r['goodput']}")
    check(close(r["loss"], [10000, 0]), f"loss {r['loss']}")
    # an iperf3 interval 0-0.5 s of 5000 bits: 4000 in bin 0, 1000 in bin 1
    tcp = stats.tcp_rates((np.array([0.0]), np.array([0.5]), np.array([5000.0])), edges)
    check(close(tcp, [10000, 2500]), f"tcp {tcp}")


# ---- a synthetic campaign ---------------------------------------------------

WARMUP_S, DURATION_S, START_NS = 1, 4, 10_000_000_000
# Audio on-time counts of the 150 audio packets after warm-up, per policy
# and seed; 3 more arrive late, the rest are lost.
ON_TIME = {"simple": {1: 120, 2: 135, 3: 105}, "prio": {1: 135, 2: 138, 3: 147}}
LATE = 3


def call_packets():
    """Audio every 20 ms, a two-packet video frame every 100 ms, for 4 s."""
    out = []
    for i in range(DURATION_S * 50):
        out.append(("audio", 214, i * 0.02, "ok"))
        if i % 5 == 0:
            out += [("video", 1026, i * 0.02, "ok"), ("video", 500, i * 0.02, "ok")]
    return out


def write_run(camp, policy, seed, status="complete", rate=None, fr=None, on_time=None,
              late_ns=0):
    swept = (f"rate={rate}," if rate else "") + (f"faster_restart={fr}," if fr is not None else "")
    run_id = f"policy={policy},{swept}rep={seed:02d}"
    d = os.path.join(camp, run_id)
    os.makedirs(d)
    packets = call_packets()
    audio = [i for i, p in enumerate(packets) if p[0] == "audio" and p[2] >= WARMUP_S]
    if on_time is None:
        on_time = ON_TIME.get(policy, {}).get(seed, 150 - LATE)
    lost = set(audio[:150 - on_time - LATE]) | {i for i, p in enumerate(packets)
                                                  if p[0] == "audio" and p[2] < WARMUP_S}
    late = set(audio[150 - on_time - LATE:150 - on_time])
    delays = {i: 0.25 if i in late else 0.03 for i in range(len(packets)) if i not in lost}
    with open(os.path.join(d, "media-call.send.rec"), "w") as f:
        f.write(send_lines(packets, START_NS, late_ns))
    with open(os.path.join(d, "media-call.recv.rec"), "w") as f:
        f.write(recv_lines(packets, START_NS, delays))
    # CCID3 samples every 100 ms; simple: X below the audio rate until 2.5 s
    with open(os.path.join(d, "media-call.cc.log"), "w") as f:
        f.write("# sbpn-cc 1\n# role: send\nt_ns\tx_Bps\tx_recv_Bps\tx_calc_Bps\trtt_us\tp"
                "\trto_us\tipi_us\n")
        for k in range(DURATION_S * 10):
            x = 100 if policy == "simple" and k < 25 else 50000
            f.write(f"{START_NS + k * 100_000_000}\t{x}\t{x}\t0\t40000\t0.01\t200000\t0\n")
        f.write("# complete: 1\n")
    # The same TCP flow (15000 bytes per 0.5 s from 0.5 s after t0) from
    # sbpn-bulk, or for seed 2 from iperf3 as in older results: both
    # readers must give the same goodput.
    if seed == 2:
        with open(os.path.join(d, "tcp-0.json"), "w") as f:
            json.dump({"intervals": [{"sum": {"start": k * 0.5, "end": k * 0.5 + 0.5,
                                              "bytes": 15000}, "streams": []}
                                     for k in range(7)]}, f)
    else:
        with open(os.path.join(d, "tcp-0.rec"), "w") as f:
            f.write("# sbpn-tcp 1\n# role: send\nt_ns\tbytes_written\tbytes_acked\trtt_us"
                    "\tmin_rtt_us\tcwnd\tretrans\n")
            for k in range(8):
                f.write(f"{START_NS + 500_000_000 * (k + 1)}\t{15000 * k}\t{15000 * k}"
                        "\t80000\t80000\t10\t0\n")
            f.write("# complete: 1\n")
    # Short flows: 0.5, 1 and 2 s to complete, and one that never did;
    # group 1 is a bulk transfer that did not complete either.
    with open(os.path.join(d, "short-tcp.json"), "w") as f:
        json.dump({"format": "sbpn-short-tcp 1", "flows": [
            {"group": 0, "size": 10000, "started_ns": START_NS + k * 10**9,
             "done_ns": START_NS + k * 10**9 + fct if fct else None}
            for k, fct in enumerate((500_000_000, 1_000_000_000, 2_000_000_000, 0))] + [
            {"group": 1, "size": 10**6, "started_ns": START_NS + 10**9, "done_ns": None,
             "ended_ns": START_NS + 3 * 10**9, "acked_bytes": 50000}]}, f)
    with open(os.path.join(d, "link.log"), "w") as f:
        f.write(f"# sbpn-link 1\n# t0_ns: {START_NS}\n"
                "t_s\tplanned_ns\tapplied_ns\tlate_ms\trate\tresult\n"
                f"2.0\t{START_NS + 2_000_000_000}\t{START_NS + 2_200_000_000}\t200\t500kbit\tok\n")
    media = {"name": "call", "source": "ekiga", "transport": "dccp", "policy": policy,
             "ccid": 3, "tx_qlen": 5, "lifetime_ms": 200, "start_s": 0,
             **({"faster_restart": fr} if fr is not None else {})}
    meta = {"format": 1, "run_id": run_id,
            "params": {"policy": policy, **({"rate": rate} if rate else {}),
                       **({"faster_restart": fr} if fr is not None else {})},
            "repetition": seed, "seed": seed, "status": status,
            "reason": None if status == "complete" else "media-call.send exited 1",
            "t0_ns": START_NS,
            "config": {"scenario": {"name": "synthetic", "duration_s": DURATION_S,
                                    "warmup_s": WARMUP_S},
                       "link": {"rate": "1mbit"}, "media": [media],
                       "short_tcp": [{"count": 4, "size_bytes": 10000, "initcwnd": 10,
                                      "cc": "reno"},
                                     {"count": 1, "size_bytes": 10**6, "initcwnd": 3,
                                      "cc": "cubic"}],
                       "tcp": [{"flows": 1, "direction": "forward"}]},
            "link": {"initial_rate": "1mbit", "changes": [[2.0, "500kbit"]]},
            "tcp": [{"started_s": 0.5}], "qpolicy": {"call": {"qpolicy_expired": "4", "notices": "3"}}}
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f)
    return d


def campaign():
    """The synthetic campaign (written once): simple and prio, seeds 1-3,
    and one run of each way a run can be unusable."""
    camp = os.path.join(TMP, "campaign")
    if os.path.isdir(camp):
        return camp
    for p in ON_TIME:
        for seed in (1, 2, 3):
            write_run(camp, p, seed)
    write_run(camp, "sbpn1", 1, status="failed")
    broken = write_run(camp, "sbpn2", 1)
    with open(os.path.join(broken, "media-call.recv.rec"), "w") as f:
        f.write("# sbpn-records 7\n")
    # The receiver did not finish its record file.
    path = os.path.join(write_run(camp, "sbpn3", 2), "media-call.recv.rec")
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(text.replace("# complete: 1\n", ""))
    # A run that stopped before writing meta.json.
    os.makedirs(os.path.join(camp, "policy=udp,rep=01"))
    open(os.path.join(camp, "policy=udp,rep=01", "media-call.send.rec"), "w").close()
    runs = sorted(os.listdir(camp)) + ["policy=sbpn3,rep=01"]
    with open(os.path.join(camp, "campaign.json"), "w") as f:
        json.dump({"format": 1, "runs": runs}, f)
    return camp


def run_command(module, *argv):
    """(exit status, stdout, stderr) of `sbpn-lab <module> argv...`."""
    p = argparse.ArgumentParser()
    module.add_arguments(p)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = module.run(p.parse_args(list(argv)))
    return rc, out.getvalue(), err.getvalue()


def run_report(*argv):
    return run_command(report, *argv)


@test
def run_metrics_of_a_run():
    run = stats.Run(os.path.join(campaign(), "policy=simple,rep=01"))
    (row,) = stats.run_metrics(run, 0.040)
    check(row["audio.scheduled"] == 150 and close(row["audio.on_time_frac"], 0.8) and
          close(row["audio.received_frac"], 123 / 150), f"audio {row}")
    check(close(row["video.on_time_frac"], 1) and row["video.scheduled"] == 60, "video")
    # cc samples after warm-up: 1.0 .. 3.9 s, X below 10700 B/s up to 2.4 s
    check(close(row["stall"], 15 / 30), f"stall {row['stall']}")
    # audio: 27 lost in a row, then 3 too late for a 40 ms jitter buffer:
    # one loss period of 30 packets (600 ms), all level 5
    check(close(row["audio.level5"], 30 / 150) and close(row["audio.acceptable"], 120 / 150),
          f"loss-period levels {row}")
    check(close(row["audio.loss_jb40"], 30 / 150), f"jitter-buffer loss {row}")
    # capacity 1 Mbit/s to 2.2 s (link.log: applied late), 500 kbit/s after
    edges = stats.bin_edges(DURATION_S)
    cap = stats.link_capacity(run, edges)
    check(close(cap[:5], 1e6) and close(cap[5], 0.75e6) and close(cap[6:], 0.5e6),
          f"capacity {cap}")
    check(0 < row["jain"] < 1 and 0 < row["utilisation"] < 1, f"jain/util {row}")
    check(row["qpolicy_expired"] == 4, "the kernel's queue counters")
    # after warm-up (1 s to 3.98 s + 20 ms): 123 audio and 60 video packets
    # received in 3 s; X: 15 samples of 100 B/s and 15 of 50000, median
    # 25050 B/s
    check(close(row["audio.recv_pps"], 41) and close(row["video.recv_pps"], 20) and
          close(row["x_median_kbps"], 200.4), f"received rates {row}")
    # every sample says 40000 us
    check(close(row["rtt_median_ms"], 40), f"RTT median {row['rtt_median_ms']}")
    # 3 of 5 short flows completed; p95 of 0.5, 1, 2 s is 1 + 0.9 (2 - 1);
    # group 0: 3 of its 4, the same times; group 1: none of its one
    check(row["short.flows"] == 5 and close(row["short.completed_frac"], 0.6) and
          close(row["short.fct_p50_ms"], 1000) and close(row["short.fct_p95_ms"], 1900),
          f"short flows {row}")
    check(row["short.g0.flows"] == 4 and close(row["short.g0.completed_frac"], 0.75) and
          close(row["short.g0.fct_p95_ms"], 1900) and row["short.g1.flows"] == 1 and
          row["short.g1.completed_frac"] == 0 and math.isnan(row["short.g1.fct_p50_ms"]),
          f"short flows per group {row}")
    # The bulk flow's 50000 acked bytes, spread over 1-3 s, are 200 kbit/s
    # of the forward traffic: without them the utilisation is lower.
    run.short = None
    (bare,) = stats.run_metrics(run, 0.040)
    check(row["utilisation"] > bare["utilisation"] and row["jain"] != bare["jain"],
          f"short flows in the link share {row['utilisation']} {bare['utilisation']}")
    check(close(row["send_late_p99_ms"], 0), f"sender lateness {row['send_late_p99_ms']}")
    # The TCP flow, 15000 bytes per 0.5 s from 0.5 s to 4 s: 240 kbit/s
    # after warm-up, read from sbpn-bulk's records here and from iperf3's
    # JSON for seed 2.
    old = stats.Run(os.path.join(campaign(), "policy=simple,rep=02"))
    (old_row,) = stats.run_metrics(old, 0.040)
    check(close(row["tcp.goodput_kbps"], 240) and close(old_row["tcp.goodput_kbps"], 240),
          f"TCP goodput {row['tcp.goodput_kbps']} (sbpn-bulk), "
          f"{old_row['tcp.goodput_kbps']} (iperf3)")


@test
def competing_tcp_and_utilisation():
    """Two forward Reno flows that get 100 and 300 kbit/s acknowledged
    while writing 150 and 400, and a reverse flow of 1000 kbit/s, all
    from 0.5 s after t0 to 4 s, every 0.5 s.  The competing TCP goodput
    is their acknowledged bytes summed over the forward flows: 400 kbit/s
    (per flow: 200; written: 550; with the reverse flow: 1400)."""
    d = write_run(os.path.join(TMP, "tcp"), "sbpn2", 5)
    for i, (acked, written) in enumerate(((6250, 9375), (18750, 25000), (62500, 62500))):
        with open(os.path.join(d, f"tcp-{i}.rec"), "w") as f:
            f.write("# sbpn-tcp 1\n# role: send\nt_ns\tbytes_written\tbytes_acked\trtt_us"
                    "\tmin_rtt_us\tcwnd\tretrans\n")
            for k in range(8):
                f.write(f"{START_NS + 500_000_000 * (k + 1)}\t{written * k}\t{acked * k}"
                        "\t80000\t80000\t10\t0\n")
            f.write("# complete: 1\n")
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    meta["config"]["tcp"] = [{"flows": 2, "direction": "forward"},
                             {"flows": 1, "direction": "reverse"}]
    meta["tcp"] = [{"started_s": 0.5}] * 3
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f)
    run = stats.Run(d)
    (row,) = stats.run_metrics(run, 0.040)
    check(close(row["tcp.goodput_kbps"], 400, 1e-6) and row["tcp.flows"] == 2,
          f"competing TCP {row['tcp.goodput_kbps']} kbit/s, {row['tcp.flows']} flows")
    # The reverse flow's data does not cross the forward bottleneck: it
    # changes neither Jain's index nor the utilisation.
    del run.tcp["tcp-2"]
    (fwd,) = stats.run_metrics(run, 0.040)
    check(close(row["jain"], fwd["jain"]) and close(row["utilisation"], fwd["utilisation"]),
          f"reverse flow counted: {row['jain']} {fwd['jain']}, "
          f"{row['utilisation']} {fwd['utilisation']}")
    # Utilisation is the mean over the window's bins of goodput / capacity.
    # The window's bins run from 1.2 to 4.0 s; the capacity is 1 Mbit/s
    # until link.log's applied change at 2.2 s, then 500 kbit/s: per bin 1,
    # 1, 0.75, 0.5, 0.5, 0.5, 0.5 Mbit/s.  The forward flows' 400 kbit/s
    # add (0.4 + 0.4 + 0.5333 + 4 * 0.8) / 7 = 0.647619 (over the mean
    # capacity 0.678571 Mbit/s: 0.5895; with the planned change at 2 s:
    # 0.6857; at the starting rate: 0.4).
    run.tcp = {}
    (media,) = stats.run_metrics(run, 0.040)
    check(close(fwd["utilisation"] - media["utilisation"], (0.8 + 1.6 / 3 + 3.2) / 7),
          f"utilisation {fwd['utilisation']} - {media['utilisation']}")
    # The same definition on two bins: 500 kbit/s over 1 and 0.5 Mbit/s
    # is (0.5 + 1) / 2 = 0.75, not 1 Mbit/s / 1.5 Mbit/s = 0.667.
    share = stats.link_share({"a": np.array([500e3, 500e3])}, np.array([1e6, 0.5e6]),
                             np.array([True, True]))
    check(close(share["utilisation"], 0.75), f"time-varying capacity {share}")


@test
def headline_states_what_intervals_allow():
    # Ten seeds; sbpn2 gets exactly 10 points more audio (noise cancels in
    # pairs), video +3 and -1 points alternately (mean +1, CI +-1.5: cannot
    # tell), and TCP 50 kbit/s less.  A second campaign has no difference.
    def rows(d_audio, d_video, d_tcp):
        out = []
        for i in range(10):
            base = {"audio.on_time_frac": 0.80 + 0.01 * (i % 3),
                    "video.on_time_frac": 0.60, "tcp.goodput_kbps": 600.0 + i}
            out.append({"policy": "simple", "key": (i, 1), **base})
            out.append({"policy": "sbpn2", "key": (i, 1),
                        "audio.on_time_frac": base["audio.on_time_frac"] + d_audio,
                        "video.on_time_frac": 0.60 + (3 * d_video if i % 2 else -d_video),
                        "tcp.goodput_kbps": base["tcp.goodput_kbps"] + d_tcp})
        return out
    lines = report.headline(rows(0.10, 0.01, -50), "simple", "sbpn2", "t")
    check(len(lines) == 2 and "10 runs of each" in lines[0] and
          "+10.0 ±0.0 points of audio on time" in lines[0] and
          "-50.0 ±0.0 kbit/s of competing TCP goodput" in lines[0], f"numbers: {lines}")
    check("audio on time: higher" in lines[1] and "video on time: cannot tell" in lines[1]
          and "competing TCP goodput: lower" in lines[1], f"verdicts: {lines}")
    none = report.headline(rows(0, 0, 0), "simple", "sbpn2", "t")
    check(none[1].count("cannot tell") == 3, f"no difference: {none}")
    check(report.headline(rows(0.1, 0, 0), "simple", "prio", "t") == [],
          "a policy the campaign does not have gets no headline")
    ref = os.path.join(TMP, "reference.csv")
    with open(ref, "w", newline="") as f:
        w = csv.DictWriter(f, ["comparison", "policy", "metric", "n", "mean", "ci95"])
        w.writeheader()
        w.writerow({"comparison": "x", "policy": "sbpn2", "metric": "paired_audio.on_time_frac",
                    "n": 30, "mean": 0.073, "ci95": 0.011})
    lines = report.headline(rows(0.1, 0, 0), "simple", "sbpn2", "t",
                            report.read_reference(ref, "sbpn2"))
    check("Reference (reference.csv, 30 pairs): +7.3 ±1.1 points of audio on time" in lines[2],
          f"reference: {lines}")


@test
def headline_takes_the_decision():
    """In a campaign that decides, the finding's verdict of each metric
    decided is the sequential decision's (after a sequential design the
    95 % intervals are descriptive only); the other metrics keep what
    their intervals allow, and the reference line stays."""
    rows = []
    for i in range(10):
        base = {"audio.on_time_frac": 0.8, "video.on_time_frac": 0.6,
                "tcp.goodput_kbps": 600.0 + i}
        rows.append({"policy": "simple", "key": (i, 1), **base})
        rows.append({"policy": "sbpn2", "key": (i, 1), "audio.on_time_frac": 0.9,
                     "video.on_time_frac": 0.6 + (0.03 if i % 2 else -0.01),
                     "tcp.goodput_kbps": 550.0 + i})
    decided = {"status": "maximum", "metrics": [
        {"metric": "audio.on_time_frac", "verdict": "higher", "lo": 4.1, "hi": 15.9,
         "margin": 2.0, "mean": 10.0, "n": 10, "first": 10},
        {"metric": "video.on_time_frac", "verdict": None, "lo": -7.0, "hi": None,
         "margin": 5.0, "mean": 1.0, "n": 10, "first": None}]}
    ref = os.path.join(TMP, "reference-decided.csv")
    with open(ref, "w", newline="") as f:
        w = csv.DictWriter(f, ["comparison", "policy", "metric", "n", "mean", "ci95"])
        w.writeheader()
        w.writerow({"comparison": "x", "policy": "sbpn2", "metric": "paired_audio.on_time_frac",
                    "n": 30, "mean": 0.073, "ci95": 0.011})
    lines = report.headline(rows, "simple", "sbpn2", "t", report.read_reference(ref, "sbpn2"),
                            decided)
    check("audio on time: higher (decided: +4.1..+15.9 points)" in lines[1] and
          "video on time: no verdict by the maximum (-7.0..+inf points, margin ±5)" in lines[1]
          and "competing TCP goodput: lower (the interval is below 0)" in lines[1],
          f"verdicts: {lines}")
    check("+10.0 ±0.0 points of audio on time" in lines[0] and
          lines[2].startswith("  Reference (reference-decided.csv, 30 pairs)"),
          f"numbers and reference: {lines}")
    open_ = dict(decided, status="open")
    check("video on time: no verdict yet (" in report.headline(rows, "simple", "sbpn2", "t",
                                                               None, open_)[1],
          "an open comparison's metric has no verdict yet")


@test
def headline_adds_freezes_and_voice_mos():
    # Ten seeds with the quality metrics: sbpn2 freezes 0.30 s/min less in
    # every pair (-0.30 ±0.00: lower) and its voice MOS is +0.20 and -0.10
    # alternately (mean +0.05, sd 0.158, CI 2.262 x 0.158 / sqrt 10 =
    # 0.11: cannot tell).  Decimals: two, where one would print +0.1.
    def rows(quality=True):
        out = []
        for i in range(10):
            base = {"audio.on_time_frac": 0.8, "video.on_time_frac": 0.6,
                    "tcp.goodput_kbps": 600.0}
            q = {"video.freeze_s_per_min": 1.0 + 0.1 * i, "audio.mos": 3.5} if quality else {}
            out.append({"policy": "simple", "key": (i, 1), **base, **q})
            if quality:
                q = {"video.freeze_s_per_min": 0.7 + 0.1 * i,
                     "audio.mos": 3.5 + (0.2 if i % 2 else -0.1)}
            out.append({"policy": "sbpn2", "key": (i, 1), **base, **q})
        return out
    lines = report.headline(rows(), "simple", "sbpn2", "t")
    check("-0.30 ±0.00 s/min of video freezes" in lines[0] and
          "+0.05 ±0.11 MOS of voice quality" in lines[0], f"numbers: {lines}")
    check(lines[0].index("competing TCP goodput") < lines[0].index("video freezes")
          < lines[0].index("voice quality"), f"order: {lines}")
    check("video freezes: lower" in lines[1] and "voice quality: cannot tell" in lines[1],
          f"verdicts: {lines}")
    # runs without them (older results): the line is as before
    old = report.headline(rows(False), "simple", "sbpn2", "t")
    check("freezes" not in old[0] and "MOS" not in old[0], f"old runs: {old}")
    # the paired table keeps them for a later --reference
    summaries = {}
    report.paired_table(rows(), "simple", summaries)
    s = summaries["sbpn2", "paired_audio.mos"]
    check(s["n"] == 10 and close(s["mean"], 0.05), f"paired MOS kept: {s}")
    # and the report prints them paired, by seed: with seed 9 of the
    # baseline gone, 9 pairs, sbpn2's freezes still -0.30 in each (paired
    # by order they would not), MOS +0.20 four times (seeds 1, 3, 5, 7) and
    # -0.10 five: mean +0.033, median -0.10, sd 0.158, CI 2.306 x 0.158 / 3
    # = 0.12
    rs = [r for r in rows() if r["key"] != (9, 1) or r["policy"] != "simple"]
    rs.append(rs.pop(rs.index(next(r for r in rs if r["key"] == (9, 1)))))
    rs.insert(0, rs.pop())
    note, head, table = report.paired_quality_table(rs, "simple", {})
    check(head[2:] == ["Δ decodable frames pp", "Δ freeze s/min", "Δ MOS"] and
          table == [["sbpn2", "9", "-", "-0.3 ±0.0 (-0.3/-0.3/-0.3)",
                     "0.03 ±0.12 (-0.10/-0.10/0.20)"]], f"paired quality table: {table}")


@test
def headline_names_what_the_vp8_decoder_showed():
    # A VP8 call: sbpn2 shows 4 points more of its frames in every pair,
    # its screen's SSIM is +0.02 and -0.01 alternately (mean +0.005:
    # cannot tell), it freezes 1.5 s/min less; these follow TCP's goodput,
    # frames shown first, and a reference's NaN (the Ekiga call's freezes,
    # not measured for a VP8 flow) is left off its line.
    def rows(vp8=True):
        out = []
        for i in range(10):
            base = {"audio.on_time_frac": 0.9, "video.on_time_frac": 0.7,
                    "tcp.goodput_kbps": 600.0, "audio.mos": 3.8}
            v = {"vp8.frames_shown_pct": 55.0 + i, "vp8.ssim_mean": 0.45,
                 "vp8.freeze_s_per_min": 30.0} if vp8 else {}
            out.append({"policy": "simple", "key": (i, 1), **base, **v})
            if vp8:
                v = {"vp8.frames_shown_pct": 59.0 + i,
                     "vp8.ssim_mean": 0.45 + (0.02 if i % 2 else -0.01),
                     "vp8.freeze_s_per_min": 28.5}
            out.append({"policy": "sbpn2", "key": (i, 1), **base, **v})
        return out
    lines = report.headline(rows(), "simple", "sbpn2", "t")
    check("+4.0 ±0.0 points of VP8 frames shown" in lines[0] and
          "+0.005 ±0.011 SSIM of the VP8 screen" in lines[0] and
          "-1.50 ±0.00 s/min of VP8 freezes" in lines[0], f"numbers: {lines}")
    check(lines[0].index("competing TCP goodput") < lines[0].index("VP8 frames shown")
          < lines[0].index("VP8 screen") < lines[0].index("voice quality"), f"order: {lines}")
    check("VP8 frames shown: higher" in lines[1] and "the VP8 screen: cannot tell" in lines[1]
          and "VP8 freezes: lower" in lines[1], f"verdicts: {lines}")
    check("VP8" not in report.headline(rows(False), "simple", "sbpn2", "t")[0],
          "an Ekiga call's line names no VP8 metric")
    ref = os.path.join(TMP, "reference-vp8.csv")
    with open(ref, "w", newline="") as f:
        w = csv.DictWriter(f, ["comparison", "policy", "metric", "n", "mean", "ci95"])
        w.writeheader()
        for metric, mean, ci in (("vp8.frames_shown_pct", 1.1, 6.8), ("vp8.ssim_mean", -0.035, 0.049),
                                 ("video.freeze_s_per_min", "nan", "nan")):
            w.writerow({"comparison": "x", "policy": "sbpn2", "metric": f"paired_{metric}",
                        "n": 30, "mean": mean, "ci95": ci})
    lines = report.headline(rows(), "simple", "sbpn2", "t", report.read_reference(ref, "sbpn2"))
    check(lines[2] == "  Reference (reference-vp8.csv, 30 pairs): +1.1 ±6.8 points of VP8 "
          "frames shown; -0.035 ±0.049 SSIM of the VP8 screen.", f"reference: {lines}")


@test
def paired_tables_pair_each_metric_once():
    """The paired table and the paired quality table share the finding's
    freezes and MOS: each variant's pairing of each metric is made once
    (report.paired_summary), and both keep the one in summaries."""
    metrics = ("audio.on_time_frac", "video.on_time_frac", "video.frames_on_time_frac",
               "tcp.goodput_kbps", "video.freeze_s_per_min", "audio.mos",
               "video.decodable_frac")
    rows = [{"policy": p, "key": (seed, 1), **{m: seed + (p == "sbpn2") for m in metrics}}
            for seed in range(3) for p in ("simple", "sbpn2", "prio")]
    made = []
    real = stats.paired_policies
    stats.paired_policies = lambda rows, base, p, m: made.append((p, m)) or real(rows, base, p, m)
    try:
        summaries = {}
        report.paired_table(rows, "simple", summaries)
        report.paired_quality_table(rows, "simple", summaries)
    finally:
        stats.paired_policies = real
    check(sorted(made) == sorted({(p, m) for p in ("sbpn2", "prio") for m in metrics}),
          f"pairings made: {made}")
    check([k for k in summaries if k[0] == "sbpn2"] ==
          [("sbpn2", f"paired_{m}") for m in metrics] and
          summaries["sbpn2", "paired_audio.mos"]["mean"] == 1 and
          summaries["prio", "paired_audio.mos"]["mean"] == 0, f"summaries: {summaries}")


@test
def report_tables():
    out = os.path.join(TMP, "report")
    rc, text, err = run_report(campaign(), "--out", out, "--no-figures")
    check(rc == 0, f"rc {rc}: {err}")
    # simple: 120, 135, 105 of 150 -> 80, 90, 70 %: mean 80, CI 4.3027 * 10 / sqrt 3
    check("80.0 ±24.8 (70.0/80.0/90.0)" in text, f"simple audio on time:\n{text}")
    # prio: 90, 92, 98 %: mean 93.33, sd 4.163, CI 4.3027 * 4.163 / sqrt 3
    check("93.3 ±10.3 (90.0/92.0/98.0)" in text, f"prio audio on time:\n{text}")
    # paired prio - simple by seed: 10, 2, 28 pp: mean 13.33, sd 13.32
    check("13.3 ±33.1 (2.0/10.0/28.0)" in text, f"paired:\n{text}")
    # IPDV pooled over runs: one late -> on-time step (-220 ms) per run, no
    # pair across runs (that would be +220) or across lost packets.
    check("simple  audio  -220.0  0.0  0.0  0.0  0.0  0.0  0.0  0.0" in text,
          f"pooled IPDV:\n{text}")
    # Where packets went: nothing refused, 4 expired (meta.json), no
    # eviction or frame counter, 3 drop notices, nothing reordered.
    lines = text.splitlines()
    where = lines[lines.index(next(x for x in lines if x.startswith("policy  refused %"))) + 1]
    check(where.split()[:7] == ["simple", "0.0", "4.0", "-", "-", "3.0", "0.0"],
          f"where: {where}")
    for run_id, why in (("policy=sbpn1,rep=01", "failed: media-call.send exited 1"),
                        ("policy=sbpn2,rep=01", "unreadable"),
                        ("policy=sbpn3,rep=01", "not run"),
                        ("policy=sbpn3,rep=02", "incomplete records of call"),
                        ("policy=udp,rep=01", "incomplete: no meta.json")):
        check(f"{run_id}: {why}" in text, f"{run_id} not listed as {why}:\n{text}")
    with open(os.path.join(out, "summary.csv")) as f:
        rows = list(csv.DictReader(f))
    got = {(r["policy"], r["metric"]): r for r in rows}
    s = got["simple", "audio.on_time_frac"]
    check(s["n"] == "3" and close(float(s["mean"]), 0.8) and
          close(float(s["ci95"]), 0.248414, 1e-6), f"csv {s}")
    check(close(float(got["simple", "stall"]["mean"]), 0.5) and
          close(float(got["prio", "stall"]["mean"]), 0), "stall in csv")
    # stalled runs: every simple run had X below the audio rate for exactly
    # half its time (stalled: at least half), no prio run ever
    i = lines.index(next(x for x in lines if x.startswith("policy  runs")))
    head = lines[i]
    at = head.index("stalled runs")
    stalled = {x.split()[0]: x[at:].split()[0] for x in lines[i + 1:i + 3]}
    check(stalled == {"simple": "3", "prio": "0"}, f"stalled runs: {stalled}\n{head}")
    i = lines.index(next(x for x in lines if x.startswith("policy  group")))
    check([x.split() for x in lines[i + 1:i + 4]] ==
          [["simple", "all", "5", "60.0", "1000", "1900"],
           ["simple", "0", "IW10", "10", "kB", "reno", "4", "75.0", "1000", "1900"],
           ["simple", "1", "IW3", "1", "MB", "cubic", "1", "0.0", "-", "-"]],
          f"short flows: {lines[i:i + 4]}")
    with open(os.path.join(out, "runs.csv")) as f:
        check(len(list(csv.DictReader(f))) == 6, "runs.csv has one row per run")
    with open(os.path.join(out, "summary.md")) as f:
        md = f.read()
    check("| simple | 3 | 80.0 ±24.8" in md, "markdown table")


@test
def report_refuses_newer_format():
    camp = os.path.join(TMP, "newer")
    shutil.copytree(campaign(), camp)
    with open(os.path.join(camp, "policy=prio,rep=02", "meta.json")) as f:
        meta = json.load(f)
    meta["format"] = stats.RESULTS_FORMAT + 1
    with open(os.path.join(camp, "policy=prio,rep=02", "meta.json"), "w") as f:
        json.dump(meta, f)
    rc, text, err = run_report(camp, "--no-figures")
    check(rc == 2 and "policy=prio,rep=02/meta.json: format 2 is newer" in err,
          f"rc {rc}, stderr: {err}")
    check(not os.path.exists(os.path.join(camp, "report")), "nothing written")


@test
def report_decision_only_while_decided():
    """The report computes the sequential decision of a campaign, and says
    why runs are missing, only while campaign.json has "decide": a
    campaign resumed with --no-decide loses it, and its missing runs are
    plain "not run" again.  The decision is the one `sbpn-lab decide`
    writes, with the settings campaign.json holds (one metric here),
    whatever an older decision.json says; the report writes it beside its
    tables, and the finding takes its verdict."""
    camp = os.path.join(TMP, "undecided")
    shutil.copytree(campaign(), camp)
    stale = {"campaign": "undecided", "method": "Lai", "alpha": 0.05, "family": 1,
             "alpha_each": 0.05, "looks": [2], "through": 2, "comparisons": []}
    with open(os.path.join(camp, "decision.json"), "w") as f:
        json.dump(stale, f)
    runs = sorted(d for d in os.listdir(camp) if d.startswith("policy=")) + ["policy=prio,rep=09"]
    for decided in (True, False):
        index = {"runs": runs, "repetitions": 9,
                 **({"decide": {"min_pairs": 2, "metrics": ["audio"]}} if decided else {})}
        with open(os.path.join(camp, "campaign.json"), "w") as f:
            json.dump(index, f)
        out = os.path.join(camp, f"r{decided}")
        rc, text, err = run_report(camp, "--no-figures", "--headline", "prio", "--out", out)
        check(rc == 0, f"rc {rc}: {err}")
        check(("Sequential decision" in text) == decided and
              ("stopped early" in text) == decided, f"decide {decided}:\n{text}")
        finding = text.splitlines()[1]
        check(("audio on time: " in finding and "(decided: " in finding or
               "no verdict yet (" in finding) == decided and
              "video on time: cannot tell (the interval" in finding, finding)
        path = os.path.join(out, "decision.json")
        check(os.path.exists(path) == decided, f"{path}: {os.path.exists(path)}")
        if decided:
            with open(path) as f:
                written = json.load(f)
            rows = report.metrics(report.scan(camp, out)[0], 0.04, [])
            want = json.loads(json.dumps(decide.of_campaign(rows, index)))
            (c,) = written["comparisons"]
            check(written == want and written["family"] == 1 and c["variant"] == "prio" and
                  written["looks"] == [2, 7, 9] and c["repetition"] == 2,
                  f"{written}")


@test
def report_sweep():
    """Three rates (given out of order) x two policies x two seeds: a sweep
    table in increasing rate, one of differences to the baseline, and a
    sweep figure with both."""
    camp = os.path.join(TMP, "sweep")
    for rate in ("2mbit", "500kbit", "1mbit"):
        for p in ON_TIME:
            for seed in (1, 2):
                write_run(camp, p, seed, rate=rate)
    out = os.path.join(TMP, "sweep-report")
    rc, text, err = run_report(camp, "--out", out)
    check(rc == 0, f"rc {rc}: {err}")
    lines = text.splitlines()
    i = lines.index("== synthetic flow call: sweep over rate")
    # simple: 80 and 90 % -> 85 ±12.706 * 7.071 / sqrt 2; prio 90, 92 -> 91 ±12.7;
    # video always 100 %
    rows = [x.split() for x in lines[i + 3:i + 6]]
    check([r[0] for r in rows] == ["500kbit", "1mbit", "2mbit"] and
          all(r[1:] == ["85.0", "±63.5", "100.0", "±0.0", "91.0", "±12.7", "100.0", "±0.0"]
              for r in rows), f"sweep table:\n" + "\n".join(lines[i:i + 6]))
    # prio - simple, paired by seed: +10 and +2 points -> 6 ±12.706 * 5.657 / sqrt 2
    j = lines.index("differences to simple against rate, percentage points of on-time "
                    "packets, mean ±95 % CI over runs with the same seed")
    rows = [x.split() for x in lines[j + 1:j + 5]]
    check(rows[0] == ["rate", "prio", "a", "prio", "v", "pairs"] and
          [r[0] for r in rows[1:]] == ["500kbit", "1mbit", "2mbit"] and
          all(r[1:] == ["6.0", "±50.8", "0.0", "±0.0", "2"] for r in rows[1:]),
          "paired sweep table:\n" + "\n".join(lines[j:j + 5]))
    check(os.path.getsize(os.path.join(out, "figures", "synthetic_flow_call-sweep.png"))
          > 5000, "sweep figure")
    with open(os.path.join(out, "figures", "synthetic_flow_call-sweep.svg")) as f:
        svg = f.read()
    check(all(f"<!-- {c} on time: difference to simple, paired by seed -->" in svg
              for c in ("audio", "video")), "sweep figure has the paired panels")


@test
def report_pairs_by_seed():
    """simple has seeds 1-4 (audio on time 80, 90, 70, 92 %); sbpn2 has
    seeds 1 and 4 (84, 98 %): its seed 2 failed and seed 3 was never made.
    Paired by seed: +4 and +6 points, mean 5, sd sqrt 2, CI 12.706 * sqrt 2
    / sqrt 2 = 12.7.  Matched by order instead (80-84, 90-98): +4 and +8;
    the difference of the means: 91 - 83 = +8."""
    camp = os.path.join(TMP, "pairs")
    for seed, on_time in ((1, 120), (2, 135), (3, 105), (4, 138)):
        write_run(camp, "simple", seed, on_time=on_time)
    write_run(camp, "sbpn2", 1, on_time=126)
    write_run(camp, "sbpn2", 2, status="failed")
    write_run(camp, "sbpn2", 4, on_time=147)
    runs = sorted(os.listdir(camp)) + ["policy=sbpn2,rep=03"]
    with open(os.path.join(camp, "campaign.json"), "w") as f:
        json.dump({"format": 1, "runs": runs}, f)
    rc, text, err = run_report(camp, "--out", os.path.join(TMP, "pairs-report"),
                               "--no-figures")
    check(rc == 0, f"rc {rc}: {err}")
    check(text.startswith("Finding (synthetic flow call): sbpn2 against simple, 2 runs of "
                          "each paired by seed, mean difference ±95 % CI: +5.0 ±12.7 points "
                          "of audio on time;"), f"headline:\n{text}")
    lines = text.splitlines()
    i = lines.index(next(x for x in lines if x.startswith("differences to simple")))
    check(lines[i + 2].split()[:5] == ["sbpn2", "2", "5.0", "±12.7", "(4.0/5.0/6.0)"],
          f"paired table: {lines[i:i + 3]}")
    check("Runs not used (2):" in text and "policy=sbpn2,rep=02: failed" in text and
          "policy=sbpn2,rep=03: not run" in text, f"runs not used:\n{text}")


@test
def report_faster_restart():
    """A faster_restart sweep gives one comparison whose rows are the
    policies with and without it ("+fr"), each after the one without."""
    camp = os.path.join(TMP, "fr")
    for p in ON_TIME:
        for fr in (True, False):
            for seed in (1, 2):
                write_run(camp, p, seed, fr=fr)
    rc, text, err = run_report(camp, "--out", os.path.join(TMP, "fr-report"), "--no-figures")
    check(rc == 0, f"rc {rc}: {err}")
    check(text.count("== synthetic") == 1, f"one comparison:\n{text}")
    lines = text.splitlines()
    i = next(n for n, x in enumerate(lines) if x.startswith("policy") and "runs" in x)
    rows = [x.split()[0] for x in lines[i + 1:i + 5]]
    check(rows == ["simple", "simple+fr", "prio", "prio+fr"], f"rows {rows}:\n{text}")


# A campaign of named variants: SIMPLE, "best" (SBPN2 with
# faster_restart, "sbpn2+fr") and SBPN2, in that order (not the one the
# report gives policies), audio on time of seeds 1-3.
VARIANTS = (("simple", "simple", False, {1: 120, 2: 135, 3: 105}),
            ("best", "sbpn2", True, {1: 141, 2: 144, 3: 138}),
            ("sbpn2", "sbpn2", False, {1: 126, 2: 130, 3: 120}))


def named_campaign(names):
    """The campaign of VARIANTS, its campaign.json with the variants and
    compare = [[simple, best], [simple, sbpn2]] as campaign.write_index
    writes them (names), or without them, as before scenarios named them."""
    camp = os.path.join(TMP, "named" if names else "unnamed")
    if os.path.isdir(camp):
        return camp
    for _, policy, fr, on_time in VARIANTS:
        for seed, n in on_time.items():
            write_run(camp, policy, seed, fr=fr, on_time=n)
    index = {"format": 1, "runs": sorted(os.listdir(camp))}
    if names:
        index.update(variants=[{"name": n, "point": {"policy": p, "faster_restart": bool(fr)}}
                               for n, p, fr, _ in VARIANTS],
                     baseline="simple", compare=[["simple", "best"], ["simple", "sbpn2"]])
    with open(os.path.join(camp, "campaign.json"), "w") as f:
        json.dump(index, f)
    return camp


def findings(text):
    return [x for x in text.splitlines() if x.startswith("Finding")]


@test
def report_names_variants_and_their_comparisons():
    """Each comparison the scenario names gets its finding line, in its
    order: best against simple, 14, 6, 22 points (21, 9, 33 of 150):
    mean 14, sd 8, CI 4.3027 * 8 / sqrt 3 = 19.9; then sbpn2 against
    simple.  The rows are the variants, named, in the scenario's order
    (campaign.json's)."""
    rc, text, err = run_report(named_campaign(True), "--out", os.path.join(TMP, "named-report"),
                               "--no-figures")
    check(rc == 0, f"rc {rc}: {err}")
    got = findings(text)
    check(len(got) == 2 and got[0].startswith(
        "Finding (synthetic flow call): best against simple, 3 runs of each paired by seed, "
        "mean difference ±95 % CI: +14.0 ±19.9 points of audio on time;") and
        got[1].startswith("Finding (synthetic flow call): sbpn2 against simple, 3 runs "),
        "\n".join(got) or text)
    lines = text.splitlines()
    i = next(n for n, x in enumerate(lines) if x.split()[:2] == ["policy", "runs"])
    check([x.split()[0] for x in lines[i + 1:i + 4]] == ["simple", "best", "sbpn2"] and
          "variants: simple = simple; best = sbpn2+fr; sbpn2 = sbpn2" in text,
          "\n".join(lines[i - 3:i + 4]))
    with open(os.path.join(TMP, "named-report", "summary.csv")) as f:
        labels = {(r["policy"], r["label"]) for r in csv.DictReader(f)}
    check(labels == {("simple", "simple"), ("sbpn2", "sbpn2"), ("best", "sbpn2+fr")},
          f"summary.csv: {labels}")


@test
def report_of_a_campaign_without_names():
    """The same runs without names in campaign.json (a campaign run before
    scenarios named their variants): today's labels, and the one finding
    such a report always had, sbpn2 against simple."""
    rc, text, err = run_report(named_campaign(False), "--out",
                               os.path.join(TMP, "unnamed-report"), "--no-figures")
    check(rc == 0, f"rc {rc}: {err}")
    got = findings(text)
    check(len(got) == 1 and got[0].startswith(
        "Finding (synthetic flow call): sbpn2 against simple, 3 runs"), "\n".join(got))
    lines = text.splitlines()
    i = next(n for n, x in enumerate(lines) if x.split()[:2] == ["policy", "runs"])
    check([x.split()[0] for x in lines[i + 1:i + 4]] == ["simple", "sbpn2", "sbpn2+fr"] and
          "best" not in text and "variants:" not in text, "\n".join(lines[i:i + 4]))


@test
def report_options_choose_comparisons_by_name_or_options():
    """--baseline X: each other variant against X; --headline by the
    options' label ("sbpn2+fr", as commands for older campaigns write it)
    finds the variant named best; --reference found by that label in a
    summary.csv of a campaign without names."""
    camp = named_campaign(True)
    rc, text, err = run_report(camp, "--baseline", "sbpn2", "--no-figures", "--out",
                               os.path.join(TMP, "named-b"))
    got = [x.split(":")[1].split(",")[0] for x in findings(text)]
    check(rc == 0 and got == [" simple against sbpn2", " best against sbpn2"] and
          "differences to sbpn2 of runs" in text, f"rc {rc} {err}: {got}")
    rc, text, err = run_report(camp, "--headline", "sbpn2+fr", "--no-figures", "--out",
                               os.path.join(TMP, "named-h"))
    got = [x.split(":")[1].split(",")[0] for x in findings(text)]
    check(rc == 0 and got == [" best against simple"], f"rc {rc} {err}: {got}")
    run_report(named_campaign(False), "--out", os.path.join(TMP, "unnamed-ref"), "--no-figures")
    rc, text, err = run_report(camp, "--no-figures", "--out", os.path.join(TMP, "named-r"),
                               "--reference", os.path.join(TMP, "unnamed-ref", "summary.csv"))
    lines = text.splitlines()
    refs = [lines[n + 2] for n, x in enumerate(lines) if x.startswith("Finding")]
    check(rc == 0 and refs[0].startswith("  Reference (summary.csv, 3 pairs): +14.0 ±19.9 "
                                         "points of audio on time;") and
          refs[1].startswith("  Reference (summary.csv, 3 pairs): +3.6 "), "\n".join(refs))


def run_compare(*argv):
    return run_command(compare, *argv)


@test
def compare_campaigns():
    """B repeats A's simple runs with 3, 0 and 6 more audio packets on time
    and its prio runs 1 and 2 unchanged, every packet sent 2 ms late."""
    camp = os.path.join(TMP, "again")
    for seed, on_time in ((1, 123), (2, 135), (3, 111)):
        write_run(camp, "simple", seed, on_time=on_time, late_ns=2_000_000)
    for seed in (1, 2):
        write_run(camp, "prio", seed, late_ns=2_000_000)
    rc, text, err = run_compare(campaign(), camp)
    check(rc == 0, f"rc {rc}: {err}")
    rows = {x.split()[0]: x for x in text.splitlines()
            if x.split()[:1] in (["simple"], ["prio"], ["all"])}
    # simple: 2, 0, 4 pp: mean 2, sd 2, CI 4.3027 * 2 / sqrt 3
    check(rows["simple"].split()[1:5] == ["3", "2.0", "±5.0", "(0.0/2.0/4.0)"],
          f"simple:\n{text}")
    check(rows["prio"].split()[1:5] == ["2", "0.0", "±0.0", "(0.0/0.0/0.0)"], f"prio:\n{text}")
    # all five pairs: 2, 0, 4, 0, 0 pp: mean 1.2, sd 1.789, CI 2.7764 * 1.789 / sqrt 5
    check(rows["all"].split()[1:5] == ["5", "1.2", "±2.2", "(0.0/0.0/4.0)"], f"all:\n{text}")
    check(rows["all"].endswith("2.0 ±0.0 (2.0/2.0/2.0)"), f"sender lateness:\n{text}")
    # A: 80, 90, 70, 90, 92 %; B: 82, 90, 74, 90, 92 %
    check("means of A / B over the pairs: audio on time 84.4 / 85.6%" in text and
          "send late p99 0.0 / 2.0 ms" in text, f"means:\n{text}")
    check("policy=prio,rep=03: complete only in A" in text and
          "policy=sbpn1,rep=01: A: failed" in text and "Not paired (5):" in text and
          "Left out: 1 listed in campaign.json but never made" in text,
          f"runs not paired:\n{text}")
    rc, text, err = run_compare(camp, os.path.join(TMP, "nowhere"))
    check(rc == 2 and "not a directory" in err, f"missing B: rc {rc}, {err}")
    rc, text, err = run_compare(os.path.join(campaign(), "policy=udp,rep=01"), camp)
    check(rc == 1 and "No run is complete in both" in text, f"nothing to pair: rc {rc}")


@test
def compare_draws_a_and_b_run_by_run():
    """compare --figures draws every pair's A and B on one axis per metric,
    A's value and B's of the same run at the same place (not each
    campaign's mean, not B - A), runs in policy and run-id order; and the
    VP8 call's columns join the table only where both campaigns have them."""
    def row(policy, rep, audio, shown=None):
        r = {"policy": policy, "run": f"policy={policy},rep={rep:02d}",
             "audio.on_time_frac": audio}
        if shown is not None:
            r.update({"vp8.frames_shown_pct": shown, "vp8.ssim_mean": 0.5})
        return r
    pairs = [(row("sbpn2", 2, 0.90), row("sbpn2", 2, 0.70)),
             (row("simple", 1, 0.80), row("simple", 1, 0.84)),
             (row("sbpn2", 1, 0.60), row("sbpn2", 1, 0.66))]
    cols = (("audio.on_time_frac", 100, "audio on time", "pp"),)
    drawn = []
    save = plots._save
    plots._save = lambda fig, d, name: drawn.append(fig) or [os.path.join(d, name + ".png")]
    try:
        plots.draw_compare(os.path.join(TMP, "cmp"), pairs, cols, "A dir", "B dir")
    finally:
        plots._save = save
    lines = {ln.get_label(): list(ln.get_ydata()) for ln in drawn[0].axes[0].get_lines()}
    check(lines.get("A: A dir") == [60.0, 90.0, 80.0] and
          lines.get("B: B dir") == [66.0, 70.0, 84.0],
          f"A and B per run, sbpn2 01, 02, simple 01: {lines}")
    ticks = [t.get_text() for t in drawn[0].axes[0].get_xticklabels()]
    check(ticks == ["sbpn2 01", "sbpn2 02", "simple 01"], f"x: {ticks}")
    vp8 = [(row("simple", 1, 0.8, 40.0), row("simple", 1, 0.8, 50.0))]
    check(compare.columns_of(vp8)[-2:] == compare.VP8_COLUMNS and
          compare.columns_of(pairs) == compare.COLUMNS and
          compare.columns_of(vp8 + pairs[:1]) == compare.COLUMNS,
          "VP8 columns only where every pair has them")
    camp = os.path.join(TMP, "again-fig")
    for seed in (1, 2):
        write_run(camp, "prio", seed, late_ns=2_000_000)
    rc, text, err = run_compare(campaign(), camp, "--figures", os.path.join(TMP, "cmpfig"))
    check(rc == 0 and os.path.isfile(os.path.join(TMP, "cmpfig", "compare.png")) and
          "figure: " in text, f"rc {rc}: {err}\n{text[-300:]}")


@test
def report_figures():
    out = os.path.join(TMP, "figs")
    rc, text, err = run_report(campaign(), "--out", out)
    check(rc == 0, f"rc {rc}: {err}")
    names = sorted(os.listdir(os.path.join(out, "figures")))
    kinds = ("delivery", "delay", "rates", "ccid3")
    want = sorted(f"synthetic_flow_call-{k}.{e}" for k in kinds for e in ("png", "svg"))
    check(names == want, f"figures {names}")
    for n in names:
        with open(os.path.join(out, "figures", n), "rb") as f:
            head = f.read(4096)
        size = os.path.getsize(os.path.join(out, "figures", n))
        magic = b"\x89PNG" if n.endswith("png") else b"<svg"
        check(size > 5000 and (head.startswith(magic) or magic in head),
              f"{n}: {size} bytes, not a figure")


def legends_outside(fig):
    """'axes N: (x0, y0, x1, y1)' of each legend of fig (the figure's own
    and its axes') whose window extent is not inside the figure's."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = [(f"figure legend {i}", leg) for i, leg in enumerate(fig.legends)]
    legends += [(f"axes {i}", ax.get_legend()) for i, ax in enumerate(fig.axes)
                if ax.get_legend() is not None]
    out = []
    for where, leg in legends:
        box, edge = leg.get_window_extent(renderer), fig.bbox
        if (box.x0 < edge.x0 or box.y0 < edge.y0 or box.x1 > edge.x1
                or box.y1 > edge.y1):
            out.append(f"{where}: legend at ({box.x0:.0f}, {box.y0:.0f}, {box.x1:.0f}, "
                       f"{box.y1:.0f}), figure ({edge.x0:.0f}, {edge.y0:.0f}, "
                       f"{edge.x1:.0f}, {edge.y1:.0f})")
    return out


@test
def delivery_legend_inside_the_figure():
    """The delivery figure of the synthetic campaign (two variants, so the
    narrowest figure, with the five bars of a flow that counts whole
    frames) has its legend inside the figure."""
    camp = campaign()
    rows = report.metrics(report.scan(camp, os.path.join(camp, "report"))[0], 0.04, [])
    order = stats.policies(rows)
    check(len(order) == 2 and all("video.frames_on_time_frac" in r for r in rows),
          f"variants {order}")
    fig = plots.delivery_bars(rows, order, "synthetic flow call")
    try:
        outside = legends_outside(fig)
        check(fig.axes[0].get_legend() is not None, "no legend")
    finally:
        plots.plt.close(fig)
    check(not outside, "legend past the figure's edge:\n" + "\n".join(outside))


@test
def every_legend_inside_its_figure():
    """Every figure the report draws (the comparison's, and the per-run
    figure of a run with every fate a notice can give) keeps its legends
    inside the figure."""
    camp = os.path.join(TMP, "legends")
    os.makedirs(camp)
    for p in ON_TIME:
        for seed in (1, 2, 3):
            write_run(camp, p, seed)
    d = os.path.join(camp, "policy=simple,rep=01")
    flow = stats.Run(d).flows["call"]
    lost = [int(i) for i in np.flatnonzero(flow.select("audio", WARMUP_S)
                                           & np.isnan(flow.recv))]
    with open(os.path.join(d, "media-call.notices.rec"), "w") as f:
        f.write("# sbpn-notices 1\n# role: send\nseq\tclass\treason\texpiry_ns\tnotice_ns\n"
                + "".join(f"{q}\taudio\t{r}\t0\t0\n" for q, r in
                          zip(lost, ("expired", "frame", "evicted")))
                + "# complete: 1\n")
    seen, outside = [], []
    real = plots._save

    def save(fig, fig_dir, name):
        seen.append(name)
        outside.extend(f"{name}: {o}" for o in legends_outside(fig))
        return real(fig, fig_dir, name)
    plots._save = save
    try:
        rc, text, err = run_report(camp, "--out", os.path.join(TMP, "legends-report"),
                                   "--runs", "simple,rep=01$")
    finally:
        plots._save = real
    check(rc == 0, f"rc {rc}: {err}")
    check(sorted(seen) == sorted(["synthetic_flow_call-delivery", "synthetic_flow_call-delay",
                                  "synthetic_flow_call-rates", "synthetic_flow_call-ccid3",
                                  "run-policy=simple_rep=01-call"]), f"figures {seen}")
    check(not outside, "legends past the figure's edge:\n" + "\n".join(outside))


@test
def run_fates_and_figure():
    # simple, seed 1: of the 150 audio packets after warm-up 120 on time,
    # 3 late, 27 lost; with notices saying the kernel discarded 3 of the
    # lost, one each as expired, given up with its frame and evicted, 24 are
    # left lost in the network.
    camp = os.path.join(TMP, "fates")
    shutil.copytree(os.path.join(campaign(), "policy=simple,rep=01"),
                    os.path.join(camp, "policy=simple,rep=01"))
    d = os.path.join(camp, "policy=simple,rep=01")
    flow = stats.Run(d).flows["call"]
    after = flow.select("audio", WARMUP_S)
    lost = [int(i) for i in np.flatnonzero(after & np.isnan(flow.recv))]
    with open(os.path.join(d, "media-call.notices.rec"), "w") as f:
        f.write("# sbpn-notices 1\n# role: send\nseq\tclass\treason\texpiry_ns\tnotice_ns\n"
                + "".join(f"{q}\taudio\t{r}\t0\t0\n" for q, r in
                          zip(lost, ("expired", "frame", "evicted")))
                + "# complete: 1\n")
    run = stats.Run(d)
    fate = stats.fates(run.flows["call"])[after]
    counts = {k: int((fate == k).sum()) for k in stats.FATES}
    check(counts == {"on time": 120, "late": 3, "lost in the network": 24, "expired": 1,
                     "evicted": 1, "given up with frame": 1, "CCID error": 0, "refused": 0},
          f"fates {counts}")
    out = os.path.join(TMP, "fates-report")
    rc, text, err = run_report(camp, "--out", out, "--runs", "rep=01$")
    check(rc == 0, f"rc {rc}: {err}")
    for ext in ("png", "svg"):
        path = os.path.join(out, "figures", f"run-policy=simple_rep=01-call.{ext}")
        check(os.path.exists(path) and os.path.getsize(path) > 5000, f"{path} missing")
    rc, _, err = run_report(camp, "--out", out, "--runs", "(", "--no-figures")
    check(rc == 2 and "--runs: not a regular expression" in err, f"bad regex: {rc} {err}")


@test
def cli_report():
    # The runner's command line hands `report` to this module.
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "sbpn-lab"), "report",
                        campaign(), "--out", os.path.join(TMP, "cli"), "--no-figures"],
                       capture_output=True, text=True, timeout=300, env=env)
    check(p.returncode == 0 and "80.0 ±24.8" in p.stdout, f"rc {p.returncode}: {p.stderr}")
    p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "sbpn-lab"), "report",
                        os.path.join(TMP, "nowhere")], capture_output=True, text=True,
                       env=env)
    check(p.returncode == 2 and "not a directory" in p.stderr, f"missing dir: {p.stderr}")
    # and `compare`: a campaign against itself differs by nothing
    p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "sbpn-lab"), "compare",
                        campaign(), campaign()], capture_output=True, text=True,
                       timeout=300, env=env)
    check(p.returncode == 0 and "\nall     6      0.0 ±0.0 (0.0/0.0/0.0)" in p.stdout,
          f"compare: rc {p.returncode}: {p.stdout}{p.stderr}")


def main():
    return ktap.main(tests, TMP)


if __name__ == "__main__":
    sys.exit(main())
