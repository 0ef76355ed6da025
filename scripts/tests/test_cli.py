#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of the command lines' edges (KTAP): what sbpn-lab and vm-run
do when there is nothing to do, or not the environment to do it in.

  - `sbpn-lab report` of a campaign without a complete run says so, exits
    1 and writes nothing (no empty summary files that look like a report);
  - `sbpn-lab report --help` prints its options where the analysis cannot
    be imported (no .venv: numpy, scipy, matplotlib missing), exit 0;
  - `scripts/vm-run --help` prints its usage before the kernel inputs
    exist (before the first make), exit 0;
  - `scripts/vm-run` refuses an empty, non-numeric or zero --timeout and
    an option without its value, exit 2, before anything boots;
  - the Makefile's campaigns end when `sbpn-lab timeout` fails.

Run with the venv (the report needs numpy): scripts/venv.sh &&
.venv/bin/python scripts/tests/test_cli.py.  Needs no root and no VM.
Exit 0 all passed, 1 a test failed.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
LAB = os.path.join(SCRIPTS, "sbpn-lab")
VM_RUN = os.path.join(SCRIPTS, "vm-run")
results = []

# Runs sbpn-lab's main() with numpy, scipy and matplotlib impossible to
# import, as under a python3 without the venv's packages.
NO_ANALYSIS = """\
import importlib.abc, sys
class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("numpy", "scipy", "matplotlib"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Absent())
sys.path.insert(0, sys.argv[1])
from sbpnlab.cli import main
sys.exit(main(sys.argv[2:]))
"""


def check(name, ok, diag=""):
    for line in str(diag).splitlines():
        print(f"# {line}")
    results.append(bool(ok))
    print(f"{'ok' if ok else 'not ok'} {len(results)} {name}", flush=True)


def lab(*argv, python=sys.executable):
    return subprocess.run([python, LAB, *argv], capture_output=True, text=True)


def report_without_complete_runs(tmp):
    """A campaign just started: campaign.json lists two runs, one has
    begun (records, no meta.json), the other has no directory."""
    camp = os.path.join(tmp, "started")
    os.makedirs(os.path.join(camp, "policy=simple,rep=01"))
    with open(os.path.join(camp, "policy=simple,rep=01", "media-a.send.csv"), "w") as f:
        f.write("seq\n")
    with open(os.path.join(camp, "campaign.json"), "w") as f:
        json.dump({"format": 1, "runs": ["policy=simple,rep=01", "policy=sbpn2,rep=01"]}, f)
    p = lab("report", camp, "--no-figures")
    out = p.stdout + p.stderr
    check("report of a campaign without a complete run exits 1 saying so",
          p.returncode == 1 and f"no complete run in {camp}" in out.lower(),
          f"exit {p.returncode}\n{out[-600:]}")
    check("... lists the runs it could not use", "policy=simple,rep=01: incomplete" in out
          and "policy=sbpn2,rep=01: not run" in out, out[-600:])
    made = os.path.join(camp, "report")
    check("... and writes nothing", not os.path.exists(made),
          f"{made}: {sorted(os.listdir(made)) if os.path.isdir(made) else 'exists'}")
    empty = os.path.join(tmp, "empty")
    os.makedirs(empty)
    p = lab("report", empty, "--no-figures", "--out", os.path.join(tmp, "out"))
    check("report of an empty directory exits 1, nothing written to --out",
          p.returncode == 1 and not os.path.exists(os.path.join(tmp, "out")),
          f"exit {p.returncode}\n{(p.stdout + p.stderr)[-400:]}")


def help_without_analysis():
    for cmd, option in (("report", "--jitter-buffer-ms"), ("compare", "compared with"),
                        ("decide-sim", "--help")):
        p = subprocess.run([sys.executable, "-c", NO_ANALYSIS, SCRIPTS, cmd, "--help"],
                           capture_output=True, text=True)
        check(f"{cmd} --help without the analysis' packages: its options, exit 0",
              p.returncode == 0 and f"usage: sbpn-lab {cmd}" in p.stdout and option in p.stdout
              and "scripts/venv.sh" in p.stdout,
              f"exit {p.returncode}\n{p.stdout[-300:]}{p.stderr[-400:]}")
    p = subprocess.run([sys.executable, "-c", NO_ANALYSIS, SCRIPTS, "report", "/nonexistent"],
                       capture_output=True, text=True)
    check("report without the analysis' packages still exits 1 naming scripts/venv.sh",
          p.returncode == 1 and "scripts/venv.sh" in p.stderr, f"exit {p.returncode} {p.stderr}")


