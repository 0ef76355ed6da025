# SPDX-License-Identifier: GPL-2.0
"""Read, check and expand scenario files (Documentation/testbed.rst).

load(path) parses a TOML scenario, checks every field (unknown keys are
errors), fills in the defaults and returns a Scenario.  Scenario.runs()
expands the [[variant]] tables (what is compared: a name and media
options), crossed with the [sweep] table's cross product (the settings) and
the repetitions, into RunSpecs, each with its own fully resolved
configuration; without [[variant]] tables the sweep alone says what runs.
Two runs of a scenario with variants never have the same configuration
(effective()): a variant that repeats another, or a sweep value that a
variant ignores, is an error.  Errors raise ScenarioError
as "FILE:LINE: field 'a.b': expected ..., got ..." (for an unknown key,
with the nearest known one: "; did you mean 'c'?"); the line is tomllib's
for syntax errors and found by a small scan of the file for the others.
"""
import copy
import difflib
import itertools
import math
import os
import re
import shutil
import tomllib

from . import sequential

POLICIES = ("simple", "prio", "sbpn1", "sbpn2", "sbpn3")
# A sweep "policy" may also name another transport for the media flows.
SWEEP_POLICIES = POLICIES + ("udp", "tcp")
# Per-socket options of a CCID 3 media flow, each with the suffix that marks
# it in a row label ("sbpn2+sp+pd"); predict, last_rtt, owd, edf, newest and
# frame only change the SBPN policies (the only ones that judge expiry).
CCID3_OPTIONS = {"faster_restart": "fr", "size_pacing": "sp", "predict": "pd",
                 "last_rtt": "lr", "owd": "owd", "edf": "edf",
                 "newest": "nf", "frame": "fw"}
SBPN_ONLY = ("predict", "last_rtt", "owd", "edf", "newest", "frame")


def option_flags(media):
    """The CCID3 options in effect for a media flow's config, in
    CCID3_OPTIONS order (configs written before an option existed lack it)."""
    if media["transport"] != "dccp" or media["ccid"] != 3:
        return []
    return [o for o in CCID3_OPTIONS if media.get(o)
            and (o not in SBPN_ONLY or media["policy"].startswith("sbpn"))]
RATE_UNITS = {"bit": 1, "kbit": 10**3, "mbit": 10**6, "gbit": 10**9}
# The shipped models, which a scenario may name ("vp8", "ekiga-gop.model")
MODELS_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                           "..", "..", "userspace", "models"))
# The key-frame loop's reports (traffic.rst, "The key-frame loop"): a media
# flow's keyframe_on_loss lists any of them, [] (the default) none.
KEYFRAME_SOURCES = ("receiver", "notice")


def keyframe_sources(media):
    """The key-frame loop's reports in effect for a media flow: notice only
    over DCCP (a sweep may move the flow to UDP or TCP, whose baselines
    keep the receiver's requests, the repair every transport has)."""
    return [s for s in media.get("keyframe_on_loss", [])
            if s != "notice" or media["transport"] == "dccp"]


def effective(media):
    """A media flow's config with only what changes the run: the CCID 3
    options a DCCP flow's policy uses, the key-frame reports the transport
    has; over UDP and TCP no policy, CCID or send queue.  Two flows with
    the same effective() are the same experiment."""
    out = dict(media, keyframe_on_loss=keyframe_sources(media))
    flags = option_flags(media)
    for o in CCID3_OPTIONS:
        out[o] = o in flags
    if media["transport"] != "dccp":
        for k in ("policy", "ccid", "tx_qlen"):
            out.pop(k)
    return out


def ignored(media, key):
    """Why a media flow ignores the option key set on (None if it uses it)."""
    dccp3 = media["transport"] == "dccp" and media["ccid"] == 3
    if key in CCID3_OPTIONS and key not in option_flags(media):
        return (f"policy '{media['policy']}' ignores it (only the SBPN policies use it)"
                if dccp3 else "it needs transport 'dccp' and ccid 3")
    if key in ("ccid", "tx_qlen") and media["transport"] != "dccp":
        return f"{media['transport'].upper()} has no {key}"
    if key == "keyframe_on_loss" and media.get(key, []) != keyframe_sources(media):
        return (f"\"notice\" needs transport 'dccp' ({media['transport'].upper()} has no "
                "drop notices)")
    return None


# A key-frame loop is part of what a row compares, not of its setting: its
# reports mark the row label as the CCID3 options do ("simple+kr",
# "sbpn2+sp+kr+kn"), so SIMPLE with the receiver's loop pairs with SBPN2
# with receiver + notice in one comparison.
KEYFRAME_SUFFIX = {"receiver": "kr", "notice": "kn"}
# The sweep keys that make a row label rather than a setting.
LABEL_KEYS = ("policy", *CCID3_OPTIONS, "keyframe_on_loss")


def setting_of(point):
    """A sweep point's setting: its values but those of the row label
    (LABEL_KEYS); the runs of one setting and seed are paired."""
    return {k: v for k, v in point.items() if k not in LABEL_KEYS}


