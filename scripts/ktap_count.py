#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Count the test cases of one suite's KTAP log, for scripts/check.sh.

usage: ktap_count.py LABEL LOG RC [--expect NAME ...] [--one-case NAME ...]
                    [--allow-skip REASON]

LOG is a suite's output: top-level KTAP ("ok N desc", "not ok N desc",
"1..N"), where a kselftest program's own results are nested one level
("# ok 1 case", "# 1..N").  Each case counts once:

  - a program with nested results counts those (an "ok ... # SKIP" is a
    skip), plus one failure if it said "not ok" without a failing case or
    reported fewer cases than its plan (it crashed part way);
  - a top-level result without nested ones (a script, or a program that
    died before printing) is one case itself;
  - a --one-case program is one case whatever it nests: passed if all of
    its nested results passed, failed if any failed (or it did, or it fell
    short of its plan), skipped if all skipped.  For programs whose number
    of results is not fixed, such as dccp_stress's rounds (as many as fit
    its time budget): the totals of two runs stay comparable.

The suite fails as a whole (one more failure each) when its top-level plan
is not met, when RC is neither 0 nor 4 and no failure explains it, when an
--expect'ed program has no result, and when nothing passed: a suite that
skipped everything (RC 4, "1..0 # SKIP") fails unless --allow-skip gives
the reason, which is printed.  Prints "LABEL: N passed, N failed, N
skipped (...)" and the reasons, and on the last line "P F S" for the caller.
"""
import re
import sys

RESULT = re.compile(r"^(not )?ok \d+ ?(.*?)(\s+#\s*(SKIP|skip)\b.*)?$")
PLAN = re.compile(r"^1\.\.(\d+)")


def parse_args(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    label, log, rc = argv[0], argv[1], int(argv[2])
    expect, one_case, allow_skip, rest = [], [], None, argv[3:]
    while rest:
        opt = rest.pop(0)
        if opt in ("--expect", "--one-case") and rest:
            names = expect if opt == "--expect" else one_case
            while rest and not rest[0].startswith("--"):
                names.append(rest.pop(0))
        elif opt == "--allow-skip" and rest:
            allow_skip = rest.pop(0)
        else:
            sys.exit(f"ktap_count.py: unexpected argument {opt!r}")
    return label, log, rc, expect, one_case, allow_skip


def named(desc, name):
    """Whether a top-level result's description is program name's."""
    return desc == name or desc.endswith(f": {name}")


def count(lines, one_case=()):
    """(passed, failed, skipped, programs, problems) of a suite's log; the
    programs in one_case count as one case each."""
    passed = failed = skipped = 0
    problems, programs = [], []
    plan, top = None, 0
    nested = {"ok": 0, "fail": 0, "skip": 0, "plan": None}

    def reset():
        nested.update(ok=0, fail=0, skip=0, plan=None)

    for line in lines:
        line = line.rstrip("\n")
        if line.startswith("# ") and not line.startswith("# #"):
            inner = line[2:]
            m = RESULT.match(inner)
            if m:
                if m.group(1):
                    nested["fail"] += 1
                elif m.group(3):
                    nested["skip"] += 1
                else:
                    nested["ok"] += 1
                continue
            m = PLAN.match(inner)
            if m and nested["plan"] is None:
                nested["plan"] = int(m.group(1))
            continue
        m = PLAN.match(line)
        if m and plan is None:
            plan = int(m.group(1))
            continue
        m = RESULT.match(line)
        if not m:
            continue
        top += 1
        # the description without a directive such as "# exit=1"
        desc = re.sub(r"\s+#.*$", "", m.group(2)).strip()
        programs.append(desc)
        bad, skip = bool(m.group(1)), bool(m.group(3))
        cases = nested["ok"] + nested["fail"] + nested["skip"]
        if cases and any(named(desc, n) for n in one_case):
            short = nested["plan"] is not None and cases < nested["plan"]
            if nested["fail"] or bad or short:
                failed += 1
                problems.append(f"{desc}: {nested['fail']} of its {cases} results failed"
                                + (f", {cases} of {nested['plan']} planned" if short else "")
                                + (", and it failed" if bad and not nested["fail"] else "")
                                + " (counted as one case)")
            elif nested["ok"]:
                passed += 1
            else:
                skipped += 1
        elif cases:
            passed += nested["ok"]
            failed += nested["fail"]
            skipped += nested["skip"]
            if bad and not nested["fail"]:
                failed += 1
                problems.append(f"{desc}: failed after {cases} cases without a failing one")
            elif nested["plan"] is not None and cases < nested["plan"]:
                failed += 1
                problems.append(f"{desc}: {cases} of {nested['plan']} planned cases")
        elif bad:
            failed += 1
        elif skip:
            skipped += 1
        else:
            passed += 1
        reset()
    if plan is not None and plan != top:
        failed += 1
        problems.append(f"planned {plan} results, got {top}")
    return passed, failed, skipped, programs, problems


def main():
    label, log, rc, expect, one_case, allow_skip = parse_args(sys.argv[1:])
    try:
        with open(log, encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
    except OSError as e:
        lines = []
        print(f"{label}: no log: {e}")
    passed, failed, skipped, programs, problems = count(lines, one_case)
    for name in expect:
        if not any(named(p, name) for p in programs):
            failed += 1
            problems.append(f"{name}: expected, but it has no result")
    if rc not in (0, 4) and not failed:
        failed += 1
        problems.append(f"exited {rc} without a failing result")
    if not passed and not failed:
        if allow_skip:
            problems.append(f"skipped, as allowed: {allow_skip}")
        else:
            failed += 1
            problems.append("nothing ran (a wholly skipped suite fails unless allowed)")
    print(f"{label}: {passed} passed, {failed} failed, {skipped} skipped "
          f"({len(programs)} programs)")
    for p in problems:
        print(f"{label}: {p}")
    print(passed, failed, skipped)


if __name__ == "__main__":
    main()
