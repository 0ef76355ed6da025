#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of the TCP-friendliness summariser (sbpnlab.friendliness); KTAP.

The normalised throughput is checked against numbers worked by hand, on
rows and on small synthetic campaigns read through the report's loaders,
with values chosen so that each plausible wrong version gives another
number: the TCP flows' goodput summed instead of averaged per flow (half
the ratio with two flows), the ratio of the means over runs instead of the
mean of the runs' ratios (1.38 where 1.50), the DCCP bytes sent instead of
those received (80 kbit/s where 60) and the warm-up counted (DCCP 128
kbit/s, TCP 48, where 60 and 60).
Run with the venv: scripts/venv.sh && .venv/bin/python scripts/tests/test_friendliness.py
Exit 1 if any test failed.
"""
import argparse
import contextlib
import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, SCRIPTS)
import ktap  # noqa: E402 - beside this file
try:
    from sbpnlab import friendliness
except ImportError as e:
    print(f"Bail out! {e}: run scripts/venv.sh, then .venv/bin/python {sys.argv[0]}")
    sys.exit(1)

TMP = tempfile.mkdtemp(prefix="sbpn-friendliness.")
test, tests = ktap.collector()
check = ktap.check


def close(a, b, tol=1e-6):
    return abs(a - b) <= tol


# ---- a synthetic run ----------------------------------------------------------
#
# 10 s, warm-up 2 s.  The DCCP sender plans one packet every 20 ms: during
# the warm-up 100 packets of 1000 bytes, all received; after it 400 of 200
# bytes, all sent, every fourth lost.  Received after the warm-up: 300 x 200
# B over 8.0 s (2.0 s to the last packet at 9.98 s + 20 ms) = 60 kbit/s;
# sent 80 kbit/s; with the warm-up, (100 x 1000 + 300 x 200) B / 10 s = 128
# kbit/s.  Each TCP flow (sbpn-bulk records every 0.5 s) acknowledges
# nothing during the warm-up and a constant rate after it: counted from 0,
# its mean over the window is 0.8 of that rate.

DURATION_S, WARMUP_S, T0 = 10, 2, 50_000_000_000


def send_lines():
    lines = ["# sbpn-records 1", "# role: send", "# flow: call", "# transport: dccp",
             f"# start_ns: {T0}",
             "seq\tclass\tsize\tprio\tplanned_ns\tsent_ns\texpiry_ns\tresult"]
    for i in range(500):
        ns = T0 + i * 20_000_000
        size = 1000 if i < 100 else 200
        lines.append(f"{i}\taudio\t{size}\t2\t{ns}\t{ns}\t{ns + 200_000_000}\tok")
    return "\n".join(lines + ["# complete: 1", ""])


def recv_lines():
    lines = ["# sbpn-records 1", "# role: recv", "# flow: call", "# transport: dccp",
             f"# start_ns: {T0}", "seq\tclass\tsize\tsent_ns\trecv_ns"]
    for i in range(500):
        if i >= 100 and i % 4 == 0:
            continue                        # lost
        ns = T0 + i * 20_000_000
        lines.append(f"{i}\taudio\t{1000 if i < 100 else 200}\t{ns}\t{ns + 40_000_000}")
    return "\n".join(lines + ["# complete: 1", ""])


def bulk_lines(kbps):
    """sbpn-bulk records of a flow acknowledging kbps from 2 s to 10 s."""
    lines = ["# sbpn-tcp 1", "# role: send",
             "t_ns\tbytes_written\tbytes_acked\trtt_us\tmin_rtt_us\tcwnd\tretrans"]
    for k in range(21):
        acked = max(0, k - 4) * round(kbps * 1000 / 8 * 0.5)
        lines.append(f"{T0 + k * 500_000_000}\t{acked}\t{acked}\t80000\t80000\t10\t0")
    return "\n".join(lines + ["# complete: 1", ""])


def write_run(camp, rep, tcp_kbps, size_pacing=False, queue=("queue_packets", 20),
              mss=1460, rtt_ms=80, version="0b09ff7", status="complete"):
    """One run directory of campaign camp: the DCCP flow above and one
    forward Reno flow per entry of tcp_kbps."""
    run_id = (f"policy=sbpn2,size_pacing={size_pacing},tcp_flows={len(tcp_kbps)},"
              f"rtt_ms={rtt_ms},rep={rep:02d}")
    d = os.path.join(camp, run_id)
    os.makedirs(d)
    for name, text in (("media-call.send.rec", send_lines()),
                       ("media-call.recv.rec", recv_lines())):
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
    for i, kbps in enumerate(tcp_kbps):
        with open(os.path.join(d, f"tcp-{i}.rec"), "w") as f:
            f.write(bulk_lines(kbps))
    media = {"name": "call", "source": "ekiga", "transport": "dccp", "policy": "sbpn2",
             "ccid": 3, "tx_qlen": 5, "lifetime_ms": 200, "start_s": 0,
             "size_pacing": size_pacing}
    link = {"rate": "1mbit", "delay_fwd_ms": rtt_ms / 2, "delay_rev_ms": rtt_ms / 2,
            "shaper": "tbf", queue[0]: queue[1]}
    meta = {"format": 1, "run_id": run_id, "status": status,
            "reason": None if status == "complete" else "media-call.send exited 1",
            "params": {"policy": "sbpn2", "size_pacing": size_pacing,
                       "tcp_flows": len(tcp_kbps), "rtt_ms": rtt_ms},
            "repetition": rep, "seed": rep, "t0_ns": T0,
            "kernel": "6.1.0-56-amd64", "dccp_version": version,
            "config": {"scenario": {"name": os.path.basename(camp), "duration_s": DURATION_S,
                                    "warmup_s": WARMUP_S},
                       "link": link, "media": [media], "short_tcp": [],
                       "tcp": [{"flows": len(tcp_kbps), "cc": "reno", "direction": "forward",
                                "write_bytes": 1448, "mss": mss}]},
            "link": {"initial_rate": "1mbit", "changes": []},
            "tcp": [{"started_s": 0.0} for _ in tcp_kbps]}
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f)
    return d


def campaigns():
    """Two campaigns, written once.  fr: three runs of SBPN2 with size
    pacing off whose two Reno flows got 40 + 20, 60 + 60 and 50 + 30
    kbit/s (normalised 60/30 = 2.0, 60/60 = 1.0, 60/40 = 1.5), one with it
    on (2.0), one at a byte queue with MSS 531 and four flows of 15 kbit/s
    (60/15 = 4.0), and a failed run.  fr-v2: two runs with size pacing on
    over the old modules (2.0 and 1.0), and one over ours by mistake (its
    version has no +v2- mark), which must be left out."""
    root = os.path.join(TMP, "results")
    if os.path.isdir(root):
        return root
    camp, v2 = os.path.join(root, "fr"), os.path.join(root, "fr-v2")
    for rep, tcp in ((1, (40, 20)), (2, (60, 60)), (3, (50, 30))):
        write_run(camp, rep, tcp)
    write_run(camp, 1, (40, 20), size_pacing=True)
    write_run(camp, 1, (15, 15, 15, 15), queue=("queue_bytes", 12500), mss=531)
    write_run(camp, 4, (40, 20), status="failed")
    for rep, tcp in ((1, (40, 20)), (2, (60, 60))):
        write_run(v2, rep, tcp, size_pacing=True, version="0b09ff7+v2-f5e84ea")
    write_run(v2, 3, (50, 30), size_pacing=True)
    return root


def run_summariser(*argv):
    """(exit status, stdout, stderr) of `sbpn-lab friendliness argv...`."""
    p = argparse.ArgumentParser()
    friendliness.add_arguments(p)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = friendliness.run(p.parse_args(list(argv)))
    return rc, out.getvalue(), err.getvalue()


def summarised():
    """The summariser run once over both campaigns: (rc, stdout, stderr,
    {(run id, campaign): friendliness-runs.csv row}, friendliness.csv rows)."""
    root = campaigns()
    out = os.path.join(TMP, "out")
    if not os.path.isdir(out):
        summarised.result = run_summariser(
            "--out", out, os.path.join(root, "fr"),
            os.path.join(root, "fr-v2"))
    rc, text, err = summarised.result
    with open(os.path.join(out, "friendliness-runs.csv")) as f:
        runs = {(r["run"], r["campaign"]): r for r in csv.DictReader(f)}
    with open(os.path.join(out, "friendliness.csv")) as f:
        cells = list(csv.DictReader(f))
    return rc, text, err, runs, cells


RUN1 = "policy=sbpn2,size_pacing=False,tcp_flows=2,rtt_ms=80,rep=01"


# ---- the metric on numbers worked by hand ------------------------------------

@test
def normalised_divides_by_the_mean_flow():
    # 60 kbit/s against two flows that got 60 together: each got 30, and
    # the DCCP flow twice that.  Summed, the TCP flows would give 1.0.
    check(close(friendliness.normalised(60, 60, 2), 2.0),
          f"60 / (60 / 2) = {friendliness.normalised(60, 60, 2)}, want 2.0")
    # A fair share is 1 whatever the number of flows.
    check(close(friendliness.normalised(25, 100, 4), 1.0) and
          close(friendliness.normalised(50, 50, 1), 1.0), "a fair share is 1")


@test
def mean_of_the_runs_ratios():
    # Three runs, DCCP 60 kbit/s each, TCP per flow 30, 60, 40: ratios 2.0,
    # 1.0, 1.5, mean 1.5, s = 0.5, half width t(0.975, 2) 0.5 / sqrt 3 =
    # 4.302653 * 0.288675 = 1.242069.  The ratio of the means would be
    # 60 / 43.33 = 1.3846.
    samples = [{"kind": "packets", "link": "1mbit 20 pkt", "mss": "1460", "flows": 2,
                "rtt_ms": 80.0, "controller": "unmodified", "policy": "sbpn2",
                "dccp_kbps": 60, "tcp_kbps": tcp,
                "normalised": friendliness.normalised(60, tcp, 2)}
               for tcp in (60, 120, 80)]
    (s,) = friendliness.summarise(samples).values()
    check(s["n"] == 3 and close(s["mean"], 1.5) and close(s["ci"], 1.242069),
          f"summary {s}, want n 3, mean 1.5, ci 1.242069")
    check(friendliness.mean_ci_n(s) == "1.50 ±1.24 (3)", friendliness.mean_ci_n(s))


@test
def controller_from_campaign_and_flags():
    cases = {("fr", "sbpn2"): ("unmodified", "sbpn2"),
             ("fr", "simple+sp"): ("new", "simple"),
             ("fr-v2", "sbpn2+sp"): ("v2", "sbpn2"),
             ("fr-v2", "sbpn2"): ("unmodified, v2 modules", "sbpn2"),
             ("fr", "sbpn2+sp+pd"): ("new", "sbpn2+pd")}
    for (campaign, label), want in cases.items():
        got = friendliness.controller(campaign, label)
        check(got == want, f"{campaign} {label}: {got}, want {want}")


# ---- through the loaders ------------------------------------------------------

@test
def dccp_rate_is_received_payload_after_warmup():
    rc, text, err, runs, _ = summarised()
    check(rc == 0, f"rc {rc}: {err}")
    r = runs[RUN1, "fr"]
    # 60 received; 80 if sent were counted, 128 with the warm-up
    check(close(float(r["dccp_kbps"]), 60), f"DCCP {r['dccp_kbps']} kbit/s, want 60")


@test
def tcp_goodput_after_warmup():
    rc, text, err, runs, _ = summarised()
    r = runs[RUN1, "fr"]
    # 40 + 20 after the warm-up; from 0, 0.8 of that (48)
    check(close(float(r["tcp_kbps"]), 60) and r["flows"] == "2",
          f"TCP {r['tcp_kbps']} kbit/s over {r['flows']} flows, want 60 over 2")
    check(close(float(r["normalised"]), 2.0), f"normalised {r['normalised']}, want 2.0")


@test
def table_of_cells_and_columns():
    rc, text, err, runs, cells = summarised()
    lines = [re.split(r"\s{2,}", x.strip()) for x in text.splitlines()]
    head = next(i for i, x in enumerate(lines) if x[0] == "bottleneck")
    check(lines[head][4:] == ["unmodified sbpn2", "new sbpn2", "v2 sbpn2"],
          f"columns {lines[head]}:\n{text}")
    rows = lines[head + 1:head + 3]
    # per-packet queue first; unmodified 2.0, 1.0, 1.5; new 2.0 (one run);
    # v2 2.0 and 1.0: 1.5, s = 0.7071, t(0.975, 1) 12.706 * 0.5 = 6.35
    want = [["1mbit 20 pkt", "1460", "2", "80", "1.50 ±1.24 (3)", "2.00 (1)",
             "1.50 ±6.35 (2)"],
            ["1mbit 12500 B", "531", "4", "80", "4.00 (1)", "-", "-"]]
    check(rows == want, f"rows {rows}, want {want}:\n{text}")
    got = {(c["link"], c["controller"]): c for c in cells}
    c = got["1mbit 20 pkt", "unmodified"]
    check(c["n"] == "3" and close(float(c["mean"]), 1.5) and
          close(float(c["ci95"]), 1.242069) and c["reno_mss"] == "1460",
          f"friendliness.csv {c}")
    check(len(cells) == 4, f"{len(cells)} rows in friendliness.csv, want 4")


@test
def unusable_runs_and_module_versions():
    rc, text, err, runs, _ = summarised()
    check("fr/policy=sbpn2,size_pacing=False,tcp_flows=2,rtt_ms=80,rep=04: "
          "failed" in text, f"the failed run is listed:\n{text}")
    check("fr-v2/policy=sbpn2,size_pacing=True,tcp_flows=2,rtt_ms=80,rep=03: "
          "modules 0b09ff7, but the campaign's name says the old modules" in text,
          f"a -v2 run over our modules is left out, with the reason:\n{text}")
    check("v2: modules 0b09ff7+v2-f5e84ea on Linux 6.1.0-56-amd64 (2 runs)" in text,
          f"provenance:\n{text}")


@test
def bad_input():
    rc, text, err = run_summariser(os.path.join(TMP, "nowhere"))
    check(rc == 2 and "not a directory" in err, f"missing dir: rc {rc}, {err}")
    empty = os.path.join(TMP, "empty")
    os.makedirs(empty, exist_ok=True)
    rc, text, err = run_summariser("--out", TMP, empty)
    check(rc == 1 and "No usable run" in text, f"empty campaign: rc {rc}, {text}")


@test
def cli_friendliness():
    # The runner's command line hands `friendliness` to this module.
    root = campaigns()
    p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "sbpn-lab"), "friendliness",
                        "--out", os.path.join(TMP, "cli"),
                        os.path.join(root, "fr")],
                       capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    check(p.returncode == 0 and "1.50 ±1.24 (3)" in p.stdout,
          f"rc {p.returncode}: {p.stdout}{p.stderr}")


def main():
    return ktap.main(tests, TMP)


if __name__ == "__main__":
    sys.exit(main())
