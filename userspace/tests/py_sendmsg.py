#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The Python example of Documentation/traffic.rst, kept runnable.

usage: py_sendmsg.py ADDR PORT -- sends 10 packets with priorities over
DCCP (prio policy, CCID 3) to sbpn-recv, with the payload header of
Documentation/records.rst, and prints how many sendmsg() accepted.
"""
import socket
import struct
import sys
import time

SOCK_DCCP, IPPROTO_DCCP, SOL_DCCP = 6, 33, 269    # not in Debian's Python
DCCP_SOCKOPT_SERVICE, DCCP_SOCKOPT_CCID = 2, 13
DCCP_SOCKOPT_QPOLICY_ID, DCCP_SOCKOPT_QPOLICY_TXQLEN = 16, 17
DCCPQ_POLICY_PRIO = 1
DCCP_SCM_PRIORITY = 1

s = socket.socket(socket.AF_INET, SOCK_DCCP, IPPROTO_DCCP)
s.setsockopt(SOL_DCCP, DCCP_SOCKOPT_SERVICE, struct.pack("!I", 0x5342504E))
s.setsockopt(SOL_DCCP, DCCP_SOCKOPT_CCID, bytes([3]))
s.setsockopt(SOL_DCCP, DCCP_SOCKOPT_QPOLICY_ID, DCCPQ_POLICY_PRIO)  # while CLOSED
s.setsockopt(SOL_DCCP, DCCP_SOCKOPT_QPOLICY_TXQLEN, 32)
s.connect((sys.argv[1], int(sys.argv[2])))

accepted = 0
for seq in range(10):
    cls, prio = (0, 2) if seq % 2 == 0 else (1, 1)          # audio 2, video 1
    now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    expiry = now + 200_000_000                              # 200 ms lifetime
    hdr = struct.pack("<IIBBHIQQ", 0x4E504253, seq, cls, 1, 7, 0, now, expiry)
    payload = hdr + bytes(214 - len(hdr))
    anc = [(SOL_DCCP, DCCP_SCM_PRIORITY, struct.pack("=I", prio))]
    # with an SBPN policy, add the deadline too:
    # anc.append((SOL_DCCP, DCCP_SCM_EXPIRY, struct.pack("=Q", expiry)))  # = 2
    try:
        s.sendmsg([payload], anc, socket.MSG_DONTWAIT)
        accepted += 1
    except BlockingIOError:                                  # EAGAIN: queue full
        pass
    time.sleep(0.02)
time.sleep(0.5)
s.close()
print(f"{accepted} accepted")
sys.exit(0 if accepted == 10 else 1)
