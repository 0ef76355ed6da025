# SPDX-License-Identifier: GPL-2.0
"""Statistics of experiment runs: from result files to numbers.

The definitions are in Documentation/statistics.rst.  Run(dir) reads one
complete run directory (Documentation/results-format.rst): its meta.json,
a MediaFlow per media-<name>.send.rec/.recv.rec pair, the CCID3 logs, the
long-lived TCP flows' records (sbpn-bulk; iperf3's JSON in older results),
the short TCP flows and link.log.  The functions below
compute, per run and class: delivery(), delays(), ipdv(), usable(),
loss_period_levels(); per flow: media_rates(), tcp_rates() in 0.4 s bins,
and what a viewer and a listener get (sbpnlab.quality: decodable frames,
freezes, frame delay, the E-model's R and MOS);
per short-flow group: short_rates(); per run: link_share(), jain(),
link_capacity(), stall_fraction(), short_flows(); per VP8 call over a link
whose rate changes: step_response() (sbpnlab.stepresponse);
run_metrics() gathers them all.  Across
runs: summary() (mean, 95 % Student-t interval, min/median/max) and
paired() (differences by seed).  Nothing here runs an experiment or draws.
"""
import glob
import json
import math
import os

import numpy as np
from scipy import stats as scipy_stats

from . import RESULTS_FORMAT, quality, records, stepresponse, vp8call
from .scenario import flow_label, parse_rate, setting_of

CLASSES = ("audio", "video")
POLICY_ORDER = ("simple", "prio", "sbpn1", "sbpn2", "sbpn3", "udp", "tcp")
BIN_S = 0.4                 # De Cicco et al.'s rate sampling period
PERCENTILES = (0, 25, 50, 75, 90, 95, 99, 100)
JITTER_BUFFERS_MS = (20, 40, 60, 80, 100, 150, 200)
# Loss-period levels (Jarvinen et al., table 2): 20 ms | 40-60 | 80-100 |
# 120-180 | 200+ ms lost.  A run's length is a multiple of the packet
# interval, so the limits sit half-way between the table's ranges.
LEVEL_LIMITS_MS = (30, 70, 110, 190)
# The E-model's fixed jitter buffer (Documentation/statistics.rst): playout
# at the minimum delay + 150 ms stays within the 200 ms lifetime at the
# main setting's 40 ms one-way delay; 40 ms (the loss-period levels')
# loses most audio once the bottleneck queues.
EMODEL_BUFFER_MS = 150


class FormatError(Exception):
    """A result file this code cannot read; str() names the file and why."""


class TooNewError(FormatError):
    """A result file of a newer format than this code knows."""


# ---- reading ----------------------------------------------------------------

def read_meta(run_dir):
    """meta.json of a run; FormatError if missing, malformed or too new."""
    path = os.path.join(run_dir, "meta.json")
    try:
        with open(path, encoding="utf-8") as f:
            meta = json.load(f)
    except FileNotFoundError:
        raise FormatError(f"{path}: missing (the run did not get far)") from None
    except (OSError, ValueError) as e:
        raise FormatError(f"{path}: not readable JSON: {e}") from None
    version = meta.get("format") if isinstance(meta, dict) else None
    if not isinstance(version, int):
        raise FormatError(f"{path}: no integer 'format' field")
    if version > RESULTS_FORMAT:
        raise TooNewError(f"{path}: format {version} is newer than this analysis "
                          f"(reads up to {RESULTS_FORMAT}): update scripts/sbpnlab")
    return meta


