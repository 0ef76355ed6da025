#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of how a call follows its link's rate steps
(sbpnlab.stepresponse; Documentation/statistics.rst, "The VP8 call",
"Steps of the link's rate"), of their place in stats.run_metrics() and
in the report's VP8 tables; KTAP output.

The calls are synthetic rate series over the square wave of
vp8-square.toml (2 Mbit/s, 500 kbit/s from 10 s, and back every 10 s),
one packet every 10 ms.  Each constructed case is one where a plausible
wrong version of the definition gives another number, named in the
comment above its check.
Run with the venv: scripts/venv.sh && .venv/bin/python scripts/tests/test_stepresponse.py
Exit 1 if any test failed.
"""
import json
import math
import os
import sys
import tempfile

sys.dont_write_bytecode = True
SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, SCRIPTS)
import ktap  # noqa: E402 - beside this file
try:
    import numpy as np
    from sbpnlab import report, stats, stepresponse, vp8call
except ImportError as e:
    print(f"Bail out! {e}: run scripts/venv.sh, then .venv/bin/python {sys.argv[0]}")
    sys.exit(1)

TMP = tempfile.mkdtemp(prefix="sbpn-stepresponse.")
test, tests = ktap.collector()
check = ktap.check

HIGH, LOW = 2e6, 5e5
SQUARE = [(10.0, LOW), (20.0, HIGH), (30.0, LOW), (40.0, HIGH), (50.0, LOW)]
END_S, WARMUP_S, PACKET_S = 60.0, 3.0, 0.01


def call(rate_at, end=END_S):
    """Packet times and payload bits of a call whose rate is rate_at(t)
    bit/s (a multiple of 100, so that every sum is exact): a packet every
    10 ms, in the middle of its 10 ms."""
    t = (np.arange(int(round(end / PACKET_S))) + 0.5) * PACKET_S
    return t, np.array([rate_at(x) // 100 for x in t], dtype=float)


def per_second(rates):
    """rate_at() of a call at rates[k] bit/s in the second [k, k + 1)."""
    return lambda t: rates[int(t)]


def follower(delay, changes=SQUARE, high=1_000_000, low=400_000):
    """rate_at() of a call at high while the link is at HIGH and low while
    it is at LOW, following each change delay seconds after it."""
    def rate_at(t):
        link = HIGH
        for c, r in changes:
            if t >= c + delay:
                link = r
        return high if link == HIGH else low
    return rate_at


def responses(rate_at, changes=SQUARE):
    t, bits = call(rate_at)
    return stepresponse.step_responses(t, bits, HIGH, changes, 0.0, END_S, since_s=WARMUP_S)


def settle(rs):
    return [r["settle_s"] for r in rs]


# ---- the definitions ----------------------------------------------------------

@test
def a_call_that_follows_in_2_s_gets_2_s():
    rs = responses(follower(2))
    check([r["t_s"] for r in rs] == [10, 20, 30, 40, 50] and
          [r["up"] for r in rs] == [False, True, False, True, False], f"steps {rs}")
    # each phase's last half is at the new rate: levels 400 and 1000 kbit/s;
    # the bins from the change: old, old, new -> the third bin, 2 s
    check(settle(rs) == [2.0] * 5 and all(r["settled"] for r in rs), f"settle {settle(rs)}")
    check([r["level"] for r in rs] == [4e5, 1e6, 4e5, 1e6, 4e5], f"levels {rs}")
    m = stepresponse.step_metrics(rs)
    check(m == {"settle_up_s": 2.0, "settle_down_s": 2.0, "not_settled": 0, "steps": 5},
          f"metrics {m}")
    # a change before the warm-up's end is not a step of the run; one
    # to the rate in force is no change
    t, bits = call(follower(2))
    rs = stepresponse.step_responses(t, bits, HIGH, [(2.0, HIGH)] + SQUARE, 0.0, END_S,
                                     since_s=15.0)
    check([r["t_s"] for r in rs] == [20, 30, 40, 50], f"after 15 s: {rs}")


@test
def a_call_that_never_adapts_is_not_settled_and_ranks_worst():
    # 700 kbit/s throughout: within its own band at once after every step;
    # it did not rise after a step up (its level before, 700, is not below
    # 90 % of 700), and after a step down it offers 700 to a 500 kbit/s
    # link: no step settled, each counted as its phase, 10 s
    never = responses(lambda t: 700_000)
    check(settle(never) == [10.0] * 5 and not any(r["settled"] for r in never),
          f"never adapts: {never}")
    m = stepresponse.step_metrics(never)
    check(m["not_settled"] == 5 and m["settle_up_s"] == 10 and m["settle_down_s"] == 10,
          f"never adapts: {m}")
    # a slow call that settles 4 s after each step is better on both, and
    # the 2 s one better still
    slow = stepresponse.step_metrics(responses(follower(4)))
    fast = stepresponse.step_metrics(responses(follower(2)))
    for k in ("settle_up_s", "settle_down_s"):
        check(fast[k] < slow[k] < m[k], f"{k}: 2 s {fast[k]}, 4 s {slow[k]}, never {m[k]}")
    check(fast["not_settled"] == slow["not_settled"] == 0, f"{fast} {slow}")
    # A call that takes 8 s of a 10 s phase has no steady level in it: the
    # phase's last half still holds 3 s of its old rate (levels 760 and
    # 640 kbit/s), 760 does not fit the 500 kbit/s link, and after the
    # step up 640 is no rise from 760: as unsettled as the call that
    # never adapts, never better.
    eight = stepresponse.step_metrics(responses(follower(8)))
    check(eight == m, f"8 s: {eight}, never: {m}")
    # A call below the lower rate throughout (300 kbit/s) needs no step
    # down (it fits the link at once: 0 s) and takes nothing after a step
    # up: those are not settled.
    low = responses(lambda t: 300_000)
    check(settle(low) == [0.0, 10.0, 0.0, 10.0, 0.0] and
          [r["settled"] for r in low] == [True, False, True, False, True], f"low: {low}")


# One call, second by second: at 1000 kbit/s until 11 s, then 300; after
# the step up at 20, 300 for 2 s, then 1000; after the step down at 30,
# 1000, 520, then 300; after the step up at 40, 300, 950, then 1000; after
# the step down at 50, 1000, 320, then 300.
SHAPED = ([1_000_000] * 11 + [300_000] * 9 + [300_000] * 2 + [1_000_000] * 8
          + [1_000_000, 520_000] + [300_000] * 8 + [300_000, 950_000] + [1_000_000] * 8
          + [1_000_000, 320_000] + [300_000] * 8)


@test
def the_level_is_the_calls_own_not_the_links():
    rs = responses(per_second(SHAPED))
    # step up at 20: level 1000 (the call's maximum), band >= 900: the
    # third bin, 2 s.  With the link's 2 Mbit/s as the level (band >=
    # 1800) it would never settle: 10 s.
    # step down at 30: level 300, band <= 330: 2 s; with the link's 500
    # (band <= 550) the 520 of the second bin would do: 1 s.
    check(rs[1]["settle_s"] == 2.0 and rs[1]["settled"] and rs[2]["settle_s"] == 2.0,
          f"at 20 and 30: {rs[1]} {rs[2]}")


@test
def settled_is_90_percent_of_the_level_not_crossing_it():
    rs = responses(per_second(SHAPED))
    # step up at 40: 300, 950, 1000...: 950 >= 900 in the second bin, 1 s;
    # crossing the level (>= 1000) would take 2 s.  Step down at 50: 1000,
    # 320, 300...: 320 <= 330, 1 s; crossing (<= 300) 2 s.  At 10: 1000,
    # then 300 (level 300): 1 s either way.
    check(settle(rs) == [1.0, 2.0, 2.0, 1.0, 1.0], f"settle {settle(rs)}")
    m = stepresponse.step_metrics(rs)
    check(m["settle_up_s"] == 1.5 and math.isclose(m["settle_down_s"], 4 / 3) and
          m["not_settled"] == 0, f"metrics {m}")


@test
def time_is_from_the_change_not_from_a_grid():
    # the changes applied 50 ms late (link.log), the call following each
    # 2 s after it: 2 s.  Bins on a 1 s grid from t0 would mix old and new
    # in the bin [22, 23) after the step up at 20.05 (0.05 s of 400 and
    # 0.95 of 1000: 970, in the band >= 900): 1 s counted from the first
    # grid bin after the change (21), 1.95 s from the change; the same
    # after each step down (430 <= 440).
    late = [(c + 0.05, r) for c, r in SQUARE]
    rs = responses(follower(2, late), late)
    check(settle(rs) == [2.0] * 5, f"settle {settle(rs)}")
    check(math.isclose(rs[1]["t_s"], 20.05) and math.isclose(rs[1]["phase_s"], 10.0),
          f"phase {rs[1]}")


@test
def link_utilisation_is_a_ratio_of_sums():
    # 500 kbit/s received in a 2 Mbit/s bin and in a 500 kbit/s one: 1000
    # of 2500 carried, 40 %; the mean of the bins' ratios would be 62.5
    good, cap = np.array([5e5, 5e5, 9e9]), np.array([2e6, 5e5, 1e6])
    got = stepresponse.link_util_pct(good, cap, np.array([True, True, False]))
    check(math.isclose(got, 40.0), f"utilisation {got}")
    check(math.isnan(stepresponse.link_util_pct(good, cap, np.zeros(3, dtype=bool))),
          "no bins: NaN")


# ---- in run_metrics() ------------------------------------------------------------

T0_NS = 5_000_000_000


def write_vp8_run(d, changes):
    """A 60 s VP8 call's run directory (its packets from follower(2):
    audio and video, all received 30 ms later) over the square wave,
    with link.log if there are changes; the frame records exist, as for
    every VP8 call (what is in them is vp8call's, stubbed here)."""
    os.makedirs(d)
    t, bits = call(follower(2))
    send = ["# sbpn-records 1", "# role: send", "# flow: call", "# transport: dccp",
            f"# start_ns: {T0_NS}",
            "seq\tclass\tsize\tprio\tplanned_ns\tsent_ns\texpiry_ns\tresult"]
    recv = ["# sbpn-records 1", "# role: recv", "# flow: call", "# transport: dccp",
            f"# start_ns: {T0_NS}", "seq\tclass\tsize\tsent_ns\trecv_ns"]
    for i, (x, b) in enumerate(zip(t, bits)):
        cls = "audio" if i % 2 else "video"
        ns = T0_NS + round(x * 1e9)
        send.append(f"{i}\t{cls}\t{int(b) // 8}\t2\t{ns}\t{ns}\t{ns + 200_000_000}\tok")
        recv.append(f"{i}\t{cls}\t{int(b) // 8}\t{ns}\t{ns + 30_000_000}")
    for name, lines in (("send", send), ("recv", recv)):
        with open(os.path.join(d, f"media-call.{name}.rec"), "w") as f:
            f.write("\n".join(lines + ["# complete: 1", ""]))
    open(os.path.join(d, "media-call.frames.rec"), "w").close()
    if changes:
        with open(os.path.join(d, "link.log"), "w") as f:
            f.write(f"# sbpn-link 1\n# t0_ns: {T0_NS}\n"
                    "t_s\tplanned_ns\tapplied_ns\tlate_ms\trate\tresult\n")
            for c, r in changes:
                ns = T0_NS + round(c * 1e9)
                f.write(f"{c}\t{ns}\t{ns}\t0\t{int(r)}bit\tok\n")
    media = {"name": "call", "source": "vp8", "transport": "dccp", "policy": "simple",
             "ccid": 3, "tx_qlen": 5, "lifetime_ms": 200, "start_s": 0}
    meta = {"format": 1, "run_id": "policy=simple,rep=01", "params": {"policy": "simple"},
            "repetition": 1, "seed": 1, "status": "complete", "t0_ns": T0_NS,
            "config": {"scenario": {"name": "vp8-steps", "duration_s": END_S,
                                    "warmup_s": WARMUP_S},
                       "link": {"rate": "2mbit"}, "media": [media], "short_tcp": [],
                       "tcp": []},
            "link": {"initial_rate": "2mbit",
                     "changes": [[c, f"{int(r)}bit"] for c, r in changes]}}
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f)
    return d