def flow_label(media):
    """A media flow's row label: its DCCP policy, or its transport if not
    DCCP, with a suffix per CCID3 option on ("sbpn2+sp+pd") and per
    key-frame loop report ("+kr" the receiver's requests, "+kn" the drop
    notices)."""
    if media["transport"] != "dccp":
        parts = [media["transport"]]
    else:
        parts = [media["policy"]] + [CCID3_OPTIONS[o] for o in option_flags(media)]
    return "+".join(parts + [KEYFRAME_SUFFIX[s] for s in keyframe_sources(media)])


def model_gop(path):
    """A model file's video_gop as sbpn-send reads it (the last one given;
    0, no coding dependencies, when absent or unreadable: sbpn-send says
    what is wrong with the file itself)."""
    gop = 0
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = re.fullmatch(r"\s*video_gop\s*=\s*(\d+)\s*", line.split("#", 1)[0])
                if m:
                    gop = int(m.group(1))
    except OSError:
        pass
    return gop


def coded(media):
    """Whether a checked media flow can have coding dependencies, which the
    key-frame loop needs: a VP8 encoder's video, a trace (its key marks),
    or a model whose video_gop > 0 (the built-in model's is 0)."""
    return (media.get("source") == "vp8" or "trace" in media or
            ("model" in media and model_gop(media["model"]) > 0))


KEYFRAME_NEEDS = ("source = \"vp8\", a model with video_gop > 0 (model = "
                  "\"ekiga-gop\", a shipped model by its name) or a trace: the key-frame "
                  "loop needs coding dependencies")


class ScenarioError(Exception):
    """A scenario file that cannot be used; str() names file, line, field."""


