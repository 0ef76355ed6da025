#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of the sequential decision (sbpnlab.sequential, .decide,
campaign.run_decided, the [decide] table); KTAP output.

The confidence sequence against its closed form; Hall's skewness
correction (its inverse, its direction); on synthetic paired differences
(no effect, an effect at the margin, a large one, a long tail) its error
rate over many simulated campaigns stays under alpha while the same loop
with a fixed-sample interval at each look (the broken rule), or without
the correction under skew, does not; the
verdicts; decide.analyse() on metric rows with a missing pair; the rounds
of run_decided() with a fake run and analysis: whole pairs, only the open
comparisons, stop, resume.
Run with the venv: scripts/venv.sh && .venv/bin/python scripts/tests/test_decide.py
Exit 1 if any test failed.
"""
import io
import json
import math
import os
import random
import shutil
import sys
import tempfile
import time
import types

sys.dont_write_bytecode = True
SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, SCRIPTS)
import ktap  # noqa: E402 - beside this file
try:
    from sbpnlab import campaign, campaignrows, decide, decidesim, report, sequential, stats
    from sbpnlab.scenario import ScenarioError, load, setting_of
except ImportError as e:
    print(f"Bail out! {e}: run scripts/venv.sh, then .venv/bin/python {sys.argv[0]}")
    sys.exit(1)

TMP = tempfile.mkdtemp(prefix="sbpn-decide.")
test, tests = ktap.collector()
check = ktap.check


def mixture_factor(n, alpha, c):
    """Lai's t-mixture bound solved numerically: the largest |mean - mu|/s
    at which the mixture's Bayes factor stays below 1/alpha."""
    def bf(d):          # d = (mean - mu) / s, with s = 1
        v = (n - 1) + n * d * d         # sum of squares about mu
        s2 = (n * d) ** 2
        return math.sqrt(c / (c + n)) * (v / (v - s2 / (n + c))) ** (n / 2)
    lo, hi = 0.0, 1.0
    while bf(hi) < 1 / alpha:
        hi *= 2
        if hi > 1e6:
            return math.inf
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if bf(mid) < 1 / alpha else (lo, mid)
    return lo


@test
def closed_form_matches_the_mixture():
    for n in (3, 5, 10, 20, 30, 100):
        for alpha in (0.05, 0.00625):
            got = sequential.halfwidth_factor(n, alpha, 1.0)
            want = mixture_factor(n, alpha, 1.0)
            check(math.isinf(got) == math.isinf(want) and
                  (math.isinf(got) or abs(got - want) < 1e-6), f"n {n} alpha {alpha}: "
                  f"{got} != {want}")
    # wider than the fixed-sample interval at every n, narrowing with n
    f = [sequential.halfwidth_factor(n, 0.05) for n in (10, 20, 30, 60)]
    check(f == sorted(f, reverse=True), f"not narrowing: {f}")
    check(f[2] > stats.t_quantile(0.975, 29) / math.sqrt(30), "narrower than t")


@test
def verdicts():
    check(sequential.verdict(0.1, 3, 2) == "higher", "above 0")
    check(sequential.verdict(-3, -0.1, 2) == "lower", "below 0")
    check(sequential.verdict(-1.9, 1.9, 2) == "equivalent", "inside the margin")
    check(sequential.verdict(-2.1, 1.0, 2) is None, "reaches past the margin")
    check(sequential.verdict(0.5, 1.5, 2) == "higher", "a sign goes first")
    check(sequential.wrong("equivalent", 2.0, 2) and not sequential.wrong("higher", 2.0, 2)
          and sequential.wrong("higher", 0.0, 2) and sequential.wrong("lower", 0.5, 2)
          and not sequential.wrong("equivalent", 0.0, 2) and not sequential.wrong(None, 5, 2),
          "wrong()")
    check(sequential.looks(10, 5, 30) == [10, 15, 20, 25, 30] and
          sequential.looks(10, 5, 12) == [10, 12] and sequential.looks(10, 5, 6) == [6],
          "looks")


def error_rate(effect, sd, margin, interval, sims=1500, seed=7):
    """Share of simulated one-metric comparisons (up to 30 pairs, looks at
    10, 15, ..., 30, alpha 0.05) that end with a wrong verdict."""
    rng = random.Random(seed)
    cutoffs = sequential.looks(10, 5, 30)
    bad = 0
    for _ in range(sims):
        series = {"m": [(r, rng.gauss(effect, sd)) for r in range(1, 31)]}
        res = sequential.evaluate(series, cutoffs, {"m": margin}, 0.05, 30, interval)
        bad += sequential.wrong(res["metrics"]["m"]["verdict"], effect, margin)
    return bad / sims


@test
def no_effect_error_under_alpha():
    # Under no effect a sign is wrong; the confidence sequence holds its
    # 5 % at every look at once, a fixed-sample interval at each look not.
    good = error_rate(0.0, 1.0, 0.1, sequential.confidence_sequence)
    bad = error_rate(0.0, 1.0, 0.1, decidesim.naive_interval)
    check(good <= 0.05, f"confidence sequence: {good:.3f} wrong under no effect")
    check(bad > 0.07, f"the fixed-sample rule is not seen failing ({bad:.3f}): the test "
          "has no power")


