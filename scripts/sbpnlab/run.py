# SPDX-License-Identifier: GPL-2.0
"""Execute one run into its result directory (Documentation/results-format.rst).

execute(spec, run_dir, slot, campaign) builds the testbed, starts the
receivers and servers, then the media senders; once their packets arrive
it sets t0 and starts the long-lived TCP flows (sbpn-bulk) and the short flows
at their offsets from t0 while a thread applies the link schedule; it waits
for everything, collects the files and writes meta.json.  meta.json is
written first with status "failed" ("did not finish"), so a run that dies
half-way says so; whatever a failed run wrote stays.  Processes and
namespaces are removed in every case.
"""
import datetime
import json
import os
import platform
import random
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from . import RESULTS_FORMAT, records, schedule
from .scenario import keyframe_sources, option_flags
from .testbed import RECEIVER_ADDR, SENDER_ADDR, Testbed

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BIN = os.path.join(ROOT, "userspace", "bin")
SCRIPTS = os.path.join(ROOT, "scripts")
MEDIA_PORT, TCP_PORT, SHORT_PORT = 5000, 6000, 7000
READY_TIMEOUT_S = 60      # process start-up under TCG can take seconds
GRACE_S = 60              # beyond the planned end before a process counts as hung
LEAD_S = 0.1              # t0 this far after the media flows are up
MEDIA_GO_PACKETS = 10     # packets at the receiver that say the media flows are up


class RunFailed(Exception):
    """The run cannot go on; str() is the reason recorded in meta.json."""


def _now_utc():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _clocksource():
    """The kernel's clocksource (under TCG the TSC only with tsc=reliable,
    else the HPET: see scripts/vm-run), or None if it cannot be read."""
    try:
        with open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                  encoding="ascii") as f:
            return f.read().strip()
    except OSError:
        return None


def _first_line(argv):
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        return (p.stdout or p.stderr).strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return None


_versions = {}
_versions_lock = threading.Lock()


def tool_versions():
    """Versions of the tools a run uses (asked once per process)."""
    with _versions_lock:
        if not _versions:
            _versions.update({
                "tc": _first_line(["tc", "-V"]),
                "python": platform.python_version(),
                "sbpn-send": os.path.join(BIN, "sbpn-send"),
                "sbpn-bulk": os.path.join(BIN, "sbpn-bulk"),
            })
        return dict(_versions)


def _bulk_rows(path):
    """The rows of a complete sbpn-bulk record file (records.TCP_COLUMNS),
    at least two."""
    r = records.read(path, magic=records.TCP_FORMAT)
    if not r.complete:
        err = os.path.basename(path)[:-len(".rec")] + ".err"
        raise ValueError(f"not complete (sbpn-bulk failed or was stopped: see {err})")
    if len(r.rows) < 2:
        raise ValueError("fewer than two samples")
    return r.rows


def _listening(pid, port):
    """True when process pid's namespace has a TCP socket listening on port."""
    for table in ("tcp", "tcp6"):       # sbpn-bulk listens on a dual-stack socket
        try:
            with open(f"/proc/{pid}/net/{table}", encoding="ascii") as f:
                next(f)
                for line in f:
                    local, state = line.split()[1], line.split()[3]
                    if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                        return True
        except OSError:
            pass
    return False


