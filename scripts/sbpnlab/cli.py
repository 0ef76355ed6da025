# SPDX-License-Identifier: GPL-2.0
"""Command line of the experiment runner: scripts/sbpn-lab.

  sbpn-lab list [DIR]             the scenarios in DIR (scripts/scenarios)
  sbpn-lab run SCENARIO... [opts] every run of each scenario (inside the VM)
  sbpn-lab try SCENARIO [opts]    stage it, run it in the VM, report it (host)
  sbpn-lab timeout SCENARIO... [opts]  vm-run's --timeout for that run
  sbpn-lab merge DEST SRC...      one campaign from its shards (run --shard)
  sbpn-lab handshake SCENARIO     DCCP handshake times over its path (in the VM)
  sbpn-lab report ...             tables and plots (sbpnlab.report)
  sbpn-lab decide CAMPAIGN        where a sequential decision stands (sbpnlab.decide)
  sbpn-lab decide-sim             its error rates and runs saved, simulated
                                  (sbpnlab.decidesim)
  sbpn-lab compare A B            B minus A, run by run (sbpnlab.compare)
  sbpn-lab friendliness DIR...    normalised throughput of the TCP-friendliness
                                  benchmark's campaigns (sbpnlab.friendliness)

Exit status: 0 ok, 1 a run failed (or report failed), 2 bad input.
"""
import argparse
import concurrent.futures
import glob
import importlib
import importlib.abc
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import types

from . import autojobs, hostlook, resultstable
from .campaign import (RUN_OVERHEAD_S, VENV_PYTHON, VM_SLACK_S, OtherLength, Slots, _fmt_s,
                       analyse_in_venv, analyse_on_host, decide_command, estimate_s, matches,
                       merge_campaigns, parse_shard, run_campaign, run_decided,
                       run_status, selected, vm_timeout_s)
from .sequential import looks as decide_looks, settings as decide_settings
from .run import BIN, ROOT
from .scenario import ScenarioError, load, stage

HERE = os.path.dirname(os.path.abspath(__file__))
LAB = os.path.join(ROOT, "scripts", "sbpn-lab")
SCENARIO_DIR = os.path.normpath(os.path.join(HERE, "..", "scenarios"))
EPILOG = """\
The runs are the scenario's [[variant]] tables (what it compares) at each
point of its [sweep] table's cross product (the settings), times the
repetitions, each in RESULTS/CAMPAIGN/RUN-ID/ (layout in
Documentation/results-format.rst; scenario format in
Documentation/testbed.rst).  Runs need DCCP, so they happen in the VM:

  scripts/vm-run --timeout $(scripts/sbpn-lab timeout scripts/scenarios/demo.toml) \\
      --out results -- scripts/sbpn-lab run scripts/scenarios/demo.toml

`sbpn-lab timeout` takes run's scenarios, --jobs, --only and --shard and
prints a time limit that fits them (the whole of demo.toml, 39 runs of
60 s, takes about 46 minutes one at a time, 6 eight at a time as make demo
runs it); run --dry-run and the campaign's first line say how long the
runs should take.
"""


def _bad_input(message):
    """Say what is wrong with the command line or a scenario; exit status 2."""
    print(f"sbpn-lab: {message}", file=sys.stderr)
    return 2


def _cmd_list(args):
    files = sorted(glob.glob(os.path.join(args.dir, "*.toml")))
    if not files:
        return _bad_input(f"no scenario files (*.toml) in {args.dir}")
    bad = 0
    for path in files:
        try:
            sc = load(path)
        except ScenarioError as e:
            print(f"{os.path.basename(path)}: INVALID: {e}")
            bad += 1
            continue
        c = sc.config["scenario"]
        n = len(sc.runs())
        desc = c["description"].strip().splitlines()[0] if c["description"].strip() else ""
        print(f"{os.path.basename(path):28} {sc.name:24} {n:4} runs x {c['duration_s']:g} s"
              f"  {desc}")
    return 2 if bad else 0