@test
def margin_error_under_alpha():
    # A true difference exactly at the margin: "equivalent" is wrong.
    good = error_rate(0.5, 1.0, 0.5, sequential.confidence_sequence)
    bad = error_rate(0.5, 1.0, 0.5, decidesim.naive_interval)
    check(good <= 0.05, f"confidence sequence: {good:.3f} wrong at the margin")
    check(bad > 0.07, f"the fixed-sample rule is not seen failing at the margin ({bad:.3f})")


@test
def large_effect_stops_early():
    rng = random.Random(3)
    series = {"m": [(r, rng.gauss(3, 1)) for r in range(1, 31)]}
    res = sequential.evaluate(series, sequential.looks(10, 5, 30), {"m": 0.5}, 0.05, 30)
    check(res["status"] == "decided" and res["repetition"] == 10 and
          res["metrics"]["m"]["verdict"] == "higher", f"{res}")
    # an open comparison says so until its last look
    res = sequential.evaluate({"m": [(r, rng.gauss(0.3, 1)) for r in range(1, 31)]},
                              sequential.looks(10, 5, 30), {"m": 0.01}, 0.05, 15)
    check(res["status"] == "open" and res["repetition"] == 15 and res["look"] == 1, f"{res}")
    res = sequential.evaluate({"m": [(r, rng.gauss(0.3, 1)) for r in range(1, 31)]},
                              sequential.looks(10, 5, 30), {"m": 0.01}, 0.05, 30)
    check(res["status"] == "maximum" and res["repetition"] == 30, f"{res}")


@test
def family_error_with_bonferroni():
    # The simulation's own campaign loop (two comparisons x four metrics),
    # no effect: the family's error stays under 5 %, and without Bonferroni
    # and sequential intervals it would not.
    rng = decidesim.np.random.default_rng(5)
    conf = sequential.settings()
    cases = [decidesim.synthetic_cases()[0]]
    good = decidesim.synthetic(conf, 600, rng, cases=cases)[0]["error_rate"]
    bad = decidesim.synthetic(conf, 600, rng, decidesim.naive_interval,
                              cases=cases)[0]["error_rate"]
    check(good <= 0.05, f"family error {good:.3f}")
    check(bad > 0.07, f"fixed-sample rule not seen failing: {bad:.3f}")


@test
def hall_correction():
    # G1 of 0, 0, 0, 1 is 2 exactly (g1 = 2/sqrt(3), times sqrt(12)/2)
    check(abs(sequential.skewness([0, 0, 0, 1]) - 2.0) < 1e-12 and
          sequential.skewness([1, 1, 1]) == 0 and sequential.skewness([1, 2]) == 0,
          f"skewness {sequential.skewness([0, 0, 0, 1])}")
    for skew in (-3.5, -1, -1e-13, 0, 1e-17, 0.4, 2, 3.5):
        grid = [sequential.hall(t / 4, skew, 15) for t in range(-60, 61)]
        check(grid == sorted(grid), f"hall() not increasing at skewness {skew}")
        for t in (-9, -3.3, -1, 0, 0.5, 2, 3.3, 9):
            back = sequential.hall(sequential.hall_inverse(t, skew, 15), skew, 15)
            check(abs(back - t) < 1e-9, f"hall(hall_inverse({t})) = {back} at {skew}")
    # no sample skewness: the t-mixture's interval
    sym = [-2.0, -1.0, 0.0, 1.0, 2.0] * 3
    check(sequential.confidence_sequence(sym, 0.01) == sequential.t_mixture(sym, 0.01),
          "a symmetric sample's interval moved")
    # nearly symmetric (G1 of the order of rounding): no collapse either
    near = [0.1, 0.2, 0.3, 0.4, 0.5] * 4
    got, want = (sequential.confidence_sequence(near, 0.01),
                 sequential.t_mixture(near, 0.01))
    check(all(abs(x - y) < 1e-9 for x, y in zip(got, want)), f"{got} != {want}")
    # a long right tail: the interval reaches further above the mean than
    # below it, and the mirror image the other way
    right = [0.0] * 13 + [3.0, 9.0]
    n, mean, lo, hi = sequential.confidence_sequence(right, 0.01)
    n2, mean2, lo2, hi2 = sequential.confidence_sequence([-x for x in right], 0.01)
    check(hi - mean > 2 * (mean - lo) > 0, f"right tail: {lo:.2f} {mean:.2f} {hi:.2f}")
    check(abs(lo2 + hi) < 1e-9 and abs(hi2 + lo) < 1e-9, "not the mirror image")


@test
def intervals_end_at_the_range():
    # a share differs by 100 points at most: the corrected interval that
    # stretches past it stops there, a metric without a range does not
    v = [50.0, 55, 58, 60, 60, 61, 62, 63, 64, 65, 66, 70, 75, 80, 95]
    n, mean, lo, hi = sequential.confidence_sequence(v, 0.001)
    res = sequential.evaluate({"audio.on_time_frac": list(enumerate(v, 1)),
                               "m": list(enumerate(v, 1))}, [15],
                              {"audio.on_time_frac": 2, "m": 2}, 0.001, 15)["metrics"]
    check(hi > 100 and res["audio.on_time_frac"]["hi"] == 100 and res["m"]["hi"] == hi and
          res["audio.on_time_frac"]["lo"] == lo, f"{hi} {res}")


