# SPDX-License-Identifier: GPL-2.0
"""Link schedules: the planned rate changes, and the thread that applies them.

changes(link, duration) turns a link's [link.schedule] (step, square wave,
staircase) into the rate at t = 0 and a list of (t_s, rate) changes after
it.  Applier applies them at t0 + t_s from a thread and keeps, for each, the
planned and the actual time (the kernel's acknowledgement) for link.log.
"""
import os
import threading
import time

from .scenario import parse_rate

LOG_FORMAT = "# sbpn-link 1"


def changes(link, duration):
    """(initial rate, [(t_s, rate), ...]) with every change at 0 < t_s < duration."""
    s = link.get("schedule")
    if s is None:
        return link["rate"], []
    if s["kind"] == "step":
        plan = [(0.0, link["rate"]), (float(s["at_s"]), s["rate"])]
    elif s["kind"] == "square":
        plan, half, n = [(0.0, link["rate"])], s["period_s"] / 2, 0
        while s["start_s"] + n * half < duration:
            plan.append((s["start_s"] + n * half, s["high"] if n % 2 == 0 else s["low"]))
            n += 1
    else:
        plan = [(0.0, link["rate"])]
        plan += [(s["start_s"] + i * s["step_s"], r) for i, r in enumerate(s["rates"])
                 if s["start_s"] + i * s["step_s"] < duration]
    # A change planned at 0 is the starting rate, not a change.
    initial = [r for t, r in plan if t <= 0][-1]
    later = [(round(float(t), 6), r) for t, r in plan if 0 < t < duration]
    return initial, later


class Applier(threading.Thread):
    """Applies planned rate changes with setter.set(bit/s) at t0_ns + t_s."""

    def __init__(self, setter, plan, t0_ns):
        super().__init__(daemon=True)
        self.setter, self.plan, self.t0_ns = setter, plan, t0_ns
        self.log = []          # (t_s, planned_ns, applied_ns, rate, error)
        self.stop_event = threading.Event()

    def run(self):
        # Guest vCPUs are shared with the traffic: a real-time priority for
        # this thread alone keeps the changes on time when the guest is busy.
        # Without the privilege the schedule still runs, only less precisely.
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
            self.realtime = True
        except OSError:
            self.realtime = False
        for t_s, rate in self.plan:
            planned = self.t0_ns + round(t_s * 1e9)
            # Sleep most of the way, then the last 2 ms in short naps: a
            # long sleep under TCG can overshoot by several ms.
            while True:
                left = planned - time.monotonic_ns()
                if left <= 0:
                    break
                if self.stop_event.wait(max(left - 2_000_000, 200_000) / 1e9):
                    return
            try:
                self.setter.set(parse_rate(rate))
                err = ""
            except OSError as e:
                err = str(e)
            self.log.append((t_s, planned, time.monotonic_ns(), rate, err))

    def stop(self):
        self.stop_event.set()
        if self.is_alive():
            self.join()
        self.setter.close()

    def write(self, path):
        """link.log: one line per planned change, planned vs applied."""
        done = {p[0] for p in self.log}
        with open(path, "w", encoding="utf-8") as f:
            f.write(f"{LOG_FORMAT}\n# t0_ns: {self.t0_ns}\n"
                    f"# realtime: {int(getattr(self, 'realtime', False))}\n")
            f.write("t_s\tplanned_ns\tapplied_ns\tlate_ms\trate\tresult\n")
            for t_s, planned, applied, rate, err in self.log:
                f.write(f"{t_s}\t{planned}\t{applied}\t{(applied - planned) / 1e6:.3f}\t"
                        f"{rate}\t{err or 'ok'}\n")
            for t_s, rate in self.plan:
                if t_s not in done:
                    f.write(f"{t_s}\t{self.t0_ns + round(t_s * 1e9)}\t-\t-\t{rate}\t"
                            "not-applied\n")