def _check_environment(command, tools, dccp):
    """Say clearly why COMMAND cannot work here (not root, no DCCP, no tools)."""
    if os.geteuid() != 0:
        return "runs need root (network namespaces): run them in the VM (scripts/vm-run)"
    for tool in tools:
        if not shutil.which(tool):
            return f"'{tool}' is not installed"
    for tool in ("sbpn-send", "sbpn-recv", "sbpn-bulk"):
        if not os.access(os.path.join(BIN, tool), os.X_OK):
            return f"userspace/bin/{tool} is not built (make)"
    subprocess.run(["modprobe", "-a", "sch_netem", "sch_tbf", "veth"], capture_output=True)
    if dccp:
        subprocess.run(["modprobe", "-a", "dccp_ipv4"], capture_output=True)
        if not os.path.isdir("/sys/module/dccp_ipv4"):
            return ("no DCCP in this kernel: run inside the VM, e.g. scripts/vm-run "
                    + ("--timeout $(scripts/sbpn-lab timeout SCENARIO) " if command == "run"
                       else "") + f"--out results -- scripts/sbpn-lab {command} SCENARIO")
    return None


def _none_selected(sc, only, shard):
    """Why --only and --shard leave none of the scenario's runs."""
    if only and not selected(sc, only):
        names = (f", variants {', '.join(v['name'] for v in sc.variants)}" if sc.variants
                 else "")
        return (f"--only: no run of {sc.name} matches {only!r} ({sc.path}: run ids such "
                f"as {sc.runs()[0].id}{names})")
    return (f"--shard {shard[0]}/{shard[1]}: no run of {sc.name} is in it ({sc.path}: "
            f"{sc.config['scenario']['repetitions']} repetitions)")


def _selection(args):
    """The scenarios and shard of run's (and timeout's) arguments, checked,
    args.jobs made a number unless "auto"; or the exit status (2) after
    saying what is wrong."""
    try:
        scenarios = [load(p) for p in args.scenario]
    except ScenarioError as e:
        return _bad_input(e)
    if args.jobs != "auto":
        try:
            args.jobs = int(args.jobs)
        except ValueError:
            args.jobs = 0
        if args.jobs < 1:
            return _bad_input("--jobs: expected a number >= 1 or auto")
    if args.only:
        try:
            re.compile(args.only)
        except re.error as e:
            return _bad_input(f"--only: not a regular expression: {e}")
    try:
        shard = parse_shard(args.shard) if args.shard else None
    except ValueError as e:
        return _bad_input(f"--shard: {e}")
    # Runs none: say so, rather than succeed having run nothing.  Of several
    # scenarios, one without runs under --only is only noted: a regex
    # meant for some of them (make reproduce ONLY=...) is no mistake.
    empty = [sc for sc in scenarios if not selected(sc, args.only, shard)]
    if len(empty) == len(scenarios):
        return _bad_input(_none_selected(empty[0], args.only, shard))
    for sc in empty:
        print(f"sbpn-lab: note: {_none_selected(sc, args.only, shard)}", file=sys.stderr)
    return scenarios, shard


def _estimate_s(scenarios, args, shard):
    """Wall seconds of the selected runs, campaign after campaign."""
    return sum(estimate_s(selected(sc, args.only, shard), args.jobs) for sc in scenarios)


def _cmd_timeout(args):
    sel = _selection(args)
    if isinstance(sel, int):
        return sel
    scenarios, shard = sel
    est = _estimate_s(scenarios, args, shard)
    limit = vm_timeout_s(est)
    n = sum(len(selected(sc, args.only, shard)) for sc in scenarios)
    print(f"sbpn-lab timeout: {n} runs, {args.jobs} at a time"
          f"{' (counted as 1, and its probe)' if args.jobs == 'auto' else ''}: about "
          f"{_fmt_s(est)}; --timeout {limit} ({_fmt_s(limit)}) allows twice that and "
          f"{VM_SLACK_S // 60} minutes more", file=sys.stderr)
    print(limit)
    return 0


