#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of the scenario files and their expansion into runs (KTAP).

  scripts/tests/test_scenario.py

Every shipped scenario must load; each bad file below must be refused with
an error naming the file, the line where it can be known, the field and
what was expected; sweeps must expand to paired, uniquely named runs;
schedules to the planned changes; the CLI must exit 2 on bad input; and
2000 seeded random mutations of the shipped files must each load or fail
with a ScenarioError, never another exception (a property-based test).
Needs no root and no VM.  Exit 0 all passed, 1 a test failed.
"""
import contextlib
import glob
import io
import json
import os
import random
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
ROOT = os.path.dirname(SCRIPTS)
sys.path.insert(0, SCRIPTS)
from sbpnlab import autojobs, campaign, netlink, schedule  # noqa: E402
from sbpnlab import run as run_mod  # noqa: E402
from sbpnlab.scenario import (ScenarioError, effective, flow_label, load,  # noqa: E402
                              setting_of)

GOOD = """\
[scenario]
name = "t"
duration_s = 10
repetitions = 2
seed = 7

[link]
rate = "1mbit"
delay_fwd_ms = 40
delay_rev_ms = 40
queue_packets = 5

[[tcp]]
flows = 2

[[media]]
name = "a"

[[media]]
name = "b"
policy = "prio"

[sweep]
policy = ["simple", "sbpn2", "udp"]
rtt_ms = [30, 150]
"""

GOP_MODEL = os.path.join(ROOT, "userspace", "models", "ekiga-gop.model")
PLAIN_MODEL = os.path.join(ROOT, "userspace", "models", "ekiga.model")

# (name, text, what the message must contain: "LINE" is the file name and
# line, e.g. "t.toml:9:")
BAD = [
    ("unknown key", GOOD.replace('rate = "1mbit"', 'rate = "1mbit"\nbogus = 1'),
     [":9:", "field 'link.bogus'", "known keys"]),
    ("bad rate", GOOD.replace('"1mbit"', '"fast"'),
     [":8:", "field 'link.rate'", "rate", "'fast'"]),
    ("second media's policy", GOOD.replace('policy = "prio"', 'policy = "fifo"'),
     [":21:", "field 'media[1].policy'", "sbpn2", "'fifo'"]),
    ("TOML syntax", GOOD.replace("flows = 2", "flows = = 2"), [":14:", "TOML syntax"]),
    ("misspelt key: the near one suggested",
     GOOD.replace("queue_packets = 5", "queue_packet = 5"),
     [":11:", "field 'link.queue_packet'", "did you mean 'queue_packets'?"]),
    ("misspelt key of a media flow", GOOD.replace('policy = "prio"', 'polciy = "prio"'),
     [":21:", "field 'media[1].polciy'", "did you mean 'policy'?"]),
    ("no media", GOOD.split("[[media]]")[0], ["field 'media'", "missing"]),
    ("sweep value", GOOD.replace('"udp"]', '"tcpx"]'), ["field 'sweep.policy'", "'tcpx'"]),
    ("sweep key", GOOD.replace("rtt_ms = [30, 150]", "rtt = [30]"),
     [":25:", "field 'sweep.rtt'"]),
    ("both queue limits", GOOD.replace("queue_packets = 5", "queue_packets = 5\n"
                                       "queue_bytes = 9000"),
     ["field 'link.queue_bytes'", "not both"]),
    ("netem with bytes", GOOD.replace("queue_packets = 5", 'queue_bytes = 9000\n'
                                      'shaper = "netem"'),
     ["field 'link.queue_bytes'", "packets"]),
    ("square wave without low", GOOD.replace("[[tcp]]", "[link.schedule]\nkind = "
                                             '"square"\nperiod_s = 2\nhigh = "2mbit"\n\n[[tcp]]'),
     ["field 'link.schedule.low'", "missing"]),
    ("step with a square-wave field",
     GOOD.replace("[[tcp]]", '[link.schedule]\nkind = "step"\nat_s = 2\nrate = "2mbit"\n'
                  "period_s = 3\n\n[[tcp]]"),
     ["field 'link.schedule.period_s'", "kind 'step'"]),
    ("tcp shorter than 1 s", GOOD.replace("flows = 2", "flows = 2\nstart_s = 9.5"),
     ["field 'tcp[0].stop_s'", "1 s after start_s"]),
    ("trace source without a trace", GOOD.replace('name = "a"', 'name = "a"\nsource = "trace"'),
     ["field 'media[0].trace'", "missing"]),
    ("warm-up not shorter than the run", GOOD.replace("seed = 7", "seed = 7\nwarmup_s = 10"),
     ["field 'scenario.warmup_s'", "0..9"]),
    ("duplicate media names", GOOD.replace('name = "b"', 'name = "a"'),
     ["field 'media[1].name'", "unique"]),
    ("boolean as a number", GOOD.replace("repetitions = 2", "repetitions = true"),
     [":4:", "field 'scenario.repetitions'", "integer"]),
    ("faster_restart not a boolean", GOOD.replace('name = "a"', 'name = "a"\nfaster_restart = 1'),
     [":18:", "field 'media[0].faster_restart'", "true or false", "1"]),
    ("faster_restart over UDP", GOOD.replace('name = "a"', 'name = "a"\ntransport = "udp"\n'
                                            "faster_restart = true"),
     [":19:", "field 'media[0].faster_restart'", "ccid = 3"]),
    ("size_pacing over CCID 2", GOOD.replace('name = "a"', 'name = "a"\nccid = 2\n'
                                            "size_pacing = true"),
     [":19:", "field 'media[0].size_pacing'", "ccid = 3"]),
    ("predict sweep value", GOOD.replace("rtt_ms = [30, 150]", "predict = [0, 1]"),
     ["field 'sweep.predict'", "true or false"]),
    ("last_rtt over UDP", GOOD.replace('name = "a"', 'name = "a"\ntransport = "udp"\n'
                                     "last_rtt = true"),
     [":19:", "field 'media[0].last_rtt'", "ccid = 3"]),
    ("silence_suppression not a boolean",
     GOOD.replace('name = "b"', 'name = "b"\nsilence_suppression = "yes"'),
     ["field 'media[1].silence_suppression'", "true or false", "'yes'"]),
    ("faster_restart sweep value", GOOD.replace("rtt_ms = [30, 150]", 'faster_restart = ["on"]'),
     ["field 'sweep.faster_restart'", "true or false"]),
    ("initcwnd", GOOD.replace("[[media]]", "[[short_tcp]]\ncount = 3\nsize_bytes = 1000\n"
                              "initcwnd = 0\n\n[[media]]", 1),
     ["field 'short_tcp[0].initcwnd'", "1", "1000"]),
    ("initcwnd sweep without short flows",
     GOOD.replace("rtt_ms = [30, 150]", "initcwnd = [3, 10]"),
     ["field 'sweep.initcwnd'", "[[short_tcp]]"]),
    ("tcp_flows sweep without tcp groups",
     GOOD.replace("[[tcp]]\nflows = 2\n\n", "").replace("rtt_ms = [30, 150]",
                                                         "tcp_flows = [1, 2]"),
     ["field 'sweep.tcp_flows'", "[[tcp]]"]),
    ("tcp_flows sweep value", GOOD.replace("rtt_ms = [30, 150]", "tcp_flows = [2, 65]"),
     ["field 'sweep.tcp_flows'", "0..64", "65"]),
    ("edf and newest", GOOD.replace('name = "a"', 'name = "a"\nedf = true\nnewest = true'),
     [":19:", "field 'media[0].newest'", "edf"]),
    ("edf and newest swept", GOOD.replace("rtt_ms = [30, 150]",
                                          "edf = [false, true]\nnewest = [false, true]"),
     [":26:", "field 'sweep.newest'", "both edf and newest"]),
    # loss_pct is a percentage, 0..100 both included (not a fraction)
    ("loss_pct above 100", GOOD.replace("queue_packets = 5", "queue_packets = 5\nloss_pct = 100.5"),
     [":12:", "field 'link.loss_pct'", "0..100", "100.5"]),
    ("loss_pct below 0", GOOD.replace("queue_packets = 5", "queue_packets = 5\nloss_pct = -0.5"),
     [":12:", "field 'link.loss_pct'", "0..100", "-0.5"]),
    ("loss_pct sweep value", GOOD.replace("rtt_ms = [30, 150]", "loss_pct = [0, 101]"),
     ["field 'sweep.loss_pct'", "0..100", "101"]),
    ("loss_pct sweep negative", GOOD.replace("rtt_ms = [30, 150]", "loss_pct = [-1, 5]"),
     ["field 'sweep.loss_pct'", "0..100", "-1"]),
] + [
    # window_s = [from, to] within the run (duration 10 s), from <= to
    (f"short_tcp window_s {w}",
     GOOD.replace("[[media]]", f"[[short_tcp]]\ncount = 3\nsize_bytes = 1000\n"
                  f"window_s = {w}\n\n[[media]]", 1),
     ["field 'short_tcp[0].window_s'", "0 <= from <= to <= 10", "got"])
    for w in ("[6, 5]", "[-1, 5]", "[0, 10.5]", "[11, 11]", "[5]", "[1, 2, 3]", "[true, 5]",
              '[0, "5"]', "5")
]

results = []


def check(name, ok, diag=""):
    results.append((name, bool(ok), diag))


def write(tmp, text, fname="t.toml"):
    path = os.path.join(tmp, fname)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


# The key-frame loop, after the entries other tests take first
BAD += [
    ("keyframe_on_loss names an unknown report",
     GOOD.replace('name = "a"', 'name = "a"\nkeyframe_on_loss = ["receiver", "pli"]'),
     [":18:", "field 'media[0].keyframe_on_loss'", '"receiver", "notice"', "'pli'"]),
    ("keyframe_on_loss not a list",
     GOOD.replace('name = "a"', 'name = "a"\nkeyframe_on_loss = "receiver"'),
     [":18:", "field 'media[0].keyframe_on_loss'", "a list"]),
    ("keyframe_on_loss twice the same",
     GOOD.replace('name = "a"', 'name = "a"\nkeyframe_on_loss = ["notice", "notice"]'),
     [":18:", "distinct"]),
    ("keyframe_on_loss notice over UDP",
     GOOD.replace('name = "a"', 'name = "a"\ntransport = "udp"\nkeyframe_on_loss = ["notice"]'),
     [":19:", "field 'media[0].keyframe_on_loss'", "transport = 'dccp'"]),
    ("keyframe_on_loss with the built-in model (video_gop 0) and no trace",
     GOOD.replace('name = "a"', 'name = "a"\nkeyframe_on_loss = ["receiver"]'),
     [":18:", "field 'media[0].keyframe_on_loss'", "video_gop > 0", "or a trace"]),
    ("keyframe_on_loss with a model without video_gop",
     GOOD.replace('name = "a"', f'name = "a"\nmodel = "{PLAIN_MODEL}"\n'
                  'keyframe_on_loss = ["receiver"]'),
     [":19:", "field 'media[0].keyframe_on_loss'", "video_gop > 0"]),
    ("sweep keyframe_on_loss on a flow without coding dependencies",
     GOOD.replace("rtt_ms = [30, 150]", 'keyframe_on_loss = [[], ["receiver"]]')
     .replace('name = "a"', f'name = "a"\nmodel = "{GOP_MODEL}"'),
     [":26:", "field 'sweep.keyframe_on_loss'", "video_gop > 0", "media[1] has none"]),
    ("sweep keyframe_on_loss bad value",
     GOOD.replace("rtt_ms = [30, 150]", 'keyframe_on_loss = [[], ["nack"]]'),
     [":25:", "field 'sweep.keyframe_on_loss'", "a list of distinct values"]),
]

# Named variants: what is compared, crossed with the setting.
GOOD_V = """\
[scenario]
name = "v"
duration_s = 10
repetitions = 2
seed = 7
compare = [["simple", "sbpn2"], ["simple", "best"]]