class MediaFlow:
    """One media flow: the sender's schedule joined with the receiver's lines.

    Arrays are in schedule order (seq); times are seconds from the run's t0;
    recv is NaN for a packet that did not arrive, expiry +inf for none.
    """

    def __init__(self, name, send, recv, t0_ns):
        rows = send.rows
        seqs = [int(r["seq"]) for r in rows]
        if seqs != list(range(len(rows))):
            raise FormatError(f"{name}: sender seqs are not 0..{len(rows) - 1} in order")

        def secs(key, rs):
            return (np.array([int(r[key]) for r in rs], dtype=np.int64) - t0_ns) / 1e9

        self.name, self.meta = name, send.meta
        self.complete = send.complete and recv.complete
        self.start = (int(send.meta["start_ns"]) - t0_ns) / 1e9
        self.cls = np.array([r["class"] for r in rows])
        self.bits = np.array([8 * int(r["size"]) for r in rows], dtype=float)
        self.planned, self.sent = secs("planned_ns", rows), secs("sent_ns", rows)
        raw_expiry = np.array([int(r["expiry_ns"]) for r in rows], dtype=np.int64)
        self.expiry = np.where(raw_expiry == 0, np.inf, (raw_expiry - t0_ns) / 1e9)
        self.accepted = np.array([r["result"] == "ok" for r in rows])
        # Coding dependencies (records.rst): each video packet's frame index
        # and key flag; None for records without them (frames independent).
        if "key" in send.columns:
            self.frame = np.array([int(r["frame"]) if r["frame"] != "-" else -1 for r in rows])
            self.key = np.array([int(r["key"]) if r["key"] != "-" else -1 for r in rows])
        else:
            self.frame = self.key = None
        self.recv = np.full(len(rows), np.nan)
        # seq -> why the sender's kernel discarded it (its drop notices), if
        # the run recorded them
        self.dropped = None
        # Receiver lines are in arrival order: count what came out of order.
        self.duplicates = self.reordered = 0
        highest = -1
        arrived = secs("recv_ns", recv.rows)
        for r, t in zip(recv.rows, arrived):
            q = int(r["seq"])
            if not 0 <= q < len(rows) or r["class"] != rows[q]["class"]:
                raise FormatError(f"{name}: received seq {q} ({r['class']}) "
                                  "does not match the sender's records")
            if not np.isnan(self.recv[q]):
                self.duplicates += 1
                continue
            self.recv[q] = t
            self.reordered += q < highest
            highest = max(highest, q)

    def select(self, cls, warmup_s):
        """Mask of the class's packets planned at least warmup_s after the
        flow's start (the warm-up is discarded)."""
        return (self.cls == cls) & (self.planned >= self.start + warmup_s)


class Run:
    """One complete run: meta, media flows, CCID3 logs, TCP flows, link log;
    variant: (rank, {"name", "point"}) of the campaign's variants
    (campaign.json's, in its order) that this run is, or None."""

    def __init__(self, run_dir, variants=None):
        self.dir = run_dir
        self.meta = read_meta(run_dir)
        if self.meta.get("status") != "complete" or "t0_ns" not in self.meta:
            raise FormatError(f"{run_dir}: run not complete: {self.meta.get('reason')}")
        self.variant = variant_of(self.meta.get("params", {}), variants or [])
        self.t0_ns = self.meta["t0_ns"]
        sends = sorted(glob.glob(os.path.join(run_dir, "media-*.send.rec")))
        self.flows, self.cc = {}, {}
        for s in sends:
            name = os.path.basename(s)[len("media-"):-len(".send.rec")]
            r = s[:-len(".send.rec")] + ".recv.rec"
            try:
                self.flows[name] = MediaFlow(name, records.read(s), records.read(r),
                                             self.t0_ns)
            except (OSError, ValueError) as e:
                raise FormatError(str(e)) from None
            cc = s[:-len(".send.rec")] + ".cc.log"
            if os.path.exists(cc):
                self.cc[name] = read_cc_log(cc, self.t0_ns)
            notices = s[:-len(".send.rec")] + ".notices.rec"
            if os.path.exists(notices):
                self.flows[name].dropped = read_notices(notices)
        # TCP flow i is the i-th flow of the [[tcp]] groups, in order.
        directions = [g["direction"] for g in self.meta["config"]["tcp"]
                      for _ in range(g["flows"])]
        self.tcp = {}
        for i, info in enumerate(self.meta.get("tcp", [])):
            rec = os.path.join(run_dir, f"tcp-{i}.rec")
            self.tcp[f"tcp-{i}"] = {
                "direction": directions[i],
                "intervals": (read_bulk(rec, self.t0_ns) if os.path.exists(rec) else
                              read_iperf(os.path.join(run_dir, f"tcp-{i}.json"),
                                         info["started_s"]))}
        self.link_log = read_link_log(os.path.join(run_dir, "link.log"), self.t0_ns)
        short = os.path.join(run_dir, "short-tcp.json")
        self.short = read_short_flows(short, self.t0_ns) if os.path.exists(short) else None

    @property
    def warmup_s(self):
        return float(self.meta["config"]["scenario"]["warmup_s"])

    @property
    def duration_s(self):
        return float(self.meta["config"]["scenario"]["duration_s"])

    @property
    def end_s(self):
        """The end of the last activity: a process that starts late under
        TCG shifts its flow past the scenario's duration."""
        ends = [self.duration_s] + [f.sent.max() for f in self.flows.values() if len(f.sent)]
        ends += [t["intervals"][1].max() for t in self.tcp.values() if len(t["intervals"][1])]
        return float(max(ends))

    def window(self, edges):
        """Mask of the bins the run-level metrics use: from the first media
        flow's start + warm-up to the last planned media packet."""
        start = min(f.start for f in self.flows.values()) + self.warmup_s
        end = max(f.planned.max() for f in self.flows.values())
        return (edges[:-1] >= start) & (edges[1:] <= end + BIN_S)


