#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check the competing traffic a scenario asks for (KTAP, in the VM).

  scripts/vm-run --timeout 900 -- scripts/tests/vm_competing.py

Two short runs through `sbpn-lab run`, then checks on their results:
  reverse: a TCP Reno flow on the reverse path, which has a bottleneck of
           its own (rate_rev 300 kbit/s), and a forward flow from 4 s to
           8 s: the reverse flow carries 50-100 % of 300 kbit/s, the
           reverse shaper dropped packets (so it was the bottleneck), and
           the forward flow started at 4 s (+2 s for a process start under
           TCG) and ran for its 4 s (+-0.5);
  short:   three short flows of 10 kB with an initial window of 10 over
           100 + 100 ms and three with 3: all complete, none faster than
           two round trips (connect, then data and answer), and the
           median of the initcwnd 3 flows is at least half a round trip
           slower (7 segments need one round trip more from a window of 3),
           and TCP_INFO's bytes acked, recorded for each flow, covers its size;
           a second call (CBR over DCCP, SBPN2) shares the link with the
           first (CBR over UDP): each receiver gets every packet its
           sender sent (the path is lossless; for DCCP, the kernel queue's
           sent counter).
Exit 0 all passed, 1 a check failed, 4 skipped (no root or tools not built).
"""
import json
import os
import shutil
import statistics
import sys
import tempfile

import labtest
from labtest import check

sys.path.insert(0, os.path.join(labtest.ROOT, "scripts"))
from sbpnlab import records  # noqa: E402

REVERSE = """
[scenario]
name = "reverse"
duration_s = 12
[link]
rate = "1mbit"
rate_rev = "300kbit"
delay_fwd_ms = 20
delay_rev_ms = 20
queue_packets = 20
[[tcp]]
flows = 1
direction = "reverse"
[[tcp]]
flows = 1
start_s = 4
stop_s = 8
[[media]]
name = "cbr"
source = "cbr"
transport = "udp"
"""

SHORT = """
[scenario]
name = "short"
duration_s = 10
[link]
rate = "10mbit"
delay_fwd_ms = 100
delay_rev_ms = 100
queue_packets = 100
[[short_tcp]]
count = 3
size_bytes = 10000
window_s = [1, 3]
initcwnd = 10
[[short_tcp]]
count = 3
size_bytes = 10000
window_s = [5, 7]
initcwnd = 3
[[media]]
name = "cbr"
source = "cbr"
transport = "udp"
[[media]]
name = "call2"
source = "cbr"
transport = "dccp"
policy = "sbpn2"
"""
RTT_S = 0.2


def check_reverse(rdir, meta):
    bps = meta["tcp"][0]["received_bps"]
    check("reverse: the reverse flow carries 50-100 % of rate_rev (300 kbit/s)",
          150e3 <= bps <= 300e3, f"goodput {bps / 1e3:.0f} kbit/s (payload only)")
    drops = labtest.qdisc_drops(meta["qdisc_stats"], "pfifo", 1)
    print("# " + meta["qdisc_stats"].replace("\n", "\n# "))
    check("reverse: the reverse path's own queue overflowed", drops is not None and drops > 0,
          f"dropped by the pfifo under the tbf on r-s: {drops}")
    fwd = records.read(os.path.join(rdir, "tcp-1.rec"), magic=records.TCP_FORMAT)
    started = meta["tcp"][1]["started_s"]
    ran = (int(fwd.rows[-1]["t_ns"]) - int(fwd.rows[0]["t_ns"])) / 1e9
    check("reverse: the forward flow ran from 4 s (+2) for 4 s (+-0.5)",
          4 <= started <= 6 and 3.5 <= ran <= 4.5,
          f"started at {started:.2f} s, ran {ran:.2f} s")


def check_short(rdir, meta):
    with open(os.path.join(rdir, "short-tcp.json"), encoding="utf-8") as f:
        flows = json.load(f)["flows"]
    done = [x for x in flows if x["done_ns"]]
    check("short: all 6 flows completed", len(flows) == 6 and len(done) == 6,
          "; ".join(f"group {x['group']}: {x['error'] or 'done'}" for x in flows))
    # tcpi_bytes_acked read at the end, what an unfinished flow's share of
    # the link is computed from: all the data, plus the SYN and maybe FIN
    check("short: TCP_INFO says every completed flow's bytes were acked",
          done and all(x["size"] <= (x.get("acked_bytes") or 0) <= x["size"] + 2 for x in done),
          f"acked {[x.get('acked_bytes') for x in done]}")
    fct = {g: [(x["done_ns"] - x["started_ns"]) / 1e6 for x in done if x["group"] == g]
           for g in (0, 1)}
    every = fct[0] + fct[1]
    check("short: no flow faster than two round trips (400 ms)",
          every and min(every) >= 2 * RTT_S * 1000,
          f"completion times, ms: initcwnd 10 {[round(x) for x in fct[0]]}, "
          f"initcwnd 3 {[round(x) for x in fct[1]]}")
    if not fct[0] or not fct[1]:
        check("short: initcwnd 3 is a round trip slower than 10", False, "no flow of a group")
        return
    m10, m3 = statistics.median(fct[0]), statistics.median(fct[1])
    check("short: initcwnd 3 is a round trip slower than 10 (median, at least 100 ms)",
          m3 - m10 >= RTT_S * 1000 / 2, f"medians {m10:.0f} and {m3:.0f} ms")


def check_calls(rdir, meta):
    ok, diag = True, []
    for name in ("cbr", "call2"):
        r = records.read(os.path.join(rdir, f"media-{name}.recv.rec"))
        send = meta["media"][name]["send"]
        # What left the sender: every packet sendmsg() took (UDP), or the
        # kernel queue's sent counter (DCCP: SBPN2 drops expired packets).
        left = int(send.get("qpolicy_sent", send["sent_ok"]))
        ok &= send["complete"] == "1" and r.complete and left > 0 and len(r.rows) == left
        diag.append(f"{name}: {len(r.rows)} received of {left} sent "
                    f"({send['packets']} scheduled)")
    check("short: two calls share the lossless link, each receives all it sent", ok,
          "; ".join(diag))


def main():
    labtest.start(10)
    tmp = tempfile.mkdtemp(prefix="vm_competing-")
    out = os.path.join(os.environ.get("VM_OUT", tmp), "vm_competing")
    shutil.rmtree(out, ignore_errors=True)
    def check_both(rdir, meta):
        check_short(rdir, meta)
        check_calls(rdir, meta)

    for name, text, fn, n in (("reverse", REVERSE, check_reverse, 3),
                              ("short", SHORT, check_both, 5)):
        rdir, meta = labtest.run(tmp, out, name, text)
        labtest.checked(name, fn, rdir, meta, n)
    shutil.rmtree(tmp, ignore_errors=True)
    return 0 if all(labtest.results) else 1


if __name__ == "__main__":
    sys.exit(main())
