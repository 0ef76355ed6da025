#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Run the queueing-policy benchmark in the VM and print its table.

Runs inside the guest booted by `make bench` (the bench build of dccp.ko,
see kernel/qpolicy_bench.c): every policy x qlen x pattern once per round,
interleaved, for several rounds; prints the median ns per packet and its
ratio to SIMPLE at the same qlen and pattern.  Every result is checked to be
the steady state the benchmark defines (all packets sent, nothing evicted,
refused or expired, QLEN - 1 packets left queued); anything else fails.
The results of every round go to $VM_OUT/qpolicy-bench.tsv.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

BENCH = "/sys/kernel/debug/dccp_qpolicy_bench"
POLICIES = ["simple", "prio", "sbpn1", "sbpn2", "sbpn3"]
PATTERNS = ["inorder", "random", "reorder"]
QLENS = [5, 32, 1000, 10000]
# Packets timed per run: PRIO costs O(qlen) per packet, so fewer packets at
# long queues keep a run short; every policy gets the same count.
PACKET_WORK = 20_000_000  # packets x qlen per run, at most
PACKETS_MIN, PACKETS_MAX = 1000, 50000

HEADER = """\
DCCP queueing policies: enqueue+dequeue cost per packet, in the VM (TCG)
One packet = dccp_qpolicy_full() + dccp_qpolicy_push() as in sendmsg, then
dccp_qpolicy_top() + dccp_qpolicy_pop() as in dccp_xmit_packet(), on a
socket with tx_qlen = QLEN holding QLEN-1 packets before each push (steady
state, the queue never full: nothing evicted or refused; no CCID, RTT 0).
inorder: 2 priorities (audio 1 in 3, video), expiry increasing per priority;
random: priority 0..7 and expiry random; reorder: 1 priority, expiry
arrival + random jitter up to QLEN arrivals.  Nothing expires during a run.
The queue is filled with the pattern's priority-0 packets only: what a long
run leaves queued, as better packets leave first.
Cells: ns/packet, the median over chunks of 32 packets within a run, then
the median over {rounds} rounds; in brackets the ratio to SIMPLE, same row."""


def die(msg):
    print(f"bench-qpolicy: error: {msg}", file=sys.stderr)
    sys.exit(1)


def int_list(text):
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of integers: {text!r}")
    if any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"qlen must be >= 1: {text!r}")
    return values


def name_list(choices):
    def parse(text):
        names = text.split(",")
        bad = [n for n in names if n not in choices]
        if bad:
            raise argparse.ArgumentTypeError(
                f"unknown {', '.join(bad)} (choose from {', '.join(choices)})")
        return names
    return parse


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5,
                   help="rounds of the whole sweep; the median is shown "
                        "(default 5)")
    p.add_argument("--qlen", type=int_list, default=QLENS,
                   help="comma-separated tx_qlen values "
                        "(default 5,32,1000,10000)")
    p.add_argument("--policy", type=name_list(POLICIES), default=POLICIES,
                   help="comma-separated policies; simple is always added "
                        "for the ratios (default: all)")
    p.add_argument("--pattern", type=name_list(PATTERNS), default=PATTERNS,
                   help="comma-separated patterns "
                        "(default inorder,random,reorder)")
    args = p.parse_args()
    if args.rounds < 1:
        p.error("--rounds must be >= 1")
    if "simple" not in args.policy:
        args.policy.insert(0, "simple")
    return args