def parse_rate(text):
    """'1mbit' -> 1000000 (bit/s, tc's SI units); ValueError if malformed."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(bit|kbit|mbit|gbit)", str(text).strip().lower())
    if not m:
        raise ValueError
    bps = round(float(m.group(1)) * RATE_UNITS[m.group(2)])
    if bps < 8000:
        raise ValueError
    return bps


class _Checker:
    """Typed field access with errors that point into the file."""

    def __init__(self, path, text):
        self.path = path
        self.lines = text.splitlines()

    def line_of(self, keys):
        """Best-effort line of a key path like ('media', 1, 'policy')."""
        table, index = [], {}
        want_table = [k for k in keys[:-1] if not isinstance(k, int)]
        want_index = next((k for k in keys if isinstance(k, int)), None)
        found_table = None
        for n, raw in enumerate(self.lines, 1):
            line = raw.split("#", 1)[0].strip()
            m = re.fullmatch(r"\[\[\s*([\w.]+)\s*\]\]", line)
            if m:
                table = m.group(1).split(".")
                index[m.group(1)] = index.get(m.group(1), -1) + 1
                idx = index[m.group(1)]
            else:
                m = re.fullmatch(r"\[\s*([\w.]+)\s*\]", line)
                if m:
                    table, idx = m.group(1).split("."), None
            if m:
                if table == list(keys) or (table == want_table + [str(keys[-1])]):
                    found_table = n
                continue
            if table == want_table and (want_index is None or idx == want_index):
                key = re.match(r'"?([\w]+)"?\s*=', line)
                if key and key.group(1) == str(keys[-1]):
                    return n
        return found_table

    def fail(self, keys, expected, got=None, hint=None):
        dotted = ".".join(f"[{k}]" if isinstance(k, int) else k for k in keys)
        dotted = dotted.replace(".[", "[")
        line = self.line_of(keys) if keys else None
        where = f"{self.path}:{line}" if line else self.path
        tail = "" if got is None else f", got {got!r}"
        hint = f"; {hint}" if hint else ""
        raise ScenarioError(f"{where}: field '{dotted}': expected {expected}{tail}{hint}")

    def table(self, data, keys, allowed, required=()):
        if not isinstance(data, dict):
            self.fail(keys, "a table", data)
        for k in data:
            if k not in allowed:
                near = difflib.get_close_matches(str(k), sorted(allowed), n=1)
                self.fail(keys + (k,), "one of the known keys " + ", ".join(sorted(allowed)),
                          "unknown key", f"did you mean '{near[0]}'?" if near else None)
        for k in required:
            if k not in data:
                self.fail(keys + (k,), "this required field (it is missing)")
        return data

    def number(self, data, keys, default, lo, hi, integer=False):
        v = data.get(keys[-1], default)
        kind = "an integer" if integer else "a number"
        ok_type = isinstance(v, int) if integer else isinstance(v, (int, float))
        if isinstance(v, bool) or not ok_type or not (lo <= v <= hi) or \
                (isinstance(v, float) and math.isnan(v)):
            self.fail(keys, f"{kind} in {lo}..{hi}", v)
        return v

    def choice(self, data, keys, default, options):
        v = data.get(keys[-1], default)
        if v not in options:
            self.fail(keys, "one of " + ", ".join(map(str, options)), v)
        return v

    def boolean(self, data, keys, default):
        v = data.get(keys[-1], default)
        if not isinstance(v, bool):
            self.fail(keys, "true or false", v)
        return v

    def sources(self, data, keys):
        """keyframe_on_loss: a list of distinct KEYFRAME_SOURCES."""
        v = data.get(keys[-1], [])
        if (not isinstance(v, list) or len(set(map(str, v))) != len(v) or
                any(x not in KEYFRAME_SOURCES for x in v)):
            self.fail(keys, "a list of distinct values of " + ", ".join(
                f'"{s}"' for s in KEYFRAME_SOURCES) + " ([] for none)", v)
        return [s for s in KEYFRAME_SOURCES if s in v]

    def string(self, data, keys, default):
        v = data.get(keys[-1], default)
        if not isinstance(v, str):
            self.fail(keys, "a string", v)
        return v

    def rate(self, data, keys, default=None):
        v = data.get(keys[-1], default)
        if v is None:
            return None
        try:
            parse_rate(v)
        except ValueError:
            self.fail(keys, 'a rate of at least 8kbit such as "1mbit" (units bit, kbit, '
                      'mbit, gbit)', v)
        return str(v).strip().lower()


def _check_link(c, link, duration):
    k = ("link",)
    c.table(link, k, {"rate", "delay_fwd_ms", "delay_rev_ms", "loss_pct", "queue_packets",
                      "queue_bytes", "shaper", "burst_bytes", "rate_rev", "schedule"},
            required=("rate",))
    out = {
        "rate": c.rate(link, k + ("rate",)),
        "delay_fwd_ms": c.number(link, k + ("delay_fwd_ms",), 0, 0, 10000),
        "delay_rev_ms": c.number(link, k + ("delay_rev_ms",), 0, 0, 10000),
        "loss_pct": c.number(link, k + ("loss_pct",), 0, 0, 100),
        "shaper": c.choice(link, k + ("shaper",), "tbf", ("tbf", "netem")),
        "burst_bytes": c.number(link, k + ("burst_bytes",), 3000, 1600, 10**7, integer=True),
        "rate_rev": c.rate(link, k + ("rate_rev",)),
    }
    if "queue_packets" in link and "queue_bytes" in link:
        c.fail(k + ("queue_bytes",), "either queue_packets or queue_bytes, not both")
    if "queue_bytes" in link:
        if out["shaper"] == "netem":
            c.fail(k + ("queue_bytes",), "queue_packets: netem counts its limit in packets")
        out["queue_bytes"] = c.number(link, k + ("queue_bytes",), 0, 1600, 10**8, integer=True)
    else:
        out["queue_packets"] = c.number(link, k + ("queue_packets",), 20, 1, 100000,
                                        integer=True)
    if "schedule" in link:
        out["schedule"] = _check_schedule(c, link["schedule"], duration)
    return out


def _check_schedule(c, s, duration):
    k = ("link", "schedule")
    c.table(s, k, {"kind", "at_s", "rate", "period_s", "high", "low", "step_s", "rates",
                   "start_s"}, required=("kind",))
    kind = c.choice(s, k + ("kind",), None, ("step", "square", "staircase"))
    need = {"step": ("at_s", "rate"), "square": ("period_s", "high", "low"),
            "staircase": ("step_s", "rates")}[kind]
    extra = set(s) - set(need) - {"kind", "start_s"}
    if extra:
        name = sorted(extra)[0]
        c.fail(k + (name,), f"only {', '.join(need)} and start_s for kind '{kind}'",
               "a field of another kind")
    for name in need:
        if name not in s:
            c.fail(k + (name,), f"this field for kind '{kind}' (it is missing)")
    out = {"kind": kind}
    if kind == "step":
        out["at_s"] = c.number(s, k + ("at_s",), None, 0, duration)
        out["rate"] = c.rate(s, k + ("rate",))
        return out
    out["start_s"] = c.number(s, k + ("start_s",), 0, 0, duration)
    if kind == "square":
        out["period_s"] = c.number(s, k + ("period_s",), None, 0.05, 3600)
        out["high"] = c.rate(s, k + ("high",))
        out["low"] = c.rate(s, k + ("low",))
    else:
        out["step_s"] = c.number(s, k + ("step_s",), None, 0.05, 3600)
        rates = s["rates"]
        if not isinstance(rates, list) or not rates:
            c.fail(k + ("rates",), "a non-empty list of rates", rates)
        out["rates"] = [c.rate({"rates": r}, k + ("rates",)) for r in rates]
    return out


def _check_tcp(c, entries, duration):
    out = []
    if not isinstance(entries, list):
        c.fail(("tcp",), "an array of tables [[tcp]]", entries)
    for i, t in enumerate(entries):
        k = ("tcp", i)
        c.table(t, k, {"flows", "cc", "direction", "start_s", "stop_s", "write_bytes", "mss"})
        e = {
            "flows": c.number(t, k + ("flows",), 1, 0, 64, integer=True),
            "cc": c.choice(t, k + ("cc",), "reno", ("reno", "cubic")),
            "direction": c.choice(t, k + ("direction",), "forward", ("forward", "reverse")),
            "start_s": c.number(t, k + ("start_s",), 0, 0, duration),
            "stop_s": c.number(t, k + ("stop_s",), duration, 0, duration),
            "write_bytes": c.number(t, k + ("write_bytes",), 519, 1, 1 << 20, integer=True),
        }
        if "mss" in t:
            e["mss"] = c.number(t, k + ("mss",), None, 88, 9000, integer=True)
        if e["stop_s"] - e["start_s"] < 1:
            c.fail(k + ("stop_s",), "at least 1 s after start_s (TCP flows run whole seconds)",
                   e["stop_s"])
        out.append(e)
    return out


def _check_short(c, entries, duration):
    out = []
    if not isinstance(entries, list):
        c.fail(("short_tcp",), "an array of tables [[short_tcp]]", entries)
    for i, t in enumerate(entries):
        k = ("short_tcp", i)
        c.table(t, k, {"count", "size_bytes", "window_s", "initcwnd", "cc"},
                required=("count", "size_bytes"))
        w = t.get("window_s", [0, duration])
        if (not isinstance(w, list) or len(w) != 2 or
                not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in w)
                or not 0 <= w[0] <= w[1] <= duration):
            c.fail(k + ("window_s",), f"[from, to] with 0 <= from <= to <= {duration}", w)
        out.append({
            "count": c.number(t, k + ("count",), None, 1, 10000, integer=True),
            "size_bytes": c.number(t, k + ("size_bytes",), None, 1, 1 << 30, integer=True),
            "window_s": list(w),
            "initcwnd": c.number(t, k + ("initcwnd",), 10, 1, 1000, integer=True),
            "cc": c.choice(t, k + ("cc",), "reno", ("reno", "cubic")),
        })
    return out


def _check_media(c, entries, duration, base):
    if not isinstance(entries, list) or not entries:
        c.fail(("media",), "at least one [[media]] table", entries)
    out, names = [], set()
    for i, m in enumerate(entries):
        k = ("media", i)
        c.table(m, k, {"name", "source", "model", "trace", "transport", "policy", "ccid",
                       "tx_qlen", "lifetime_ms", "start_s", "faster_restart",
                       "size_pacing", "predict", "last_rtt",
                       "owd", "edf", "newest", "frame", "silence_suppression",
                       "keyframe_on_loss"})
        e = {
            "name": c.string(m, k + ("name",), f"flow{i}"),
            "source": c.choice(m, k + ("source",), "ekiga", ("ekiga", "cbr", "trace", "vp8")),
            "transport": c.choice(m, k + ("transport",), "dccp", ("dccp", "udp", "tcp")),
            "policy": c.choice(m, k + ("policy",), "simple", POLICIES),
            "ccid": c.choice(m, k + ("ccid",), 3, (2, 3)),
            "tx_qlen": c.number(m, k + ("tx_qlen",), 5, 0, 100000, integer=True),
            "lifetime_ms": c.number(m, k + ("lifetime_ms",), 200, 0, 600000, integer=True),
            "start_s": c.number(m, k + ("start_s",), 0, 0, duration),
            "faster_restart": c.boolean(m, k + ("faster_restart",), False),
            "size_pacing": c.boolean(m, k + ("size_pacing",), False),
            "predict": c.boolean(m, k + ("predict",), False),
            "last_rtt": c.boolean(m, k + ("last_rtt",), False),
            "owd": c.boolean(m, k + ("owd",), False),
            "edf": c.boolean(m, k + ("edf",), False),
            "newest": c.boolean(m, k + ("newest",), False),
            "frame": c.boolean(m, k + ("frame",), False),
            "silence_suppression": c.boolean(m, k + ("silence_suppression",), False),
        }
        for opt in CCID3_OPTIONS:
            if e[opt] and (e["transport"], e["ccid"]) != ("dccp", 3):
                c.fail(k + (opt,), "false unless transport = 'dccp' and ccid = 3", True)
        if e["edf"] and e["newest"]:
            c.fail(k + ("newest",), "false while edf is true (two send orders)", True)
        kf = c.sources(m, k + ("keyframe_on_loss",))
        if "notice" in kf and e["transport"] != "dccp":
            c.fail(k + ("keyframe_on_loss",), "\"notice\" only with transport = 'dccp' "
                   "(drop notices are DCCP's)", m["keyframe_on_loss"])
        if kf:      # only when on: the configs of earlier scenarios are unchanged
            e["keyframe_on_loss"] = kf
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,32}", e["name"]) or e["name"] in names:
            c.fail(k + ("name",), "a unique name of letters, digits, _ and - (1-32)",
                   e["name"])
        names.add(e["name"])
        for f in ("model", "trace"):
            if f in m:
                name = c.string(m, k + (f,), None)
                p = os.path.normpath(os.path.join(base, name))
                if f == "model" and not os.path.isfile(p) and "/" not in name:
                    # a shipped model by its name: "vp8"
                    p = os.path.join(MODELS_DIR, name.removesuffix(".model") + ".model")
                if not os.path.isfile(p):
                    c.fail(k + (f,), "an existing file (relative to the scenario)" +
                           (", or the name of a model in userspace/models" if f == "model"
                            else ""), m[f])
                e[f] = p
        if e["source"] == "trace" and "trace" not in e:
            c.fail(k + ("trace",), "a trace file for source 'trace' (it is missing)")
        if e["source"] != "trace" and "trace" in e:
            c.fail(k + ("trace",), "no trace unless source = 'trace'", m["trace"])
        if kf and not coded(e):
            c.fail(k + ("keyframe_on_loss",), KEYFRAME_NEEDS, m["keyframe_on_loss"])
        out.append(e)
    return out


SWEEP_KEYS = {
    "policy": lambda c, s, k: c.choice(s, k, None, SWEEP_POLICIES),
    "ccid": lambda c, s, k: c.choice(s, k, None, (2, 3)),
    "tx_qlen": lambda c, s, k: c.number(s, k, None, 0, 100000, integer=True),
    "lifetime_ms": lambda c, s, k: c.number(s, k, None, 0, 600000, integer=True),
    "faster_restart": lambda c, s, k: c.boolean(s, k, None),
    "size_pacing": lambda c, s, k: c.boolean(s, k, None),
    "predict": lambda c, s, k: c.boolean(s, k, None),
    "last_rtt": lambda c, s, k: c.boolean(s, k, None),
    "owd": lambda c, s, k: c.boolean(s, k, None),
    "edf": lambda c, s, k: c.boolean(s, k, None),
    "newest": lambda c, s, k: c.boolean(s, k, None),
    "frame": lambda c, s, k: c.boolean(s, k, None),
    "rtt_ms": lambda c, s, k: c.number(s, k, None, 0, 20000),
    "rate": lambda c, s, k: c.rate(s, k),
    "loss_pct": lambda c, s, k: c.number(s, k, None, 0, 100),
    "queue_packets": lambda c, s, k: c.number(s, k, None, 1, 100000, integer=True),
    "initcwnd": lambda c, s, k: c.number(s, k, None, 1, 1000, integer=True),
    "tcp_flows": lambda c, s, k: c.number(s, k, None, 0, 64, integer=True),
    "keyframe_on_loss": lambda c, s, k: c.sources(s, k),
}


# What a [[variant]] table may set: the media options of SWEEP_KEYS, in its
# order, which is also their order in a run id.  With variants, the sweep
# holds the settings (SETTING_KEYS) alone.
VARIANT_KEYS = ("policy", "ccid", "tx_qlen", "lifetime_ms", *CCID3_OPTIONS, "keyframe_on_loss")
SETTING_KEYS = ("rtt_ms", "rate", "loss_pct", "queue_packets", "initcwnd", "tcp_flows",
                "tx_qlen", "lifetime_ms")


def _media_value(media, key):
    """A media flow's value of a variant key, as a sweep point gives it."""
    if key == "policy":
        return media["policy"] if media["transport"] == "dccp" else media["transport"]
    if key == "keyframe_on_loss":
        return media.get(key, [])
    return media[key]