QUEUE_COLUMNS = ("q_qlen", "q_expired", "q_evicted", "q_refused")


def read_cc_log(path, t0_ns):
    """CCID3 state over time: dict of arrays t (s from t0), x and x_recv
    (bytes/s), rtt (s, NaN where the log has none), and the queue counters
    QUEUE_COLUMNS (NaN where the kernel gave none); samples without CCID3
    data (CCID 2) are dropped."""
    try:
        r = records.read(path, magic="# sbpn-cc 1")
    except (OSError, ValueError) as e:
        raise FormatError(str(e)) from None
    rows = [x for x in r.rows if x["x_Bps"] != "-"]
    col = {k: np.array([float(x[k]) for x in rows]) for k in ("t_ns", "x_Bps", "x_recv_Bps")}
    out = {"t": (col["t_ns"] - t0_ns) / 1e9, "x": col["x_Bps"], "x_recv": col["x_recv_Bps"],
           "rtt": np.array([float(x["rtt_us"]) / 1e6 if x.get("rtt_us", "-") != "-"
                            else math.nan for x in rows])}
    for k in QUEUE_COLUMNS:
        out[k] = np.array([float(x[k]) if x.get(k, "-") != "-" else math.nan for x in rows])
    return out


def read_notices(path):
    """{seq: reason} of a flow's drop notices (sbpn-send --notices)."""
    try:
        r = records.read_notices(path)
        return {int(x["seq"]): x["reason"] for x in r.rows}
    except (OSError, ValueError, KeyError) as e:
        raise FormatError(f"{path}: {e}") from None


# The fate of each scheduled packet, in the order the per-run figure lists them.
FATES = ("on time", "late", "lost in the network", "expired", "evicted", "given up with frame",
         "CCID error", "refused")
# A packet discarded as predicted late (QPOLICY_F_PREDICT) is counted expired
# by the kernel, and so it is here: "late" is a packet that arrived late.
_NOTICE_FATES = {"expired": "expired", "predicted_late": "expired", "evicted": "evicted",
                 "frame": "given up with frame", "ccid_err": "CCID error"}
assert set(_NOTICE_FATES) == set(records.NOTICE_REASONS), "a notice reason without its fate"


def fates(flow):
    """Array of FATES, one per scheduled packet: refused by sendmsg(),
    discarded by the sender's kernel (from the drop notices), lost on the
    way, or received on time or late against its expiry.  Without notices
    a kernel discard counts as lost in the network."""
    out = np.full(len(flow.cls), "lost in the network", dtype=object)
    got = ~np.isnan(flow.recv)
    out[got] = np.where(flow.recv[got] <= flow.expiry[got], "on time", "late")
    for seq, reason in (flow.dropped or {}).items():
        if 0 <= seq < len(out) and not got[seq]:
            out[seq] = _NOTICE_FATES.get(reason, "lost in the network")
    out[~flow.accepted] = "refused"
    return out


def read_bulk(path, t0_ns):
    """The intervals between an sbpn-bulk sender's samples as arrays
    (start_s, end_s, bits) from t0: the payload bits acknowledged in each."""
    try:
        r = records.read(path, magic=records.TCP_FORMAT)
        t = np.array([int(x["t_ns"]) for x in r.rows], dtype=np.int64)
        acked = np.array([int(x["bytes_acked"]) for x in r.rows], dtype=np.int64)
    except (OSError, ValueError, KeyError) as e:
        raise FormatError(f"{path}: {e}") from None
    s = (t - t0_ns) / 1e9
    return s[:-1], s[1:], 8.0 * np.diff(acked)