def packets_for(qlen):
    return max(PACKETS_MIN, min(PACKETS_MAX, PACKET_WORK // qlen))


def setup():
    """Load our modules and make the benchmark file reachable."""
    subprocess.run(["modprobe", "dccp_ipv4"], check=True)
    if not os.path.ismount("/sys/kernel/debug"):
        subprocess.run(["mount", "-t", "debugfs", "debugfs",
                        "/sys/kernel/debug"], check=True)
    if not os.path.exists(BENCH):
        die(f"{BENCH} is missing: this dccp.ko is not the bench build "
            "(run `make bench`, which boots build/bench/modules)")


def run_one(policy, qlen, pattern):
    """One measurement, checked: (median over chunks, mean) ns/packet."""
    packets = packets_for(qlen)
    try:
        with open(BENCH, "w") as f:
            f.write(f"{policy} {qlen} {packets} {pattern}\n")
    except OSError as e:
        with open(BENCH) as f:
            reason = f.read().strip()
        die(f"{policy} qlen {qlen} {pattern}: {e.strerror}: {reason}")
    with open(BENCH) as f:
        line = f.read().strip()
    fields = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
    want = {"policy": policy, "qlen": str(qlen), "pattern": pattern,
            "packets": str(packets), "sent": str(packets), "evicted": "0",
            "refused": "0", "expired": "0", "qlen_end": str(qlen - 1)}
    wrong = [k for k, v in want.items() if fields.get(k) != v]
    if wrong or "ns_per_packet" not in fields:
        die(f"not the steady state asked for ({', '.join(wrong)}): {line}")
    return float(fields["ns_per_packet"]), float(fields["mean_ns_per_packet"])


def cell(ns, simple_ns):
    return f"{ns:.0f} ({ns / simple_ns:.2f})"


def main():
    args = parse_args()
    setup()
    start = time.monotonic()
    samples = {}
    out = os.environ.get("VM_OUT")
    tsv = open(os.path.join(out, "qpolicy-bench.tsv"), "w") if out else None
    if tsv:
        tsv.write("round\tpolicy\tqlen\tpattern\tpackets\t"
                  "ns_per_packet\tmean_ns_per_packet\n")
    # TCG translates guest code on its first run: a first, unrecorded pass
    # keeps that cost out of the first round.
    for pattern in args.pattern:
        for policy in args.policy:
            run_one(policy, min(args.qlen), pattern)
    # Interleaved: a slow phase of the shared host hits all policies alike.
    for rnd in range(1, args.rounds + 1):
        for qlen in args.qlen:
            for pattern in args.pattern:
                for policy in args.policy:
                    ns, mean = run_one(policy, qlen, pattern)
                    samples.setdefault((qlen, pattern, policy), []).append(ns)
                    if tsv:
                        tsv.write(f"{rnd}\t{policy}\t{qlen}\t{pattern}\t"
                                  f"{packets_for(qlen)}\t{ns}\t{mean}\n")
        print(f"round {rnd}/{args.rounds} done after "
              f"{time.monotonic() - start:.0f} s", file=sys.stderr)
    if tsv:
        tsv.close()

    print(HEADER.format(rounds=args.rounds))
    with open("/sys/module/dccp/version") as f:
        print(f"Kernel {os.uname().release}, dccp.ko {f.read().strip()}")
    print()
    width = 16
    print(f"{'qlen':>6} {'pattern':<8} {'packets':>7}" +
          "".join(f"{p.upper():>{width}}" for p in args.policy))
    spread = (0.0, None)
    for qlen in args.qlen:
        for pattern in args.pattern:
            med = {p: statistics.median(samples[(qlen, pattern, p)])
                   for p in args.policy}
            cells = "".join(
                f"{cell(med[p], med['simple']):>{width}}" for p in args.policy)
            print(f"{qlen:>6} {pattern:<8} {packets_for(qlen):>7}{cells}")
            for p in args.policy:
                s = samples[(qlen, pattern, p)]
                rel = (max(s) - min(s)) / med[p]
                if rel > spread[0]:
                    spread = (rel, f"{p} qlen {qlen} {pattern}")
    print()
    if spread[1]:
        print(f"Widest spread over rounds (max-min)/median: "
              f"{spread[0]:.0%} ({spread[1]})")
    print(f"Measured in {time.monotonic() - start:.0f} s")


if __name__ == "__main__":
    main()