def _check_variants(c, entries, config):
    """[[variant]] tables as [{"name", "options", "point"}]: point is the
    variant's part of its run ids, every key that any variant sets (in
    VARIANT_KEYS order), with the media flows' own value where this one
    does not set it; so SIMPLE beside SBPN2+sp has the ids of a sweep over
    policy and size_pacing (policy=simple,size_pacing=False).  Refuses an
    option the variant's policy ignores and two variants that run the same
    configuration."""
    if not isinstance(entries, list) or not entries:
        c.fail(("variant",), "an array of tables [[variant]]", entries)
    out, names = [], set()
    for i, v in enumerate(entries):
        k = ("variant", i)
        c.table(v, k, {"name", *VARIANT_KEYS}, required=("name",))
        name = c.string(v, k + ("name",), None)
        if not re.fullmatch(r"[A-Za-z0-9_.+-]{1,32}", name) or name in names:
            c.fail(k + ("name",), "a unique name of letters, digits, _ . + and - (1-32)", name)
        names.add(name)
        out.append({"name": name, "options": {key: SWEEP_KEYS[key](c, v, k + (key,))
                                              for key in VARIANT_KEYS if key in v}})
    keys = [key for key in VARIANT_KEYS if any(key in v["options"] for v in out)]
    seen = {}
    for i, v in enumerate(out):
        k = ("variant", i)
        point = {}
        for key in keys:
            if key in v["options"]:
                point[key] = v["options"][key]
                continue
            values = {str(_media_value(m, key)) for m in config["media"]}
            if len(values) > 1:
                c.fail(k + (key,), f"this field: the media flows differ in {key}, which "
                       "another variant sets (it is missing)")
            point[key] = _media_value(config["media"][0], key)
        v["point"] = point
        cfg = apply_point(config, point)
        for j, m in enumerate(cfg["media"]):
            for key, value in v["options"].items():
                why = ignored(m, key) if value is not False and value != [] else None
                if why:
                    c.fail(k + (key,), f"no {key} for media[{j}]: {why}", value)
            if m["edf"] and m["newest"]:
                c.fail(k + ("newest" if "newest" in v["options"] else "edf",),
                       "not both edf and newest (two send orders)", True)
            if m.get("keyframe_on_loss") and not coded(m):
                c.fail(k + ("keyframe_on_loss",), KEYFRAME_NEEDS + f" (media[{j}] has none)",
                       v["options"].get("keyframe_on_loss"))
        same = repr([sorted(effective(m).items()) for m in cfg["media"]])
        if same in seen:
            c.fail(k + ("name",), f"a configuration of its own, not the same as variant"
                   f"[{seen[same]}] '{out[seen[same]]['name']}'", name,
                   "the same options once the media flows' own values fill in what "
                   "the variant leaves and what the policy ignores is dropped")
        seen[same] = i
    return out


