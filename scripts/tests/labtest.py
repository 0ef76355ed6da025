# SPDX-License-Identifier: GPL-2.0
"""What the in-VM tests of the testbed share: KTAP results and one run of a
scenario through `sbpn-lab run` (vm_testbed.py, vm_competing.py)."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LAB = os.path.join(ROOT, "scripts", "sbpn-lab")

results = []


def check(name, ok, diag=""):
    """Print one KTAP result (diagnostics first, as '# name: ...' lines)."""
    for line in str(diag).splitlines():
        print(f"# {name}: {line}")
    print(f"{'ok' if ok else 'not ok'} {len(results) + 1} {name}", flush=True)
    results.append(bool(ok))


def skip(name, why):
    """A KTAP result that was skipped, with the reason."""
    print(f"ok {len(results) + 1} {name} # SKIP {why}", flush=True)
    results.append(True)


def slow_kernel():
    """Why timing checks mean nothing on this kernel, or None."""
    if os.path.exists("/sys/kernel/debug/kmemleak"):
        return "debug kernel (kmemleak, KASAN): speed is not the testbed's"
    return None


def start(plan):
    """The KTAP header and plan; exit 4 (skip) unless this is root in a
    guest with our built tools."""
    print("TAP version 13")
    why = None
    if os.geteuid() != 0:
        why = "needs root (run it in the VM)"
    elif not all(os.access(os.path.join(ROOT, "userspace", "bin", t), os.X_OK)
                 for t in ("sbpn-send", "sbpn-recv", "sbpn-bulk")):
        why = "userspace/bin/sbpn-send, sbpn-recv or sbpn-bulk missing (make)"
    if why:
        print(f"1..0 # SKIP {why}")
        sys.exit(4)
    print(f"1..{plan}")


def run(tmp, out, name, scenario):
    """Run the scenario text (named name) with one repetition into out;
    check that it completed; return (run directory, meta)."""
    path = os.path.join(tmp, f"{name}.toml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(scenario)
    p = subprocess.run([sys.executable, LAB, "run", path, "--results", out],
                       capture_output=True, text=True)
    rdir = os.path.join(out, name, "rep=01")
    try:
        with open(os.path.join(rdir, "meta.json"), encoding="utf-8") as f:
            meta = json.load(f)
    except (OSError, ValueError):
        meta = {"status": "missing", "reason": p.stderr.strip()[-300:]}
    check(f"{name}: run complete", p.returncode == 0 and meta["status"] == "complete",
          f"exit {p.returncode}, status {meta['status']}, reason {meta.get('reason')}")
    return rdir, meta


def checked(name, fn, rdir, meta, n):
    """fn(rdir, meta) makes n checks; if the run failed or its files cannot
    be read, the checks it could not make fail instead."""
    if meta["status"] != "complete":
        for _ in range(n):
            check(f"{name}: not checked, the run failed", False)
        return
    before = len(results)
    try:
        fn(rdir, meta)
    except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
        for _ in range(n - (len(results) - before)):
            check(f"{name}: results readable", False, f"{type(e).__name__}: {e}")


def qdisc_drops(qdisc_stats, kind, path):
    """Packets dropped by the first qdisc of kind on the forward (path 0,
    r-d) or reverse (path 1, r-s) path, from meta.json's qdisc_stats: the
    `tc -s qdisc show dev` text of r-d, then of r-s, each starting with its
    root netem.  None if there is no such qdisc."""
    blocks, lines = [], qdisc_stats.splitlines()
    for line in lines:
        if line.startswith("qdisc netem 1: root"):
            blocks.append([])
        if blocks:
            blocks[-1].append(line)
    if path >= len(blocks):
        return None
    block = blocks[path]
    for i, line in enumerate(block):
        if line.startswith(f"qdisc {kind} "):
            for stat in block[i + 1:i + 3]:
                if "dropped " in stat:
                    return int(stat.split("dropped ")[1].split(",")[0])
    return None