@test
def skewed_error_under_alpha():
    # Differences with a long tail (skewness 3.7) and no effect: the
    # corrected sequence holds the family's 5 %, the t-mixture alone does
    # not (it says "lower" when the tail has not shown up yet).
    rng = decidesim.np.random.default_rng(5)
    conf = sequential.settings()
    cases = [c for c in decidesim.synthetic_cases() if c[2] == "lognormal-3.7"]
    good = decidesim.synthetic(conf, 600, rng, cases=cases)[0]["error_rate"]
    bad = decidesim.synthetic(conf, 600, rng, sequential.t_mixture,
                              cases=cases)[0]["error_rate"]
    check(good <= 0.05, f"family error under skew {good:.3f}")
    check(bad > 0.07, f"the uncorrected sequence not seen failing: {bad:.3f}")


def rows_of(effects, reps=12, missing=()):
    """Metric rows of one comparison point: simple and a variant, the
    variant's audio on time better by effects[rep] (a fraction)."""
    rows = []
    for rep in range(1, reps + 1):
        for policy in ("simple", "sbpn2+fw"):
            if (policy, rep) in missing:
                continue
            up = effects[rep - 1] if policy != "simple" else 0.0
            rows.append({"scenario": "s", "params": {"rtt_ms": 80}, "flow": "call",
                         "policy": policy, "key": (rep, rep), "repetition": rep,
                         "audio.on_time_frac": 0.5 + up, "video.on_time_frac": 0.5,
                         "video.frames_on_time_frac": 0.5 + (rep % 2) * 1e-4,
                         "tcp.goodput_kbps": math.nan})
    return rows


@test
def analyse_pairs_and_family():
    rng = random.Random(1)
    eff = [0.10 + rng.gauss(0, 0.02) for _ in range(12)]
    rows = rows_of(eff, missing={("sbpn2+fw", 3)})
    conf = sequential.settings({"min_pairs": 10, "step": 2})
    d = decide.analyse(rows, conf, 12, 10)
    (c,) = d["comparisons"]
    m = {x["metric"]: x for x in c["metrics"]}
    check(d["family"] == 3 and abs(d["alpha_each"] - 0.05 / 3) < 1e-12,
          f"family {d['family']}: no TCP, so three metrics")
    check(m["audio.on_time_frac"]["n"] == 9, "pair 3 is missing a run: 9 pairs by 10")
    want = [(r, (eff[r - 1]) * 100) for r in range(1, 11) if r != 3]
    n, mean, lo, hi = sequential.confidence_sequence([x for _, x in want], 0.05 / 3)
    check(abs(m["audio.on_time_frac"]["mean"] - mean) < 1e-9 and
          abs(m["audio.on_time_frac"]["lo"] - lo) < 1e-9, "the interval of the pairs")
    check(c["status"] == "decided" and c["repetition"] == 10 and
          m["audio.on_time_frac"]["verdict"] == "higher" and
          m["video.on_time_frac"]["verdict"] == "equivalent", f"{c}")
    text = "\n".join(decide.lines(d))
    check("stopped at look 1 (repetition 10): every metric has a verdict" in text and
          "audio on time: higher" in text, text)
    json.dumps(d)           # decision.json must hold it
    # a campaign still in its first round: no look yet, and it says so
    early = decide.analyse(rows, conf, 12, 7)
    text = "\n".join(decide.lines(early))
    check("open: no look yet" in text and "audio on time: no look yet" in text, text)


@test
def analyse_decides_the_metrics_asked():
    """[decide] metrics: the others are neither in the family (alpha is
    shared by those decided) nor in the comparisons' verdicts, and the
    text says which are decided."""
    rng = random.Random(4)
    rows = rows_of([0.10 + rng.gauss(0, 0.02) for _ in range(12)])
    d = decide.analyse(rows, sequential.settings({"min_pairs": 12,
                                                  "metrics": ["audio", "frames"]}), 12, 12)
    (c,) = d["comparisons"]
    check(d["family"] == 2 and abs(d["alpha_each"] - 0.025) < 1e-12 and
          [m["metric"] for m in c["metrics"]] == ["audio.on_time_frac",
                                                  "video.frames_on_time_frac"] and
          d["metrics"] == ["audio.on_time_frac", "video.frames_on_time_frac"],
          f"family {d['family']}, {[m['metric'] for m in c['metrics']]}")
    text = "\n".join(decide.lines(d))
    check("Decided: audio on time, whole video frames on time; the finding's other metrics "
          "are reported" in text and "video on time:" not in text, text)
    n, mean, lo, hi = sequential.confidence_sequence(
        [x for _, x in decide.series_of(rows, "simple", "sbpn2+fw", "audio.on_time_frac",
                                        100)], 0.025)
    check(abs(c["metrics"][0]["lo"] - lo) < 1e-9, "alpha split over the two metrics only")


def scenario_file(extra=""):
    path = os.path.join(TMP, "decide.toml")
    with open(path, "w") as f:
        f.write(f"""[scenario]
name = "dec"
duration_s = 10
repetitions = 20
[link]
rate = "1mbit"
[[media]]
name = "call"
[sweep]
policy = ["simple", "sbpn2"]
frame = [false, true]
rtt_ms = [30, 80]
{extra}""")
    return path