def _cmd_run(args):
    sel = _selection(args)
    if isinstance(sel, int):
        return sel
    scenarios, shard = sel
    if args.campaign and len(scenarios) > 1:
        return _bad_input("--campaign names one campaign: give one scenario")
    # In the VM, vm-run's time limit is known (VM_TIMEOUT): say at the start,
    # not when it strikes, that the runs will not fit it.
    est = _estimate_s(scenarios, args, shard)
    limit = os.environ.get("VM_TIMEOUT", "")
    if limit.isdigit() and est > int(limit):
        print(f"sbpn-lab: warning: these runs take about {_fmt_s(est)}, longer than "
              f"vm-run's --timeout {limit}: it will stop them part way (a second call "
              f"resumes).  `scripts/sbpn-lab timeout` with this command's scenarios, "
              f"--jobs, --only and --shard gives a time limit that fits.", file=sys.stderr)
    decide = {}
    for sc in scenarios:
        on = args.decide if args.decide is not None else bool(sc.decide and
                                                               sc.decide["enabled"])
        if on:
            decide[sc.path] = sc.decide or decide_settings()
    if decide and shard:
        return _bad_input("--decide: a campaign that decides runs whole, not in shards")
    if decide and not args.dry_run and not os.access(VENV_PYTHON, os.X_OK):
        print(f"sbpn-lab: --decide analyses each round with {VENV_PYTHON}, which is not "
              "there: run scripts/venv.sh on the host first", file=sys.stderr)
        return 1
    if args.dry_run:
        for sc in scenarios:
            name = args.campaign or sc.name
            if sc.path in decide:
                d = decide[sc.path]
                print(f"{name}: decides, looks after repetitions " + ", ".join(
                    map(str, decide_looks(d["min_pairs"], d["step"],
                                          sc.config["scenario"]["repetitions"]))))
            for r in selected(sc, args.only, shard):
                rd = os.path.join(args.results, name, r.id)
                print(f"{name}/{r.id}\tseed {r.seed}\t{run_status(rd) or 'not run'}"
                      + (f"\tvariant {r.variant}" if r.variant else ""))
        sys.stdout.flush()
        print(f"sbpn-lab: all of them take about {_fmt_s(est)} at --jobs {args.jobs}; "
              f"scripts/vm-run --timeout {vm_timeout_s(est)} fits them (sbpn-lab timeout)",
              file=sys.stderr)
        return 0
    tools = ["ip", "tc", "nsenter"]
    dccp = any(m["transport"] == "dccp" for sc in scenarios for r in sc.runs()
               for m in r.config["media"])
    problem = _check_environment("run", tools, dccp)
    if problem:
        print(f"sbpn-lab: cannot run here: {problem}", file=sys.stderr)
        return 1
    if args.host_looks and not decide:
        return _bad_input("--host-looks: only with --decide")
    analyse = analyse_on_host if args.host_looks else analyse_in_venv
    failed = 0
    deciding = [sc for sc in scenarios if sc.path in decide]
    try:
        jobs = args.jobs
        if deciding and jobs == "auto":
            # probe once, on the first deciding campaign; its rounds and the
            # other deciding campaigns share the slots it chooses
            sc = deciding[0]
            camp_dir = os.path.join(args.results, args.campaign or sc.name)
            os.makedirs(camp_dir, exist_ok=True)
            jobs = autojobs.choose(selected(sc, args.only), camp_dir, args.campaign or sc.name)
        if deciding:
            # the deciding campaigns at once, sharing the jobs slots: while one
            # looks or ends a round on a half wave, the others fill the slots
            slots = Slots(jobs)
            with concurrent.futures.ThreadPoolExecutor(max_workers=len(deciding)) as pool:
                futs = [pool.submit(run_decided, sc, args.results, args.campaign, jobs,
                                    args.only, args.force, settings=decide[sc.path],
                                    analyse=analyse, slots=slots) for sc in deciding]
                failed += sum(len(f.result()) for f in futs)
        for sc in scenarios:
            if sc.path not in decide:
                failed += len(run_campaign(sc, args.results, args.campaign, args.jobs,
                                           args.only, args.force, shard=shard))
    except autojobs.ProbeFailed as e:
        print(f"sbpn-lab: --jobs auto: {e}", file=sys.stderr)
        return 1
    except OtherLength as e:
        return _bad_input(e)
    return 1 if failed else 0


def _cmd_serve_looks(args):
    if not os.access(VENV_PYTHON, os.X_OK):
        print(f"sbpn-lab serve-looks: the looks run {VENV_PYTHON}, which is not there: "
              "run scripts/venv.sh first", file=sys.stderr)
        return 1
    try:
        hostlook.serve(args.results, decide_command)
    except KeyboardInterrupt:
        pass
    return 0