def vm_run_help():
    # KVER=9.9: a target without kernel inputs, as before the first make
    env = dict(os.environ, KVER="9.9")
    p = subprocess.run([VM_RUN, "--help"], capture_output=True, text=True, env=env)
    check("vm-run --help before make: its usage, exit 0",
          p.returncode == 0 and "--timeout" in p.stdout and "CMD" in p.stdout,
          f"exit {p.returncode}\n{p.stdout[-300:]}{p.stderr[-300:]}")
    p = subprocess.run([VM_RUN, "--bogus"], capture_output=True, text=True, env=env)
    check("vm-run with a bad option: its usage on stderr, exit 2",
          p.returncode == 2 and "--timeout" in p.stderr, f"exit {p.returncode}\n{p.stderr}")


def vm_run_argument_checks(vm_run=VM_RUN):
    """vm-run refuses a time limit that is empty, not a number or zero, and
    an option without its value, before the target is read (KVER=9.9 has
    no kernel inputs: a check that let one through could not boot)."""
    env = dict(os.environ, KVER="9.9")
    for args, says in ((["--timeout", ""], "--timeout '': expected seconds"),
                       (["--timeout", "abc"], "--timeout 'abc': expected seconds"),
                       (["--timeout", "0"], "--timeout '0': expected seconds"),
                       (["--timeout", "-5"], "--timeout '-5': expected seconds"),
                       # an empty $(sbpn-lab timeout) before --out
                       (["--timeout", "--out"], "--timeout '--out': expected seconds")):
        p = subprocess.run([vm_run, *args, "--", "true"], capture_output=True, text=True,
                           env=env, timeout=60)
        ok = p.returncode == 2 and says in p.stderr
        check(f"vm-run {' '.join(repr(a) for a in args)} -- true: exit 2 saying why", ok,
              "" if ok else f"exit {p.returncode}\n{p.stderr[-400:]}")
    for opt in ("--timeout", "--out", "--mem", "--cpus"):
        p = subprocess.run([vm_run, "--cpus", "1", opt], capture_output=True, text=True,
                           env=env, timeout=60)
        ok = p.returncode == 2 and "--timeout SEC" in p.stderr
        check(f"vm-run {opt} without a value: its usage on stderr, exit 2", ok,
              "" if ok else f"exit {p.returncode}\n{p.stderr[-400:]}")


def makefile_timeouts():
    """The Makefile's campaigns take vm-run's time limit from sbpn-lab
    timeout set apart (t=$$(...) && vm-run --timeout $$t): inside vm-run's
    arguments a failing sbpn-lab timeout (exit 2: ONLY matches no run)
    left --timeout empty and vm-run took the next option as its value."""
    with open(os.path.join(os.path.dirname(SCRIPTS), "Makefile"), encoding="utf-8") as f:
        text = f.read().replace("\\\n", " ")
    inline = [line.strip()[:80] for line in text.splitlines()
              if "--timeout $$(scripts/sbpn-lab timeout" in line]
    apart = [line for line in text.splitlines()
             if "t=$$(scripts/sbpn-lab timeout" in line and "&&" in line and
             ("vm-run --timeout $$t " in line or "vm-run --timeout $$((t + v)) " in line)]
    ok = not inline and len(apart) == 4
    check("Makefile: sbpn-lab timeout's failure ends the recipe (t=$$(...) && vm-run)", ok,
          "" if ok else "\n".join(inline) + f"\n{len(apart)} set apart, want 4")


MY_CALL = """\
[scenario]
name = "my-call"
duration_s = 20
repetitions = 2
[link]
rate = "1mbit"
delay_fwd_ms = 40
delay_rev_ms = 40
[[media]]
name = "call"
source = "ekiga"
transport = "dccp"
  model = '../models/mine.model'
[[media]]
name = "voice"
source = "cbr"
transport = "udp"
model = "cbr"
[[variant]]
name = "simple"
policy = "simple"
[[variant]]
name = "sbpn2"
policy = "sbpn2"
"""
# vm-run's stand-in: it writes its arguments down, then runs the command
# after -- with --dry-run (the host has no DCCP)
FAKE_VM_RUN = """\
#!/bin/bash
echo "$@" >"$FAKE_LOG"
while [ "$1" != "--" ]; do shift; done
shift
"$@" --dry-run
"""


