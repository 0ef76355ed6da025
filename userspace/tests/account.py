#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check that every packet a sender scheduled is accounted for.

usage: account.py SEND.tsv RECV.tsv [NOTICES.tsv] [--expect-loss] [--no-loss]
                  [--expect-notices]

Each scheduled packet must be exactly one of: received, lost (result ok,
no receiver line), dropped (EAGAIN) or failed (other errno).  Every
receiver line must match a sent packet (same seq, class, size, sent_ns).
Both files must be complete.  --no-loss: lost must be 0;
--expect-loss: lost must be > 0.  With the sender's drop notices
(sbpn-send --notices), each notice must name a packet sendmsg() accepted
that never arrived, with its class and expiry, and there must be as many
as the kernel's expired + evicted + ccid_err counters; --expect-notices:
at least one.  Prints one summary line; exit 1 on any violation.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "scripts"))
from sbpnlab import records  # noqa: E402


def check_notices(path, s, sent, got, errs):
    """The drop notices against the send records and the kernel's counters;
    returns how many there are."""
    try:
        n = records.read_notices(path)
    except ValueError as e:
        errs.append(str(e))
        return 0
    if not n.complete:
        errs.append("notices file not complete")
    for x in n.rows:
        q = int(x["seq"])
        p = sent.get(q)
        if p is None or p["result"] != "ok":
            errs.append(f"notice for seq {q}, which sendmsg() did not accept")
        elif q in got:
            errs.append(f"notice for seq {q}, which arrived")
        elif x["class"] != p["class"]:
            errs.append(f"notice for seq {q}: class {x['class']}, sent as {p['class']}")
        elif s.meta.get("expiry_cmsg") == "1" and x["expiry_ns"] != p["expiry_ns"]:
            errs.append(f"notice for seq {q}: expiry {x['expiry_ns']}, sent {p['expiry_ns']}")
    t = s.trailer
    counted = sum(int(t.get(f"qpolicy_{k}", 0)) for k in ("expired", "evicted", "ccid_err"))
    if counted != len(n.rows):
        errs.append(f"{len(n.rows)} notices, the kernel counted {counted} discarded")
    return len(n.rows)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    flags = {a for a in sys.argv[1:] if a.startswith("--")}
    s, r = records.read(args[0]), records.read(args[1])
    errs = []
    if s.columns not in (records.SEND_COLUMNS, records.SEND_CODED_COLUMNS):
        errs.append(f"send columns {s.columns}")
    if r.columns != records.RECV_COLUMNS:
        errs.append(f"recv columns {r.columns}")
    for name, f in (("send", s), ("recv", r)):
        if not f.complete:
            errs.append(f"{name} file not complete")
    sent = {int(x["seq"]): x for x in s.rows}
    if sorted(sent) != list(range(len(s.rows))) or int(s.trailer.get("packets", -1)) != len(s.rows):
        errs.append("send seqs are not 0..N-1 or do not match the trailer's packets")
    got, dup, reordered, last = {}, 0, 0, -1
    for x in r.rows:
        q = int(x["seq"])
        if q in got:
            dup += 1
        got[q] = x
        if q < last:
            reordered += 1
        last = max(last, q)
        p = sent.get(q)
        if p is None:
            errs.append(f"received seq {q} was never scheduled")
        elif p["result"] != "ok":
            errs.append(f"received seq {q} whose send result was {p['result']}")
        elif (p["class"], p["size"], p["sent_ns"]) != (x["class"], x["size"], x["sent_ns"]):
            errs.append(f"seq {q}: recv {x['class']}/{x['size']}/{x['sent_ns']} != "
                        f"send {p['class']}/{p['size']}/{p['sent_ns']}")
    ok = [q for q, p in sent.items() if p["result"] == "ok"]
    eagain = sum(1 for p in sent.values() if p["result"] == "EAGAIN")
    other = sum(1 for p in sent.values() if p["result"] not in ("ok", "EAGAIN"))
    lost = sum(1 for q in ok if q not in got)
    received = len(got)
    if received + lost + eagain + other != len(sent):
        errs.append("received + lost + eagain + failed != scheduled")
    if other:
        errs.append(f"{other} sends failed with errors other than EAGAIN")
    if "--no-loss" in flags and lost:
        errs.append(f"{lost} lost where none may be")
    if "--expect-loss" in flags and not lost:
        errs.append("no packet lost although the path drops some")
    if not received:
        errs.append("nothing received")
    notices = check_notices(args[2], s, sent, got, errs) if len(args) > 2 else None
    if "--expect-notices" in flags and not notices:
        errs.append("no drop notice although the queue must have dropped packets")
    t = s.trailer
    print(f"scheduled {len(sent)} received {received} lost {lost} eagain {eagain} "
          f"failed {other} dup {dup} reordered {reordered}"
          + (f" notices {notices}" if notices is not None else "") + "; lateness p50 "
          f"{int(t.get('lateness_p50_ns', 0)) / 1e3:.0f} us p99 "
          f"{int(t.get('lateness_p99_ns', 0)) / 1e3:.0f} us max "
          f"{int(t.get('lateness_max_ns', 0)) / 1e3:.0f} us")
    for e in errs[:10]:
        print("  error:", e)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
