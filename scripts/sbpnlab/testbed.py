# SPDX-License-Identifier: GPL-2.0
"""The emulated path of one run: three namespaces and the bottleneck.

  sender (S) s-r ==== r-s  router (R)  r-d ==== d-r  receiver (D)
  10.0.1.1/24        10.0.1.2    10.0.2.2         10.0.2.1/24

R forwards.  The forward path's qdiscs sit on R's r-d (egress toward the
receiver): a root netem adds the forward delay and random loss, and its
child shapes: tbf (rate, burst) over a pfifo (queue_packets) or bfifo
(queue_bytes), or a rate-only netem whose limit is the queue in packets.
Delay first, then the bottleneck queue, so the queue limit counts queued
packets only, not the ones still in the delay line.  R's r-s (egress toward
the sender) carries the reverse delay, and the same shaping if rate_rev is
set.  TSO, GSO and GRO are off on every veth so the queue sees the packets
the endpoints sent.  Namespace names start with a per-run prefix, so several
testbeds coexist; close() deletes them whatever state they are in.
"""
import ctypes
import fcntl
import socket
import struct
import subprocess

from .netlink import RateSetter, in_netns
from .scenario import parse_rate

SENDER_ADDR, ROUTER_S_ADDR = "10.0.1.1", "10.0.1.2"
RECEIVER_ADDR, ROUTER_D_ADDR = "10.0.2.1", "10.0.2.2"
BOTTLENECK_DEV, REVERSE_DEV = "r-d", "r-s"
NETEM_DELAY_LIMIT = 1000000     # packets in the delay line: never the limit
SIOCETHTOOL = 0x8946
ETHTOOL_STSO, ETHTOOL_SGSO, ETHTOOL_SGRO = 0x1F, 0x24, 0x2C


class TestbedError(Exception):
    """A command that builds the testbed failed; str() says which."""


def _run(argv, stdin=None):
    p = subprocess.run(argv, input=stdin, capture_output=True, text=True)
    if p.returncode != 0:
        what = " ".join(argv)
        raise TestbedError(f"{what} failed ({p.returncode}): {p.stderr.strip()[:500]}")
    return p.stdout


def _offloads_off(netns, dev):
    """ethtool -K DEV tso off gso off gro off, without starting ethtool."""
    with in_netns(netns):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        for cmd in (ETHTOOL_STSO, ETHTOOL_SGSO, ETHTOOL_SGRO):
            value = ctypes.create_string_buffer(struct.pack("=II", cmd, 0))
            ifr = struct.pack("16sP16x", dev.encode(), ctypes.addressof(value))
            fcntl.ioctl(s, SIOCETHTOOL, ifr)
    finally:
        s.close()


def _us(ms):
    return f"{round(ms * 1000)}us"


class Testbed:
    """Build with open(); the namespaces are .sender, .router, .receiver."""

    def __init__(self, prefix, link, initial_rate, extra_receiver_addrs=()):
        self.sender, self.router, self.receiver = (f"{prefix}-s", f"{prefix}-r",
                                                   f"{prefix}-d")
        self.link, self.initial_rate = link, initial_rate
        self.extra_addrs = list(extra_receiver_addrs)
        self.created = False

    def open(self):
        S, R, D = self.sender, self.router, self.receiver
        self.created = True
        _run(["ip", "-batch", "-"], "\n".join([
            f"netns add {S}", f"netns add {R}", f"netns add {D}",
            f"link add s-r netns {S} type veth peer name r-s netns {R}",
            f"link add r-d netns {R} type veth peer name d-r netns {D}", ""]))
        # No IPv6: its neighbour discovery would put packets on the path
        # that nobody asked for (and the runner counts packets).
        for ns in (S, R, D):
            with in_netns(ns):
                for conf in ("all", "default"):
                    with open(f"/proc/sys/net/ipv6/conf/{conf}/disable_ipv6", "w") as f:
                        f.write("1")
        _run(["ip", "-n", S, "-batch", "-"], "\n".join([
            "link set lo up", "link set s-r up", f"addr add {SENDER_ADDR}/24 dev s-r",
            f"route add default via {ROUTER_S_ADDR}", ""]))
        _run(["ip", "-n", R, "-batch", "-"], "\n".join([
            "link set lo up", "link set r-s up", "link set r-d up",
            f"addr add {ROUTER_S_ADDR}/24 dev r-s", f"addr add {ROUTER_D_ADDR}/24 dev r-d",
            ""]))
        _run(["ip", "-n", D, "-batch", "-"], "\n".join(
            ["link set lo up", "link set d-r up", f"addr add {RECEIVER_ADDR}/24 dev d-r",
             f"route add default via {ROUTER_D_ADDR}"] +
            [f"addr add {a}/32 dev d-r" for a, _ in self.extra_addrs] + [""]))
        if self.extra_addrs:
            # initcwnd is a route property: one host route per short-flow group.
            _run(["ip", "-n", S, "-batch", "-"], "\n".join(
                [f"route add {a}/32 via {ROUTER_S_ADDR} initcwnd {iw}"
                 for a, iw in self.extra_addrs] + [""]))
        with in_netns(R):
            with open("/proc/sys/net/ipv4/ip_forward", "w") as f:
                f.write("1")
        for ns, dev in ((S, "s-r"), (R, "r-s"), (R, "r-d"), (D, "d-r")):
            _offloads_off(ns, dev)
        L = self.link
        _run(["tc", "-n", R, "-batch", "-"], "\n".join(
            self._qdiscs(BOTTLENECK_DEV, L["delay_fwd_ms"], L["loss_pct"], self.initial_rate) +
            self._qdiscs(REVERSE_DEV, L["delay_rev_ms"], 0, L.get("rate_rev")) + [""]))

    def _queue_limit(self):
        return self.link.get("queue_packets") or self.link["queue_bytes"]

    def _qdiscs(self, dev, delay_ms, loss_pct, rate):
        loss = f" loss {loss_pct}%" if loss_pct else ""
        cmds = [f"qdisc add dev {dev} root handle 1: netem delay {_us(delay_ms)}{loss} "
                f"limit {NETEM_DELAY_LIMIT}"]
        if rate is None:
            return cmds
        bps, limit = parse_rate(rate), self._queue_limit()
        if self.link["shaper"] == "netem":
            return cmds + [f"qdisc add dev {dev} parent 1:1 handle 2: netem rate {bps}bit "
                           f"limit {limit}"]
        fifo = "pfifo" if "queue_packets" in self.link else "bfifo"
        return cmds + [
            f"qdisc add dev {dev} parent 1:1 handle 2: tbf rate {bps}bit "
            f"burst {self.link['burst_bytes']} limit {limit}",
            f"qdisc replace dev {dev} parent 2:1 handle 3: {fifo} limit {limit}"]

    def rate_setter(self):
        """A RateSetter for the forward bottleneck's shaping qdisc."""
        return RateSetter(self.router, BOTTLENECK_DEV, self.link["shaper"], 0x20000, 0x10001,
                          self._queue_limit(), self.link["burst_bytes"])

    def qdisc_stats(self):
        """`tc -s qdisc show` of the bottleneck and the reverse path, as text."""
        return "".join(_run(["tc", "-n", self.router, "-s", "qdisc", "show", "dev", d])
                       for d in (BOTTLENECK_DEV, REVERSE_DEV))

    def close(self):
        """Delete the namespaces (their veths go with them); never raises."""
        if self.created:
            subprocess.run(["ip", "-force", "-batch", "-"], capture_output=True, text=True,
                           input="".join(f"netns del {n}\n" for n in
                                         (self.sender, self.router, self.receiver)))
            self.created = False
