#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of the table that opens Documentation/results.rst
(sbpnlab.resultstable, scripts/sbpn-lab results-table); KTAP.

The committed table must be what the generator makes of the committed
summaries, so that neither can change without the other; and, read back
from the page with a parser of its own, every number in it must be the
summary's mean and interval of the metric its heading names, so that a
generator that swaps columns, scales or summaries fails here even once
its table is written.  The setting labels are checked against the
scenario files, and the choice of the newest summary and the refusals on
synthetic summaries.  The decided campaigns' tables, further down the
page, against the decisions committed beside the summaries
(*-decision.json): each row a comparison and each comparison a row.
Standard library only (python3 scripts/tests/...).
Exit 1 if any test failed.
"""
import contextlib
import csv
import difflib
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import tomllib

sys.dont_write_bytecode = True
SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(SCRIPTS)
sys.path.insert(0, SCRIPTS)
import ktap  # noqa: E402 - beside this file
from sbpnlab import resultstable  # noqa: E402

RST = os.path.join(ROOT, "Documentation", "results.rst")
# The campaigns as they ran, whose decided sections are pinned as the
# current page's are
HISTORY = os.path.join(ROOT, "Documentation", "history.rst")
TMP = tempfile.mkdtemp(prefix="sbpn-results-table.")
test, tests = ktap.collector()
check = ktap.check

# The headings of the table as a reader sees them (both lines joined), and
# what each must show: (summary metric, scale).  Written out here, not
# taken from the generator.
HEADINGS = {
    "audio on time, Δ pp": ("paired_audio.on_time_frac", 100),
    "whole frames on time, Δ pp": ("paired_video.frames_on_time_frac", 100),
    "competing TCP Δ kbit/s": ("paired_tcp.goodput_kbps", 1),
}


def page():
    with open(RST, encoding="utf-8") as f:
        return f.read()


def history():
    with open(HISTORY, encoding="utf-8") as f:
        return f.read()


def parse_table(block):
    """(headings, rows) of the first simple table in block: headings joined
    over their lines, rows as dicts heading -> cell."""
    lines = block.split("\n")
    rules = [i for i, x in enumerate(lines) if re.fullmatch(r" *=+( +=+)+ *", x)]
    check(len(rules) >= 3, f"no simple table (rules at lines {rules})")
    spans = [m.span() for m in re.finditer(r"=+", lines[rules[0]])]

    def cells(line):
        return [line[a:spans[k + 1][0] if k + 1 < len(spans) else None].strip()
                for k, (a, _) in enumerate(spans)]
    heads = [cells(x) for x in lines[rules[0] + 1:rules[1]]]
    headings = [" ".join(h[k] for h in heads if h[k]) for k in range(len(spans))]
    body = [dict(zip(headings, cells(x))) for x in lines[rules[1] + 1:rules[2]]]
    return headings, body


def legend_summaries(block):
    """{campaign: summary file} as the legend under the table names them."""
    text = " ".join(block.split())
    return {c: f for f, c in re.findall(r"``([\w.-]+-summary\.csv)`` \(([\w.-]+)\)", text)}


def expected_cell(row, scale):
    """The summary's paired mean and interval, to one decimal, written here
    for this test: '+8.9 ±1.5', '-' where there are no pairs."""
    if int(row["n"]) == 0:
        return "-"
    mean, ci = float(row["mean"]) * scale, float(row["ci95"]) * scale
    return f"{mean:+.1f} ±{abs(ci):.1f}" if not math.isnan(ci) else f"{mean:+.1f}"


@test
def committed_table_is_generated():
    """results.rst's table is what `sbpn-lab results-table` makes of the
    committed summaries (else: run it with --write, and commit both)."""
    want = resultstable.generate()
    got = resultstable.committed(page())
    diff = list(difflib.unified_diff(got.splitlines(), want.splitlines(), "results.rst",
                                     "generated", lineterm="", n=0))
    check(got == want, "the committed table differs from the generated one "
          "(scripts/sbpn-lab results-table --write):\n" + "\n".join(diff[:20]))


@test
def table_opens_the_page():
    """Nothing but the title comes before the table."""
    lines = page().split("\n")
    titles = [i for i, x in enumerate(lines) if re.fullmatch(r"=+", x)]
    check(len(titles) >= 2 and titles[1] == titles[0] + 2, f"no overlined title: {titles[:2]}")
    first = next(i for i in range(titles[1] + 1, len(lines)) if lines[i].strip())
    check(lines[first] == resultstable.BEGIN.split("\n")[0],
          f"line {first + 1} comes before the table: {lines[first]!r}")
    block = resultstable.committed(page())
    before_table = block[:block.index("\n   ====")]
    check(".. table::" in before_table and not re.search(r"\n[A-Za-z]", before_table),
          f"prose between the marker and the table: {before_table!r}")


@test
def table_numbers_are_the_summaries():
    """Every cell read back from the page is the mean ±interval, to one
    decimal, of the metric its heading names, in the summary the legend
    names for the row's campaign, for the row's variant and setting."""
    block = resultstable.committed(page())
    headings, body = parse_table(block)
    check(set(HEADINGS) <= set(headings), f"headings {headings}, expected {list(HEADINGS)}")
    files = legend_summaries(block)
    check(len(body) == 20, f"{len(body)} rows, expected 10 settings x 2 variants")
    setting_of = {(f, c): s for f, _, m in resultstable.SOURCES for c, s in m.items()}
    checked = 0
    for r in body:
        name = files.get(r["campaign"])
        check(name, f"row {r}: the legend names no summary for {r['campaign']}")
        with open(os.path.join(ROOT, "Documentation", "results", name), encoding="utf-8",
                  newline="") as f:
            data = list(csv.DictReader(f))
        comps = [c for (f, c), s in setting_of.items() if f == name and s == r["setting"]]
        check(len(comps) == 1, f"row {r}: setting not one comparison of {name}: {comps}")
        for heading, (metric, scale) in HEADINGS.items():
            src = [x for x in data if (x["comparison"], x["policy"], x["metric"])
                   == (comps[0], r["variant"], metric)]
            check(len(src) == 1, f"{name}: {comps[0]}, {r['variant']}, {metric}: {len(src)} rows")
            want = expected_cell(src[0], scale)
            check(r[heading] == want, f"{r['setting']}, {r['variant']}, {heading}: table "
                  f"{r[heading]!r}, {name} says {want!r}")
            checked += 1
        n = [x["n"] for x in data if (x["comparison"], x["policy"], x["metric"])
             == (comps[0], r["variant"], "paired_audio.on_time_frac")]
        check(r["pairs"] == n[0], f"{r['setting']}, {r['variant']}: pairs {r['pairs']}, "
              f"summary n {n}")
    check(checked == 60, f"{checked} cells checked")


@test
def pinned_numbers():
    """A few cells against the numbers results.rst's v13 sections state in
    prose (the best variant at the main setting and with 32 packets, no TCP
    under 2 % loss)."""
    _, body = parse_table(resultstable.committed(page()))
    row = {(r["setting"], r["variant"]): r for r in body}
    best = "sbpn2+sp+pd+owd+fw"
    main = row.get(("1 Mbit/s, 80 ms (main)", best), {})
    check([main.get(h) for h in HEADINGS] == ["+8.9 ±1.5", "+2.3 ±3.8", "+12.6 ±10.5"]
          and main.get("campaign") == "v13-rfc-tcp-rtt80-q5", f"main setting: {main}")
    q32 = row.get(("1 Mbit/s, 80 ms, qlen 32", best), {})
    check([q32.get(h) for h in HEADINGS] == ["+64.2 ±4.2", "+13.8 ±4.8", "+20.2 ±10.0"],
          f"qlen 32: {q32}")
    loss = [r for (s, _), r in row.items() if "loss" in s]
    check(len(loss) == 2 and all(r["competing TCP Δ kbit/s"] == "-" for r in loss),
          f"2 % loss: {loss}")


def scenario_setting(comparison):
    """(rate Mbit/s, RTT ms, qlen, loss %, queue bytes) of a summary's
    comparison ('frame-rate rate=750kbit flow call'), from its scenario
    file and the swept values in its key."""
    name, *rest = comparison.split(" flow ")[0].split(" ")
    params = dict(x.split("=", 1) for x in rest)
    with open(os.path.join(SCRIPTS, "scenarios", f"{name}.toml"), "rb") as f:
        sc = tomllib.load(f)
    link = sc["link"]
    rate = params.get("rate", link["rate"])
    num, unit = re.fullmatch(r"([\d.]+)(kbit|mbit)", rate).groups()
    mbit = float(num) / (1000 if unit == "kbit" else 1)
    rtt = int(params.get("rtt_ms", link["delay_fwd_ms"] + link["delay_rev_ms"]))
    return (mbit, rtt, sc["media"][0]["tx_qlen"], link.get("loss_pct", 0),
            link.get("queue_bytes"))


def label_setting(label):
    """The same five of a table label ('0.75 Mbit/s, 80 ms, 12,500 B queue'):
    qlen 5, no loss and a queue in packets unless named."""
    m = re.fullmatch(r"([\d.]+) Mbit/s, (\d+) ms(?:, qlen (\d+))?(?:, ([\d.]+) % loss)?"
                     r"(?:, ([\d,]+) B queue)?(?: \(main\))?", label)
    check(m, f"label {label!r} not understood")
    rate, rtt, qlen, loss, qbytes = m.groups()
    return (float(rate), int(rtt), int(qlen or 5), float(loss or 0),
            int(qbytes.replace(",", "")) if qbytes else None)


@test
def setting_labels_are_the_scenarios():
    """Each label says the rate, RTT, send queue, loss and byte-limited
    bottleneck of its comparison's scenario file."""
    for name, _, settings in resultstable.SOURCES:
        for comparison, label in settings.items():
            got, want = label_setting(label), scenario_setting(comparison)
            check(got == want, f"{name}: {comparison!r} is labelled {label!r}: {got}, "
                  f"its scenario says {want}")