def _cmd_try(args):
    """A scenario from anywhere, in one command: staged into the results
    directory (the VM sees the host's files, not its /tmp), run in one VM
    boot with a time limit that fits it, then reported.  The exit status
    is the run's if it failed (what ran is still reported), else the
    report's."""
    try:
        sc = load(args.scenario)
    except ScenarioError as e:
        return _bad_input(e)
    results = os.path.abspath(args.results)
    try:
        staged = stage(sc, os.path.join(results, ".scenarios", sc.name))
    except (OSError, ScenarioError) as e:
        return _bad_input(f"{args.scenario}: cannot stage it in {results}: {e}")
    ns = argparse.Namespace(scenario=[staged], jobs=args.jobs, only=args.only, shard=None)
    sel = _selection(ns)
    if isinstance(sel, int):
        return sel
    if ns.jobs == "auto":
        return _bad_input("try: --jobs takes a number")
    limit = vm_timeout_s(_estimate_s(sel[0], ns, None))
    run = [LAB, "run", staged, "--results", results, "--jobs", str(ns.jobs)]
    vm = [os.environ.get("VM_RUN", os.path.join(ROOT, "scripts", "vm-run")),
          "--timeout", str(limit), "--out", results, "--"]
    print(f"sbpn-lab try: {sc.name} staged in {os.path.dirname(staged)}; runs in the VM "
          f"(--timeout {limit}), then the report", file=sys.stderr)
    status = subprocess.run(vm + run + (["--only", args.only] if args.only else []),
                            cwd=ROOT).returncode
    python = VENV_PYTHON if os.access(VENV_PYTHON, os.X_OK) else sys.executable
    report = subprocess.run([python, LAB, "report", os.path.join(results, sc.name)],
                            cwd=ROOT).returncode
    if status:
        print(f"sbpn-lab try: the runs ended with status {status} (vm-run: 124 time "
              f"limit, 125 kernel splat); what ran is in {os.path.join(results, sc.name)}",
              file=sys.stderr)
    return status or report


def _cmd_merge(args):
    if os.path.abspath(args.dest) in map(os.path.abspath, args.source):
        return _bad_input("merge: DEST must not be one of the sources")
    try:
        merge_campaigns(args.dest, args.source)
    except (ValueError, OSError) as e:
        return _bad_input(f"merge: {e}")
    return 0


def _cmd_handshake(args):
    try:
        sc = load(args.scenario)
    except ScenarioError as e:
        return _bad_input(e)
    if args.count < 1:
        return _bad_input("--count: expected a number >= 1")
    try:
        spec = next(r for r in sc.runs() if not args.only or matches(r, args.only))
    except re.error as e:
        return _bad_input(f"--only: not a regular expression: {e}")
    except StopIteration:
        return _bad_input(f"--only: no run of {sc.name} matches {args.only!r}")
    problem = _check_environment("handshake", ["ip", "tc"], dccp=True)
    if problem:
        print(f"sbpn-lab: cannot run here: {problem}", file=sys.stderr)
        return 1
    from .handshake import measure, summary
    print(f"handshakes over the path of {sc.name}/{spec.id}, each in new namespaces:")
    times, errors = measure(spec, args.count)
    for line in summary(times, errors):
        print(line)
    return 0


def _no_analysis(command, reason):
    print(f"sbpn-lab: {command} is unavailable: sbpnlab.{command} could not be imported "
          f"({reason}).  It needs the analysis environment: scripts/venv.sh, then "
          f".venv/bin/python scripts/sbpn-lab {command} ...", file=sys.stderr)
    return 1


class _StandIn(types.ModuleType):
    """What an analysis module gets for a package this Python lacks when it
    is imported for its --help alone: any attribute or call is another
    stand-in, so module-level code (matplotlib.use, from scipy import
    stats) runs, and its add_arguments(), plain argparse, can list the
    options."""
    __path__ = []

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _StandIn(f"{self.__name__}.{attr}")

    def __call__(self, *args, **kwargs):
        return _StandIn(f"{self.__name__}()")