@test
def decide_table():
    sc = load(scenario_file('[decide]\nmin_pairs = 6\nstep = 2\n'
                            '[decide.margins]\nframes = 4\ntcp_kbps = 20\n'))
    check(sc.decide["min_pairs"] == 6 and sc.decide["margins"]["frames"] == 4 and
          sc.decide["margins"]["audio"] == 2.0 and sc.decide["enabled"], f"{sc.decide}")
    check(load(scenario_file()).decide is None, "no table, no decision")
    check(sc.decide["metrics"] == ["audio", "video", "frames", "tcp_kbps"],
          f"every metric decided by default: {sc.decide['metrics']}")
    sc = load(scenario_file('[decide]\nmetrics = ["frames", "audio"]\n'))
    check(sc.decide["metrics"] == ["audio", "frames"], f"metrics in METRICS' order: "
          f"{sc.decide['metrics']}")
    for bad in ('[decide]\nstep = 0\n', '[decide]\nwhat = 1\n',
                '[decide.margins]\naudio_pp = 1\n', '[decide.margins]\naudio = -1\n',
                '[decide]\nmetrics = []\n', '[decide]\nmetrics = ["audio", "audio"]\n',
                '[decide]\nmetrics = ["sound"]\n', '[decide]\nmetrics = "audio"\n',
                '[decide]\nmetrics = [["audio"]]\n'):
        try:
            load(scenario_file(bad))
        except ScenarioError:
            continue
        raise AssertionError(f"accepted {bad!r}")


@test
def arms_match_the_report():
    sc = load(scenario_file())
    for spec in sc.runs()[:8]:
        ((key, label),) = campaign.arms(spec)
        meta = {"config": spec.config, "params": spec.point}
        params = setting_of(spec.point)
        check(label == stats.policy_of(meta, "call") and
              key == ("dec", tuple(sorted((k, str(v)) for k, v in params.items())), "call"),
              f"{spec.id}: {key} {label}")
    check(tuple(m[0] for m in sequential.METRICS) == tuple(h[0] for h in report.HEADLINE),
          "the decision's metrics are the finding's")


@test
def arms_match_the_report_for_variants():
    """With [[variant]] tables, what a run needs (campaign.arms, in the VM)
    is what the report makes of its meta.json and campaign.json
    (stats.variant_of and stats.identity): the variant's name, compared
    across the setting alone."""
    path = os.path.join(TMP, "variants.toml")
    with open(path, "w") as f:
        f.write("""[scenario]
name = "dec"
duration_s = 10
repetitions = 2
[link]
rate = "1mbit"
[[media]]
name = "call"
[[variant]]
name = "simple"
policy = "simple"
[[variant]]
name = "best"
policy = "sbpn2"
frame = true
tx_qlen = 32
[sweep]
rtt_ms = [30, 80]
""")
    sc = load(path)
    camp = os.path.join(TMP, "variants")
    os.makedirs(camp)
    campaign.write_index(sc, camp, "c")
    with open(os.path.join(camp, "campaign.json")) as f:
        index = json.load(f)
    for spec in sc.runs():
        meta = json.loads(json.dumps({"config": spec.config, "params": spec.point}))
        row = stats.identity(meta, "call", stats.variant_of(meta["params"], index["variants"]))
        want = {(("dec", tuple(sorted((k, str(v)) for k, v in row["params"].items())), "call"),
                 row["policy"])}
        check(campaign.arms(spec) == want and row["policy"] == spec.variant and
              set(row["params"]) == {"rtt_ms"}, f"{spec.id}: {campaign.arms(spec)} {want}")


def _complete(run_dir):
    """What a stand-in for campaign.execute() leaves: a complete run's
    meta.json in run_dir; returns the meta."""
    os.makedirs(run_dir, exist_ok=True)
    meta = {"status": "complete", "reason": None}
    with open(os.path.join(run_dir, "meta.json"), "w") as f:
        json.dump(meta, f)
    return meta


@test
def rounds_run_whole_pairs_and_stop():
    sc = load(scenario_file('[decide]\nmin_pairs = 10\nstep = 5\n'))
    results = os.path.join(TMP, "results")
    made = []

    def fake_execute(spec, run_dir, slot, name, jobs):
        meta = _complete(run_dir)
        made.append(spec.id)
        return meta

    # The fake analysis: at rtt 30 sbpn2 decides after the first look,
    # sbpn2+fw after the second; at rtt 80 both stay open to the end.
    looked = []

    def fake_analyse(camp_dir, scenario, through, out):
        looked.append(through)
        comps = []
        for rtt in ("30", "80"):
            for variant, stop in (("sbpn2", 10), ("sbpn2+fw", 15)):
                done = rtt == "30" and through >= stop
                comps.append({"scenario": "dec", "params": {"rtt_ms": rtt}, "flow": "call",
                              "variant": variant, "baseline": "simple",
                              "status": "decided" if done else
                              ("maximum" if through >= 20 else "open")})
        return {"comparisons": comps}

    real = campaign.execute
    campaign.execute = fake_execute
    try:
        out = io.StringIO()
        failed = campaign.run_decided(sc, results, jobs=1, out=out,
                                      settings=sc.decide, analyse=fake_analyse)
        check(not failed, f"failed {failed}")
        # rtt 80 stays open to the maximum: its last look is the host's
        check(looked == [10, 15], f"analysed after {looked}, want [10, 15] (not 20)")
        check("the last look, after repetition 20, is the host's" in out.getvalue() and
              "the analysis after round 2 took" in out.getvalue(), out.getvalue()[-500:])
        reps = {}
        for rid in made:
            reps.setdefault(rid.rsplit(",rep=", 1)[0], []).append(int(rid.rsplit("=", 1)[1]))
        want30 = {"policy=simple,frame=False,rtt_ms=30": 15,   # as long as sbpn2+fw needs it
                  "policy=sbpn2,frame=False,rtt_ms=30": 10,
                  "policy=sbpn2,frame=True,rtt_ms=30": 15,
                  # frame changes SBPN only: this is simple too
                  "policy=simple,frame=True,rtt_ms=30": 15}
        for arm, n in want30.items():
            check(sorted(reps.get(arm, [])) == list(range(1, n + 1)), f"{arm}: {reps.get(arm)}")
        for arm in ("policy=simple,frame=False,rtt_ms=80", "policy=sbpn2,frame=True,rtt_ms=80"):
            check(sorted(reps[arm]) == list(range(1, 21)), f"{arm}: {reps[arm]}")
        index = json.load(open(os.path.join(results, "dec", "campaign.json")))
        check(index["decide"]["min_pairs"] == 10 and len(index["runs"]) == 160, "index")
        # resume: nothing more to run, the same stop
        made.clear()
        campaign.run_decided(sc, results, jobs=1, out=out, settings=sc.decide,
                             analyse=fake_analyse)
        check(made == [], f"a resumed campaign ran {made}")
        # every comparison decided after round 1: no second round
        made.clear()
        shutil.rmtree(os.path.join(results, "dec"))
        campaign.run_decided(sc, results, jobs=1, out=out, settings=sc.decide,
                             analyse=lambda *a, **k: {"comparisons": []})
        check(made and max(int(r.rsplit("=", 1)[1]) for r in made) == 10, "stop after 10")
    finally:
        campaign.execute = real