def write_summary(path, comparisons, baseline="simple", variant="sbpn2", audio=0.05):
    """A summary.csv with a baseline and a variant paired with it."""
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["comparison", "policy", "metric", "n", "mean", "ci95", "min", "median",
                    "max"])
        for c in comparisons:
            w.writerow([c, baseline, "jain", 30, 1, 0, 1, 1, 1])
            for metric, mean in (("paired_audio.on_time_frac", audio),
                                 ("paired_video.frames_on_time_frac", -0.02),
                                 ("paired_tcp.goodput_kbps", 7.5)):
                w.writerow([c, variant, metric, 30, mean, 0.011, 0, 0, 0])


@contextlib.contextmanager
def sources(src, settings):
    old = resultstable.SOURCES, resultstable.SETTINGS
    resultstable.SOURCES, resultstable.SETTINGS = src, settings
    try:
        yield
    finally:
        resultstable.SOURCES, resultstable.SETTINGS = old


@test
def newest_summary_wins_and_none_is_lost():
    """Where two summaries have a setting and variant, the later in SOURCES
    (newer) is shown with its campaign; a comparison without a label, a
    label without its comparison, or no single baseline is an error."""
    d = os.path.join(TMP, "newest")
    os.makedirs(d)
    write_summary(os.path.join(d, "old.csv"), ["s flow call", "t flow call"], audio=0.05)
    write_summary(os.path.join(d, "new.csv"), ["s flow call"], audio=0.10)
    with sources([("old.csv", "c-old", {"s flow call": "S", "t flow call": "T"}),
                  ("new.csv", "c-new", {"s flow call": "S"})], ["T", "S"]):
        rs = resultstable.rows(d)
        got = [(r["setting"], r["campaign"], r["paired_audio.on_time_frac"]) for r in rs]
        check(got == [("T", "c-old", "+5.0 ±1.1"), ("S", "c-new", "+10.0 ±1.1")],
              f"rows {got}")
        check(rs[1]["paired_tcp.goodput_kbps"] == "+7.5 ±0.0", f"TCP: {rs[1]}")
    for src, why in (([("old.csv", "c", {"s flow call": "S"})], "no setting"),
                     ([("new.csv", "c", {"s flow call": "S", "u flow call": "S"})],
                      "not in the summary")):
        with sources(src, ["S", "T"]):
            try:
                resultstable.rows(d)
                raise AssertionError(f"{src}: no error")
            except ValueError as e:
                check(why in str(e), f"{src}: {e}")
    write_summary(os.path.join(d, "two.csv"), ["s flow call"])
    with open(os.path.join(d, "two.csv"), "a", encoding="utf-8") as f:
        f.write("s flow call,prio,jain,30,1,0,1,1,1\n")
    with sources([("two.csv", "c", {"s flow call": "S"})], ["S"]):
        try:
            resultstable.rows(d)
            raise AssertionError("two baselines accepted")
        except ValueError as e:
            check("one baseline" in str(e), str(e))


