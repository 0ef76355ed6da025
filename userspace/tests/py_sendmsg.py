#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""sbpn.py as the Python example of Documentation/traffic.rst uses it, run.

usage: py_sendmsg.py ADDR PORT -- sends 10 packets with priorities and
deadlines over DCCP (SBPN2, CCID 3) to sbpn-recv, with the payload header
of Documentation/records.rst, through userspace/lib/sbpn.py; prints how
many sendmsg() accepted and the kernel's counters, and exits 1 unless all
10 were accepted and sent.
"""
import os
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import sbpn  # noqa: E402

s = sbpn.socket(policy="sbpn2", tx_qlen=32, ccid=3, notices=True)
s.connect((sys.argv[1], int(sys.argv[2])))

accepted = 0
for seq in range(10):
    cls, prio = (0, 2) if seq % 2 == 0 else (1, 1)          # audio 2, video 1
    now = sbpn.monotonic_ns()
    expiry = now + 200_000_000                              # 200 ms lifetime
    hdr = struct.pack("<IIBBHIQQ", 0x4E504253, seq, cls, 1, 7, 0, now, expiry)
    accepted += sbpn.send(s, hdr + bytes(214 - len(hdr)), prio=prio, expiry_ns=expiry)
    time.sleep(0.02)
time.sleep(0.5)
q = sbpn.qstats(s)
x = sbpn.tx_info(s)
dropped = sbpn.read_notices(s)      # (payload, reason, expiry_ns) per discarded packet
s.close()
print(f"{accepted} accepted, {q['sent']} sent, {q['expired']} expired, "
      f"{len(dropped)} drop notices; X {x['x_Bps']:.0f} B/s, RTT {x['rtt_us']} us")
sys.exit(0 if accepted == 10 and q["sent"] == 10 and not dropped else 1)