@test
def run_metrics_have_the_steps_of_a_vp8_call_over_a_schedule():
    real = vp8call.flow_metrics
    vp8call.flow_metrics = lambda *a, **k: {"frames_shown_pct": 100.0}
    try:
        (row,) = stats.run_metrics(stats.Run(write_vp8_run(os.path.join(TMP, "square"),
                                                           SQUARE)), 0.04)
        (flat,) = stats.run_metrics(stats.Run(write_vp8_run(os.path.join(TMP, "flat"), [])),
                                    0.04)
    finally:
        vp8call.flow_metrics = real
    check(row["vp8.settle_up_s"] == 2.0 and row["vp8.settle_down_s"] == 2.0 and
          row["vp8.not_settled"] == 0 and row["vp8.steps"] == 5, f"steps {row}")
    # the window: the 0.4 s bins from 3.2 s to 60 s.  Received (all of
    # it, by the time sent): 1000 kbit/s over 3.2-12, 22-32, 42-52 (28.8 s),
    # 400 over 12-22, 32-42, 52-60 (28 s): 40 Mbit; the link could carry
    # 2 Mbit/s over 3.2-10, 20-30, 40-50 (26.8 s), 500 kbit/s over 30 s:
    # 68.6 Mbit; 58.3 %
    check(math.isclose(row["vp8.link_util_pct"], 100 * 40 / 68.6),
          f"link used {row['vp8.link_util_pct']}")
    check("vp8.frames_shown_pct" in flat and
          not any(k in flat for k in ("vp8.settle_up_s", "vp8.link_util_pct")),
          f"no schedule, no steps: {sorted(k for k in flat if k.startswith('vp8.'))}")