def _check_comparisons(c, s, variants):
    """[scenario] baseline or compare: the (baseline, variant) pairs whose
    finding the report prints; by default each variant against the first."""
    k = ("scenario",)
    names = [v["name"] for v in variants]
    for key in ("baseline", "compare"):
        if key in s and not variants:
            c.fail(k + (key,), "[[variant]] tables whose names it gives (there are none)")
    if "baseline" in s and "compare" in s:
        c.fail(k + ("compare",), "either baseline or compare, not both")

    def name_of(value, keys):
        if value not in names:
            near = difflib.get_close_matches(str(value), names, n=1)
            c.fail(keys, "the name of a [[variant]]: " + ", ".join(names), value,
                   f"did you mean '{near[0]}'?" if near else None)
        return value
    if "compare" in s:
        pairs = s["compare"]
        if (not isinstance(pairs, list) or not pairs or
                not all(isinstance(p, list) and len(p) == 2 for p in pairs)):
            c.fail(k + ("compare",), 'a list of [baseline, variant] pairs such as '
                   '[["simple", "best"]]', pairs)
        out = [[name_of(a, k + ("compare",)), name_of(b, k + ("compare",))] for a, b in pairs]
        if any(a == b for a, b in out) or len({tuple(p) for p in out}) != len(out):
            c.fail(k + ("compare",), "distinct pairs of two different variants", pairs)
        return out[0][0], out
    if not variants:
        return None, []
    base = name_of(s.get("baseline", names[0]), k + ("baseline",))
    return base, [[base, n] for n in names if n != base]


