# SPDX-License-Identifier: GPL-2.0
"""SBPN for DCCP from Python: what userspace/lib/sbpn.h gives C.

Debian's Python has no ``socket.SOCK_DCCP``; this module has the numbers of
the project's ``linux/dccp.h`` and small functions around them::

    import sbpn
    s = sbpn.socket(policy="sbpn2", tx_qlen=5, ccid=3)   # before connect()
    s.connect(("10.77.0.2", 7000))
    sbpn.send(s, payload, prio=2, expiry_ns=sbpn.monotonic_ns() + 200_000_000)
    print(sbpn.qstats(s)["expired"], sbpn.tx_info(s)["x_Bps"])

``send`` returns False when the queue is full (EAGAIN: the packet is
dropped, as the paper's application did).  With ``notices=True`` (or
``set_notify``), ``read_notices`` returns the packets the kernel's policy
discarded after admitting them, with their payload, reason and expiry.
Everything else raises ``OSError`` with the kernel's errno.  The constants
must match Documentation/networking/dccp.rst of the patched tree; the VM
test (userspace/tests/vm_transfer.sh) runs this module against the kernel.
"""
import errno
import socket as _socket
import struct
import time

SOCK_DCCP, IPPROTO_DCCP, SOL_DCCP = 6, 33, 269

DCCP_SOCKOPT_SERVICE = 2
DCCP_SOCKOPT_CCID = 13
DCCP_SOCKOPT_QPOLICY_ID = 16
DCCP_SOCKOPT_QPOLICY_TXQLEN = 17
DCCP_SOCKOPT_QPOLICY_STATS = 32
DCCP_SOCKOPT_QPOLICY_FLAGS = 33
DCCP_SOCKOPT_QPOLICY_ORDER = 34
DCCP_SOCKOPT_TX_CCID_FLAGS = 35
DCCP_SOCKOPT_CCID_TX_INFO = 192

# The bits of DCCP_SOCKOPT_QPOLICY_FLAGS and DCCP_SOCKOPT_TX_CCID_FLAGS, and
# the values of DCCP_SOCKOPT_QPOLICY_ORDER: any time, inherited on accept; a
# bit or an order the kernel does not know is EINVAL.
DCCP_QPOLICY_F_NOTIFY = 1 << 0
DCCP_QPOLICY_F_LAST_RTT = 1 << 1
DCCP_QPOLICY_F_PREDICT = 1 << 2
DCCP_QPOLICY_F_OWD = 1 << 3
DCCP_QPOLICY_F_FRAME = 1 << 4
DCCP_TX_CCID_F_FASTER_RESTART = 1 << 0
DCCP_TX_CCID_F_SIZE_PACING = 1 << 1
DCCP_QPOLICY_ORDER_PRIORITY = 0
DCCP_QPOLICY_ORDER_EDF = 1
DCCP_QPOLICY_ORDER_NEWEST = 2

DCCP_SCM_PRIORITY = 1
DCCP_SCM_EXPIRY = 2
DCCP_SCM_FRAME = 4

# SIMPLE takes no cmsg, PRIO a priority, the SBPN policies all three: sending
# one a policy does not take fails with EINVAL.
POLICIES = {"simple": 0, "prio": 1, "sbpn1": 8, "sbpn2": 9, "sbpn3": 10}

# struct dccp_qpolicy_stats, __u64 each, in this order (fields only grow)
QSTATS_FIELDS = ("queued", "sent", "expired", "expired_sent", "evicted",
                 "refused", "purged", "ccid_err", "qlen", "xmit_err", "frame")
# struct tfrc_tx_info (include/linux/tfrc.h): 36 bytes of fields, padded to
# 40 for the __u64s' alignment; the kernel wants the padded size.
_TX_INFO = struct.Struct("=QQIIIII4x")

# Drop notices: struct sock_extended_err on the error queue
IP_RECVERR, IPV6_RECVERR = 11, 25
SO_EE_ORIGIN_DCCP_QPOLICY = 7     # include/uapi/linux/errqueue.h, with the series
_EE = struct.Struct("=IBBBBII")
# enum dccp_qpolicy_ee_code; "late" counts as expired in the counters
DROP_REASONS = {1: "expired", 2: "evicted", 3: "ccid_err", 4: "predicted_late", 5: "frame"}

