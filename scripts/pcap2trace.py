#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Convert a pcap of a real call into an sbpn-send trace (# sbpn-trace 1).

Reads the classic libpcap format (not pcapng) with the standard library
only: link types Ethernet (with 802.1Q tags), Linux cooked (SLL, SLL2),
raw IPv4/IPv6 and BSD loopback.  Keeps the UDP datagrams that pass the
address filters, classifies each by port rules, then by size rules, else
--default-class, and writes one trace line per datagram:

    time_s  size  class  prio  lifetime_ms

time relative to the first kept datagram; size the UDP payload (or the IP
packet or Ethernet frame with --size); prio and lifetime '-' (the sender's
class defaults) unless given.  The trace format is in
Documentation/traffic.rst.  Exit 0 ok, 2 bad input or usage.
"""
import argparse
import struct
import sys

LINK_NULL, LINK_ETH, LINK_RAW, LINK_SLL, LINK_RAW4, LINK_RAW6, LINK_SLL2 = \
    0, 1, 101, 113, 228, 229, 276
MAGICS = {  # magic as read little-endian -> (byte order, ticks per second)
    0xA1B2C3D4: ("<", 1_000_000), 0xD4C3B2A1: (">", 1_000_000),
    0xA1B23C4D: ("<", 1_000_000_000), 0x4D3CB2A1: (">", 1_000_000_000),
}


class InputError(Exception):
    pass


def size_range(text):
    try:
        lo, _, hi = text.partition("-")
        lo, hi = int(lo), int(hi or lo)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected MIN-MAX bytes, got {text!r}")
    if lo < 0 or hi < lo:
        raise argparse.ArgumentTypeError(f"expected 0 <= MIN <= MAX, got {text!r}")
    return lo, hi


def records(path):
    """Yield (time_ticks, ticks_per_s, linktype, bytes) for each record."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        raise InputError(f"{path}: too short for a pcap header ({len(data)} bytes)")
    magic = struct.unpack_from("<I", data)[0]
    if magic not in MAGICS:
        hint = " (pcapng: convert with 'editcap -F pcap')" if magic == 0x0A0D0D0A else ""
        raise InputError(f"{path}: not a classic pcap file (magic 0x{magic:08x}){hint}")
    bo, tps = MAGICS[magic]
    _, _, _, _, _, linktype = struct.unpack_from(bo + "HHiIII", data, 4)
    linktype &= 0x0FFFFFFF
    off, n = 24, 0
    while off < len(data):
        n += 1
        if off + 16 > len(data):
            raise InputError(f"{path}: record {n} at offset {off}: truncated header")
        sec, frac, incl, _orig = struct.unpack_from(bo + "IIII", data, off)
        if off + 16 + incl > len(data):
            raise InputError(f"{path}: record {n} at offset {off}: truncated data "
                             f"({incl} bytes announced)")
        yield sec * tps + frac, tps, linktype, data[off + 16:off + 16 + incl]
        off += 16 + incl


def ip_of(linktype, pkt):
    """Return (ethertype-like version, ip bytes, link header length) or None."""
    if linktype == LINK_ETH:
        off, et = 14, None
        if len(pkt) < 14:
            return None
        et = struct.unpack_from("!H", pkt, 12)[0]
        while et in (0x8100, 0x88A8) and len(pkt) >= off + 4:
            et = struct.unpack_from("!H", pkt, off + 2)[0]
            off += 4
        return (4 if et == 0x0800 else 6 if et == 0x86DD else None), pkt[off:], off
    if linktype == LINK_SLL and len(pkt) >= 16:
        et = struct.unpack_from("!H", pkt, 14)[0]
        return (4 if et == 0x0800 else 6 if et == 0x86DD else None), pkt[16:], 16
    if linktype == LINK_SLL2 and len(pkt) >= 20:
        et = struct.unpack_from("!H", pkt, 0)[0]
        return (4 if et == 0x0800 else 6 if et == 0x86DD else None), pkt[20:], 20
    if linktype == LINK_NULL and len(pkt) >= 4:
        fam = struct.unpack_from("=I", pkt, 0)[0]
        return (4 if fam == 2 else 6 if fam in (24, 28, 30) else None), pkt[4:], 4
    if linktype in (LINK_RAW, LINK_RAW4, LINK_RAW6) and pkt:
        return pkt[0] >> 4, pkt, 0
    return None