def _check_decide(c, d):
    """The [decide] table (sbpn-lab run --decide): rounds, the metrics
    decided and their margins."""
    k = ("decide",)
    c.table(d, k, {"enabled", "min_pairs", "step", "alpha", "baseline", "metrics", "margins"})
    out = {
        "enabled": c.boolean(d, k + ("enabled",), True),
        "min_pairs": c.number(d, k + ("min_pairs",), sequential.DEFAULTS["min_pairs"], 2,
                              1000, integer=True),
        "step": c.number(d, k + ("step",), sequential.DEFAULTS["step"], 1, 1000,
                         integer=True),
        "alpha": c.number(d, k + ("alpha",), sequential.DEFAULTS["alpha"], 0.0001, 0.5),
        "baseline": c.string(d, k + ("baseline",), sequential.DEFAULTS["baseline"]),
    }
    if "metrics" in d:
        names = d["metrics"]
        if (not isinstance(names, list) or not names or len(set(map(str, names))) != len(names)
                or not all(isinstance(n, str) and n in sequential.MARGIN_KEYS for n in names)):
            c.fail(k + ("metrics",), "a list of distinct metrics out of "
                   + ", ".join(f'"{n}"' for n in sequential.MARGIN_KEYS), names)
        # in METRICS' order, as decision.json and the report list them
        out["metrics"] = [n for n in sequential.MARGIN_KEYS if n in names]
    margins = c.table(d.get("margins", {}), k + ("margins",), set(sequential.MARGIN_KEYS))
    out["margins"] = {name: c.number(margins, k + ("margins", name), None, 1e-9, 1e9)
                      for name in margins}
    return sequential.settings(out)


def _check_sweep(c, sweep):
    c.table(sweep, ("sweep",), set(SWEEP_KEYS))
    out = {}
    for name, values in sweep.items():
        k = ("sweep", name)
        if not isinstance(values, list) or not values:
            c.fail(k, "a non-empty list of values", values)
        checked = [SWEEP_KEYS[name](c, {name: v}, k) for v in values]
        if len(set(map(str, checked))) != len(checked):
            c.fail(k, "distinct values", values)
        out[name] = checked
    return out