class _StandIns(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the packages named in roots (and their submodules) as stand-ins."""
    def __init__(self):
        self.roots = set()

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in self.roots:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        return _StandIn(spec.name)

    def exec_module(self, module):
        pass


def _import_for_help(name, error):
    """The analysis module name imported with stand-ins for the packages it
    could not import (error, then the next, ...), for its --help; None if
    it fails for another reason."""
    finder = _StandIns()
    sys.meta_path.insert(0, finder)
    for _ in range(10):
        if not isinstance(error, ModuleNotFoundError) or not error.name:
            return None
        finder.roots.add(error.name.split(".")[0])
        for mod in [m for m in sys.modules if m.split(".")[0] in finder.roots]:
            del sys.modules[mod]
        try:
            return importlib.import_module(name)
        except Exception as e:      # noqa: BLE001 -- the next missing package
            error = e
    return None


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(
        prog="sbpn-lab", description="Run SBPN experiments from scenario files.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    ls = sub.add_parser("list", help="list the scenarios and how many runs each has")
    ls.add_argument("dir", nargs="?", default=SCENARIO_DIR,
                    help=f"directory of *.toml scenarios (default {SCENARIO_DIR})")
    ls.set_defaults(func=_cmd_list)
    rn = sub.add_parser("run", help="run every run of the scenarios (inside the VM)",
                        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    rn.add_argument("scenario", nargs="+", help="scenario file(s) (TOML)")
    rn.add_argument("--results", default=os.environ.get("VM_OUT", "results"),
                    help="results root (default: $VM_OUT if set, else ./results)")
    rn.add_argument("--campaign", help="campaign directory name (default: scenario name)")
    rn.add_argument("--jobs", default="1", metavar="N|auto",
                    help="runs at once, each in its own namespaces (default 1; results "
                    "are comparable only between campaigns run with the same --jobs); "
                    "auto: the most that do not delay the media sender or the path, "
                    "found by short probe runs and kept in the campaign's jobs-auto.json")
    rn.add_argument("--only", metavar="REGEX", help="only runs whose id or variant name "
                    "REGEX finds ('^best$': the variant best; 'rep=0[1-3]$': the first "
                    "three repetitions; one that matches no run is an error, exit 2)")
    rn.add_argument("--force", action="store_true",
                    help="redo runs that are already complete (default: resume)")
    rn.add_argument("--dry-run", action="store_true",
                    help="list the runs, their seeds and status; run nothing")
    rn.add_argument("--shard", metavar="K/N",
                    help="only shard K of N: the repetitions r with (r-1) mod N = K-1, "
                    "every run of each, so pairs stay together (merge the shards' "
                    "campaign directories with sbpn-lab merge)")
    rn.add_argument("--decide", action="store_true", default=None,
                    help="run the repetitions in rounds and stop each comparison once "
                    "its metrics have a verdict (Documentation/statistics.rst, Sequential "
                    "decisions; the scenario's [decide] table, if any, gives the settings, "
                    "and turns this on by itself); needs .venv for the analysis")
    rn.add_argument("--no-decide", dest="decide", action="store_false",
                    help="run every repetition even if the scenario has a [decide] table")
    rn.add_argument("--host-looks", action="store_true",
                    help="with --decide: ask `sbpn-lab serve-looks` on the host for the "
                    "looks between rounds (seconds there, minutes in the VM); looks in "
                    "the VM if no server answers (sbpnlab.hostlook)")
    rn.set_defaults(func=_cmd_run)
    tr = sub.add_parser("try", help="stage a scenario from any directory, run it in the "
                        "VM and report it: one command (on the host)",
                        description="Copy SCENARIO and the model and trace files it names "
                        "into RESULTS/.scenarios/NAME/ (the VM sees the host's files but "
                        "not its /tmp), run it with scripts/vm-run and a time limit that "
                        "fits (sbpn-lab timeout), then `sbpn-lab report RESULTS/NAME` with "
                        ".venv's Python.  A second call resumes the runs.")
    tr.add_argument("scenario", help="scenario file (TOML), in any directory")
    tr.add_argument("--results", default="results",
                    help="results root, written by the VM (default ./results)")
    tr.add_argument("--jobs", default="1", metavar="N", help="runs at once (default 1)")
    tr.add_argument("--only", metavar="REGEX", help="as for run")
    tr.set_defaults(func=_cmd_try)
    tm = sub.add_parser("timeout", help="seconds for scripts/vm-run --timeout that `run` "
                        "with the same scenarios and options needs: twice its estimated "
                        "wall time and 10 minutes (on the host)",
                        description="Print the seconds that scripts/vm-run --timeout needs "
                        "for `sbpn-lab run` with the same scenarios, --jobs, --only, "
                        f"--shard and --campaign: twice the estimate (each run its duration_s and "
                        f"{RUN_OVERHEAD_S} s, ceil(runs / jobs) after one another; "
                        f"auto as 1 and its probe) and {VM_SLACK_S} s for the boot.  The "
                        "estimate goes to stderr.",
                        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    tm.add_argument("scenario", nargs="+", help="scenario file(s) (TOML)")
    tm.add_argument("--jobs", default="1", metavar="N|auto", help="as for run (default 1)")
    tm.add_argument("--only", metavar="REGEX", help="as for run")
    tm.add_argument("--shard", metavar="K/N", help="as for run")
    tm.add_argument("--campaign", help="as for run: names the directory only, so the limit "
                    "is the same with or without it")
    tm.set_defaults(func=_cmd_timeout)
    mg = sub.add_parser("merge", help="merge the campaign directories of shards (run "
                        "--shard) into one")
    mg.add_argument("dest", help="the merged campaign directory (made if missing)")
    mg.add_argument("source", nargs="+", help="campaign directories of the shards")
    mg.set_defaults(func=_cmd_merge)
    hs = sub.add_parser("handshake", help="time DCCP handshakes over a scenario's path, "
                        "each in new namespaces (inside the VM)")
    hs.add_argument("scenario", help="scenario file (TOML)")
    hs.add_argument("--only", metavar="REGEX",
                    help="use the path of the first run whose id or variant name "
                    "matches REGEX (default: the first run)")
    hs.add_argument("--count", type=int, default=100, help="handshakes (default 100)")
    hs.set_defaults(func=_cmd_handshake)
    sl = sub.add_parser("serve-looks", help="answer the looks that `run --decide "
                        "--host-looks` in the VM asks for, under RESULTS, until killed "
                        "(on the host; sbpnlab.hostlook)")
    sl.add_argument("results", metavar="RESULTS", help="the results root the VM writes")
    sl.set_defaults(func=_cmd_serve_looks)
    rt = sub.add_parser("results-table", help="the table that opens "
                        "Documentation/results.rst, from the committed summaries "
                        "(sbpnlab.resultstable; --write, --check)")
    resultstable.add_arguments(rt)
    rt.set_defaults(func=resultstable.run)
    # The analysis needs the venv (numpy, ...), which the VM does not have:
    # import it only when it is asked for.
    analysis = {
        "report": sub.add_parser("report", help="tables and plots from a results "
                                 "directory (sbpnlab.report; needs .venv)"),
        "compare": sub.add_parser("compare", help="B minus A for the runs two campaigns "
                                  "share (sbpnlab.compare; needs .venv)"),
        "friendliness": sub.add_parser("friendliness", help="the TCP-friendliness "
                                       "benchmark's table: normalised throughput per cell "
                                       "and controller (sbpnlab.friendliness; needs .venv)"),
        "decide": sub.add_parser("decide", help="where a campaign's sequential decision "
                                 "stands; writes its decision.json (sbpnlab.decide; needs "
                                 ".venv)"),
        "decide-sim": sub.add_parser("decide-sim", help="the sequential decision's error "
                                     "rates and runs saved, by simulation (sbpnlab.decidesim; "
                                     "needs .venv)")}
    if argv[:1] and argv[0] in analysis:
        name = f"sbpnlab.{argv[0].replace('-', '')}"
        try:
            module = importlib.import_module(name)
        except Exception as e:      # any import failure means: no analysis here
            module = None
            if {"-h", "--help"} & set(argv[1:]):
                module = _import_for_help(name, e)
            if module is None:
                return _no_analysis(argv[0], f"{type(e).__name__}: {e}")
            analysis[argv[0]].epilog = (
                f"Not available with this Python ({type(e).__name__}: {e}): it needs "
                f"the analysis environment, made by scripts/venv.sh; then run "
                f"'.venv/bin/python scripts/sbpn-lab {argv[0]} ...'.")
        module.add_arguments(analysis[argv[0]])
        analysis[argv[0]].set_defaults(func=module.run)
    args = p.parse_args(argv)
    try:
        status = args.func(args)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (sbpn-lab ... | head): stop quietly, and keep
        # Python from reporting the same error again when it exits.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return status
