# SPDX-License-Identifier: GPL-2.0
"""Reader for the per-packet record files (Documentation/records.rst, v1).

The one reader of the record formats, for sbpnlab (the runner and the
analysis) and the tests (userspace/tests, scripts/tests), which import it
as "from sbpnlab import records".  Standard library only: it runs inside
the VM with the host's python3.

read(path, magic) -> Records(meta, columns, rows, trailer); rows are dicts
of strings.  The same reader takes the CCID log, sbpn-bulk's records and
link.log (magic= their format line); read_notices(path) the drop notices,
read_frames(path) the VP8 call's frame records.
A file of another format version is refused with the version found;
malformed lines raise ValueError naming the file and line.
read_comments(path) -> (meta, trailer) of a file that may be unfinished.
parse_kv() is the one parser of a '# key: value' line: every reader here
uses it.
"""
import sys

FORMAT = "# sbpn-records 1"
SEND_COLUMNS = ["seq", "class", "size", "prio", "planned_ns", "sent_ns",
                "expiry_ns", "result"]
# with coding dependencies (video_gop > 0, or a trace marking key frames)
SEND_CODED_COLUMNS = SEND_COLUMNS + ["frame", "key"]
RECV_COLUMNS = ["seq", "class", "size", "sent_ns", "recv_ns"]
NOTICES_FORMAT = "# sbpn-notices 1"
NOTICES_COLUMNS = ["seq", "class", "reason", "expiry_ns", "notice_ns"]
# The reasons a notice names, as the library writes them
# (sbpn_drop_reason_name(), sbpn.DROP_REASONS): the one list that the run's
# notice totals and the analysis's fates follow.
NOTICE_REASONS = ("expired", "predicted_late", "evicted", "ccid_err", "frame")
TCP_FORMAT = "# sbpn-tcp 1"         # sbpn-bulk (Documentation/traffic.rst)
TCP_COLUMNS = ["t_ns", "bytes_written", "bytes_acked", "rtt_us", "min_rtt_us", "cwnd",
               "retrans"]
# the VP8 call's frames, one row per capture instant (sbpn-send --source vp8)
FRAMES_FORMAT = "# sbpn-frames 1"
FRAMES_COLUMNS = ["frame", "capture_ns", "status", "key", "layer", "refs", "bytes", "pieces",
                  "width", "height", "target_kbps", "allowed_kbps", "q", "encode_us"]


class Records:
    def __init__(self, meta, columns, rows, trailer):
        self.meta, self.columns, self.rows, self.trailer = meta, columns, rows, trailer

    @property
    def complete(self):
        return self.trailer.get("complete") == "1"


def parse_kv(line):
    """(key, value) of a metadata or trailer line '# key: value' (the value
    runs to the end of the line and may be empty), or None if line is not
    one."""
    body = line[1:].strip()
    if not line.startswith("#") or (": " not in body and not body.endswith(":")):
        return None
    k, _, v = body.partition(":")
    return k.strip(), v.strip()


def read(path, magic=FORMAT):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines or lines[0] != magic:
        found = lines[0] if lines else "(empty file)"
        raise ValueError(f"{path}:1: expected {magic!r}, found {found!r}")
    meta, trailer, rows, columns = {}, {}, [], None
    for n, line in enumerate(lines[1:], start=2):
        if line.startswith("#"):
            kv = parse_kv(line)
            if kv is None:
                raise ValueError(f"{path}:{n}: expected '# key: value', got {line!r}")
            (meta if columns is None else trailer)[kv[0]] = kv[1]
            continue
        if columns is None:
            columns = line.split("\t")
            continue
        if trailer:
            raise ValueError(f"{path}:{n}: record after the trailer")
        fields = line.split("\t")
        if len(fields) != len(columns):
            raise ValueError(f"{path}:{n}: {len(fields)} fields, header has {len(columns)}")
        rows.append(dict(zip(columns, fields)))
    if columns is None:
        raise ValueError(f"{path}: no column header")
    return Records(meta, columns, rows, trailer)


def read_notices(path):
    """The drop notices sbpn-send --notices wrote (NOTICES_FORMAT): Records
    whose columns are NOTICES_COLUMNS, else ValueError."""
    r = read(path, magic=NOTICES_FORMAT)
    if r.columns != NOTICES_COLUMNS:
        raise ValueError(f"{path}: notices columns {r.columns}, expected {NOTICES_COLUMNS}")
    return r


def read_frames(path):
    """The VP8 call's frame records (FRAMES_FORMAT): Records whose columns
    are FRAMES_COLUMNS, else ValueError."""
    r = read(path, magic=FRAMES_FORMAT)
    if r.columns != FRAMES_COLUMNS:
        raise ValueError(f"{path}: frames columns {r.columns}, expected {FRAMES_COLUMNS}")
    return r


def read_comments(path):
    """(meta, trailer): the '# key: value' lines before and after the column
    header of a record file of any format, for the runner, which must look
    at files that a killed or failing program left unfinished: the format
    line and the rows are not checked, a line that is not '# key: value'
    is skipped, bytes that are not UTF-8 are replaced.  Everything else
    reads with read()."""
    meta, trailer, header_seen = {}, {}, False
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f):
            if n == 0:
                continue
            if not line.startswith("#"):
                header_seen = True
                continue
            kv = parse_kv(line)
            if kv is not None:
                (trailer if header_seen else meta)[kv[0]] = kv[1]
    return meta, trailer


if __name__ == "__main__":
    r = read(sys.argv[1])
    print(f"{len(r.rows)} rows, complete={r.complete}, meta={r.meta}")