SERVICE_CODE = 0x5342504E          # "SBPN", what sbpn-send and sbpn-recv use


def monotonic_ns():
    """CLOCK_MONOTONIC in ns: the clock of DCCP_SCM_EXPIRY deadlines."""
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def socket(policy="simple", tx_qlen=None, ccid=3, family=_socket.AF_INET,
           service=SERVICE_CODE, notices=False):
    """A DCCP socket set up before connect() or listen(): the queueing
    ``policy`` (a name of POLICIES), ``tx_qlen`` (None: the kernel's
    default, 0: unbounded), the CCID for both directions, the service code
    and, with ``notices``, the drop notices."""
    s = _socket.socket(family, SOCK_DCCP, IPPROTO_DCCP)
    try:
        s.setsockopt(SOL_DCCP, DCCP_SOCKOPT_SERVICE, struct.pack("!I", service))
        s.setsockopt(SOL_DCCP, DCCP_SOCKOPT_CCID, bytes([ccid]))
        set_policy(s, policy)
        if tx_qlen is not None:
            set_qlen(s, tx_qlen)
        if notices:
            set_notify(s, True)
    except BaseException:
        s.close()
        raise
    return s


def set_policy(s, policy):
    """Select the queueing policy by name; only while the socket is closed."""
    if policy not in POLICIES:
        raise ValueError(f"policy {policy!r}: expected one of {', '.join(POLICIES)}")
    s.setsockopt(SOL_DCCP, DCCP_SOCKOPT_QPOLICY_ID, POLICIES[policy])


def set_qlen(s, tx_qlen):
    """The queue's length limit in packets, 0 for none; any time."""
    s.setsockopt(SOL_DCCP, DCCP_SOCKOPT_QPOLICY_TXQLEN, tx_qlen)


def _get_int(s, opt):
    """The value of an int option of SOL_DCCP."""
    return struct.unpack("i", s.getsockopt(SOL_DCCP, opt, 4))[0]


def _set_flag(s, opt, bit, on):
    """One bit of the flags option ``opt`` on or off, the others kept: the
    kernel only replaces the whole mask, so read, change and write it."""
    flags = _get_int(s, opt)
    s.setsockopt(SOL_DCCP, opt, flags | bit if on else flags & ~bit)


def _set_order(s, order, on):
    """The send order ``order`` on or off.  On replaces only the default
    order (EINVAL while the other of EDF and NEWEST is in force, as when
    they were two options); off returns to the default only from ``order``
    itself."""
    cur = _get_int(s, DCCP_SOCKOPT_QPOLICY_ORDER)
    if bool(on) == (cur == order):
        return
    if on and cur != DCCP_QPOLICY_ORDER_PRIORITY:
        raise OSError(errno.EINVAL, f"send order {cur} in force")
    s.setsockopt(SOL_DCCP, DCCP_SOCKOPT_QPOLICY_ORDER,
                 order if on else DCCP_QPOLICY_ORDER_PRIORITY)


def set_faster_restart(s, on):
    """CCID3 TFRC Faster Restart on or off; any time."""
    _set_flag(s, DCCP_SOCKOPT_TX_CCID_FLAGS, DCCP_TX_CCID_F_FASTER_RESTART, on)


def set_size_pacing(s, on):
    """CCID3 spaces each packet by its own size (len / X) on or off; any
    time."""
    _set_flag(s, DCCP_SOCKOPT_TX_CCID_FLAGS, DCCP_TX_CCID_F_SIZE_PACING, on)


def set_predict(s, on):
    """SBPN judges expiry at each packet's predicted departure on or off;
    any time."""
    _set_flag(s, DCCP_SOCKOPT_QPOLICY_FLAGS, DCCP_QPOLICY_F_PREDICT, on)


def set_last_rtt(s, on):
    """After CCID3's nofeedback timer expired, judge expiry by the last RTT
    measured (as the SBPN paper did) instead of 0, on or off; any time."""
    _set_flag(s, DCCP_SOCKOPT_QPOLICY_FLAGS, DCCP_QPOLICY_F_LAST_RTT, on)


def set_owd(s, on):
    """Judge expiry by a one-way delay of RTT - min RTT/2 (all queueing on
    the way out) instead of RTT/2, on or off; any time."""
    _set_flag(s, DCCP_SOCKOPT_QPOLICY_FLAGS, DCCP_QPOLICY_F_OWD, on)