def try_stages_runs_and_reports(tmp):
    """sbpn-lab try of a scenario in a directory of its own, naming a model
    beside it by a relative path and a shipped one by its name: staged
    into RESULTS/.scenarios/NAME with both models, the copy naming them by
    their new place, the original untouched; vm-run given a time limit,
    RESULTS as --out and `sbpn-lab run` of the staged copy into RESULTS;
    then the report, of a campaign the stand-in never made: its exit
    status, 2.  A scenario with an error: exit 2 naming its line, no VM."""
    home = os.path.join(tmp, "home")
    os.makedirs(os.path.join(tmp, "models"))
    os.makedirs(home)
    shutil.copyfile(os.path.join(os.path.dirname(SCRIPTS), "userspace", "models",
                                 "ekiga.model"), os.path.join(tmp, "models", "mine.model"))
    scenario = os.path.join(home, "my-call.toml")
    with open(scenario, "w", encoding="utf-8") as f:
        f.write(MY_CALL)
    fake = os.path.join(tmp, "vm-run")
    with open(fake, "w", encoding="utf-8") as f:
        f.write(FAKE_VM_RUN)
    os.chmod(fake, 0o755)
    res, log = os.path.join(tmp, "res"), os.path.join(tmp, "vm-run.log")
    env = dict(os.environ, VM_RUN=fake, FAKE_LOG=log)
    p = subprocess.run([sys.executable, LAB, "try", scenario, "--results", res], cwd=home,
                       capture_output=True, text=True, env=env)
    staged = os.path.join(res, ".scenarios", "my-call")
    try:
        with open(os.path.join(staged, "scenario.toml"), encoding="utf-8") as f:
            copy = f.read()
        with open(log, encoding="utf-8") as f:
            argv = f.read().split()
    except OSError as e:
        copy, argv = str(e), []
    want = ["--out", res, "--", LAB, "run", os.path.join(staged, "scenario.toml"),
            "--results", res, "--jobs", "1"]
    check("sbpn-lab try stages the scenario and the models it names beside it",
          sorted(os.listdir(staged)) == ["cbr.model", "mine.model", "scenario.toml"] and
          "  model = \"mine.model\"" in copy and 'model = "cbr.model"' in copy and
          open(scenario, encoding="utf-8").read() == MY_CALL, f"{os.listdir(staged)}\n{copy}")
    check("... runs the copy in the VM with a time limit, into RESULTS",
          argv[:1] == ["--timeout"] and argv[1].isdigit() and argv[2:] == want,
          f"{argv}\n{p.stderr[-600:]}")
    check("... then reports it, with the report's status (the stand-in made nothing: 2)",
          p.returncode == 2 and "my-call/policy=sbpn2,rep=02" in p.stdout and
          f"sbpn-lab report: {os.path.join(res, 'my-call')}: not a directory" in p.stderr,
          f"exit {p.returncode}\n{p.stderr[-600:]}")
    with open(scenario, "w", encoding="utf-8") as f:
        f.write(MY_CALL.replace('rate = "1mbit"', 'rate = "fast"'))
    os.remove(log)
    p = subprocess.run([sys.executable, LAB, "try", scenario, "--results", res],
                       capture_output=True, text=True, env=env)
    check("sbpn-lab try of a scenario with an error: exit 2 naming it, no VM",
          p.returncode == 2 and "my-call.toml:6: field 'link.rate'" in p.stderr and
          not os.path.exists(log), f"exit {p.returncode}\n{p.stderr[-600:]}")


def shipped_example(tmp):
    """The example campaigns shipped in Documentation/results/example.tar.xz
    report and compare as make example does, on a fresh clone: no build,
    no VM.  The report finds SBPN2 against SIMPLE over its two pairs and
    draws its figures; compare pairs the four runs the two campaigns (one
    and four at a time) share and draws them on one axis."""
    tar = os.path.join(os.path.dirname(SCRIPTS), "Documentation", "results", "example.tar.xz")
    p = subprocess.run(["tar", "-xJf", tar, "-C", tmp], capture_output=True, text=True)
    one, four = (os.path.join(tmp, j, "example") for j in ("jobs1", "jobs4"))
    check("the example campaigns unpack", p.returncode == 0 and os.path.isdir(one) and
          os.path.isdir(four), p.stderr)
    p = lab("report", one)
    figures = os.path.join(one, "report", "figures")
    check("report of the shipped example: its finding and figures",
          p.returncode == 0 and "Finding (example flow call): sbpn2 against simple, 2 runs"
          in p.stdout and os.path.isfile(os.path.join(figures, "example_flow_call-delivery.png")),
          f"exit {p.returncode}\n{p.stdout[:400]}\n{p.stderr[-400:]}")
    p = lab("compare", one, four, "--figures", os.path.join(tmp, "cmp"))
    check("compare of the shipped examples: 4 pairs, drawn on one axis",
          p.returncode == 0 and "\nall     4 " in p.stdout and
          os.path.isfile(os.path.join(tmp, "cmp", "compare.png")),
          f"exit {p.returncode}\n{p.stdout[-600:]}\n{p.stderr[-400:]}")


def main():
    print("TAP version 13")
    print("1..27")
    with tempfile.TemporaryDirectory() as tmp:
        report_without_complete_runs(tmp)
    with tempfile.TemporaryDirectory() as tmp:
        try_stages_runs_and_reports(tmp)
    with tempfile.TemporaryDirectory() as tmp:
        shipped_example(tmp)
    help_without_analysis()
    vm_run_help()
    vm_run_argument_checks()
    makefile_timeouts()
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