[link]
rate = "1mbit"
queue_packets = 5

[[media]]
name = "a"

[[variant]]
name = "simple"
policy = "simple"

[[variant]]
name = "sbpn2"
policy = "sbpn2"

[[variant]]
name = "best"
policy = "sbpn2"
size_pacing = true
predict = true

[sweep]
rtt_ms = [30, 150]
"""


def variant(text, table, before="[sweep]"):
    """GOOD_V-like text with one more [[variant]] table (its body given)."""
    return text.replace(before, f"[[variant]]\n{table}\n\n{before}")


BAD += [
    ("a variant that repeats another's configuration",
     variant(GOOD_V, 'name = "again"\npolicy = "sbpn2"\nsize_pacing = false'),
     [":30:", "field 'variant[3].name'", "not the same as variant[1] 'sbpn2'", "'again'"]),
    # the flow's predict = true, which SIMPLE ignores: simple-pd0 differs
    # from simple only there
    ("a variant that repeats another but for options its policy ignores",
     variant(GOOD_V.replace('name = "a"', 'name = "a"\npredict = true'),
             'name = "simple-pd0"\npolicy = "simple"\npredict = false'),
     ["field 'variant[3].name'", "variant[0] 'simple'", "what the policy ignores is dropped"]),
    ("a variant option its policy ignores",
     variant(GOOD_V, 'name = "simple-pd"\npolicy = "simple"\npredict = true'),
     [":32:", "field 'variant[3].predict'", "policy 'simple' ignores it", "True"]),
    ("a UDP variant with a send queue",
     variant(GOOD_V, 'name = "udp"\npolicy = "udp"\ntx_qlen = 10'),
     [":32:", "field 'variant[3].tx_qlen'", "UDP has no tx_qlen"]),
    ("a UDP variant with drop notices",
     variant(GOOD_V.replace('name = "a"', f'name = "a"\nmodel = "{GOP_MODEL}"'),
             'name = "udp"\npolicy = "udp"\nkeyframe_on_loss = ["receiver", "notice"]'),
     ["field 'variant[3].keyframe_on_loss'", "needs transport 'dccp'"]),
    ("a variant with edf and newest",
     variant(GOOD_V, 'name = "both"\npolicy = "sbpn2"\nedf = true\nnewest = true'),
     ["field 'variant[3].newest'", "not both edf and newest"]),
    ("two variants of one name", GOOD_V.replace('name = "sbpn2"', 'name = "simple"'),
     [":20:", "field 'variant[1].name'", "unique"]),
    ("a variant without a name", variant(GOOD_V, 'policy = "prio"'),
     ["field 'variant[3].name'", "missing"]),
    ("a misspelt variant key", variant(GOOD_V, 'name = "prio"\npolcy = "prio"'),
     ["field 'variant[3].polcy'", "did you mean 'policy'?"]),
    ("a sweep key that a variant sets",
     GOOD_V.replace("predict = true", "predict = true\ntx_qlen = 10")
     .replace("rtt_ms = [30, 150]", "tx_qlen = [5, 20]"),
     [":31:", "field 'sweep.tx_qlen'", "a key no [[variant]] sets",
      "variant[2] 'best' sets tx_qlen too"]),
    ("a variant's key in the sweep", GOOD_V.replace("rtt_ms = [30, 150]", "frame = [false, true]"),
     [":30:", "field 'sweep.frame'", "a setting", "set frame in the [[variant]] tables"]),
    ("a swept setting that a variant ignores",
     variant(GOOD_V, 'name = "udp"\npolicy = "udp"').replace("rtt_ms = [30, 150]",
                                                              "tx_qlen = [5, 32]"),
     ["field 'sweep.tx_qlen'", "variant 'udp'", "udp ignores tx_qlen"]),
    ("media flows that differ in a key a variant leaves to them",
     variant(GOOD_V.replace('name = "a"', 'name = "a"\n\n[[media]]\nname = "b"\npolicy = "prio"'),
             'name = "sp"\nsize_pacing = true'),
     ["field 'variant[3].policy'", "the media flows differ in policy", "missing"]),
    ("compare names an unknown variant",
     GOOD_V.replace('["simple", "best"]]', '["simple", "bset"]]'),
     [":6:", "field 'scenario.compare'", "the name of a [[variant]]", "did you mean 'best'?"]),
    ("compare pairs a variant with itself",
     GOOD_V.replace('["simple", "best"]]', '["best", "best"]]'),
     [":6:", "field 'scenario.compare'", "two different variants"]),
    ("compare not a list of pairs", GOOD_V.replace('["simple", "best"]]', '"best"]'),
     [":6:", "field 'scenario.compare'", "[baseline, variant] pairs"]),
    ("baseline and compare", GOOD_V.replace("seed = 7", 'seed = 7\nbaseline = "simple"'),
     ["field 'scenario.compare'", "not both"]),
    ("baseline names an unknown variant",
     GOOD_V.replace('compare = [["simple", "sbpn2"], ["simple", "best"]]', 'baseline = "simpel"'),
     [":6:", "field 'scenario.baseline'", "did you mean 'simple'?"]),
    ("compare without variants", GOOD.replace("seed = 7", 'seed = 7\ncompare = [["a", "b"]]'),
     [":6:", "field 'scenario.compare'", "[[variant]] tables"]),
]

# Values of the wrong type, range or form for the mutation test below.
ODD_VALUES = ['""', '"x"', "-1", "0", "1e309", "nan", "inf", "-inf", "true", "[]",
              '[1, "a"]', "{}", "{a = 1}", "9999999999999999999999", "0.0001",
              '"1mbit"', '"-5kbit"', "[[1]]", "1979-05-27"]


def mutations_fail_cleanly(tmp, texts, n=2000, seed=1):
    """Property: any mutation of a good scenario file (a value replaced by
    an odd one, a line deleted or repeated, random bytes) either loads and
    expands into runs or raises ScenarioError naming the file, quickly;
    never another exception.  Seeded, so a failure can be replayed."""
    rnd, path = random.Random(seed), os.path.join(tmp, "mutant.toml")
    problems, slowest = [], 0.0
    for i in range(n):
        lines = rnd.choice(texts).splitlines()
        k, op = rnd.randrange(len(lines)), rnd.randrange(4)
        if op == 0 and "=" in lines[k] and not lines[k].lstrip().startswith("#"):
            lines[k] = lines[k].split("=")[0] + "= " + rnd.choice(ODD_VALUES)
        elif op == 1:
            del lines[k]
        elif op == 2:
            lines.insert(k, rnd.choice(lines))
        data = bytearray("\n".join(lines).encode())
        if op == 3:
            for _ in range(rnd.randrange(1, 4)):
                data[rnd.randrange(len(data))] = rnd.randrange(256)
        with open(path, "wb") as f:
            f.write(data)
        t = time.monotonic()
        try:
            load(path).runs()
        except ScenarioError as e:
            if not str(e).startswith(path):
                problems.append(f"mutant {i}: error does not name the file: {e}")
        except Exception as e:  # noqa: BLE001 - any other exception is the bug
            problems.append(f"mutant {i}: {type(e).__name__}: {e}")
        slowest = max(slowest, time.monotonic() - t)
    check(f"{n} mutated scenario files load or fail with a ScenarioError naming the file",
          not problems and slowest < 5,
          f"slowest {slowest:.3f} s; " + ("; ".join(problems[:5]) or "no problem"))


def row_labels(runs):
    """The report's row labels of the runs' media flows ("sbpn2+sp+pd")."""
    return {flow_label(m) for r in runs for m in r.config["media"]}

def campaign_resumes(tmp, good):
    """run_campaign with execute() replaced: a run that failed once is
    reported and kept, a second campaign redoes only the runs that are not
    complete, and each run prints a progress line with an ETA."""
    calls, real = [], campaign.execute

    def fake(spec, run_dir, slot, name, jobs=1):
        calls.append(spec.id)
        os.makedirs(run_dir, exist_ok=True)
        bad = spec.id == "policy=sbpn2,rtt_ms=30,rep=01" and calls.count(spec.id) == 1
        meta = {"status": "failed" if bad else "complete",
                "reason": "media-a.send exited 1" if bad else None}
        with open(os.path.join(run_dir, "meta.json"), "w", encoding="utf-8") as f:
            f.write('{"status": "%s"}' % meta["status"])
        return meta

    campaign.execute = fake
    try:
        sc, out = load(good), os.path.join(tmp, "results")
        log1, log2 = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
        failed1 = campaign.run_campaign(sc, out, out=log1)
        first = list(calls)
        failed2 = campaign.run_campaign(sc, out, out=log2)
        log1.seek(0)
        log2.seek(0)
        text1, text2 = log1.read(), log2.read()
    finally:
        campaign.execute = real
    check("campaign: a failed run is reported and the others go on",
          len(first) == 12 and failed1 == [("policy=sbpn2,rtt_ms=30,rep=01",
                                            "media-a.send exited 1")] and
          "failed: policy=sbpn2,rtt_ms=30,rep=01: media-a.send exited 1" in text1,
          text1[-400:])
    check("campaign: a progress line with an ETA per run",
          sum(1 for x in text1.splitlines() if x.startswith("[") and "ETA" in x) == 12,
          text1[:400])
    check("campaign: a second run redoes only what is not complete",
          calls[12:] == ["policy=sbpn2,rtt_ms=30,rep=01"] and failed2 == [] and
          "11 already complete, 1 to do" in text2, text2[:300])


def campaign_refuses_another_length(tmp, good):
    """A complete run of another length than the scenario's now (an older
    make demo's 16 s runs under the ids of its 60 s ones) is not resumed as
    if it were one of them: run_campaign refuses before running anything,
    and `sbpn-lab run` exits 2 naming what to do; runs of the same length
    resume, and --force redoes the others."""
    sc, calls, real = load(good), [], campaign.execute
    out = os.path.join(tmp, "lengths")

    def fake(spec, run_dir, slot, name, jobs=1):
        calls.append(spec.id)
        os.makedirs(run_dir, exist_ok=True)
        with open(os.path.join(run_dir, "meta.json"), "w", encoding="utf-8") as f:
            json.dump({"status": "complete", "config": spec.config}, f)
        return {"status": "complete", "reason": None}

    campaign.execute = fake
    try:
        campaign.run_campaign(sc, out, out=tempfile.TemporaryFile("w+"))
        calls.clear()
        log = tempfile.TemporaryFile("w+")
        campaign.run_campaign(sc, out, out=log)
        log.seek(0)
        check("campaign: complete runs of the scenario's length resume",
              calls == [] and "12 already complete, 0 to do" in log.read())
        rid = sc.runs()[3].id
        meta_path = os.path.join(out, sc.name, rid, "meta.json")
        with open(meta_path, encoding="utf-8") as f:
            meta = json.load(f)
        meta["config"]["scenario"]["duration_s"] = 16
        with open(meta_path, "w", encoding="utf-8") as f:
            json.dump(meta, f)
        try:
            campaign.run_campaign(sc, out, out=tempfile.TemporaryFile("w+"))
            err = None
        except campaign.OtherLength as e:
            err = str(e)
        check("campaign: a complete run of another length is refused, nothing run",
              err is not None and calls == [] and f"such as {rid}: 16 s" in err and
              "now 10 s" in err, str(err))
        from sbpnlab import cli as cli_mod
        env, err = cli_mod._check_environment, io.StringIO()
        cli_mod._check_environment = lambda *a: None      # as in the VM
        try:
            with contextlib.redirect_stderr(err):
                rc = cli_mod.main(["run", good, "--results", out])
        finally:
            cli_mod._check_environment = env
        check("sbpn-lab run: exit 2, saying what to do", rc == 2 and calls == [] and
              "another length" in err.getvalue() and "--campaign" in err.getvalue(),
              f"{rc} {err.getvalue()[-300:]}")
        campaign.run_campaign(sc, out, force=True, out=tempfile.TemporaryFile("w+"))
        check("campaign: --force redoes them", rid in calls, str(calls))
    finally:
        campaign.execute = real


def fake_complete_run(run_dir):
    """What campaign.execute() leaves of a run that completed, and returns."""
    os.makedirs(run_dir, exist_ok=True)
    with open(os.path.join(run_dir, "meta.json"), "w", encoding="utf-8") as f:
        f.write('{"status": "complete"}')
    return {"status": "complete", "reason": None}


def campaign_shards_merge(tmp, good):
    """Two shards run apart (execute() replaced) and merged: every
    repetition whole in one shard, the merged campaign.json lists what the
    whole campaign lists, and conflicting sources are refused."""
    real = campaign.execute

    def fake(spec, run_dir, slot, name, jobs=1):
        return fake_complete_run(run_dir)

    text = open(good, encoding="utf-8").read().replace("repetitions = 2", "repetitions = 3")
    sc = load(write(tmp, text, "shards.toml"))
    parts = [campaign.selected(sc, shard=(k, 2)) for k in (1, 2)]
    check("shards: disjoint, together every run, each repetition whole in one",
          sorted(r.id for p in parts for r in p) == sorted(r.id for r in sc.runs()) and
          {r.rep for r in parts[0]} == {1, 3} and {r.rep for r in parts[1]} == {2},
          str([[r.id for r in p] for p in parts]))
    campaign.execute = fake
    try:
        log = tempfile.TemporaryFile("w+")
        for k in (1, 2):
            campaign.run_campaign(sc, os.path.join(tmp, f"host{k}"), "c", out=log,
                                  shard=(k, 2))
    finally:
        campaign.execute = real
    whole = os.path.join(tmp, "whole")
    os.makedirs(whole)
    campaign.write_index(sc, whole, "c")
    merged, hosts = os.path.join(tmp, "merged"), [os.path.join(tmp, f"host{k}", "c")
                                                  for k in (1, 2)]
    campaign.merge_campaigns(merged, hosts, out=log)
    with open(os.path.join(merged, "campaign.json"), encoding="utf-8") as f:
        got = json.load(f)
    with open(os.path.join(whole, "campaign.json"), encoding="utf-8") as f:
        want = json.load(f)
    check("merge: the runs of one campaign, in its order, all complete",
          got["runs"] == want["runs"] and got["shards"] == ["1/2", "2/2"] and
          all(campaign.run_status(os.path.join(merged, r)) == "complete"
              for r in want["runs"]), str(got["runs"][:4]))
    try:
        campaign.merge_campaigns(os.path.join(tmp, "again"), hosts + [merged], out=log)
        check("merge: a run complete in two sources is refused", False)
    except ValueError as e:
        check("merge: a run complete in two sources is refused", "complete in both" in str(e),
              str(e))
    other = os.path.join(tmp, "other")
    os.makedirs(other)
    campaign.write_index(load(good), other, "c", only="simple")
    rc = subprocess.run([sys.executable, os.path.join(SCRIPTS, "sbpn-lab"), "merge",
                         os.path.join(tmp, "m2"), hosts[0], other],
                        capture_output=True, text=True)
    check("merge: sources of different campaigns exit 2 naming what differs",
          rc.returncode == 2 and "only" in rc.stderr and
          not os.path.exists(os.path.join(tmp, "m2")), rc.stderr)


def jobs_auto(tmp, good):
    """--jobs auto with the probe runs replaced by figures: it takes the
    last level whose median send lateness and minimum one-way delay stay
    within the tolerances over the serial runs, stops at the first level
    that fails or has a failed run, keeps its choice for a resumed
    campaign, and the campaign's runs get the chosen jobs; the probe is
    the first run, shortened, the original untouched."""
    sc = load(good)
    spec = sc.runs()[0]
    short = autojobs.shortened(spec, 4)
    check("jobs auto: the probe is the first run shortened, its flows with it",
          short.config["scenario"]["duration_s"] == 4 and
          short.config["tcp"][0]["stop_s"] == 4 and short.config["scenario"]["warmup_s"] == 2
          and spec.config["scenario"]["duration_s"] == 10 and
          spec.config["tcp"][0]["stop_s"] == 10 and short.id == spec.id,
          str(short.config["scenario"]))

    def probe_with(figures):
        calls = []

        def probe(spec, n, scratch, name):
            calls.append(n)
            got = figures[n]
            return [got(i) if callable(got) else got for i in range(n)]
        return probe, calls

    late = {1: (3.0, 40.3), 2: (3.4, 40.4), 4: (4.9, 40.4), 6: (5.2, 40.6), 8: (9.0, 40.5)}
    cases = [
        ("the last level within the send lateness tolerance", late, 4, [1, 1, 2, 4, 6]),
        ("the minimum one-way delay decides too",
         {**late, 4: (3.1, 43.0)}, 2, [1, 1, 2, 4]),
        ("a failed probe run stops the search",
         {**late, 4: lambda i: None if i == 3 else (3.0, 40.3)}, 2, [1, 1, 2, 4]),
        ("the median of a level's runs, not its worst",
         {**late, 6: lambda i: (30.0, 40.3) if i == 0 else (4.0, 40.3)}, 6,
         [1, 1, 2, 4, 6, 8]),
        ("all levels pass: the most tried", {**late, 6: (4.0, 40.3), 8: (4.0, 40.3)}, 8,
         [1, 1, 2, 4, 6, 8]),
    ]
    for i, (what, figures, want, want_calls) in enumerate(cases):
        d = os.path.join(tmp, f"auto{i}")
        os.makedirs(d)
        probe, calls = probe_with(figures)
        log = tempfile.TemporaryFile("w+")
        got = autojobs.choose([spec], d, "c", cpus=2, out=log, probe=probe)
        log.seek(0)
        text = log.read()
        with open(os.path.join(d, autojobs.FILE), encoding="utf-8") as f:
            saved = json.load(f)
        check(f"jobs auto: {what}", got == want and calls == want_calls and
              saved["jobs"] == want and f"--jobs auto: {want}" in text,
              f"got {got}, probed {calls}\n{text}")
    probe, calls = probe_with(late)
    log = tempfile.TemporaryFile("w+")
    again = autojobs.choose([spec], os.path.join(tmp, "auto0"), "c", cpus=2, out=log,
                            probe=probe)
    check("jobs auto: a resumed campaign keeps its choice without probing",
          again == 4 and calls == [], str(calls))
    try:
        autojobs.choose([spec], os.path.join(tmp, "auto-fail"), "c", cpus=2, out=log,
                        probe=lambda *a: [None])
        check("jobs auto: a failed serial probe is an error", False)
    except autojobs.ProbeFailed as e:
        check("jobs auto: a failed serial probe is an error", "alone failed" in str(e),
              str(e))
        shutil.rmtree(str(e).rsplit("left in ", 1)[1].rstrip(")"))

    # The same p99 as stats.py's send_late_p99_ms (numpy's linear
    # interpolation), not the nearest rank (which would give 4).
    p99 = autojobs._percentile([4, 1, 3, 2], 99)
    check("jobs auto: send lateness p99 interpolates as the report's does",
          abs(p99 - 3.97) < 1e-9, str(p99))

    jobs_seen, real, real_probe = [], campaign.execute, autojobs._probe

    def fake(spec, run_dir, slot, name, jobs=1):
        jobs_seen.append(jobs)
        return fake_complete_run(run_dir)

    campaign.execute, autojobs._probe = fake, probe_with(late)[0]
    try:
        log = tempfile.TemporaryFile("w+")
        campaign.run_campaign(sc, os.path.join(tmp, "auto-camp"), "c", jobs="auto", out=log)
        log.seek(0)
        text = log.read()
    finally:
        campaign.execute, autojobs._probe = real, real_probe
    check("jobs auto: the campaign runs at the chosen concurrency",
          jobs_seen == [4] * 12 and "12 to do, 4 at a time" in text, text[:600])


def ranges(tmp):
    """The edges of loss_pct and window_s are accepted (BAD has the values
    just beyond them), a swept loss_pct reaches the link as given, and
    short flows start inside their window."""
    def loaded(text):
        try:
            return load(write(tmp, text, "range.toml"))
        except ScenarioError as e:
            return e

    got = []
    for v in ("0", "0.5", "100"):
        sc = loaded(GOOD.replace("queue_packets = 5", f"queue_packets = 5\nloss_pct = {v}"))
        got.append(sc if isinstance(sc, ScenarioError) else sc.config["link"]["loss_pct"])
    check("link.loss_pct 0, 0.5 and 100 (percent) are accepted", got == [0, 0.5, 100], str(got))
    sc = loaded(GOOD.replace("rtt_ms = [30, 150]", "loss_pct = [0, 2.5, 100]"))
    got = sc if isinstance(sc, ScenarioError) else sorted(
        {(r.point["loss_pct"], r.config["link"]["loss_pct"]) for r in sc.runs()})
    check("sweep loss_pct 0, 2.5, 100 sets the link's loss in percent",
          got == [(0, 0), (2.5, 2.5), (100, 100)], str(got))
    short = '[[short_tcp]]\ncount = 50\nsize_bytes = 1000\n{}\n[[media]]'
    got = {}
    for w in ("", "window_s = [0, 10]", "window_s = [5, 5]", "window_s = [2, 3]",
              "window_s = [9.5, 10]"):
        sc = loaded(GOOD.replace("[[media]]", short.format(w), 1))
        if isinstance(sc, ScenarioError):
            got[w or "default"] = str(sc)
            continue
        grp = sc.config["short_tcp"][0]["window_s"]
        starts = [f["start_s"] for f in run_mod._short_plan(sc.config, 7, 10)["flows"]]
        got[w or "default"] = (grp, min(starts) >= grp[0] and max(starts) <= grp[1] and
                               (grp[0] == grp[1] or len(set(starts)) > 1))
    check("short_tcp window_s: edges accepted, default the whole run, starts inside it",
          got == {"default": ([0, 10], True), "window_s = [0, 10]": ([0, 10], True),
                  "window_s = [5, 5]": ([5, 5], True), "window_s = [2, 3]": ([2, 3], True),
                  "window_s = [9.5, 10]": ([9.5, 10], True)}, str(got))


def timeouts(cli, good, tmp):
    """sbpn-lab timeout: vm-run's --timeout for a run with the same
    scenarios and selection, from the run count, duration and --jobs."""
    def timeout(*argv, env=None):
        p = subprocess.run(cli + ["timeout", *argv], capture_output=True, text=True, env=env)
        try:
            return p.returncode, int(p.stdout), p.stderr
        except ValueError:
            return p.returncode, None, p.stdout + p.stderr
    # 12 runs of 10 s; each costs its duration and RUN_OVERHEAD_S of set-up
    per = 10 + campaign.RUN_OVERHEAD_S
    want = {1: 12 * per, 4: 3 * per, 5: 3 * per}
    for jobs, est in want.items():
        rc, got, err = timeout(good, "--jobs", str(jobs))
        check(f"sbpn-lab timeout --jobs {jobs}: twice ceil(runs / jobs) runs' time, and "
              "the boot's slack", rc == 0 and got == 2 * est + campaign.VM_SLACK_S,
              f"{rc} {got} {err}")
    rc, got, err = timeout(good, "--only", "rep=01$")
    check("sbpn-lab timeout --only: the runs it selects", rc == 0 and
          got == 2 * 6 * per + campaign.VM_SLACK_S, f"{rc} {got} {err}")
    rc, got, err = timeout(good, good, "--jobs", "4")
    check("sbpn-lab timeout of two scenarios: one campaign after the other",
          rc == 0 and got == 2 * 2 * 3 * per + campaign.VM_SLACK_S, f"{rc} {got} {err}")
    rc, auto, err = timeout(good, "--jobs", "auto")
    check("sbpn-lab timeout --jobs auto: as one at a time, and the probe",
          rc == 0 and auto > 2 * 12 * per + campaign.VM_SLACK_S, f"{rc} {auto} {err}")
    rc, got, err = timeout(good, "--only", "nosuch")
    check("sbpn-lab timeout --only matching nothing exits 2, nothing on stdout",
          rc == 2 and got is None and "no run of t matches" in err, f"{rc} {err}")
    # the documented commands: each finishes within its timeout
    demo = os.path.join(SCRIPTS, "scenarios", "demo.toml")
    rc, got, err = timeout(demo)
    est = len(load(demo).runs()) * (60 + campaign.RUN_OVERHEAD_S)
    check("sbpn-lab timeout of all of demo.toml at --jobs 1 allows its runs' time",
          rc == 0 and got >= 2 * est, f"{rc} {got} {err}")
    env = dict(os.environ, VM_TIMEOUT="600")
    p = subprocess.run(cli + ["run", demo, "--results", tmp, "--dry-run"],
                       capture_output=True, text=True, env=env)
    check("sbpn-lab run in a VM whose --timeout is too short says so at the start",
          "vm-run's --timeout 600" in p.stderr and "sbpn-lab timeout" in p.stderr,
          f"{p.returncode} {p.stderr[-400:]!r}")
    env["VM_TIMEOUT"] = str(got)
    p = subprocess.run(cli + ["run", demo, "--results", tmp, "--dry-run"],
                       capture_output=True, text=True, env=env)
    check("... and not when it is the one sbpn-lab timeout gives",
          "warning" not in p.stderr and "about 45m30s at --jobs 1" in p.stderr,
          p.stderr[-400:])


# Run ids of campaigns run before the scenarios named their variants
# (results/*/campaign.json, picked from the sweep with --only): the
# converted scenarios must list exactly these, in this order, so that the
# old campaign directories resume and report.
F5 = "size_pacing={},predict={},owd={},frame={}"
RFC3 = ["policy=simple," + F5.format(*[False] * 4), "policy=sbpn2," + F5.format(*[False] * 4),
        "policy=sbpn2," + F5.format(*[True] * 4)]
OLD_CAMPAIGNS = [
    # v13-rfc-tcp-rtt80-q5: frame-tcp-rtt80-q5.toml's SIMPLE, SBPN2 and best
    ("frame-tcp-rtt80-q5.toml", "^(simple|sbpn2|best)$",
     [f"{v},rep={r:02d}" for r in range(1, 31) for v in RFC3]),
    # v13-rfc-bytes-tcp-rtt: the same three at three RTTs
    ("bytes-tcp-rtt.toml", None,
     [f"{v},rtt_ms={t},rep={r:02d}" for r in range(1, 31) for v in RFC3 for t in (30, 80, 150)]),
    # v13-voice-square: SIMPLE without and with size pacing, and UDP
    ("voice-square.toml", None,
     [f"policy={v},rep={r:02d}" for r in range(1, 31) for v in
      ("simple,size_pacing=False", "simple,size_pacing=True", "udp,size_pacing=False")]),
    # make demo before its variants: DEMO_ONLY's three (then 10
    # repetitions of 16 s, now 13 of 60 s: the ids are the same, and
    # check_lengths() keeps the old runs from being resumed as new ones)
    ("demo.toml", None, [f"{v},rep={r:02d}" for r in range(1, 14) for v in RFC3]),
    # keyframe-tcp-rtt80-q5: SIMPLE with the receiver's key-frame loop,
    # SBPN2 and best with it alone and with receiver + notice
    ("keyframe-tcp-rtt80-q5.toml", None,
     [f"{v},keyframe_on_loss={k},rep={r:02d}" for r in range(1, 31) for v, k in
      ((RFC3[0], "receiver"), (RFC3[1], "receiver"), (RFC3[1], "receiver+notice"),
       (RFC3[2], "receiver"), (RFC3[2], "receiver+notice"))]),
]


def same_configuration(runs):
    """Pairs of run ids of one repetition whose configurations are the same
    once what their policies ignore is dropped (scenario.effective)."""
    seen, twice = {}, []
    for r in runs:
        cfg = dict(r.config, media=[sorted(effective(m).items()) for m in r.config["media"]])
        key = json.dumps(cfg, sort_keys=True)
        if key in seen:
            twice.append((seen[key], r.id))
        seen[key] = r.id
    return twice


def counts(tmp, cli, scenario, only=None):
    """The run count of a scenario from list (None with --only, which list
    has not), run --dry-run, timeout and campaign.json, and the run ids of
    the last two: ((list, dry-run, timeout, campaign.json), ids, ids, the
    dry-run's lines)."""
    argv = ["--only", only] if only else []
    ls = subprocess.run(cli + ["list", os.path.dirname(scenario)], capture_output=True,
                        text=True)
    listed = re.search(rf"^{re.escape(os.path.basename(scenario))}\s+\S+\s+(\d+) runs",
                       ls.stdout, re.M)
    # a run per line; a scenario that decides says so first
    dry = [x for x in subprocess.run(cli + ["run", scenario, "--dry-run", "--results", tmp]
                                     + argv, capture_output=True, text=True).stdout.splitlines()
           if "\t" in x]
    tm = subprocess.run(cli + ["timeout", scenario] + argv, capture_output=True, text=True)
    timed = re.search(r"timeout: (\d+) runs", tm.stderr)
    d = tempfile.mkdtemp(dir=tmp)
    campaign.write_index(load(scenario), d, "c", only=only)
    with open(os.path.join(d, "campaign.json"), encoding="utf-8") as f:
        index = json.load(f)
    n = (int(listed.group(1)) if listed and not only else None, len(dry),
         int(timed.group(1)) if timed else tm.stderr.strip(), len(index["runs"]))
    return n, [x.split("\t")[0].split("/", 1)[1] for x in dry], index["runs"], dry


def variants(tmp, cli):
    """[[variant]] tables: the runs are the variants at each setting, ids as
    a sweep over the variants' keys would give them; compare or baseline
    give the comparisons; list, run --dry-run, timeout and campaign.json
    count the same runs; --only picks variants by name."""
    os.makedirs(os.path.join(tmp, "v"))
    path = write(os.path.join(tmp, "v"), GOOD_V, "v.toml")
    sc = load(path)
    runs = sc.runs()
    check("variants: 3 variants x 2 RTTs x 2 repetitions, repetition-major, variant "
          "then setting", [(r.rep, r.variant, r.point["rtt_ms"]) for r in runs[:7]] ==
          [(1, "simple", 30), (1, "simple", 150), (1, "sbpn2", 30), (1, "sbpn2", 150),
           (1, "best", 30), (1, "best", 150), (2, "simple", 30)] and len(runs) == 12,
          str([(r.rep, r.variant, r.point) for r in runs[:7]]))
    check("variants: a run id names every key a variant sets, the media flow's value "
          "where this one leaves it, then the setting",
          [r.id for r in runs[:6:2]] ==
          ["policy=simple,size_pacing=False,predict=False,rtt_ms=30,rep=01",
           "policy=sbpn2,size_pacing=False,predict=False,rtt_ms=30,rep=01",
           "policy=sbpn2,size_pacing=True,predict=True,rtt_ms=30,rep=01"],
          str([r.id for r in runs[:6:2]]))
    best = runs[5].config["media"][0]
    check("variants: a variant's options reach every media flow, the setting the link",
          best["policy"] == "sbpn2" and best["size_pacing"] and best["predict"] and
          runs[5].config["link"]["delay_fwd_ms"] == 75 and
          not runs[0].config["media"][0]["size_pacing"], str(best))
    check("variants: compare gives the comparisons, in its order",
          sc.comparisons == [["simple", "sbpn2"], ["simple", "best"]] and
          sc.baseline == "simple", f"{sc.comparisons} {sc.baseline}")
    plain = load(write(tmp, GOOD_V.replace(
        'compare = [["simple", "sbpn2"], ["simple", "best"]]\n', ""), "v1.toml"))
    based = load(write(tmp, GOOD_V.replace(
        'compare = [["simple", "sbpn2"], ["simple", "best"]]', 'baseline = "sbpn2"'), "v2.toml"))
    check("variants: without compare each variant against the first, baseline = X each "
          "against X", plain.comparisons == [["simple", "sbpn2"], ["simple", "best"]] and
          based.comparisons == [["sbpn2", "simple"], ["sbpn2", "best"]] and
          based.baseline == "sbpn2", f"{plain.comparisons} {based.comparisons}")
    n, dry, index, _ = counts(tmp, cli, path)
    check("variants: list, run --dry-run, timeout and campaign.json count the same runs",
          n == (12, 12, 12, 12) and dry == index, f"{n}")
    n, dry, index, lines = counts(tmp, cli, path, "^best$")
    check("variants: --only '^best$': the variant best alone, named, in run --dry-run, "
          "timeout and campaign.json", n == (None, 4, 4, 4) and dry == index and
          all(x.endswith("\tvariant best") and "size_pacing=True" in x for x in lines),
          f"{n}\n" + "\n".join(lines))
    d = tempfile.mkdtemp(dir=tmp)
    campaign.write_index(sc, d, "c")
    with open(os.path.join(d, "campaign.json"), encoding="utf-8") as f:
        index = json.load(f)
    check("variants: campaign.json records each variant with its part of the run ids, "
          "and the comparisons", index.get("variants") == [
              {"name": v, "point": {"policy": p, "size_pacing": x, "predict": x}}
              for v, p, x in (("simple", "simple", False), ("sbpn2", "sbpn2", False),
                              ("best", "sbpn2", True))] and
          index.get("compare") == [["simple", "sbpn2"], ["simple", "best"]] and
          index.get("baseline") == "simple",
          str({k: index.get(k) for k in ("variants", "baseline", "compare")}))


def shipped_variants(tmp, cli):
    """The shipped scenarios name their variants: none runs a configuration
    twice or picks runs with a regex in a comment; demo.toml's count is
    the same everywhere, --help's included; the converted scenarios list
    the run ids of the campaigns run before, and such a campaign resumes."""
    shipped = sorted(glob.glob(os.path.join(SCRIPTS, "scenarios", "*.toml")))
    twice = {}
    for p in shipped:
        try:
            twice[os.path.basename(p)] = same_configuration(load(p).runs(reps=1))
        except ScenarioError:
            pass        # "loads ..." says so
    twice = {k: v for k, v in twice.items() if v}
    check("no shipped scenario runs a configuration twice", not twice,
          "; ".join(f"{k}: {v[0][1]} as {v[0][0]} ({len(v)} in all)" for k, v in twice.items()))
    with_regex = [os.path.basename(p) for p in shipped
                  if re.search(r"--only '\^?policy=", open(p, encoding="utf-8").read())]
    check("no shipped scenario picks its variants with an --only regex in a comment",
          not with_regex, str(with_regex))
    demo = os.path.join(SCRIPTS, "scenarios", "demo.toml")
    from sbpnlab.cli import EPILOG
    n, dry, index, _ = counts(tmp, cli, demo)
    check("demo.toml: list, run --dry-run, timeout, campaign.json and the --help state "
          "the same count, 39", n == (39, 39, 39, 39) and dry == index and
          "demo.toml, 39 runs of" in EPILOG, f"{n} {EPILOG[-300:]}")
    for name, only, want in OLD_CAMPAIGNS:
        try:
            got = [r.id for r in campaign.selected(
                load(os.path.join(SCRIPTS, "scenarios", name)), only)]
        except ScenarioError as e:
            got = [str(e)]
        check(f"{name}{' --only ' + only if only else ''}: exactly the run ids of the "
              "campaign run before it named its variants", got == want,
              f"{len(got)} ids, {len(want)} wanted; first differing: " +
              str(next(((a, b) for a, b in zip(got, want) if a != b), None)))

    # A campaign made before the scenario named its variants resumes: its
    # runs are complete under the same ids.
    name, only, want = OLD_CAMPAIGNS[0]
    old = os.path.join(tmp, "old-campaign")
    for rid in want:
        fake_complete_run(os.path.join(old, "c", rid))
    calls, real = [], campaign.execute
    campaign.execute = lambda spec, *a, **k: calls.append(spec.id) or fake_complete_run(
        os.path.join(old, "c", spec.id))
    try:
        log = tempfile.TemporaryFile("w+")
        campaign.run_campaign(load(os.path.join(SCRIPTS, "scenarios", name)), old, "c",
                              only=only, out=log)
        log.seek(0)
        text = log.read()
    except ScenarioError as e:
        text = str(e)
    finally:
        campaign.execute = real
    check(f"a campaign of {name} made before its variants had names resumes with "
          "nothing to do", calls == [] and "90 already complete, 0 to do" in text, text[:300])


def documented_commands(cli):
    """Every `scripts/vm-run ... -- scripts/sbpn-lab run ...` of the README,
    of Documentation/*.rst and of sbpn-lab's --help has a time limit that
    fits its runs: the output of `sbpn-lab timeout` with the same
    arguments, or at least that many seconds.  Shell variables set in the
    same block count."""
    from sbpnlab.cli import EPILOG
    texts = []
    # not results.rst and history.rst: their commands are records of what
    # was run, with the limits and scenario files of their day
    docs = [p for p in sorted(glob.glob(os.path.join(ROOT, "Documentation", "*.rst")))
            if os.path.basename(p) not in ("results.rst", "history.rst")]
    for path in [os.path.join(ROOT, "README")] + docs:
        with open(path, encoding="utf-8") as f:
            texts.append((os.path.relpath(path, ROOT), f.read()))
    texts.append(("sbpn-lab --help", EPILOG))
    found = 0
    for where, text in texts:
        text = text.replace("\\\n", " ")
        env = {}
        for line in text.splitlines():
            m = re.fullmatch(r"\s*(\w+)=(\S+)\s*", line)
            if m:
                env[m.group(1)] = m.group(2)
            m = re.search(r"scripts/vm-run (.*) -- +scripts/sbpn-lab run (.*)", line)
            if not m:
                continue
            found += 1
            # a variable not set in the block (a job array's task id) and
            # GNU parallel's {} stand for the first shard
            sub = lambda t: re.sub(r"\$(\w+)|\{\}", lambda v: env.get(v.group(1), "1"), t)  # noqa: E731
            args = sub(m.group(2))
            if args.count('"') % 2:  # the command is quoted for another program
                args = args[:args.rindex('"')]
            run_args = []
            for a in shlex.split(args):  # the shell's globbing of scenario files
                g = sorted(glob.glob(os.path.join(ROOT, a))) if a.endswith(".toml") else []
                run_args += [os.path.relpath(x, ROOT) for x in g] or [a]
            t = re.search(r"--timeout (\$\(scripts/sbpn-lab timeout ([^)]*)\)|\d+)",
                          m.group(1))
            fits = subprocess.run(cli + ["timeout"] + run_args, capture_output=True,
                                  text=True, cwd=ROOT)
            if t and t.group(2) is not None:
                ok = sorted(shlex.split(sub(t.group(2)))) == sorted(shlex.split(args))
            else:
                ok = (t is not None and fits.returncode == 0 and
                      int(t.group(1)) >= int(fits.stdout))
            check(f"{where}: {line.strip()[:60]}...: its time limit fits its runs", ok,
                  f"{line.strip()}\nsbpn-lab timeout {' '.join(run_args)}: "
                  f"{fits.stdout.strip()} {fits.stderr.strip()}")
    check("documented commands found in the README, Documentation and the --help", found >= 2, str(found))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        shipped = sorted(glob.glob(os.path.join(SCRIPTS, "scenarios", "*.toml")))
        for path in shipped:
            try:
                sc = load(path)
                check(f"loads {os.path.basename(path)}", sc.runs(), f"{len(sc.runs())} runs")
            except ScenarioError as e:
                check(f"loads {os.path.basename(path)}", False, str(e))
        check("demo.toml is shipped", any(p.endswith("/demo.toml") for p in shipped))
        # README's first experiment, as a reader would save it
        with open(os.path.join(ROOT, "README"), encoding="utf-8") as f:
            first = f.read().split("\nYour first experiment\n", 1)[-1].split("\nand run it", 1)[0]
        block = "\n".join(ln[4:] for ln in first.splitlines() if ln.startswith("    ") or not ln)
        mine = write(tmp, block.strip() + "\n", "my-call.toml")
        try:
            runs = len(load(mine).runs())
        except ScenarioError as e:
            runs = str(e)
        check("README's first experiment is a scenario: 2 variants x 2 repetitions", runs == 4,
              f"{runs}\n{block}")
        with open(os.path.join(ROOT, "Documentation", "testbed.rst"), encoding="utf-8") as f:
            listed = f.read().split("\nScenarios shipped\n", 1)[-1]
        unlisted = [os.path.basename(p) for p in shipped
                    if not re.search(rf"^{re.escape(os.path.basename(p))} ", listed, re.M) and
                    not any(re.fullmatch(g.replace("*", ".*"), os.path.basename(p)) for g in
                            re.findall(r"^``([\w*.-]+\*[\w*.-]*)``", listed, re.M))]
        check("testbed.rst's Scenarios shipped lists every shipped scenario", not unlisted,
              str(unlisted))
        texts = [open(p, encoding="utf-8").read() for p in shipped]
        mutations_fail_cleanly(tmp, texts)

        good = write(tmp, GOOD, "good.toml")
        sc = load(good)
        runs = sc.runs()
        check("sweep x repetitions = 3 x 2 x 2 runs", len(runs) == 12, f"{len(runs)} runs")
        check("run ids unique", len({r.id for r in runs}) == len(runs))
        check("run id names parameters and repetition",
              runs[0].id == "policy=simple,rtt_ms=30,rep=01", runs[0].id)
        campaign_resumes(tmp, good)
        campaign_refuses_another_length(tmp, good)
        campaign_shards_merge(tmp, good)
        jobs_auto(tmp, good)
        seeds = {(r.rep, r.seed) for r in runs}
        check("paired seeds: one seed per repetition, whatever the policy",
              seeds == {(1, 7), (2, 8)}, str(sorted(seeds)))
        check("repetition-major order", [r.rep for r in runs] == [1] * 6 + [2] * 6)
        udp = next(r for r in runs if r.point["policy"] == "udp")
        check("sweep policy udp moves every media flow to UDP",
              all(m["transport"] == "udp" for m in udp.config["media"]))
        s2 = next(r for r in runs if r.point == {"policy": "sbpn2", "rtt_ms": 150})
        check("sweep rtt_ms splits into the two one-way delays",
              s2.config["link"]["delay_fwd_ms"] == 75 and s2.config["link"]["delay_rev_ms"] == 75
              and all(m["policy"] == "sbpn2" for m in s2.config["media"]))
        check("sweep leaves the scenario's own config alone",
              sc.config["media"][1]["policy"] == "prio" and
              sc.config["link"]["delay_fwd_ms"] == 40)
        fr = load(write(tmp, GOOD.replace("rtt_ms = [30, 150]", "faster_restart = [false, true]"),
                        "fr.toml")).runs()
        on = [r for r in fr if r.point["faster_restart"]]
        check("sweep faster_restart turns it on for every media flow of half the runs",
              len(on) == 6 and all(m["faster_restart"] for r in on for m in r.config["media"])
              and not any(m["faster_restart"] for r in fr if r not in on
                          for m in r.config["media"]), f"{len(on)} of {len(fr)}")
        sp = load(write(tmp, GOOD.replace("rtt_ms = [30, 150]",
                                          "size_pacing = [false, true]\npredict = [false, true]"),
                        "sp.toml")).runs()
        labels = row_labels(sp)
        check("size_pacing and predict sweep; predict marks only the SBPN policies",
              labels == {"simple", "simple+sp", "sbpn2", "sbpn2+sp", "sbpn2+pd",
                         "sbpn2+sp+pd", "udp"}, str(sorted(labels)))
        lr = load(write(tmp, GOOD.replace("rtt_ms = [30, 150]",
                                          "last_rtt = [false, true]\nowd = [false, true]"),
                        "lr.toml")).runs()
        labels = row_labels(lr)
        iw = load(write(tmp, GOOD.replace("rtt_ms = [30, 150]", "initcwnd = [3, 32]").replace(
            "[[media]]", "[[short_tcp]]\ncount = 3\nsize_bytes = 1000\n\n"
            "[[short_tcp]]\ncount = 1\nsize_bytes = 99\ninitcwnd = 10\n\n[[media]]", 1),
            "iw.toml")).runs()
        check("sweep initcwnd sets every short-flow group",
              sorted({(r.point["initcwnd"], tuple(g["initcwnd"] for g in r.config["short_tcp"]))
                      for r in iw}) == [(3, (3, 3)), (32, (32, 32))],
              str([(r.id, r.config["short_tcp"]) for r in iw[:2]]))
        tf = load(write(tmp, GOOD.replace("rtt_ms = [30, 150]", "tcp_flows = [1, 4]").replace(
            "[[media]]", "[[tcp]]\ndirection = \"reverse\"\n\n[[media]]", 1), "tf.toml")).runs()
        check("sweep tcp_flows sets the flows of every [[tcp]] group",
              sorted({(r.point["tcp_flows"], tuple(g["flows"] for g in r.config["tcp"]))
                      for r in tf}) == [(1, (1, 1)), (4, (4, 4))] and
              tf[0].id == "policy=simple,tcp_flows=1,rep=01",
              str([(r.id, r.config["tcp"]) for r in tf[:2]]))
        check("last_rtt and owd sweeps mark only the SBPN policies",
              labels == {"simple", "sbpn2", "sbpn2+lr", "sbpn2+owd", "sbpn2+lr+owd", "udp"},
              str(sorted(labels)))
        # the key-frame loop: off (and absent from the config) by default;
        # a sweep over it reaches sbpn-send and sbpn-recv, notice over DCCP only
        kf = load(write(tmp, GOOD.replace("rtt_ms = [30, 150]",
                                          'keyframe_on_loss = [[], ["receiver", "notice"]]')
                        .replace('name = "a"', f'name = "a"\nmodel = "{GOP_MODEL}"')
                        .replace('name = "b"', f'name = "b"\nmodel = "{GOP_MODEL}"'),
                        "kf.toml")).runs()
        argv = {}
        for r in kf:
            recv, send = run_mod._media_argv(r.config["media"][0], 0, 1, 10, tmp)
            argv[r.id.rsplit(",rep=", 1)[0]] = (
                send[send.index("--keyframe-on-loss") + 1] if "--keyframe-on-loss" in send
                else None, "--keyframe-requests" in recv)
        check("sweep keyframe_on_loss: ids, sbpn-send's and sbpn-recv's flags",
              argv == {"policy=simple,keyframe_on_loss=none": (None, False),
                       "policy=simple,keyframe_on_loss=receiver+notice": ("receiver,notice", True),
                       "policy=sbpn2,keyframe_on_loss=none": (None, False),
                       "policy=sbpn2,keyframe_on_loss=receiver+notice": ("receiver,notice", True),
                       "policy=udp,keyframe_on_loss=none": (None, False),
                       "policy=udp,keyframe_on_loss=receiver+notice": ("receiver", True)},
              str(argv))
        # the loop is part of the row label, not of the setting: SIMPLE with
        # the receiver's loop pairs with SBPN2 with receiver + notice
        labels = row_labels(kf)
        params = {tuple(sorted((k, str(v)) for k, v in setting_of(r.point).items()))
                  for r in kf}
        check("keyframe_on_loss marks the row label (+kr, +kn), not the comparison key",
              labels == {"simple", "simple+kr+kn", "sbpn2", "sbpn2+kr+kn", "udp", "udp+kr"}
              and params == {()}, f"{sorted(labels)} {params}")
        check("keyframe_on_loss absent unless on (earlier configs unchanged)",
              not any("keyframe_on_loss" in m for m in sc.config["media"]) and
              load(write(tmp, GOOD.replace('name = "a"', f'name = "a"\nmodel = "{GOP_MODEL}"\n'
                                           'keyframe_on_loss = ["notice", "receiver"]'), "kf1.toml")
                   ).config["media"][0].get("keyframe_on_loss") == ["receiver", "notice"],
              "")
        check("keyframe_on_loss with a trace loads (its key marks)",
              load(write(tmp, GOOD.replace('name = "a"', 'name = "a"\nsource = "trace"\n'
                                           f'trace = "{ROOT}/userspace/tests/data/good.trace"\n'
                                           'keyframe_on_loss = ["receiver"]'), "kf2.toml")
                   ).config["media"][0].get("keyframe_on_loss") == ["receiver"], "")
        check("defaults filled in", sc.config["tcp"][0]["cc"] == "reno" and
              sc.config["tcp"][0]["write_bytes"] == 519 and
              sc.config["scenario"]["warmup_s"] == 3 and
              sc.config["media"][0]["lifetime_ms"] == 200 and
              sc.config["media"][0]["faster_restart"] is False and
              sc.config["media"][0]["silence_suppression"] is False)

        ranges(tmp)
        for name, text, want in BAD:
            path = write(tmp, text)
            try:
                load(path)
                check(f"refuses: {name}", False, "accepted")
            except ScenarioError as e:
                msg = str(e)
                miss = [w.replace("LINE", path) for w in want if w not in msg]
                check(f"refuses: {name}", msg.startswith(path) and not miss,
                      f"{msg} (missing {miss})" if miss else msg)
        try:
            load(os.path.join(tmp, "absent.toml"))
            check("refuses a missing file", False)
        except ScenarioError as e:
            check("refuses a missing file", "absent.toml" in str(e), str(e))

        link = {"rate": "1mbit", "schedule": {"kind": "square", "period_s": 4,
                                              "high": "2mbit", "low": "500kbit",
                                              "start_s": 0}}
        init, ch = schedule.changes(link, 10)
        check("square wave: high first, then low/high every half period",
              init == "2mbit" and ch == [(2.0, "500kbit"), (4.0, "2mbit"), (6.0, "500kbit"),
                                         (8.0, "2mbit")], f"{init} {ch}")
        link["schedule"] = {"kind": "step", "at_s": 5, "rate": "3mbit"}
        check("step", schedule.changes(link, 10) == ("1mbit", [(5.0, "3mbit")]))
        link["schedule"] = {"kind": "staircase", "start_s": 2, "step_s": 3,
                            "rates": ["1mbit", "2mbit", "3mbit", "4mbit"]}
        init, ch = schedule.changes(link, 10)
        check("staircase stops at the end of the run",
              init == "1mbit" and ch == [(2.0, "1mbit"), (5.0, "2mbit"), (8.0, "3mbit")],
              f"{init} {ch}")

        opts = netlink._tbf_options(1_000_000, 3000, 5)
        parms = struct.unpack_from("=BBHhHI12xIII", opts, 4)
        check("tbf netlink options: 125000 bytes/s, limit 5",
              parms[5] == 125000 and parms[6] == 5, str(parms))

        cli = [sys.executable, os.path.join(SCRIPTS, "sbpn-lab")]
        bad = write(tmp, BAD[1][1], "bad.toml")
        p = subprocess.run(cli + ["run", bad], capture_output=True, text=True)
        check("sbpn-lab run BAD exits 2 naming the field",
              p.returncode == 2 and "link.rate" in p.stderr, f"{p.returncode} {p.stderr!r}")
        p = subprocess.run(cli + ["run", good, "--dry-run", "--results", tmp],
                           capture_output=True, text=True)
        lines = p.stdout.splitlines()
        check("sbpn-lab run --dry-run lists every run",
              p.returncode == 0 and len(lines) == 12 and "t/policy=simple,rtt_ms=30,rep=01"
              in lines[0] and "not run" in lines[0], p.stdout[:200] + p.stderr)
        p = subprocess.run(cli + ["run", good, "--dry-run", "--only", "sbpn2.*rep=02$",
                                  "--results", tmp], capture_output=True, text=True)
        lines = p.stdout.splitlines()
        check("sbpn-lab run --dry-run --only lists the runs it would do",
              p.returncode == 0 and len(lines) == 2 and
              all("policy=sbpn2," in x and ",rep=02\t" in x for x in lines), p.stdout[:300])
        for extra in (["--dry-run"], []):
            p = subprocess.run(cli + ["run", good, "--only", "policy=nosuch", "--results", tmp]
                               + extra, capture_output=True, text=True)
            check(f"sbpn-lab run {' '.join(extra + ['--only'])} matching no run exits 2 "
                  "saying so", p.returncode == 2 and "--only: no run of t matches 'policy=nosuch'"
                  in p.stderr and "policy=simple,rtt_ms=30,rep=01" in p.stderr,
                  f"{p.returncode} {p.stdout[:200]!r} {p.stderr!r}")
        p = subprocess.run(cli + ["run", good, good.replace("good", "fr"), "--dry-run",
                                  "--only", "faster_restart", "--results", tmp],
                           capture_output=True, text=True)
        check("sbpn-lab run --only matching runs of one scenario of two: those, and a note "
              "on the other", p.returncode == 0 and len(p.stdout.splitlines()) == 12 and
              "note: --only: no run of t matches" in p.stderr, f"{p.returncode} {p.stderr!r}")
        p = subprocess.run(cli + ["run", good, "--shard", "3/3", "--dry-run", "--results", tmp],
                           capture_output=True, text=True)
        check("sbpn-lab run --shard with no repetition of its own exits 2 saying so",
              p.returncode == 2 and "no run of t" in p.stderr, f"{p.returncode} {p.stderr!r}")
        timeouts(cli, good, tmp)
        variants(tmp, cli)
        shipped_variants(tmp, cli)
        documented_commands(cli)
        many = write(tmp, GOOD.replace("repetitions = 2", "repetitions = 1000"), "many.toml")
        p = subprocess.Popen(cli + ["run", many, "--dry-run", "--results", tmp],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = p.stdout.readline()
        p.stdout.close()
        err = p.stderr.read()
        p.wait()
        check("sbpn-lab run --dry-run | head: no traceback when the reader leaves",
              ",rep=01\t" in first and p.returncode == 1 and err == "",
              f"{p.returncode} {first!r} {err[-300:]!r}")
        p = subprocess.run(cli + ["run", good, "--jobs", "0"], capture_output=True, text=True)
        check("sbpn-lab run --jobs 0 exits 2", p.returncode == 2, p.stderr)
        p = subprocess.run(cli + ["run", good, "--jobs", "many"], capture_output=True,
                           text=True)
        check("sbpn-lab run --jobs many exits 2 naming auto", p.returncode == 2 and
              "or auto" in p.stderr, p.stderr)
        p = subprocess.run(cli + ["report", "--help"], capture_output=True, text=True)
        check("sbpn-lab report: its help, or a clear 'unavailable' (exit 1)",
              (p.returncode == 0 and "usage: sbpn-lab report" in p.stdout) or
              (p.returncode == 1 and "report is unavailable" in p.stderr),
              f"{p.returncode} {p.stderr.strip()[:200]}")
        p = subprocess.run(cli + ["handshake", bad], capture_output=True, text=True)
        check("sbpn-lab handshake BAD exits 2 naming the field",
              p.returncode == 2 and "link.rate" in p.stderr, f"{p.returncode} {p.stderr!r}")
        p = subprocess.run(cli + ["handshake", good, "--only", "policy=nosuch"],
                           capture_output=True, text=True)
        check("sbpn-lab handshake --only matching no run exits 2 saying so",
              p.returncode == 2 and "no run of t matches" in p.stderr,
              f"{p.returncode} {p.stderr!r}")
        p = subprocess.run(cli + ["handshake", good, "--count", "0"],
                           capture_output=True, text=True)
        check("sbpn-lab handshake --count 0 exits 2", p.returncode == 2, p.stderr)
        p = subprocess.run(cli + ["list", os.path.join(SCRIPTS, "scenarios")],
                           capture_output=True, text=True)
        check("sbpn-lab list", p.returncode == 0 and "demo" in p.stdout, p.stdout + p.stderr)

    print("TAP version 13")
    print(f"1..{len(results)}")
    for n, (name, ok, diag) in enumerate(results, 1):
        if diag:
            for line in diag.splitlines():
                print(f"# {line}")
        print(f"{'ok' if ok else 'not ok'} {n} {name}")
    return 0 if all(ok for _, ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
