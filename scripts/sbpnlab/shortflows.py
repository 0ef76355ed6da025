# SPDX-License-Identifier: GPL-2.0
"""Short TCP flows ("web-like" competing traffic), one process per side.

  python3 -m sbpnlab.shortflows server --port P --ready-file F
  python3 -m sbpnlab.shortflows client --plan PLAN.json --out FLOWS.json
                                      --ready-file F --t0-file T0

The server (receiver namespace) reads each connection to EOF, answers one
byte and closes.  The client (sender namespace) starts early (a Python
start takes seconds under TCG), says so with its ready file, then waits for
the runner to write t0 (CLOCK_MONOTONIC ns; all namespaces share the clock)
to T0.  It starts each planned flow at t0 + start_s, sends size bytes with
the planned congestion control, half-closes and waits for the answer: the
flow completion time is connect to answer.  The plan is {"duration_s": D,
"flows": [{"group", "dest", "port", "size", "cc", "start_s"}]}; the output
adds start_ns, started/connected/done/ended times, the bytes TCP acked and
errors per flow, and gives up on flows unfinished 60 s after D.
Exit 0 when every flow completed, 1 otherwise, 2 on bad arguments.
"""
import argparse
import json
import os
import socket
import sys
import threading
import time

CHUNK = bytes(65536)
GRACE_S = 60


def serve(port, ready_file):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port))
    ls.listen(1024)
    open(ready_file, "w").close()

    def drain(conn):
        with conn:
            while conn.recv(65536):
                pass
            conn.sendall(b"k")

    while True:
        conn, _ = ls.accept()
        threading.Thread(target=drain, args=(conn,), daemon=True).start()


def one_flow(f, t0_ns, deadline_ns, out):
    start_ns = t0_ns + round(f["start_s"] * 1e9)
    while (left := start_ns - time.monotonic_ns()) > 0:
        time.sleep(left / 1e9)
    rec = dict(f, start_ns=start_ns, started_ns=time.monotonic_ns(), done_ns=None, error="")
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        with s:
            try:
                s.settimeout(max(0.1, (deadline_ns - time.monotonic_ns()) / 1e9))
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, f["cc"].encode())
                s.connect((f["dest"], f["port"]))
                rec["connected_ns"] = time.monotonic_ns()
                left = f["size"]
                while left:
                    left -= s.send(CHUNK[:min(left, len(CHUNK))])
                s.shutdown(socket.SHUT_WR)
                if s.recv(1) != b"k":
                    raise OSError("no answer from the server")
                rec["done_ns"] = time.monotonic_ns()
            finally:
                # What an unfinished flow delivered counts towards the
                # link's utilisation.
                rec["ended_ns"], rec["acked_bytes"] = time.monotonic_ns(), acked_bytes(s)
    except OSError as e:
        rec["error"] = str(e) or type(e).__name__
    out.append(rec)


def acked_bytes(s):
    """tcpi_bytes_acked of a TCP socket (struct tcp_info, Linux 4.1+: eight
    u8, 24 u32, then u64 pacing_rate, max_pacing_rate, bytes_acked)."""
    try:
        info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 128)
    except OSError:
        return None
    return int.from_bytes(info[120:128], "little") if len(info) >= 128 else None


def client(plan_path, out_path, ready_file, t0_file):
    with open(plan_path, encoding="utf-8") as f:
        plan = json.load(f)
    open(ready_file, "w").close()
    while not os.path.exists(t0_file):
        time.sleep(0.01)
    with open(t0_file, encoding="ascii") as f:
        t0_ns = int(f.read())
    deadline_ns = t0_ns + round((plan["duration_s"] + GRACE_S) * 1e9)
    results = []
    threads = [threading.Thread(target=one_flow, args=(fl, t0_ns, deadline_ns, results))
               for fl in plan["flows"]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    results.sort(key=lambda r: r["start_ns"])
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump({"format": "sbpn-short-tcp 1", "flows": results}, f, indent=1)
    return 0 if all(r["done_ns"] for r in results) else 1


def main(argv=None):
    p = argparse.ArgumentParser(prog="shortflows", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sv = sub.add_parser("server", help="accept flows (receiver namespace)")
    sv.add_argument("--port", type=int, required=True)
    sv.add_argument("--ready-file", required=True)
    cl = sub.add_parser("client", help="run the planned flows (sender namespace)")
    cl.add_argument("--plan", required=True)
    cl.add_argument("--out", required=True)
    cl.add_argument("--ready-file", required=True)
    cl.add_argument("--t0-file", required=True)
    a = p.parse_args(argv)
    if a.cmd == "server":
        serve(a.port, a.ready_file)
        return 0
    return client(a.plan, a.out, a.ready_file, a.t0_file)


if __name__ == "__main__":
    sys.exit(main())