@test
def campaigns_together_share_the_slots():
    """Two deciding campaigns run at once (sbpn-lab run --decide with
    several scenarios) with one queue of 2 slots: never more than 2 runs
    at a time, never one slot twice, and both campaigns make progress
    while the other runs."""
    import threading
    scs = [load(scenario_file('[decide]\nmin_pairs = 10\nstep = 5\n')) for _ in range(2)]
    results = os.path.join(TMP, "together")
    lock = threading.Lock()
    busy, most, order, clash = set(), [0], [], []

    def fake_execute(spec, run_dir, slot, name, jobs):
        with lock:
            if slot in busy:
                clash.append(slot)
            busy.add(slot)
            most[0] = max(most[0], len(busy))
            order.append(name)
        time.sleep(0.002)
        meta = _complete(run_dir)
        with lock:
            busy.discard(slot)
        return meta

    real = campaign.execute
    campaign.execute = fake_execute
    try:
        slots = campaign.Slots(2)
        threads = [threading.Thread(target=campaign.run_decided, args=(sc, results, name, 2),
                                    kwargs={"out": io.StringIO(), "settings": sc.decide,
                                            "analyse": lambda *a, **k: {"comparisons": []},
                                            "slots": slots})
                   for sc, name in zip(scs, ("a", "b"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        campaign.execute = real
    check(not clash, f"slots used twice at once: {clash}")
    check(most[0] == 2, f"at most {most[0]} runs at once, want 2")
    # 80 runs each (4 arms x 2 settings x 10 repetitions)
    check(order.count("a") == 80 and order.count("b") == 80, f"{len(order)} runs")
    half = order[:80]
    check(0 < half.count("a") < 80, f"one campaign ran alone first: {half.count('a')} of 80")


@test
def slots_kept_no_more_than_asked():
    """Slots: a slot is kept for a campaign only for a run of it still to
    ask, and forget() gives what was kept to the others; a slot stranded
    in either way would leave another campaign waiting for good."""
    import threading

    def gets(slots, backlog):
        got = []
        t = threading.Thread(target=lambda: got.append(slots.get(backlog)), daemon=True)
        t.start()
        t.join(2)
        return got

    slots, big = campaign.Slots(2), campaign.Backlog(10)
    slots.expect(big, 3)
    a, b = slots.get(big), slots.get(big)
    slots.put(a)
    slots.put(b)            # one run left to ask: one slot kept, one free
    check(slots.get(big) in (a, b) and big.n == 7, f"kept slot, backlog {big.n}")
    check(len(gets(slots, campaign.Backlog(1))) == 1,
          "the second slot was kept for a campaign with one run left to ask")
    slots, big = campaign.Slots(1), campaign.Backlog(10)
    slots.expect(big, 2)
    slots.put(slots.get(big))   # kept: one run still to ask
    slots.forget(big)           # ... which never will
    check(len(gets(slots, campaign.Backlog(1))) == 1, "forget() left the kept slot stranded")


def _together(paths, jobs):
    """sbpn-lab run --decide --jobs jobs of the scenario files, with a
    stand-in execute(), no environment check and no open comparison after
    a look: the order in which the runs took a slot, by campaign name."""
    import threading
    from sbpnlab import cli
    lock, order = threading.Lock(), []

    def fake_execute(spec, run_dir, slot, name, jobs):
        with lock:
            order.append(name)
        time.sleep(0.005)
        meta = _complete(run_dir)
        return meta

    saved = campaign.execute, cli._check_environment, cli.analyse_in_venv
    campaign.execute = fake_execute
    cli._check_environment = lambda *a: None
    cli.analyse_in_venv = lambda *a, **k: {"comparisons": []}
    try:
        rc = cli.main(["run", "--decide", "--jobs", str(jobs),
                       "--results", tempfile.mkdtemp(dir=TMP)] + paths)
    finally:
        campaign.execute, cli._check_environment, cli.analyse_in_venv = saved
    check(rc == 0, f"sbpn-lab run --decide: rc {rc}")
    return order


def _named(name, extra, reps=20):
    """scenario_file() as campaign name, of reps repetitions."""
    with open(scenario_file(extra)) as f:
        text = f.read().replace('name = "dec"', f'name = "{name}"')
    path = os.path.join(TMP, f"{name}.toml")
    with open(path, "w") as f:
        f.write(text.replace("repetitions = 20", f"repetitions = {reps}"))
    return path


@test
def largest_backlog_goes_first():
    """sbpn-lab run --decide of two campaigns sharing the slots: the one
    that could still need the most runs takes them first (160 runs
    against 80), until the backlogs are equal; then they take turns and
    end together.  First come, first served would let the small one end
    halfway (about 40 of the first 80 slots)."""
    order = _together([_named("big", "[decide]\nmin_pairs = 20\n"),
                       _named("small", "[decide]\nmin_pairs = 10\n", reps=10)], 2)
    check(order.count("big") == 160 and order.count("small") == 80, f"{len(order)} runs")
    # a few before the big one's first round is ready (its runs listed)
    check(order[:80].count("small") <= 10,
          f"the small campaign took {order[:80].count('small')} of the first 80 slots")
    check(0 < order[-40:].count("small") < 40,
          f"they do not end together: {order[-40:].count('small')} of the last 40 are the small one's")


def _fake_decide(camp, scenario, through):
    """The argv of a stand-in for sbpn-lab decide: writes decision.json."""
    code = ("import json, os, sys; camp, through = sys.argv[1], int(sys.argv[2]); "
            "json.dump({'through': through, 'comparisons': []}, "
            "open(os.path.join(camp, 'decision.json'), 'w')); print('looked', through)")
    return [sys.executable, "-c", code, camp, str(through)]


@test
def host_looks_answered():
    """hostlook: the runner's request is taken and answered by serve()
    with the command's output, and analyse_on_host() returns the
    decision it wrote; the files of the exchange are gone after it; a
    malformed request gets an answer with exit status 2; a file beside
    the campaigns (vm-run's console.log, left by an earlier call that a
    resumed one finds) is not taken for a campaign."""
    import threading
    from sbpnlab import hostlook
    results = os.path.join(TMP, "looks")
    camp = os.path.join(results, "c")
    os.makedirs(camp)
    with open(os.path.join(results, "console.log"), "w") as f:
        f.write("the VM's console\n")
    t = threading.Thread(target=hostlook.serve, args=(results, _fake_decide),
                         kwargs={"out": io.StringIO(), "poll": 0.01}, daemon=True)
    t.start()
    rc, output = hostlook.ask(camp, "x.toml", 15, poll=0.01, answer_timeout=30)
    check(rc == 0 and output.strip() == "looked 15", f"{rc} {output!r}")

    class Sc:
        path = "x.toml"
    d = campaign.analyse_on_host(camp, Sc, 20, out=io.StringIO())
    check(d["through"] == 20, f"decision {d}")
    left = sorted(n for n in os.listdir(camp) if n.startswith("look.") and n != "look.answer")
    check(not left, f"left behind: {left}")
    with open(os.path.join(camp, "look.request.tmp"), "w") as f:
        json.dump({"id": "x", "scenario": "x.toml", "through": "20"}, f)
    os.replace(os.path.join(camp, "look.request.tmp"), os.path.join(camp, "look.request"))
    for _ in range(3000):
        got = hostlook._read(os.path.join(camp, "look.answer"))
        if got and got.get("id") == "x":
            break
        time.sleep(0.01)
    check(got and got["id"] == "x" and got["rc"] == 2 and "not a look request" in got["output"],
          f"answer to a malformed request: {got}")


@test
def host_looks_fall_back():
    """Without a server the request is withdrawn after the take timeout
    and analyse_on_host() looks here instead."""
    from sbpnlab import hostlook
    camp = os.path.join(TMP, "nolooks", "c")
    os.makedirs(camp)
    try:
        hostlook.ask(camp, "x.toml", 10, take_timeout=0.2, poll=0.01)
        check(False, "ask() returned without a server")
    except hostlook.NotTaken:
        pass
    check(not os.path.exists(os.path.join(camp, "look.request")), "request not withdrawn")
    real_ask, real_here = hostlook.ask, campaign.analyse_in_venv
    here = []

    def not_taken(*a, **k):
        raise hostlook.NotTaken("nobody")
    hostlook.ask = not_taken
    campaign.analyse_in_venv = lambda camp_dir, sc, through, out: here.append(through) or {}
    try:
        out = io.StringIO()
        campaign.analyse_on_host(camp, types.SimpleNamespace(path="x.toml"), 10, out=out)
    finally:
        hostlook.ask, campaign.analyse_in_venv = real_ask, real_here
    check(here == [10] and "looking in the VM" in out.getvalue(), f"{here} {out.getvalue()!r}")


def design_campaign(name, audio, frames, duration=10, reps=20):
    """A campaign directory for decide-sim --part design: report/runs.csv
    with simple and best at one setting, best's differences audio(rep) and
    frames(rep) (points), and one run directory whose meta.json gives the
    runs' length."""
    camp = os.path.join(TMP, name)
    rows = []
    for rep in range(1, reps + 1):
        for policy in ("simple", "best"):
            up = policy == "best"
            rows.append({"run": f"{policy},rep={rep:02d}", "scenario": "d", "policy": policy,
                         "flow": "call", "seed": rep, "repetition": rep,
                         "audio.on_time_frac": 0.5 + up * audio(rep) / 100,
                         "video.on_time_frac": 0.5,
                         "video.frames_on_time_frac": 0.5 + up * frames(rep) / 100,
                         "tcp.goodput_kbps": 600.0})
    os.makedirs(os.path.join(camp, "report"))
    report.write_csv(os.path.join(camp, "report", "runs.csv"), rows)
    os.makedirs(os.path.join(camp, "simple,rep=01"))
    with open(os.path.join(camp, "simple,rep=01", "meta.json"), "w") as f:
        json.dump({"config": {"scenario": {"duration_s": duration, "warmup_s": 3}}}, f)
    return camp


@test
def design_simulation():
    """decide-sim --part design: the scenario's own looks, metrics and
    variants on repetitions drawn from a campaign; the runs, waves and
    rounds its rounds take; refused on runs of another length."""
    path = os.path.join(TMP, "design.toml")
    with open(path, "w") as f:
        f.write("""[scenario]
name = "d"
duration_s = 10
repetitions = 8
[link]
rate = "1mbit"
[[media]]
name = "call"
[[variant]]
name = "simple"
policy = "simple"
[[variant]]
name = "best"
policy = "sbpn2"
frame = true
[decide]
min_pairs = 4
step = 2
metrics = ["audio", "frames"]
""")
    sc = load(path)
    rng = decidesim.np.random.default_rng(1)
    # every pair the same: both verdicts at the second look, in every mode
    # (4 pairs bound nothing at alpha 0.05 / 2), so the runs of repetitions
    # 1-4 and 5-6: 2 arms x 6 = 12 runs, ceil(8 / 3) + ceil(4 / 3) = 5 waves
    camp = design_campaign("same", lambda r: 10.0, lambda r: 0.0)
    rows = decidesim.design(sc, camp, 3, 50, rng)
    total = {r["mode"]: r for r in rows if r["metric"] == "all"}
    check(all(t["runs_mean"] == 12 and t["waves_mean"] == 5 and t["rounds_mean"] == 2 and
              t["error_rate"] == 0 and t["decided_share"] == 1 for t in total.values()),
          f"decided at 6: {total}")
    got = {(r["mode"], r["metric"]): r for r in rows if r["metric"] != "all"}
    check(got["as measured", "audio.on_time_frac"]["higher_share"] == 1 and
          got["as measured", "video.frames_on_time_frac"]["equivalent_share"] == 1 and
          got["centred: no effect", "audio.on_time_frac"]["equivalent_share"] == 1 and
          got["shifted: every effect at +margin", "video.frames_on_time_frac"]["truth"] == 5,
          str(got))
    check(len(got) == 6 and {r["comparison"] for r in rows} == {"best", "all"},
          "one comparison, two metrics decided, three modes")
    # frames spread far beyond what 8 pairs resolve: every round runs in
    # nearly every draw (8 + 4 + 4 runs, 3 + 2 + 2 waves)
    camp = design_campaign("spread", lambda r: 10.0, lambda r: (r - 10.5) * 8.0)
    rows = decidesim.design(sc, camp, 3, 50, rng)
    t = next(r for r in rows if r["metric"] == "all")
    check(t["runs_max"] == 16 and t["waves_max"] == 7 and t["runs_mean"] > 15 and
          t["decided_share"] < 0.1, f"{t}")
    # both tables print: the design's, and the other parts' beside it
    text = "\n".join(decidesim.design_table(rows) + decidesim.table(decidesim.synthetic(
        sequential.settings(), 3, rng, cases=decidesim.synthetic_cases()[:1])))
    check("whole video frames on time" in text and "no effect, normal" in text and
          "±" in text, text)
    try:
        decidesim.design(sc, design_campaign("short", lambda r: 1, lambda r: 1, duration=16),
                         1, 5, rng)
        err = None
    except ValueError as e:
        err = str(e)
    check(err is not None and "runs of 16 s" in err and "the scenario's of 10 s" in err,
          f"another run length: {err}")


@test
def resampled_campaigns():
    """The campaigns the resample and design parts simulate (decidesim.modes,
    .draw): each comparison's pairs moved by one amount so that their mean
    is as measured, 0 or +margin; whole repetitions drawn, the same for
    every comparison and metric; resample() on a campaign of known pairs."""
    pairs = [{"a": {1: 1.0, 2: 3.0, 3: 8.0}},
             {"a": {1: -1.0, 2: -2.0, 3: -6.0}, "b": {1: 10.0, 2: 10.0, 3: 10.0}}]
    got = {mode: (truths, moved) for mode, truths, moved
           in decidesim.modes(pairs, {"a": 2.0, "b": 5.0})}
    check(got["as measured"] == ([{"a": 4.0}, {"a": -3.0, "b": 10.0}], pairs),
          f"as measured: {got['as measured']}")
    check(got["centred: no effect"] == (
        [{"a": 0.0}, {"a": 0.0, "b": 0.0}],
        [{"a": {1: -3.0, 2: -1.0, 3: 4.0}},
         {"a": {1: 2.0, 2: 1.0, 3: -3.0}, "b": {1: 0.0, 2: 0.0, 3: 0.0}}]),
        f"centred: {got['centred: no effect']}")
    check(got["shifted: every effect at +margin"] == (
        [{"a": 2.0}, {"a": 2.0, "b": 5.0}],
        [{"a": {1: -1.0, 2: 1.0, 3: 6.0}},
         {"a": {1: 4.0, 2: 3.0, 3: -1.0}, "b": {1: 5.0, 2: 5.0, 3: 5.0}}]),
        f"shifted: {got['shifted: every effect at +margin']}")
    camp = decidesim.draw(pairs, [1, 2, 3], 6, decidesim.np.random.default_rng(1))
    picked = decidesim.np.random.default_rng(1).choice([1, 2, 3], size=6).tolist()
    want = [{m: [(k, d[r]) for k, r in enumerate(picked, 1)] for m, d in c.items()}
            for c in pairs]
    check(camp == want and len(set(picked)) > 1, f"drawn {picked}: {camp}")
    rows = decidesim.resample(design_campaign("resample", lambda r: 10.0, lambda r: r % 3),
                              sequential.settings(), 20, decidesim.np.random.default_rng(1))
    check([r["case"] for r in rows] == [m for m, *_ in decidesim.modes([], {})] and
          all(r["part"] == "resample resample (1 comparisons)" and r["error_rate"] == 0 and
              r["decided_share"] == 1 and r["runs_full"] == 40 for r in rows), f"{rows}")
    # a decided campaign (15 pairs of 30): drawn up to 30 from the 15;
    # refused below min_pairs
    camp = design_campaign("resample-decided", lambda r: 10.0 + r % 3, lambda r: r % 3,
                           reps=15)
    with open(os.path.join(camp, "campaign.json"), "w") as f:
        json.dump({"repetitions": 30}, f)
    rows = decidesim.resample(camp, sequential.settings({"min_pairs": 15}), 20,
                              decidesim.np.random.default_rng(1))
    check(rows is not None and all(
        r["part"] == "resample resample-decided (1 comparisons, the 15 pairs all made)"
        and r["runs_full"] == 60 for r in rows), f"{rows}")
    check(decidesim.resample(camp, sequential.settings({"min_pairs": 20}), 20,
                             decidesim.np.random.default_rng(1)) is None,
          "15 pairs in common, min_pairs 20: not resampled")
    # the metrics the settings decide, and only those ([decide] metrics)
    rows = decidesim.campaign_rows(design_campaign("resample2", lambda r: 10.0,
                                                   lambda r: r % 3))
    two = sequential.settings({"metrics": ["audio", "video"]})
    got = {m for pt in decidesim.campaign_points(rows, two) for _, d in pt for m in d}
    check(got == {"audio.on_time_frac", "video.on_time_frac"}, f"points of {got}")
    cases = decidesim.synthetic_cases(two, 24)
    check(all(len(means) == 24 and all(set(m) == got for m in means) for _, means, _ in cases),
          "synthetic cases: 24 comparisons of the two metrics")
    # effects at the margins are at the scenario's margins, not the defaults
    wide = sequential.settings({"metrics": ["audio", "video"], "margins": {"audio": 3.0}})
    at = {n: means[0] for n, means, _ in decidesim.synthetic_cases(wide)}
    check(at["every effect at +margin"] == {"audio.on_time_frac": 3.0, "video.on_time_frac": 5.0}
          and at["every effect at -margin"]["audio.on_time_frac"] == -3.0,
          f"margins of the cases: {at['every effect at +margin']}")


@test
def report_prints_the_decision():
    rng = random.Random(2)
    d = decide.analyse(rows_of([0.1 + rng.gauss(0, 0.02) for _ in range(12)]),
                       sequential.settings({"step": 2}), 12, 12)
    camp = os.path.join(TMP, "camp")
    os.makedirs(camp)
    with open(os.path.join(camp, "decision.json"), "w") as f:
        json.dump(d, f)
    check(decide.read(camp)["comparisons"][0]["status"] == "decided", "read back")
    lines = decide.lines(decide.read(camp))
    check(lines[0].startswith("Sequential decision") and "Lai" in lines[0], lines[0])


@test
def decide_uses_the_reports_jitter_buffer():
    """decide analyses with the report's default jitter buffer, one
    constant (campaignrows.JITTER_BUFFER_MS), not a copy of its value."""
    import argparse
    seen = []
    real = campaignrows.metrics, getattr(campaignrows, "JITTER_BUFFER_MS", None)
    camp = os.path.join(TMP, "jb")
    os.makedirs(camp)
    campaignrows.metrics = lambda runs, jb, unusable: seen.append(jb) or []
    campaignrows.JITTER_BUFFER_MS = 123
    try:
        rc = decide.run(argparse.Namespace(campaign=camp, scenario=None, through=None,
                                           baseline=None, dry_run=True))
    finally:
        campaignrows.metrics, campaignrows.JITTER_BUFFER_MS = real
    check(rc == 1 and seen == [0.123], f"rc {rc}, jitter buffer {seen} s, want [0.123]")
    parser = argparse.ArgumentParser()
    report.add_arguments(parser)
    check(parser.parse_args(["x"]).jitter_buffer_ms == campaignrows.JITTER_BUFFER_MS,
          "report's --jitter-buffer-ms default is not JITTER_BUFFER_MS")


def main():
    return ktap.main(tests, TMP)


if __name__ == "__main__":
    sys.exit(main())