def set_frame(s, on):
    """Give up a frame (the packets of one priority and frame id, see send();
    without an id, of one expiry) whole when one of its packets is dropped,
    on or off; any time."""
    _set_flag(s, DCCP_SOCKOPT_QPOLICY_FLAGS, DCCP_QPOLICY_F_FRAME, on)


def set_edf(s, on):
    """Send the earliest expiry first, whatever its priority, on or off;
    any time.  EINVAL while NEWEST is on."""
    _set_order(s, DCCP_QPOLICY_ORDER_EDF, on)


def set_newest(s, on):
    """Send the packets of a priority newest first, on or off; any time.
    EINVAL while EDF is on."""
    _set_order(s, DCCP_QPOLICY_ORDER_NEWEST, on)


def set_notify(s, on):
    """Drop notices (DCCP_QPOLICY_F_NOTIFY) on or off; any time."""
    _set_flag(s, DCCP_SOCKOPT_QPOLICY_FLAGS, DCCP_QPOLICY_F_NOTIFY, on)


def send(s, data, prio=None, expiry_ns=None, flags=_socket.MSG_DONTWAIT, frame=None):
    """Send one datagram with a priority (higher is sent first), an
    absolute deadline on CLOCK_MONOTONIC (ns) and the id of the frame it is
    a piece of (not 0; set_frame() gives a frame up whole), each only if
    given.  True if it was queued, False if the queue was full (EAGAIN)."""
    anc = []
    if prio is not None:
        anc.append((SOL_DCCP, DCCP_SCM_PRIORITY, struct.pack("=I", prio)))
    if expiry_ns is not None:
        anc.append((SOL_DCCP, DCCP_SCM_EXPIRY, struct.pack("=Q", expiry_ns)))
    if frame is not None:
        anc.append((SOL_DCCP, DCCP_SCM_FRAME, struct.pack("=I", frame)))
    try:
        s.sendmsg([data], anc, flags)
    except BlockingIOError:
        return False
    return True


def qstats(s):
    """The queueing policy's counters (DCCP_SOCKOPT_QPOLICY_STATS) as a dict
    of QSTATS_FIELDS; fields an older kernel does not have are missing."""
    raw = s.getsockopt(SOL_DCCP, DCCP_SOCKOPT_QPOLICY_STATS, 8 * len(QSTATS_FIELDS))
    values = struct.unpack(f"={len(raw) // 8}Q", raw[:len(raw) // 8 * 8])
    return dict(zip(QSTATS_FIELDS, values))


def tx_info(s):
    """CCID3's sender state in plain units: x_Bps and x_recv_Bps (bytes/s),
    x_calc_Bps, rtt_us, p (0..1), rto_us, ipi_us.  OSError under CCID 2."""
    x, x_recv, x_calc, rtt, p, rto, ipi = _TX_INFO.unpack(
        s.getsockopt(SOL_DCCP, DCCP_SOCKOPT_CCID_TX_INFO, _TX_INFO.size))
    return {"x_Bps": x / 64, "x_recv_Bps": x_recv / 64, "x_calc_Bps": x_calc,
            "rtt_us": rtt, "p": p / 1e6, "rto_us": rto, "ipi_us": ipi}


def read_notices(s, bufsize=65536):
    """The drop notices waiting on the error queue, without blocking: a list
    of (payload, reason, expiry_ns), reason one of DROP_REASONS' values."""
    out = []
    while True:
        try:
            data, anc, _, _ = s.recvmsg(bufsize, 256, _socket.MSG_ERRQUEUE |
                                        _socket.MSG_DONTWAIT)
        except BlockingIOError:
            return out
        for level, kind, payload in anc:
            if (level, kind) not in ((_socket.SOL_IP, IP_RECVERR),
                                     (_socket.SOL_IPV6, IPV6_RECVERR)):
                continue
            err, origin, _, code, _, info, edata = _EE.unpack(payload[:_EE.size])
            if origin != SO_EE_ORIGIN_DCCP_QPOLICY or err != errno.ECANCELED:
                continue
            out.append((data, DROP_REASONS.get(code, f"code {code}"),
                        edata << 32 | info))