@test
def named_variants_are_their_options():
    """A summary of a campaign whose scenario names its variants (report's
    policy column "best", label "sbpn2+sp+pd+owd+fw") gives the row of
    that label, and replaces an older summary's same variant."""
    d = os.path.join(TMP, "named")
    os.makedirs(d)
    write_summary(os.path.join(d, "old.csv"), ["s flow call"], variant="sbpn2+sp+pd+owd+fw",
                  audio=0.05)
    with open(os.path.join(d, "new.csv"), "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["comparison", "policy", "label", "metric", "n", "mean", "ci95", "min",
                    "median", "max"])
        w.writerow(["s flow call", "simple", "simple", "jain", 30, 1, 0, 1, 1, 1])
        for metric in ("paired_audio.on_time_frac", "paired_video.frames_on_time_frac",
                       "paired_tcp.goodput_kbps"):
            w.writerow(["s flow call", "best", "sbpn2+sp+pd+owd+fw", metric, 30, 0.10, 0.011,
                        0, 0, 0])
    with sources([("old.csv", "c-old", {"s flow call": "S"}),
                  ("new.csv", "c-new", {"s flow call": "S"})], ["S"]):
        got = [(r["variant"], r["baseline"], r["campaign"], r["paired_audio.on_time_frac"])
               for r in resultstable.rows(d)]
    check(got == [("sbpn2+sp+pd+owd+fw", "simple", "c-new", "+10.0 ±1.1")], f"rows {got}")