# ---- in the report --------------------------------------------------------------

def step_rows():
    """Metric rows of three variants, seeds 1-3: one follows in 2 s, one
    in 4 s, one never adapts."""
    calls = {"fast": follower(2), "slow": follower(4), "never": lambda t: 700_000}
    rows = []
    for p, rate_at in calls.items():
        m = stepresponse.step_metrics(responses(rate_at))
        for seed in (1, 2, 3):
            rows.append({"policy": p, "key": (seed, 1), "vp8.frames_shown_pct": 90.0 + seed,
                         "audio.on_time_frac": 0.9, "tcp.goodput_kbps": math.nan,
                         "vp8.link_util_pct": 50.0 + seed,
                         **{f"vp8.{k}": float(v) for k, v in m.items()}})
    return rows


@test
def the_vp8_tables_print_the_steps_and_the_one_that_never_adapts_is_worst():
    rows = step_rows()
    by_policy = {p: [r for r in rows if r["policy"] == p] for p in ("fast", "slow", "never")}
    summaries = {(p, m): stats.summary([r[m] for r in rs]) for p, rs in by_policy.items()
                 for m in rs[0] if m.startswith("vp8.")}
    note, head, table = report.vp8_table(by_policy, summaries)
    check(head[-4:] == ["settle up s", "settle down s", "not settled", "link used %"] and
          "90 %" in note, f"head {head}")
    got = {r[0]: dict(zip(head, r)) for r in table}
    check(got["fast"]["settle up s"] == "2.0 ±0.0 (2.0/2.0/2.0)" and
          got["never"]["not settled"] == "5.0 ±0.0 (5.0/5.0/5.0)", f"cells {got}")
    for col in ("settle up s", "settle down s", "not settled"):
        v = {p: float(r[col].split()[0]) for p, r in got.items()}
        check(v["never"] == max(v.values()) and list(v.values()).count(v["never"]) == 1,
              f"{col}: never is not the one worst: {v}")
    note, head, table = report.paired_vp8_table(rows, [("fast", "slow"), ("fast", "never")],
                                                "fast", {})
    got = {r[0]: dict(zip(head, r)) for r in table}
    # never - fast: 10 - 2 s after every step, 5 - 0 steps not settled
    check(got["never"]["Δ settle up s"] == "8.0 ±0.0 (8.0/8.0/8.0)" and
          got["never"]["Δ not settled"] == "5.0 ±0.0 (5.0/5.0/5.0)" and
          got["slow"]["Δ settle down s"] == "2.0 ±0.0 (2.0/2.0/2.0)", f"paired {got}")
    # rows without a schedule: no step columns
    plain = [{k: v for k, v in r.items() if k.startswith("vp8.frames") or
              not k.startswith("vp8.")} for r in rows]
    by_plain = {p: [r for r in plain if r["policy"] == p] for p in by_policy}
    _, head, _ = report.vp8_table(by_plain, summaries)
    _, phead, _ = report.paired_vp8_table(plain, [("fast", "never")], "fast", {})
    check("settle up s" not in head and "Δ settle up s" not in phead, f"{head} {phead}")


def main():
    return ktap.main(tests, TMP)


if __name__ == "__main__":
    sys.exit(main())