class _Procs:
    """Processes of one run, each in its own session so it can be killed."""

    def __init__(self, workdir):
        self.workdir, self.procs, self.lock = workdir, {}, threading.Lock()

    def start(self, name, netns, argv, stdout=None):
        err = open(os.path.join(self.workdir, f"{name}.err"), "w")
        out = open(os.path.join(self.workdir, stdout), "w") if stdout else subprocess.DEVNULL
        env = dict(os.environ, PYTHONPATH=SCRIPTS)
        started = time.monotonic_ns()
        p = subprocess.Popen(["nsenter", f"--net=/run/netns/{netns}", "--"] + argv,
                             stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                             start_new_session=True, env=env)
        err.close()
        if stdout:
            out.close()
        with self.lock:
            self.procs[name] = {"proc": p, "argv": argv, "netns": netns,
                                "started_ns": started}
        return p

    def wait(self, name, deadline_ns):
        """The exit status of process name, or None if it still runs at
        deadline_ns.  Sleeps in poll() on a pidfd: Popen.wait(timeout)
        would wake 20 times a second to look, which under TCG cost the
        runner about a CPU second per run."""
        p = self.procs[name]["proc"]
        if p.poll() is None:
            fd = os.pidfd_open(p.pid)
            try:
                poller = select.poll()
                poller.register(fd, select.POLLIN)
                poller.poll(max(0, (deadline_ns - time.monotonic_ns()) // 1_000_000))
            finally:
                os.close(fd)
        return p.poll()

    def kill(self, name):
        p = self.procs[name]["proc"]
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()

    def kill_all(self):
        with self.lock:
            procs = [v["proc"] for v in self.procs.values()]
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for p in procs:
                if p.poll() is None:
                    try:
                        os.killpg(p.pid, sig)
                    except ProcessLookupError:
                        pass
            end = time.monotonic() + 3
            for p in procs:
                try:
                    p.wait(timeout=max(0.0, end - time.monotonic()))
                except subprocess.TimeoutExpired:
                    pass


def _media_argv(m, i, seed, duration, workdir):
    base = os.path.join(workdir, f"media-{m['name']}")
    port = MEDIA_PORT + i
    recv = [os.path.join(BIN, "sbpn-recv"), "--transport", m["transport"],
            "--listen", f"{RECEIVER_ADDR}:{port}", "--out", base + ".recv.rec",
            "--flow", m["name"]]
    send = [os.path.join(BIN, "sbpn-send"), "--transport", m["transport"],
            "--to", f"{RECEIVER_ADDR}:{port}", "--out", base + ".send.rec",
            "--flow", m["name"], "--source", m["source"],
            "--duration", f"{duration - m['start_s']:g}", "--seed", str(seed),
            "--lifetime-ms", str(m["lifetime_ms"])]
    if m["silence_suppression"]:
        send += ["--silence-suppression"]
    for f in ("model", "trace"):
        if f in m:
            send += [f"--{f}", m[f]]
    if m["source"] == "vp8":
        send += ["--frames", base + ".frames.rec", "--bitstream", base + ".ivf"]
    kf = keyframe_sources(m)
    if kf:
        send += ["--keyframe-on-loss", ",".join(kf)]
    if "receiver" in kf:
        recv += ["--keyframe-requests"]
    if m["transport"] == "dccp":
        recv += ["--ccid", str(m["ccid"])]
        send += ["--policy", m["policy"], "--ccid", str(m["ccid"]),
                 "--tx-qlen", str(m["tx_qlen"]), "--cc-log", base + ".cc.log",
                 "--notices", base + ".notices.rec"]
        if m["ccid"] == 3:
            send += [f"--{opt.replace('_', '-')}" for opt in option_flags(m)]
    return recv, send


def _short_plan(cfg, seed, duration):
    """Flows at random instants in each group's window, from the run's seed
    (so paired runs get the same instants)."""
    rnd, flows = random.Random(seed), []
    for g, grp in enumerate(cfg["short_tcp"]):
        lo, hi = grp["window_s"]
        for _ in range(grp["count"]):
            flows.append({"group": g, "dest": f"10.0.2.{10 + g}", "port": SHORT_PORT,
                          "size": grp["size_bytes"], "cc": grp["cc"],
                          "start_s": round(rnd.uniform(lo, hi), 6)})
    return {"duration_s": duration, "flows": flows}


def execute(spec, run_dir, slot, campaign, jobs=1):
    """Run spec into run_dir, with namespaces numbered slot, one of jobs
    runs at once; return meta (also written to run_dir/meta.json)."""
    cfg = spec.config
    dur = cfg["scenario"]["duration_s"]
    if os.path.isdir(run_dir):
        shutil.rmtree(run_dir)
    os.makedirs(run_dir)
    initial_rate, plan = schedule.changes(cfg["link"], dur)
    meta = {
        "format": RESULTS_FORMAT,
        "scenario_file": os.path.abspath(spec.scenario.path),
        "scenario": spec.scenario.raw,
        "campaign": campaign,
        "run_id": spec.id,
        "params": spec.point,
        "repetition": spec.rep,
        "seed": spec.seed,
        "config": cfg,
        "kernel": os.uname().release,
        # vm-run's accelerator (kvm or tcg), the guest's vCPUs and clock
        "vm": {"accel": os.environ.get("VM_ACCEL"), "cpus": os.cpu_count(),
               "clocksource": _clocksource()},
        "jobs": jobs,
        "dccp_version": None,
        "tools": tool_versions(),
        "link": {"initial_rate": initial_rate, "changes": plan,
                 "addresses": {"sender": SENDER_ADDR, "receiver": RECEIVER_ADDR}},
        "start_time": _now_utc(),
        "end_time": None,
        "status": "failed",
        "reason": "the run did not finish",
    }
    try:
        with open("/sys/module/dccp/version", encoding="ascii") as f:
            meta["dccp_version"] = f.read().strip()
    except OSError:
        pass
    _write_meta(run_dir, meta)
    # Processes write into a tmpfs work directory, moved into run_dir at the
    # end: $VM_OUT is a 9p mount, and a 64 kB write there can stall a sender.
    work = tempfile.mkdtemp(prefix="sbpnlab-")
    groups = [(f"10.0.2.{10 + g}", grp["initcwnd"]) for g, grp in enumerate(cfg["short_tcp"])]
    bed = Testbed(f"sl{os.getpid() % 100000}-{slot}", cfg["link"], initial_rate, groups)
    procs = _Procs(work)
    state = {}                  # the link schedule's Applier, once started
    problems = []
    try:
        bed.open()
        meta["t0_ns"] = _start_traffic(spec, work, bed, procs, plan, state)
        problems = _wait_all(spec, procs, meta["t0_ns"])
        applier = state.pop("applier")
        applier.stop()
        applier.write(os.path.join(run_dir, "link.log"))
        failed = [x for x in applier.log if x[4]]
        if failed or len(applier.log) != len(plan):
            problems.append(f"{len(plan) - len(applier.log) + len(failed)} link changes "
                            "not applied (link.log)")
        meta["qdisc_stats"] = bed.qdisc_stats()
    except (RunFailed, OSError, subprocess.SubprocessError, RuntimeError) as e:
        problems.append(str(e))
    except Exception as e:      # keep the campaign going; the reason is recorded
        problems.append(f"{type(e).__name__}: {e}")
    finally:
        if "applier" in state:
            state["applier"].stop()
            state["applier"].write(os.path.join(run_dir, "link.log"))
        procs.kill_all()
        bed.close()
        for name in os.listdir(work):
            if not name.startswith("."):
                shutil.move(os.path.join(work, name), os.path.join(run_dir, name))
        shutil.rmtree(work, ignore_errors=True)
    if "t0_ns" in meta:
        try:
            problems += _collect(spec, run_dir, meta, procs)
        except (OSError, ValueError, KeyError) as e:
            problems.append(f"collecting the results: {type(e).__name__}: {e}")
    t0 = meta.get("t0_ns")
    meta["processes"] = {n: {"argv": v["argv"], "netns_role": v["netns"].rsplit("-", 1)[1],
                             "started_s": round((v["started_ns"] - t0) / 1e9, 3) if t0 else None,
                             "exit": v["proc"].returncode}
                         for n, v in procs.procs.items()}
    meta["end_time"] = _now_utc()
    meta["status"] = "failed" if problems else "complete"
    meta["reason"] = "; ".join(problems) if problems else None
    _write_meta(run_dir, meta)
    return meta


def _write_meta(run_dir, meta):
    tmp = os.path.join(run_dir, ".meta.json.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1, sort_keys=False)
        f.write("\n")
    os.replace(tmp, os.path.join(run_dir, "meta.json"))


def _rx_packets(pid, dev):
    """Packets received on dev in process pid's namespace (/proc/PID/net/dev)."""
    with open(f"/proc/{pid}/net/dev", encoding="ascii") as f:
        for line in f:
            name, _, counters = line.partition(":")
            if name.strip() == dev:
                return int(counters.split()[1])
    raise RunFailed(f"no {dev} in the receiver's namespace")


def _launch_at(procs, t0, items):
    """Start (start_s, name, netns, argv, stdout) items at t0 + start_s, one
    thread each: a start takes up to a second under TCG, and a late one
    must not delay the others.  Returns the threads."""
    threads = []
    for start_s, name, ns, argv, out in sorted(items, key=lambda x: x[0]):
        def launch(start_s=start_s, name=name, ns=ns, argv=argv, out=out):
            while (left := t0 + start_s * 1e9 - time.monotonic_ns()) > 0:
                time.sleep(left / 1e9)
            procs.start(name, ns, argv, stdout=out)
        threads.append(threading.Thread(target=launch, daemon=True))
        threads[-1].start()
    return threads


def _start_traffic(spec, work, bed, procs, plan, state):
    """Start the servers and wait until they listen; start the media flows
    due at 0 and wait until their packets arrive; then set t0 and start the
    rest of the traffic and the link schedule (state["applier"]) relative
    to it.  Return t0 (CLOCK_MONOTONIC ns)."""
    cfg, dur = spec.config, spec.config["scenario"]["duration_s"]
    first, timed, waits = [], [], []
    recv_pid = None
    for i, m in enumerate(cfg["media"]):
        recv, send = _media_argv(m, i, spec.seed + 1000 * i, dur, work)
        ready = os.path.join(work, f".media-{m['name']}.ready")
        p = procs.start(f"media-{m['name']}.recv", bed.receiver, recv + ["--ready-file", ready])
        recv_pid = recv_pid or p.pid
        waits.append(lambda ready=ready: os.path.exists(ready))
        item = (m["start_s"], f"media-{m['name']}.send", bed.sender, send, None)
        (first if m["start_s"] == 0 else timed).append(item)
    n = 0
    for grp in cfg["tcp"]:
        for _ in range(grp["flows"]):
            port = TCP_PORT + n
            srv, cli, dest = ((bed.receiver, bed.sender, RECEIVER_ADDR)
                              if grp["direction"] == "forward" else
                              (bed.sender, bed.receiver, SENDER_ADDR))
            p = procs.start(f"tcp-{n}.server", srv, [os.path.join(BIN, "sbpn-bulk"),
                                                     "--listen", f"[::]:{port}"])
            waits.append(lambda p=p, port=port: _listening(p.pid, port))
            secs = max(1, round(grp["stop_s"] - grp["start_s"]))
            timed.append((grp["start_s"], f"tcp-{n}", cli,
                          [os.path.join(BIN, "sbpn-bulk"), "--connect", f"{dest}:{port}",
                           "--time", str(secs), "--cc", grp["cc"],
                           "--write-bytes", str(grp["write_bytes"]), "--interval-ms", "500",
                           "--flow", f"tcp-{n}", "--out", os.path.join(work, f"tcp-{n}.rec")]
                          + (["--mss", str(grp["mss"])] if "mss" in grp else []),
                          None))
            n += 1
    if cfg["short_tcp"]:
        ready = os.path.join(work, ".short.ready")
        procs.start("short-tcp.server", bed.receiver,
                    [sys.executable, "-m", "sbpnlab.shortflows", "server",
                     "--port", str(SHORT_PORT), "--ready-file", ready])
        waits.append(lambda ready=ready: os.path.exists(ready))
        plan_path = os.path.join(work, ".short-plan.json")
        with open(plan_path, "w", encoding="utf-8") as f:
            json.dump(_short_plan(cfg, spec.seed, dur), f)
        ready = os.path.join(work, ".short-client.ready")
        procs.start("short-tcp", bed.sender,
                    [sys.executable, "-m", "sbpnlab.shortflows", "client",
                     "--plan", plan_path, "--out", os.path.join(work, "short-tcp.json"),
                     "--ready-file", ready, "--t0-file", os.path.join(work, ".t0")])
        waits.append(lambda ready=ready: os.path.exists(ready))
    _wait_for(procs, lambda: all(w() for w in waits), "servers not listening")
    if first:
        # The call goes first and everything else is timed from its first
        # packets: a sender takes seconds to start under TCG (DCCP also has
        # to connect), which must not eat into its competition.
        base = _rx_packets(recv_pid, "d-r")
        threads = _launch_at(procs, time.monotonic_ns(), first)
        _wait_for(procs, lambda: _rx_packets(recv_pid, "d-r") >= base + MEDIA_GO_PACKETS,
                  "no media packets arrived")
        _wait_threads(threads, time.monotonic_ns() + 10 * 10**9)
    t0 = time.monotonic_ns() + round(LEAD_S * 1e9)
    with open(os.path.join(work, ".t0.tmp"), "w", encoding="ascii") as f:
        f.write(str(t0))
    os.replace(os.path.join(work, ".t0.tmp"), os.path.join(work, ".t0"))
    state["applier"] = schedule.Applier(bed.rate_setter(), plan, t0)
    state["applier"].start()
    _wait_threads(_launch_at(procs, t0, timed), t0 + round((dur + GRACE_S) * 1e9))
    return t0


def _wait_for(procs, ready, what):
    """Poll ready() until true; fail if a process died or it takes too long."""
    end = time.monotonic() + READY_TIMEOUT_S
    while not ready():
        with procs.lock:        # launch threads may be adding processes
            dead = [(k, v["proc"].poll()) for k, v in procs.procs.items()
                    if v["proc"].poll() is not None]
        if dead:
            raise RunFailed(f"{what}: {dead[0][0]} exited {dead[0][1]} "
                            f"(see {dead[0][0]}.err)")
        if time.monotonic() > end:
            raise RunFailed(f"{what} after {READY_TIMEOUT_S} s")
        time.sleep(0.02)


def _wait_threads(threads, deadline_ns):
    for t in threads:
        t.join(max(0.0, (deadline_ns - time.monotonic_ns()) / 1e9))
        if t.is_alive():
            raise RunFailed("a traffic process could not be started in time")


def _wait_all(spec, procs, t0):
    """Wait for the senders, then the receivers; return what went wrong."""
    dur = spec.config["scenario"]["duration_s"]
    problems = []
    deadline = t0 + round((dur + GRACE_S) * 1e9)
    clients = [n for n in procs.procs if n.startswith(("media-", "tcp-", "short-tcp"))
               and not n.endswith((".recv", ".server"))]
    receivers = [n for n in procs.procs if n.endswith(".recv")]
    for name in clients + receivers:
        sender = procs.procs.get(name[:-len(".recv")] + ".send") if name in receivers else None
        if sender and sender["proc"].returncode != 0:
            # Its sender failed: this receiver may wait for ever, and the
            # run has failed anyway.
            procs.kill(name)
            problems.append(f"{name} killed: its sender failed")
            continue
        rc = procs.wait(name, deadline)
        if rc is None:
            problems.append(f"{name} still running {GRACE_S} s after the planned end: killed")
        elif rc != 0:
            problems.append(f"{name} exited {rc} (see {name}.err)")
    return problems


def _collect(spec, run_dir, meta, procs):
    """Summaries into meta; return problems with the files."""
    problems = []
    meta["media"], meta["qpolicy"] = {}, {}
    for m in spec.config["media"]:
        base = os.path.join(run_dir, f"media-{m['name']}")
        entry = {}
        for role in ("send", "recv"):
            path = f"{base}.{role}.rec"
            if not os.path.exists(path):
                problems.append(f"media-{m['name']}.{role}.rec missing")
                continue
            trailer = records.read_comments(path)[1]
            entry[role] = trailer
            if trailer.get("complete") != "1":
                problems.append(f"media-{m['name']}.{role}.rec is not complete")
        if os.path.exists(base + ".send.rec"):
            head = records.read_comments(base + ".send.rec")[0]
            meta["tools"]["sbpn-send"] = head.get("tool") or meta["tools"]["sbpn-send"]
            # The sender's schedule starts when the program is up, which
            # under TCG can be seconds after t0: say by how much.
            if head.get("start_ns", "").isdigit():
                entry["start_offset_s"] = round((int(head["start_ns"]) - meta["t0_ns"]) / 1e9,
                                                3)
        if m["source"] == "vp8":
            path = base + ".frames.rec"
            frames = records.read_comments(path)[1] if os.path.exists(path) else {}
            if frames.get("complete") != "1" or not os.path.exists(base + ".ivf"):
                problems.append(f"media-{m['name']}.frames.rec or .ivf is missing or "
                                "not complete")
        meta["media"][m["name"]] = entry
        q = {k: v for k, v in entry.get("send", {}).items() if k.startswith("qpolicy_")}
        # The drop notices the sender read, next to the counters they must
        # match (fewer only if the error queue overflowed).
        if m["transport"] == "dccp":
            path = base + ".notices.rec"
            notices = records.read_comments(path)[1] if os.path.exists(path) else {}
            if notices.get("complete") != "1":
                problems.append(f"media-{m['name']}.notices.rec is missing or not complete")
            elif q:
                q["notices"] = str(sum(int(notices.get(r, 0))
                                       for r in records.NOTICE_REASONS))
        if q:
            meta["qpolicy"][m["name"]] = q
    n = sum(g["flows"] for g in spec.config["tcp"])
    meta["tcp"] = []
    for i in range(n):
        try:
            rows = _bulk_rows(os.path.join(run_dir, f"tcp-{i}.rec"))
        except (OSError, ValueError) as e:
            problems.append(f"tcp-{i}.rec: {e}")
            meta["tcp"].append(None)
            continue
        first, last = rows[0], rows[-1]
        span = (int(last["t_ns"]) - int(first["t_ns"])) / 1e9
        acked = int(last["bytes_acked"]) - int(first["bytes_acked"])
        meta["tcp"].append({
            "started_s": round((procs.procs[f"tcp-{i}"]["started_ns"] - meta["t0_ns"]) / 1e9, 3),
            "received_bps": 8 * acked / span if span > 0 else None,
            "retransmits": int(last["retrans"])})
    if spec.config["short_tcp"]:
        try:
            with open(os.path.join(run_dir, "short-tcp.json"), encoding="utf-8") as f:
                flows = json.load(f)["flows"]
            meta["short_tcp"] = {"flows": len(flows),
                                 "completed": sum(1 for x in flows if x["done_ns"])}
        except (OSError, ValueError, KeyError) as e:
            problems.append(f"short-tcp.json unreadable: {e}")
    return problems