@test
def check_and_write_commands():
    """--check exits 0 on the tree and 1 on a page whose table was edited;
    --write puts the generated table back and leaves the rest alone."""
    lab = os.path.join(SCRIPTS, "sbpn-lab")
    p = subprocess.run([sys.executable, lab, "results-table", "--check"], capture_output=True,
                       text=True, timeout=60)
    check(p.returncode == 0, f"--check on the tree: rc {p.returncode}: {p.stdout}{p.stderr}")
    text = page()
    block = resultstable.committed(text)
    edited = text.replace(block, block.replace("+8.9 ±1.5", "+9.9 ±1.5", 1), 1)
    check(edited != text, "nothing to edit")
    rst = os.path.join(TMP, "results.rst")
    with open(rst, "w", encoding="utf-8") as f:
        f.write(edited)
    p = subprocess.run([sys.executable, lab, "results-table", "--check", "--rst", rst],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 1 and "--write" in p.stderr,
          f"--check on an edited table: rc {p.returncode}: {p.stderr}")
    p = subprocess.run([sys.executable, lab, "results-table", "--write", "--rst", rst],
                       capture_output=True, text=True, timeout=60)
    with open(rst, encoding="utf-8") as f:
        check(p.returncode == 0 and f.read() == text,
              f"--write did not restore the page: rc {p.returncode}: {p.stderr}")


