# SPDX-License-Identifier: GPL-2.0
"""How long a DCCP handshake takes over a scenario's path.

Each connect happens in freshly built namespaces, as at the start of a run,
so the neighbour caches are empty and the first packets wait for ARP,
whose requests cross the emulated path with its delay and loss.  The time
connect() takes is the RTT the client samples from Request and Response
(dccps_syn_rtt) plus the Request's time in the sender.
"""
import socket
import time

from .netlink import in_netns
from .testbed import RECEIVER_ADDR, Testbed

SOCK_DCCP, IPPROTO_DCCP = 6, 33
PORT = 5001
SLOW_S = 0.5        # twice the lifetime the paper's media uses


def measure(spec, count, slot=0, out=print):
    """Connect COUNT times over SPEC's path; return (seconds, errors)."""
    times, errors = [], []
    for i in range(count):
        bed = Testbed(f"hs{slot}-{i}", spec.config["link"], spec.config["link"]["rate"])
        try:
            bed.open()
            with in_netns(bed.receiver):
                lsk = socket.socket(socket.AF_INET, SOCK_DCCP, IPPROTO_DCCP)
            with in_netns(bed.sender):
                csk = socket.socket(socket.AF_INET, SOCK_DCCP, IPPROTO_DCCP)
            with lsk, csk:
                lsk.bind((RECEIVER_ADDR, PORT))
                lsk.listen(1)
                t = time.monotonic()
                try:
                    csk.connect((RECEIVER_ADDR, PORT))
                except OSError as e:
                    errors.append(f"connect {i + 1}: {e.strerror} after "
                                  f"{(time.monotonic() - t) * 1000:.0f} ms")
                    out(errors[-1])
                    continue
                times.append(time.monotonic() - t)
                out(f"connect {i + 1}: {times[-1] * 1000:.0f} ms")
        finally:
            bed.close()
    return times, errors


def summary(times, errors):
    """Lines saying how the handshake times are distributed."""
    if not times:
        return [f"no connect succeeded ({len(errors)} failed)"]
    ms = sorted(t * 1000 for t in times)
    slow = [m for m in ms if m > SLOW_S * 1000]
    return [f"{len(ms)} connects, {len(errors)} failed",
            f"min {ms[0]:.0f} ms, median {ms[len(ms) // 2]:.0f} ms, max {ms[-1]:.0f} ms",
            f"over {SLOW_S * 1000:.0f} ms: {len(slow)} ({100 * len(slow) / len(ms):.1f} %)"
            + (": " + " ".join(f"{m:.0f}" for m in slow) if slow else "")]
