#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Print one demo table row per class: scheduled, received, on time.

usage: demo_table.py SEND.tsv RECV.tsv LABEL

A packet is on time when it arrived before its deadline (expiry_ns of the
sender's record).  The first 3 s of the call are not counted, as in the
paper.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "userspace", "tests"))
import records  # noqa: E402

WARMUP_NS = 3_000_000_000


def main():
    send, recv, label = records.read(sys.argv[1]), records.read(sys.argv[2]), sys.argv[3]
    start = int(send.rows[0]["planned_ns"]) if send.rows else 0
    arrived = {int(r["seq"]): int(r["recv_ns"]) for r in recv.rows}
    for cls in ("audio", "video"):
        rows = [r for r in send.rows if r["class"] == cls
                and int(r["planned_ns"]) - start >= WARMUP_NS]
        got = [r for r in rows if int(r["seq"]) in arrived]
        on_time = [r for r in got if arrived[int(r["seq"])] <= int(r["expiry_ns"])]
        n = max(len(rows), 1)
        print(f"{label:7} {cls:6} {len(rows):5} {100 * len(got) / n:8.1f}% "
              f"{100 * len(on_time) / n:7.1f}%")


if __name__ == "__main__":
    main()