# The sections of decided campaigns whose tables are pinned, and the
# decisions committed beside the summaries that they must show.
DECIDED = [
    "The single settings and the loss sweep, decided with the skewness correction",
    "The rate and RTT sweeps, decided with the skewness correction",
    "The goal at ten settings, decided",
]
DECISIONS = os.path.join(ROOT, "Documentation", "results")
VERDICT = {"higher": "higher", "lower": "lower", "equivalent": "equiv.", None: "-"}
CELL = r"(higher|lower|equiv\.|-)\s+([+-]\d+\.\d) \[([+-]\d+\.\d), ([+-]\d+\.\d)\]"
DECIDED_ROW = re.compile(r"^  \S.*?\s(\S+)\s+(\d+\*?)\s+" + CELL + r"\s+" + CELL)


def section(text, title):
    """The body of the section titled title (underlined with - or =), up
    to the next heading."""
    m = re.search(rf"\n{re.escape(title)}\n(-{{{len(title)}}}|={{{len(title)}}})\n", text)
    if not m:
        raise ValueError(f"no section {title!r}")
    start = m.start() + 1
    m = re.compile(r"\n[^\n]+\n(?:-{3,}|={3,})\n").search(text, start + 2 * len(title) + 2)
    return text[start:m.start() if m else len(text)]


def decided_rows(text):
    """{section title: [(variant, stop, verdict, mean, lo, hi, ... of both
    metrics)]} of the decided tables."""
    out = {}
    for title in DECIDED:
        out[title] = [m.groups() for m in map(DECIDED_ROW.match, section(text, title).splitlines())
                      if m]
    return out


def decision_rows():
    """The same tuples from the committed decisions, formatted as the
    tables print them ("*": stopped at the maximum without every verdict)."""
    rows = []
    for path in sorted(os.listdir(DECISIONS)):
        if not path.endswith("-decision.json"):
            continue
        with open(os.path.join(DECISIONS, path), encoding="utf-8") as f:
            dec = json.load(f)
        for c in dec["comparisons"]:
            row = (c["variant"], f"{c['repetition']}{'*' if c['status'] == 'maximum' else ''}")
            for m in c["metrics"]:
                row += (VERDICT[m["verdict"]],) + tuple(f"{m[k]:+.1f}" for k in ("mean", "lo", "hi"))
            rows.append(row)
    return rows


@test
def decided_tables_are_the_decisions():
    """Every row of the decided campaigns' tables is a comparison of the
    committed decisions (variant, where it stopped, each metric's verdict,
    mean and interval), and every comparison is a row: 28 + 34 + 20."""
    got = decided_rows(page() + "\n" + history())
    check([len(v) for v in got.values()] == [28, 34, 20],
          f"rows per section: {[len(v) for v in got.values()]}")
    rows = sorted(r for v in got.values() for r in v)
    want = sorted(decision_rows())
    check(rows == want,
          f"{len(rows)} rows, {len(want)} comparisons; rows without a decision: "
          f"{[r for r in rows if r not in want][:3]}; decisions without a row: "
          f"{[r for r in want if r not in rows][:3]}")


@test
def decided_tables_refuse_an_edit():
    """The check above fails when a table's interval moves by 0.1 point
    (the parser is the one the check uses)."""
    text = page() + "\n" + history()
    title = DECIDED[2]
    body = section(text, title)
    edited = text.replace(body, body.replace("+65.9 [+60.0, +73.3]", "+65.9 [+60.0, +73.4]", 1), 1)
    check(edited != text, "nothing to edit")
    rows = sorted(r for v in decided_rows(edited).values() for r in v)
    check(rows != sorted(decision_rows()), "an edited interval still matched the decisions")


if __name__ == "__main__":
    sys.exit(ktap.main(tests, TMP))