def _check_sweep_settings(c, sweep, variants):
    """With [[variant]] tables the sweep holds settings alone, none that a
    variant sets."""
    for key in sweep:
        setters = [f"variant[{i}] '{v['name']}'" for i, v in enumerate(variants)
                   if key in v["options"]]
        if setters:
            c.fail(("sweep", key), "a key no [[variant]] sets", sweep[key],
                   f"{setters[0]} sets {key} too")
        if key not in SETTING_KEYS:
            c.fail(("sweep", key), "a setting (" + ", ".join(SETTING_KEYS) + "): with "
                   "[[variant]] tables the variants say what is compared", key,
                   f"set {key} in the [[variant]] tables")


def _check_distinct(c, scenario):
    """No two runs of a repetition with the same configuration: a variant
    that ignores a swept setting (UDP and tx_qlen) would run each value
    alike."""
    seen = {}
    for r in scenario.runs(reps=1):
        same = repr((sorted(r.config["link"].items()), r.config["tcp"], r.config["short_tcp"],
                     [sorted(effective(m).items()) for m in r.config["media"]]))
        other = seen.setdefault(same, r)
        if other is not r:
            key = next((k for k in scenario.sweep if r.point[k] != other.point[k]), None)
            if key is None:
                c.fail(("variant",), "variants of configurations of their own",
                       hint=f"'{r.variant}' runs as '{other.variant}' at {r.id}")
            c.fail(("sweep", key), f"values that each change the runs of variant "
                   f"'{r.variant}'", scenario.sweep[key],
                   f"{r.id} runs as {other.id}: {r.variant} ignores {key}")


def apply_point(config, point):
    """A copy of config with the sweep parameters of point applied."""
    cfg = copy.deepcopy(config)
    for name, v in point.items():
        if name == "policy":
            for m in cfg["media"]:
                if v in POLICIES:
                    m["transport"], m["policy"] = "dccp", v
                else:
                    m["transport"] = v
        elif name == "keyframe_on_loss":
            for m in cfg["media"]:
                m.pop(name, None)
                if v:
                    m[name] = list(v)
        elif name in ("ccid", "tx_qlen", "lifetime_ms", *CCID3_OPTIONS):
            for m in cfg["media"]:
                m[name] = v
        elif name == "rtt_ms":
            cfg["link"]["delay_fwd_ms"] = cfg["link"]["delay_rev_ms"] = v / 2
        elif name == "initcwnd":
            for g in cfg["short_tcp"]:
                g[name] = v
        elif name == "tcp_flows":
            for g in cfg["tcp"]:
                g["flows"] = v
        elif name == "queue_packets":
            cfg["link"].pop("queue_bytes", None)
            cfg["link"]["queue_packets"] = v
        else:
            cfg["link"][name] = v
    return cfg


def run_id(point, rep):
    """Directory name of one run: the sweep parameters, then the repetition."""
    parts = [f"{k}={'+'.join(v) or 'none'}" if isinstance(v, list) else f"{k}={v}"
             for k, v in point.items()] + [f"rep={rep:02d}"]
    return ",".join(parts)


class RunSpec:
    """One run: its id, sweep point (the variant's keys, then the
    setting's), repetition, seed, resolved config and variant name (None
    in a scenario without [[variant]] tables)."""

    def __init__(self, scenario, point, rep, variant=None):
        self.scenario = scenario
        self.point = point
        self.rep = rep
        self.variant = variant
        # Paired seeds: the seed depends on the repetition only, so every
        # policy (and every other sweep value) sees the same media schedule.
        self.seed = scenario.config["scenario"]["seed"] + rep - 1
        self.id = run_id(point, rep)
        self.config = apply_point(scenario.config, point)


class Scenario:
    """A checked scenario: raw (parsed TOML), config (defaults filled), sweep,
    variants ([{"name", "options", "point"}], [] without [[variant]]
    tables), baseline and comparisons ([baseline, variant] name pairs)."""

    def __init__(self, path, raw, config, sweep, decide=None, variants=(), baseline=None,
                 comparisons=()):
        self.path, self.raw, self.config, self.sweep = path, raw, config, sweep
        self.name = config["scenario"]["name"]
        # The [decide] table's settings (sequential.settings()), or None
        # without one; not part of config, so runs record the same meta.json.
        self.decide = decide
        self.variants, self.baseline = list(variants), baseline
        self.comparisons = [list(p) for p in comparisons]

    def points(self):
        """The sweep's points: with variants, the settings."""
        names = list(self.sweep)
        return [dict(zip(names, vals))
                for vals in itertools.product(*(self.sweep[n] for n in names))]

    def runs(self, reps=None):
        """Repetition-major order: each repetition covers every variant at
        every sweep point before the next starts, so a partial campaign
        stays paired."""
        reps = reps or self.config["scenario"]["repetitions"]
        variants = self.variants or [{"name": None, "point": {}}]
        return [RunSpec(self, {**v["point"], **p}, r, v["name"])
                for r in range(1, reps + 1) for v in variants for p in self.points()]


