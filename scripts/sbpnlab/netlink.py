# SPDX-License-Identifier: GPL-2.0
"""Change a bottleneck's rate over rtnetlink, without starting a process.

Under QEMU TCG starting `tc` takes hundreds of milliseconds, far too slow
for a schedule that must land within ~10 ms.  RateSetter opens one
NETLINK_ROUTE socket inside the router's namespace (entered with setns(2)
by the calling thread only, then left again) and sends RTM_NEWQDISC
"change" messages for the shaping qdisc: tbf (rate, burst, limit) or a
rate-only netem child (rate, limit).  set() returns when the kernel has
acknowledged the change, so that moment is when it took effect.
"""
import contextlib
import ctypes
import os
import socket
import struct

CLONE_NEWNET = 0x40000000
NETLINK_ROUTE = 0
RTM_NEWQDISC = 36
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR = 2
TCA_KIND, TCA_OPTIONS = 1, 2
TCA_TBF_PARMS, TCA_TBF_RATE64, TCA_TBF_BURST = 1, 4, 6
TCA_NETEM_RATE, TCA_NETEM_RATE64 = 6, 8
TC_LINKLAYER_ETHERNET = 1

_libc = ctypes.CDLL(None, use_errno=True)


@contextlib.contextmanager
def in_netns(name):
    """Run the body with this thread (only) in network namespace NAME."""
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(f"/run/netns/{name}", os.O_RDONLY)
    try:
        if _libc.setns(target, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns into {name}: {os.strerror(err)}")
        try:
            yield
        finally:
            if _libc.setns(own, CLONE_NEWNET) != 0:
                err = ctypes.get_errno()
                raise OSError(err, f"setns back: {os.strerror(err)}")
    finally:
        os.close(own)
        os.close(target)


def _attr(kind, payload):
    pad = (4 - len(payload) % 4) % 4
    return struct.pack("=HH", 4 + len(payload), kind) + payload + bytes(pad)


def _tbf_options(rate_bps, burst_bytes, limit):
    rate_Bps = rate_bps // 8
    ratespec = struct.pack("=BBHhHI", 0, TC_LINKLAYER_ETHERNET, 0, 0, 0,
                           min(rate_Bps, 0xFFFFFFFF))
    peak = bytes(12)
    # tbf passes "limit" on to its fifo child: packets for our pfifo,
    # bytes for a bfifo (sch_fifo.c fifo_set_limit()).
    parms = ratespec + peak + struct.pack("=III", limit, 0, 0)
    opts = _attr(TCA_TBF_PARMS, parms) + _attr(TCA_TBF_BURST, struct.pack("=I", burst_bytes))
    if rate_Bps > 0xFFFFFFFF:
        opts += _attr(TCA_TBF_RATE64, struct.pack("=Q", rate_Bps))
    return opts


def _netem_rate_options(rate_bps, limit):
    rate_Bps = rate_bps // 8
    qopt = struct.pack("=IIIIII", 0, limit, 0, 0, 0, 0)
    attrs = _attr(TCA_NETEM_RATE, struct.pack("=IiIi", min(rate_Bps, 0xFFFFFFFF), 0, 0, 0))
    if rate_Bps > 0xFFFFFFFF:
        attrs += _attr(TCA_NETEM_RATE64, struct.pack("=Q", rate_Bps))
    return qopt + attrs


class RateSetter:
    """Changes the rate of one shaping qdisc (kind 'tbf' or 'netem')."""

    def __init__(self, netns, dev, kind, handle, parent, limit, burst_bytes):
        self.kind, self.limit, self.burst = kind, limit, burst_bytes
        self.handle, self.parent = handle, parent
        self.seq = 0
        with in_netns(netns):
            self.ifindex = socket.if_nametoindex(dev)
            self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE)
        self.sock.bind((0, 0))

    def close(self):
        self.sock.close()

    def set(self, rate_bps):
        """Change the rate; return when the kernel acknowledged it."""
        if self.kind == "tbf":
            opts = _tbf_options(rate_bps, self.burst, self.limit)
        else:
            opts = _netem_rate_options(rate_bps, self.limit)
        tcm = struct.pack("=BBHiIII", socket.AF_UNSPEC, 0, 0, self.ifindex,
                          self.handle, self.parent, 0)
        body = tcm + _attr(TCA_KIND, self.kind.encode() + b"\0") + _attr(TCA_OPTIONS, opts)
        self.seq += 1
        hdr = struct.pack("=IHHII", 16 + len(body), RTM_NEWQDISC,
                          NLM_F_REQUEST | NLM_F_ACK, self.seq, 0)
        self.sock.send(hdr + body)
        while True:
            reply = self.sock.recv(65536)
            _, mtype, _, seq, _ = struct.unpack_from("=IHHII", reply)
            if mtype == NLMSG_ERROR and seq == self.seq:
                (err,) = struct.unpack_from("=i", reply, 16)
                if err:
                    raise OSError(-err, f"changing {self.kind} rate to {rate_bps} bit/s: "
                                  f"{os.strerror(-err)}")
                return