def read_iperf(path, started_s):
    """The intervals of an iperf3 client's --json as arrays (start_s, end_s,
    bits), for results written before sbpn-bulk: iperf3 counts from its own
    start, which the runner recorded as started_s after t0 (the connection
    set-up is not subtracted)."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        sums = [x["sum"] for x in doc["intervals"]]
        return (np.array([x["start"] for x in sums]) + started_s,
                np.array([x["end"] for x in sums]) + started_s,
                np.array([8.0 * x["bytes"] for x in sums]))
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise FormatError(f"{path}: not an iperf3 --json result ({e!r})") from None


def read_link_log(path, t0_ns):
    """Applied rate changes [(t_s from t0, bit/s)] from link.log ([] if none)."""
    if not os.path.exists(path):
        return []
    try:
        r = records.read(path, magic="# sbpn-link 1")
    except (OSError, ValueError) as e:
        raise FormatError(str(e)) from None
    return [((int(x["applied_ns"]) - t0_ns) / 1e9, parse_rate(x["rate"]))
            for x in r.rows if x["result"] == "ok"]


def read_short_flows(path, t0_ns):
    """short-tcp.json as arrays: group, size (bytes), start (s from t0, when
    the flow really started), fct (completion time in s, from that start
    to the server's answer; NaN for a flow that did not complete), end (s
    from t0: the answer, or when the client gave up; NaN if unknown) and
    delivered (bytes: size if completed, else what TCP had acked when the
    client gave up, 0 in results without it)."""
    def end(x):
        t = x["done_ns"] or x.get("ended_ns")
        return (t - t0_ns) / 1e9 if t else math.nan

    try:
        with open(path, encoding="utf-8") as f:
            flows = json.load(f)["flows"]
        return {"group": np.array([int(x["group"]) for x in flows], dtype=int),
                "size": np.array([int(x["size"]) for x in flows], dtype=float),
                "start": np.array([(x["started_ns"] - t0_ns) / 1e9 for x in flows]),
                "fct": np.array([(x["done_ns"] - x["started_ns"]) / 1e9
                                 if x["done_ns"] else math.nan for x in flows]),
                "end": np.array([end(x) for x in flows], dtype=float),
                "delivered": np.array([int(x["size"]) if x["done_ns"]
                                       else int(x.get("acked_bytes") or 0)
                                       for x in flows], dtype=float)}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise FormatError(f"{path}: not a short-tcp.json result ({e!r})") from None


# ---- per run and class ------------------------------------------------------

def delivery(flow, cls, warmup_s):
    """Counts and fractions of the class's scheduled packets after warm-up;
    the bytes on time; and its frames, the packets planned for one instant
    (the pieces of one video frame, one audio packet each), and those whose
    every piece is on time."""
    sel = flow.select(cls, warmup_s)
    got = sel & ~np.isnan(flow.recv)
    on_time = got & (flow.recv <= flow.expiry)
    n = int(sel.sum())
    _, frame = np.unique(flow.planned[sel], return_inverse=True)
    pieces = np.bincount(frame)
    whole = int((np.bincount(frame, weights=on_time[sel]) == pieces).sum())
    bits = flow.bits[sel].sum()
    return {"scheduled": n, "accepted": int((sel & flow.accepted).sum()),
            "received": int(got.sum()), "on_time": int(on_time.sum()),
            "received_frac": got.sum() / n if n else math.nan,
            "on_time_frac": on_time.sum() / n if n else math.nan,
            "bytes_on_time_frac": flow.bits[on_time].sum() / bits if bits else math.nan,
            "frames": len(pieces), "frames_on_time": whole,
            "frames_on_time_frac": whole / len(pieces) if len(pieces) else math.nan}


def delays(flow, cls, warmup_s):
    """One-way delays (s, recv - sent) in schedule order, NaN where lost."""
    sel = flow.select(cls, warmup_s)
    return (flow.recv - flow.sent)[sel]


def cdf(values):
    """(sorted finite values, cumulative fraction 1/n .. 1)."""
    x = np.sort(np.asarray(values)[np.isfinite(values)])
    return x, np.arange(1, len(x) + 1) / len(x)


def ipdv_samples(d):
    """IPDV of a delay sequence in schedule order (NaN = lost), RFC 3393:
    'consecutive': d[i] - d[i-1] for consecutive packets both received
    (the form of Jarvinen et al.'s table 1); 'vs_min': d[i] - min(d), the
    PDV form of RFC 5481.  Returns {form: array}."""
    d = np.asarray(d, dtype=float)
    pairs = d[1:] - d[:-1]
    got = d[np.isfinite(d)]
    return {"consecutive": pairs[np.isfinite(pairs)],
            "vs_min": got - got.min() if len(got) else got}


def ipdv(d):
    """{form: percentiles (PERCENTILES)} of ipdv_samples(d)."""
    return {k: percentiles(v, PERCENTILES) for k, v in ipdv_samples(d).items()}


def percentiles(values, ps):
    """np.percentile (linear interpolation), NaNs when there are no values."""
    return np.percentile(values, ps) if len(values) else np.full(len(ps), np.nan)


def usable(d, buffer_s):
    """Which packets a receiver with a jitter buffer of buffer_s can play:
    received, and delay <= base + buffer_s, base = the minimum delay
    (Jarvinen et al.'s worst case).  Lost packets are not usable."""
    d = np.asarray(d, dtype=float)
    if not np.isfinite(d).any():
        return np.zeros(len(d), dtype=bool)
    with np.errstate(invalid="ignore"):
        return d <= np.nanmin(d) + buffer_s


def loss_period_levels(lost, interval_s):
    """Level 0-5 of each packet (Jarvinen et al., table 2): 0 if not lost,
    else by the length of its run of consecutive lost packets, counted as
    run length x the packet interval: 20 ms (an isolated loss) 1, 40-60 ms
    2, 80-100 ms 3, 120-180 ms 4, 200 ms and more 5."""
    lost = np.asarray(lost, dtype=bool)
    levels = np.zeros(len(lost), dtype=int)
    i = 0
    while i < len(lost):
        if not lost[i]:
            i += 1
            continue
        j = i
        while j < len(lost) and lost[j]:
            j += 1
        gap_ms = (j - i) * interval_s * 1000
        levels[i:j] = 1 + sum(gap_ms > limit for limit in LEVEL_LIMITS_MS)
        i = j
    return levels


def packet_interval(flow, cls):
    """The class's nominal packet interval: the median planned spacing
    between successive instants (s)."""
    steps = np.diff(np.unique(flow.planned[flow.cls == cls]))
    return float(np.median(steps)) if len(steps) else math.nan


def received_rates(flow, warmup_s):
    """Packets per second received of each class and payload kbit/s of the
    whole flow, from its start + warm-up to one packet interval after its
    last planned packet."""
    sel = flow.planned >= flow.start + warmup_s
    step = min((x for x in (packet_interval(flow, c) for c in CLASSES) if not math.isnan(x)),
               default=0.0)
    span = flow.planned[sel].max() + step - (flow.start + warmup_s) if sel.any() else 0
    got = sel & ~np.isnan(flow.recv)
    out = {f"{c}.recv_pps": (got & (flow.cls == c)).sum() / span if span > 0 else math.nan
           for c in CLASSES}
    out["recv_kbps"] = flow.bits[got].sum() / span / 1000 if span > 0 else math.nan
    return out


def median_rtt_ms(cc, warmup_s, start_s=0.0):
    """Median of CCID3's RTT estimate after warm-up, ms (the RTT the SBPN
    policies judge expiry by: half of it is their one-way delay)."""
    sel = (cc["t"] >= start_s + warmup_s) & np.isfinite(cc["rtt"]) & (cc["rtt"] > 0)
    return float(np.median(cc["rtt"][sel])) * 1000 if sel.any() else math.nan


def median_x_kbps(cc, warmup_s, start_s=0.0):
    """Median of CCID3's allowed rate X after warm-up, kbit/s."""
    sel = cc["t"] >= start_s + warmup_s
    return float(np.median(cc["x"][sel])) * 8 / 1000 if sel.any() else math.nan


# ---- rates (0.4 s bins) -----------------------------------------------------

def bin_edges(end_s):
    """Edges of the BIN_S bins from t0 that cover [0, end_s]."""
    return np.arange(0, math.ceil(end_s / BIN_S - 1e-9) + 1) * BIN_S


def media_rates(flow, edges):
    """De Cicco et al.'s rates of a media flow per bin, bit/s of payload,
    by the time the packet was handed to the socket: throughput = bits
    sent (accepted by sendmsg), loss rate = bits sent and not received
    (in the network or the sender's kernel queue), goodput = the difference."""
    width = np.diff(edges)

    def rate(mask):
        return np.histogram(flow.sent[mask], bins=edges, weights=flow.bits[mask])[0] / width

    got = flow.accepted & ~np.isnan(flow.recv)
    return {"throughput": rate(flow.accepted), "goodput": rate(got),
            "loss": rate(flow.accepted & np.isnan(flow.recv))}


def tcp_rates(intervals, edges):
    """A TCP flow's intervals (start, end, bits) spread evenly over their
    span and summed per bin: its goodput in bit/s (sbpn-bulk: the bytes
    acknowledged; iperf3, in older results: the bytes written, which is the
    goodput once the socket buffer has filled)."""
    start, end, bits = intervals
    out = np.zeros(len(edges) - 1)
    for s, e, b in zip(start, end, bits):
        if e > s:
            overlap = np.clip(edges[1:], s, e) - np.clip(edges[:-1], s, e)
            out += b * overlap / (e - s)
    return out / np.diff(edges)


def short_rates(short, edges):
    """Goodput (bit/s per bin) of each short-flow group, {group: array}:
    each flow's delivered bytes spread evenly over its life, from its start
    to its end (see read_short_flows)."""
    out = {}
    for g in np.unique(short["group"]):
        sel = short["group"] == g
        bits = np.zeros(len(edges) - 1)
        for s, e, b in zip(short["start"][sel], short["end"][sel], short["delivered"][sel]):
            if np.isfinite(e) and e > s and b > 0:
                bits += 8 * b * (np.clip(edges[1:], s, e) - np.clip(edges[:-1], s, e)) / (e - s)
        out[int(g)] = bits / np.diff(edges)
    return out


def link_share(goodput, capacity, window):
    """Jain's index over the window means of the flows crossing the
    forward bottleneck ({name: bit/s per bin}) and the link's utilisation
    (mean over the window of their sum / capacity)."""
    means = [g[window].mean() for g in goodput.values()]
    total = sum(goodput.values())
    return {"jain": jain(means) if max(means) > 0 else math.nan,
            "utilisation": float((total[window] / capacity[window]).mean())}


def jain(xs):
    """Jain's fairness index (sum x)^2 / (n sum x^2): 1 when all equal,
    1/n when one flow has everything."""
    x = np.asarray(xs, dtype=float)
    if len(x) == 0 or not (x > 0).any():
        raise ValueError("Jain's index needs at least one positive rate")
    return float(x.sum() ** 2 / (len(x) * (x ** 2).sum()))


def link_steps(run):
    """The forward bottleneck's rate over the run: (starting rate,
    [(t_s, rate)]) in bit/s, each change at the time link.log says it was
    applied (or, without a log, when the schedule planned it)."""
    initial, planned = run.meta["link"]["initial_rate"], run.meta["link"]["changes"]
    steps = run.link_log or [(t, parse_rate(r)) for t, r in planned]
    return float(parse_rate(initial)), [(float(t), float(r)) for t, r in steps]


def link_capacity(run, edges):
    """Forward bottleneck rate (bit/s) averaged over each bin: the scenario's
    starting rate, then each change at the time link.log says it was
    applied (or, without a log, when the schedule planned it)."""
    initial, steps = link_steps(run)
    times = np.array([0.0] + [t for t, _ in steps])
    rates = np.array([initial] + [r for _, r in steps], dtype=float)
    # Integrate the step function over each bin.
    out = np.zeros(len(edges) - 1)
    ends = np.append(times[1:], np.inf)
    for t, e, r in zip(times, ends, rates):
        out += r * (np.clip(edges[1:], t, e) - np.clip(edges[:-1], t, e))
    return out / np.diff(edges)


def send_late_p99_ms(flow, warmup_s):
    """The 99th percentile (numpy's linear interpolation) of how late the
    sender handed its packets to the socket, sent - planned, over the
    packets planned after the warm-up, refused ones too (ms; NaN if none)."""
    late = (flow.sent - flow.planned)[flow.planned >= flow.start + warmup_s]
    return float(np.percentile(late, 99)) * 1000 if len(late) else math.nan


def stall_fraction(cc, rate_Bps, warmup_s, start_s=0.0):
    """Fraction of CCID3 samples after warm-up with X below rate_Bps (the
    samples are periodic, so this is the fraction of time)."""
    sel = cc["t"] >= start_s + warmup_s
    return float((cc["x"][sel] < rate_Bps).mean()) if sel.any() else math.nan


def class_rate_Bps(flow, cls):
    """The class's scheduled payload rate (bytes/s) while it is sending."""
    sel = flow.cls == cls
    interval = packet_interval(flow, cls)
    per_instant = flow.bits[sel].sum() / 8 / len(np.unique(flow.planned[sel]))
    return per_instant / interval


# ---- all metrics of a run -------------------------------------------------

def short_flows(short):
    """Per run: how many short flows there were, the fraction that
    completed, and the median and 95th percentile of the completion times
    of those that did (ms; warm-up included), all groups pooled
    ("short.*") and per group g ("short.g<g>.*")."""
    def of(fct, prefix):
        done = fct[np.isfinite(fct)] * 1000
        p50, p95 = percentiles(done, (50, 95))
        return {f"{prefix}.flows": len(fct),
                f"{prefix}.completed_frac": len(done) / len(fct) if len(fct) else math.nan,
                f"{prefix}.fct_p50_ms": float(p50), f"{prefix}.fct_p95_ms": float(p95)}

    out = of(short["fct"], "short")
    for g in np.unique(short["group"]):
        out.update(of(short["fct"][short["group"] == g], f"short.g{g}"))
    return out


def short_group_label(group):
    """How the report names a [[short_tcp]] group: "IW10 10 kB reno"."""
    size = group["size_bytes"]
    size = f"{size / 1e6:g} MB" if size >= 10**6 else f"{size / 1e3:g} kB"
    return f"IW{group['initcwnd']} {size} {group['cc']}"


def variant_of(params, variants):
    """(rank, variant) of the variant (campaign.json: {"name", "point"})
    whose part of the run ids a run's sweep values params have, or None:
    a campaign run before scenarios named their variants."""
    for rank, v in enumerate(variants):
        if all(k in params and params[k] == x for k, x in v["point"].items()):
            return rank, v
    return None


def policy_of(meta, flow):
    """A flow's row label (scenario.flow_label): "sbpn2+sp+pd", "udp+kr"."""
    return flow_label(next(x for x in meta["config"]["media"] if x["name"] == flow))


def identity(meta, flow, variant):
    """What a flow's metric row is part of: params, the sweep values that
    make its comparison; policy, its row label; label, its policy and
    options ("sbpn2+sp+pd+kr", policy_of()); rank, its variant's place.
    A named variant (variant_of()'s (rank, variant)) is labelled by its
    name and compared across the setting's sweep values; else the row is
    labelled by its options and compared across its sweep point's setting
    (scenario.setting_of)."""
    label = policy_of(meta, flow)
    if variant is None:
        return {"params": setting_of(meta["params"]), "policy": label, "label": label,
                "rank": None}
    rank, v = variant
    return {"params": {k: x for k, x in meta["params"].items() if k not in v["point"]},
            "policy": v["name"], "label": label, "rank": rank}


def policies(rows):
    """The row labels of metric rows: named variants in their scenario's
    order; then the policies in POLICY_ORDER, each followed by the same
    with options, fewest options first; unknown ones last."""
    ranks = {r["policy"]: r["rank"] for r in rows if r.get("rank") is not None}

    def key(label):
        if label in ranks:
            return (0, ranks[label])
        base, *opts = label.split("+")
        known = base in POLICY_ORDER
        return (1, not known, POLICY_ORDER.index(base) if known else 0, base, len(opts),
                opts)

    return sorted({r["policy"] for r in rows}, key=key)


def quality_metrics(flow, warmup_s, buffer_s=EMODEL_BUFFER_MS / 1000, frame_chain=True):
    """What a viewer and a listener get (sbpnlab.quality): the video's
    decodable frames, freezes and 95th-percentile frame delay (frames
    after warm-up; reference chains run through it), and the audio's
    E-model R and MOS with a fixed jitter buffer of buffer_s.  Without
    frame_chain (a VP8 call, whose frames reference what their layer
    reads, not the frame before: vp8call scores it) the video's are NaN."""
    out = {}
    v = flow.cls == "video"
    if v.any() and frame_chain:
        q = quality.video_quality(
            flow.planned[v], flow.recv[v], flow.expiry[v],
            None if flow.key is None else flow.frame[v],
            None if flow.key is None else flow.key[v], since=flow.start + warmup_s)
        out.update({f"video.{k}": float(x) for k, x in q.items()})
    else:
        out.update({f"video.{k}": math.nan for k in ("decodable_frac", "freezes",
                                                     "freeze_s_per_min", "frame_delay_p95_ms")})
    a = quality.audio_quality(delays(flow, "audio", warmup_s), buffer_s)
    out.update({"audio.r": a["r"], "audio.mos": a["mos"], "audio.emodel_ppl": a["ppl"],
                "audio.emodel_ta_ms": a["ta_ms"], "audio.emodel_clamped": a["clamped"]})
    return out


def step_response(run, flow, goodput, capacity, window):
    """How a call followed the link's rate schedule (stepresponse;
    Documentation/statistics.rst, "Steps of the link's rate"): its
    offered rate (every packet it planned, audio and coded video, accepted
    by sendmsg() or not) against each change of the link's rate after the
    warm-up, and its goodput over the link's capacity in the run's
    window: settle_up_s, settle_down_s, not_settled, steps, link_util_pct."""
    initial, changes = link_steps(run)
    responses = stepresponse.step_responses(
        flow.planned, flow.bits, initial, changes, flow.start, float(flow.planned.max()),
        since_s=flow.start + run.warmup_s)
    out = stepresponse.step_metrics(responses)
    out["link_util_pct"] = stepresponse.link_util_pct(goodput, capacity, window)
    return out


def run_metrics(run, buffer_s):
    """One dict per media flow of a run: identity (run, policy, seed, ...)
    and every per-run metric, after warm-up.  Loss-period levels are those
    of the audio with a jitter buffer of buffer_s."""
    meta, warm = run.meta, run.warmup_s
    edges = bin_edges(run.end_s)
    window = run.window(edges)
    # Every flow that crosses the forward bottleneck: the media, the
    # forward long-lived TCP flows and each short-flow group (bulk too).
    competing = [n for n, t in run.tcp.items() if t.get("direction") != "reverse"]
    goodput = {n: media_rates(f, edges)["goodput"] for n, f in run.flows.items()}
    goodput.update({n: tcp_rates(run.tcp[n]["intervals"], edges) for n in competing})
    if run.short is not None:
        goodput.update({f"short.g{g}": r for g, r in short_rates(run.short, edges).items()})
    capacity = link_capacity(run, edges)
    shared = link_share(goodput, capacity, window)
    # what the competing (forward) TCP flows got, together, and how many
    # they were (the mean flow's share is the one divided by the other)
    shared["tcp.goodput_kbps"] = (sum(float(goodput[n][window].mean()) for n in competing)
                                  / 1000 if competing else math.nan)
    shared["tcp.flows"] = len(competing)
    if run.short is not None:
        shared.update(short_flows(run.short))
        shared["short.groups"] = {g: short_group_label(grp) for g, grp in
                                  enumerate(meta["config"].get("short_tcp", []))}
    rows = []
    for name, flow in run.flows.items():
        row = {"dir": run.dir, "run": meta["run_id"],
               "scenario": meta["config"]["scenario"]["name"],
               **identity(meta, name, run.variant), "flow": name,
               "key": (meta["seed"], meta["repetition"]), "seed": meta["seed"],
               "repetition": meta["repetition"], **shared}
        for cls in CLASSES:
            for k, v in delivery(flow, cls, warm).items():
                row[f"{cls}.{k}"] = float(v)
            d = delays(flow, cls, warm)
            row[f"{cls}.delays"] = d
            p50, p95, p99 = percentiles(d[np.isfinite(d)], (50, 95, 99)) * 1000
            row.update({f"{cls}.delay_p50_ms": p50, f"{cls}.delay_p95_ms": p95,
                        f"{cls}.delay_p99_ms": p99})
            row[f"{cls}.ipdv"] = ipdv_samples(d)["consecutive"]
            for form, pct in ipdv(d).items():
                row[f"{cls}.ipdv_{form}_p99_ms"] = pct[PERCENTILES.index(99)] * 1000
            for b in JITTER_BUFFERS_MS:
                row[f"{cls}.loss_jb{b}"] = 1 - usable(d, b / 1000).mean() if len(d) else math.nan
        audio = delays(flow, "audio", warm)
        levels = loss_period_levels(~usable(audio, buffer_s), packet_interval(flow, "audio"))
        for lv in range(6):
            row[f"audio.level{lv}"] = (levels == lv).mean() if len(levels) else math.nan
        row["audio.acceptable"] = row["audio.level0"] + row["audio.level1"]
        vp8 = os.path.exists(vp8call.paths(run.dir, name)["frames"])
        row.update(quality_metrics(flow, warm, frame_chain=not vp8))
        if vp8:
            row.update({f"vp8.{k}": v for k, v in vp8call.flow_metrics(
                run.dir, name, flow, run.t0_ns, flow.start + warm).items()})
            if meta["link"]["changes"]:
                row.update({f"vp8.{k}": v for k, v in
                            step_response(run, flow, goodput[name], capacity, window).items()})
        row["send_late_p99_ms"] = send_late_p99_ms(flow, warm)
        # These counts cover the whole call, warm-up included.
        row["duplicates"], row["reordered"] = flow.duplicates, flow.reordered
        for k, v in meta.get("qpolicy", {}).get(name, {}).items():
            row[k] = int(v)
        cc = run.cc.get(name)
        has_audio = (flow.cls == "audio").any()
        row["stall"] = (stall_fraction(cc, class_rate_Bps(flow, "audio"), warm, flow.start)
                        if cc is not None and len(cc["t"]) and has_audio else math.nan)
        row.update(received_rates(flow, warm))
        row["x_median_kbps"] = (median_x_kbps(cc, warm, flow.start)
                                if cc is not None and len(cc["t"]) else math.nan)
        row["rtt_median_ms"] = (median_rtt_ms(cc, warm, flow.start)
                                if cc is not None and len(cc["t"]) else math.nan)
        rows.append({k: float(v) if isinstance(v, np.floating) else v
                     for k, v in row.items()})
    return rows


# ---- across runs ------------------------------------------------------------

def t_quantile(p, df):
    """Student's t quantile, e.g. t_quantile(0.975, 4) = 2.776."""
    return float(scipy_stats.t.ppf(p, df))


def summary(values):
    """n, mean, the 95 % Student-t interval's half width (ci, NaN for n < 2),
    min, median, max of the finite values."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    n = len(v)
    if n == 0:
        return {"n": 0, "mean": math.nan, "ci": math.nan, "min": math.nan,
                "median": math.nan, "max": math.nan}
    ci = t_quantile(0.975, n - 1) * v.std(ddof=1) / math.sqrt(n) if n > 1 else math.nan
    return {"n": n, "mean": float(v.mean()), "ci": ci, "min": float(v.min()),
            "median": float(np.median(v)), "max": float(v.max())}


def paired(base, other):
    """Summary of other - base over the keys (seed, repetition) both have:
    the same media schedule under two policies."""
    keys = sorted(set(base) & set(other))
    return summary([other[k] - base[k] for k in keys])


def paired_policies(rows, baseline, policy, metric):
    """paired() of metric between two policies' metric rows of one
    comparison: policy - baseline."""
    def by_key(p):
        return {r["key"]: r[metric] for r in rows if r["policy"] == p}

    return paired(by_key(baseline), by_key(policy))