def stage(sc, dest):
    """Copy scenario sc and the model and trace files it names into
    directory dest, the copy naming them by their new place, so that it
    runs wherever dest is visible (the VM sees the host's files but not
    its /tmp); the copy's path.  The copy is checked as sc was."""
    os.makedirs(dest, exist_ok=True)
    with open(sc.path, encoding="utf-8") as f:
        text = f.read()
    taken = {}
    for raw, media in zip(sc.raw["media"], sc.config["media"]):
        for key in ("model", "trace"):
            if key not in raw:
                continue
            src = media[key]
            name = taken.get(src)
            if name is None:
                name = os.path.basename(src)
                while name in taken.values() or name == "scenario.toml":
                    name = "_" + name
                taken[src] = name
                shutil.copyfile(src, os.path.join(dest, name))
            old = raw[key]
            new = f'{key} = "{name}"'
            text, n = re.subn(rf'^(\s*){key}\s*=\s*(["\']){re.escape(old)}\2',
                              lambda m: m.group(1) + new, text, flags=re.MULTILINE)
            if not n:
                raise ScenarioError(f"{sc.path}: cannot stage {key} = {old!r}: write it "
                                    f"on one line, as {key} = \"...\"")
    path = os.path.join(dest, "scenario.toml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    load(path)
    return path


def load(path):
    """Parse and check a scenario file; raise ScenarioError naming the problem."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ScenarioError(f"{path}: cannot read: {e.strerror}") from None
    try:
        text = data.decode("utf-8")
        raw = tomllib.loads(text)
    except UnicodeDecodeError:
        raise ScenarioError(f"{path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        where = f"{path}:{m.group(1)}" if m else path
        msg = re.sub(r"\s*\(at line.*\)", "", str(e))
        raise ScenarioError(f"{where}: TOML syntax: {msg}") from None
    c = _Checker(path, text)
    c.table(raw, (), {"scenario", "link", "tcp", "short_tcp", "media", "sweep", "decide",
                      "variant"},
            required=("scenario", "link", "media"))
    s = raw["scenario"]
    k = ("scenario",)
    c.table(s, k, {"name", "description", "duration_s", "warmup_s", "repetitions", "seed",
                   "baseline", "compare"}, required=("name", "duration_s"))
    head = {
        "name": c.string(s, k + ("name",), None),
        "description": c.string(s, k + ("description",), ""),
        "duration_s": c.number(s, k + ("duration_s",), None, 2, 86400),
        "repetitions": c.number(s, k + ("repetitions",), 1, 1, 1000, integer=True),
        "seed": c.number(s, k + ("seed",), 1, 0, 2**31, integer=True),
    }
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", head["name"]) or head["name"][0] == ".":
        c.fail(k + ("name",), "letters, digits, '_', '-', '.' (1-64, not starting with .)",
               head["name"])
    head["warmup_s"] = c.number(s, k + ("warmup_s",), 3, 0, head["duration_s"] - 1)
    dur = head["duration_s"]
    base = os.path.dirname(os.path.abspath(path))
    config = {
        "scenario": head,
        "link": _check_link(c, raw["link"], dur),
        "tcp": _check_tcp(c, raw.get("tcp", []), dur),
        "short_tcp": _check_short(c, raw.get("short_tcp", []), dur),
        "media": _check_media(c, raw["media"], dur, base),
    }
    sweep = _check_sweep(c, raw.get("sweep", {}))
    variants = _check_variants(c, raw["variant"], config) if "variant" in raw else []
    if variants:
        _check_sweep_settings(c, sweep, variants)
    baseline, comparisons = _check_comparisons(c, s, variants)
    if "initcwnd" in sweep and not config["short_tcp"]:
        c.fail(("sweep", "initcwnd"), "[[short_tcp]] groups for it to set (there are none)")
    if "tcp_flows" in sweep and not config["tcp"]:
        c.fail(("sweep", "tcp_flows"), "[[tcp]] groups for it to set (there are none)")
    if any(sweep.get("keyframe_on_loss", [])):
        for i, m in enumerate(config["media"]):
            if not coded(m):
                c.fail(("sweep", "keyframe_on_loss"), KEYFRAME_NEEDS + f" (media[{i}] has none)",
                       raw["sweep"]["keyframe_on_loss"])
    for m in config["media"]:
        edf = sweep.get("edf", [m["edf"]])
        newest = sweep.get("newest", [m["newest"]])
        if True in edf and True in newest:
            key = "newest" if "newest" in sweep else "edf"
            c.fail(("sweep", key), "no run with both edf and newest true (two send orders)",
                   sweep[key])
    decide = _check_decide(c, raw["decide"]) if "decide" in raw else None
    sc = Scenario(path, raw, config, sweep, decide, variants, baseline, comparisons)
    if variants:
        _check_distinct(c, sc)
    return sc