def udp_of(ver, ip):
    """Return (src, dst, sport, dport, udp payload length, ip length) or None."""
    import ipaddress
    if ver == 4 and len(ip) >= 20:
        ihl = (ip[0] & 15) * 4
        total, frag, proto = struct.unpack_from("!H", ip, 2)[0], \
            struct.unpack_from("!H", ip, 6)[0], ip[9]
        if proto != 17 or frag & 0x1FFF:     # not UDP, or a later fragment
            return None
        src, dst = ipaddress.ip_address(ip[12:16]), ipaddress.ip_address(ip[16:20])
        udp = ip[ihl:]
    elif ver == 6 and len(ip) >= 40:
        if ip[6] != 17:                       # no extension headers supported
            return None
        total = 40 + struct.unpack_from("!H", ip, 4)[0]
        src, dst = ipaddress.ip_address(ip[8:24]), ipaddress.ip_address(ip[24:40])
        udp = ip[40:]
    else:
        return None
    if len(udp) < 8:
        return None
    sport, dport, ulen = struct.unpack_from("!HHH", udp)
    return str(src), str(dst), sport, dport, ulen - 8, total


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pcap", help="classic libpcap file")
    ap.add_argument("-o", "--out", help="trace file to write (default stdout)")
    ap.add_argument("--src", help="keep only datagrams from this IP address")
    ap.add_argument("--dst", help="keep only datagrams to this IP address")
    for c in ("audio", "video", "data"):
        ap.add_argument(f"--{c}-port", type=int, action="append", default=[],
                        metavar="PORT", help=f"UDP source or destination port of {c} (repeatable)")
    for c in ("audio", "video", "data"):
        ap.add_argument(f"--{c}-size", type=size_range, action="append", default=[],
                        metavar="MIN-MAX", help=f"{c} if the size is in this range (repeatable)")
    ap.add_argument("--default-class", choices=["audio", "video", "data", "skip"],
                    default="skip", help="class of datagrams no rule matched (default: skip them)")
    ap.add_argument("--size", choices=["udp", "ip", "frame"], default="udp",
                    help="what the trace's size is: UDP payload (default), IP packet, "
                         "or captured link frame; size rules apply to the same value")
    ap.add_argument("--prio", default="-", help="priority column (default '-': class default)")
    ap.add_argument("--lifetime-ms", default="-", help="lifetime column (default '-')")
    a = ap.parse_args(argv)
    if a.prio != "-" and not a.prio.isdigit():
        ap.error(f"--prio: expected '-' or an integer, got {a.prio!r}")
    if a.lifetime_ms != "-":
        try:
            if float(a.lifetime_ms) < 0:
                raise ValueError
        except ValueError:
            ap.error(f"--lifetime-ms: expected '-' or milliseconds >= 0, got {a.lifetime_ms!r}")

    lines, t0, skipped, counts = [], None, {}, {"audio": 0, "video": 0, "data": 0}

    def skip(why):
        skipped[why] = skipped.get(why, 0) + 1

    try:
        for ticks, tps, linktype, pkt in records(a.pcap):
            got = ip_of(linktype, pkt)
            if got is None or got[0] not in (4, 6):
                skip("not IP")
                continue
            u = udp_of(got[0], got[1])
            if u is None:
                skip("not UDP (or a later fragment)")
                continue
            src, dst, sport, dport, payload, iplen = u
            if (a.src and src != a.src) or (a.dst and dst != a.dst):
                skip("address filter")
                continue
            size = {"udp": payload, "ip": iplen, "frame": iplen + got[2]}[a.size]
            cls = None
            for c in ("audio", "video", "data"):
                if sport in getattr(a, f"{c}_port") or dport in getattr(a, f"{c}_port"):
                    cls = c
                    break
            if cls is None:
                for c in ("audio", "video", "data"):
                    if any(lo <= size <= hi for lo, hi in getattr(a, f"{c}_size")):
                        cls = c
                        break
            if cls is None:
                cls = a.default_class
            if cls == "skip":
                skip("no rule matched")
                continue
            if not 1 <= size <= 65507:
                skip("size outside 1..65507")
                continue
            if t0 is None:
                t0 = ticks
            digits = 9 if tps == 1_000_000_000 else 6
            lines.append(f"{(ticks - t0) / tps:.{digits}f}\t{size}\t{cls}\t{a.prio}\t{a.lifetime_ms}")
            counts[cls] += 1
    except InputError as e:
        print(f"pcap2trace: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"pcap2trace: {a.pcap}: {e.strerror}", file=sys.stderr)
        return 2

    out = open(a.out, "w") if a.out else sys.stdout
    out.write("# sbpn-trace 1\n")
    out.write(f"# from {a.pcap} by pcap2trace.py (size = {a.size})\n")
    out.write("# time_s\tsize\tclass\tprio\tlifetime_ms\n")
    out.write("".join(line + "\n" for line in lines))
    if a.out:
        out.close()
    kept = ", ".join(f"{c} {n}" for c, n in counts.items())
    dropped = ", ".join(f"{why} {n}" for why, n in sorted(skipped.items())) or "none"
    print(f"pcap2trace: kept {len(lines)} ({kept}); skipped: {dropped}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
