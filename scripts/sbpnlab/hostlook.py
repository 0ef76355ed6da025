# SPDX-License-Identifier: GPL-2.0
"""The looks of `sbpn-lab run --decide --host-looks`, made on the host.

In the VM a look (sbpn-lab decide over the campaign so far) costs two to
five minutes under TCG: numpy and scipy load, and every run's records are
read over 9p.  On the host the same command takes seconds.  So the runner
in the VM asks, and `sbpn-lab serve-looks RESULTS`, started on the host
beside vm-run (make reproduce DECIDE=1), answers, through files in the
campaign's directory, which both see at the same path (vm-run's --out,
mounted without caching in the guest):

  look.request  the runner's question, {"id", "scenario", "through"},
                written whole (a rename);
  look.taken    the server's receipt: the request renamed, at once;
  look.answer   the server's answer, {"id", "rc", "output"}, written
                whole after `sbpn-lab decide CAMPAIGN --scenario S
                --through N` wrote decision.json.

The command is campaign.decide_command(), the one the VM would run: the
same code decides either way.  A request nobody takes within
TAKE_TIMEOUT_S is withdrawn and the runner analyses in the VM as before,
so a forgotten server costs a delay, not the campaign.  Standard library
only: the runner imports this.
"""
import json
import os
import subprocess
import sys
import time
import uuid

REQUEST, TAKEN, ANSWER = "look.request", "look.taken", "look.answer"
TAKE_TIMEOUT_S = 30
ANSWER_TIMEOUT_S = 1800
POLL_S = 0.5


class NotTaken(Exception):
    """No server took the request."""


def _write(path, obj):
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f)
        f.write("\n")
    os.replace(tmp, path)


def _read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def ask(camp_dir, scenario_path, through, take_timeout=TAKE_TIMEOUT_S,
        answer_timeout=ANSWER_TIMEOUT_S, poll=POLL_S):
    """Ask the host for the look through repetition `through` of the
    campaign in camp_dir; return (rc, output) of its `sbpn-lab decide`.
    NotTaken if no server took the request within take_timeout (the
    request is withdrawn); TimeoutError if the answer did not come within
    answer_timeout after that."""
    rid = uuid.uuid4().hex
    for name in (ANSWER, TAKEN):
        try:
            os.unlink(os.path.join(camp_dir, name))
        except FileNotFoundError:
            pass
    req = os.path.join(camp_dir, REQUEST)
    _write(req, {"id": rid, "scenario": os.path.abspath(scenario_path), "through": through})
    deadline = time.monotonic() + take_timeout
    while os.path.exists(req):
        if time.monotonic() > deadline:
            try:
                os.unlink(req)
            except FileNotFoundError:
                break       # taken just now
            raise NotTaken(f"no host server took {req} within {take_timeout:g} s")
        time.sleep(poll)
    deadline = time.monotonic() + answer_timeout
    while True:
        got = _read(os.path.join(camp_dir, ANSWER))
        if got and got.get("id") == rid:
            return int(got["rc"]), str(got.get("output", ""))
        if time.monotonic() > deadline:
            raise TimeoutError(f"no answer to {req} within {answer_timeout:g} s")
        time.sleep(poll)


def answer(camp_dir, command):
    """Take and answer the request in camp_dir, if any: command(camp_dir,
    scenario, through) gives the argv to run.  Returns the request taken
    (a malformed one is answered with exit status 2 and why), or None if
    there was none."""
    req, taken = os.path.join(camp_dir, REQUEST), os.path.join(camp_dir, TAKEN)
    try:
        os.replace(req, taken)
    except FileNotFoundError:
        return None
    got = _read(taken) or {}
    rid, scenario, through = got.get("id"), got.get("scenario"), got.get("through")
    if (not isinstance(rid, str) or not isinstance(scenario, str)
            or not isinstance(through, int) or isinstance(through, bool) or through < 1):
        out = {"id": rid, "rc": 2, "output": f"serve-looks: {req}: not a look request: {got}"}
    else:
        p = subprocess.run(command(camp_dir, scenario, through), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        out = {"id": rid, "rc": p.returncode, "output": p.stdout}
    _write(os.path.join(camp_dir, ANSWER), out)
    os.unlink(taken)
    return got


def serve(results, command, out=sys.stderr, poll=POLL_S, once=False):
    """Answer the requests of every campaign under results until killed
    (or, with once, after one pass)."""
    while True:
        try:
            names = sorted(os.listdir(results))
        except FileNotFoundError:
            names = []
        for name in names:
            camp = os.path.join(results, name)
            if not os.path.isdir(camp):
                # vm-run's console.log, say: not a campaign
                continue
            t = time.monotonic()
            got = answer(camp, command)
            if got is not None:
                print(f"serve-looks: {name}: look through repetition {got.get('through')} "
                      f"in {time.monotonic() - t:.1f} s", file=out, flush=True)
        if once:
            return
        time.sleep(poll)
