#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host test: the tree speaks to its users, not about how it was made.

Words of the project's process have no place in what a user reads: the
numbers of the tracker's issues ("issue #19", "#38, item 3"), working
sessions ("this session", "session of 2026-11-27"), the machines it was
made on ("this machine", "our machines"), who did the work ("a helper's
compiles"), a file outside the repository (PLATFORM.md) and the
nicknames of past versions ("the honest controller").  Every file git
tracks (text only) is scanned; this file, which must name them, is not.
A second test holds the patterns to what they must and must not match,
so that a scan that finds nothing has been shown able to find something.
KTAP output; exit 1 if a test failed.
"""
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import ktap  # noqa: E402 - beside this file

test, tests = ktap.collector()
check = ktap.check

# A space in a pattern is any run of white space, a line break too.
PATTERNS = [re.compile(p.replace(" ", r"\s+"), re.IGNORECASE) for p in (
    r"\bissues? #?\d+",                         # issue #19, issue 40
    r"(?<![\w&#/])#\d{2,3}(?=[,'.;:)]| item)",  # #38, item 3; #19's
    r"\b(?:this|that|the|an?|one|earlier|previous|next|same|each) session\b",
    r"\bsessions? (?:of )?\d",                  # session of 2026-11-27, session 12
    r"\b(?:this|that) machine\b",
    r"\bour machines?\b",
    r"\bhelper's\b|\bhelper agents?\b",      # a helper's compiles
    r"\bPLATFORM\.md\b",
    r"\bhonest controller\b",
)]
SELF = os.path.relpath(os.path.abspath(__file__), ROOT)


def hits(text):
    """[(line number, the match)] of every pattern in text, in order (a
    match that a line break splits counts on its first line)."""
    out = set()
    for p in PATTERNS:
        for m in p.finditer(text):
            out.add((text.count("\n", 0, m.start()) + 1, " ".join(m.group(0).split())))
    return sorted(out)


def tracked():
    """The text files git tracks, relative to the top (binary ones, with a
    NUL byte in their first 8 kB, left out)."""
    names = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], capture_output=True,
                           check=True).stdout.decode().split("\0")
    out = []
    for name in filter(None, names):
        path = os.path.join(ROOT, name)
        if name == SELF or not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            if b"\0" in f.read(8192):
                continue
        out.append(name)
    return out


@test
def patterns_catch_process_words_and_nothing_else():
    found = ["Issue #19's goal at the main setting", "the key-frame loop (#38, item 3)",
             "#39, item 2: named variants", "as #19's goal says", "issue 40 asks",
             "in this session, 17 min", "ran first, in the earlier session",
             "Done (session of 2026-11-27, 12):", "not on this machine any more",
             "it does both on our machines", "nice -n 19, a helper's compiles",
             "Read PLATFORM.md first", "The honest controller keeps",
             "the honest\ncontroller keeps", "in this\n  session"]
    kept = ["each in its own session so it can be killed", "the static helpers of 7.3",
            "Helpers shared by the DCCP and SBPN selftests", "#include <stdio.h>",
            "color #1f77b4", "#define SBPN_MAGIC 0x5342504e", "a known issue of TFRC",
            "the machine's two cores", "seq #5 of the run", "mss 1448 #bytes",
            "the helper function sbpn_send()"]
    missed = [s for s in found if not hits(s)]
    wrong = [s for s in kept if hits(s)]
    check(not missed and not wrong, f"not found: {missed}; found in plain text: {wrong}")


@test
def no_process_words_in_the_tree():
    bad = []
    files = tracked()
    for name in files:
        with open(os.path.join(ROOT, name), encoding="utf-8", errors="replace") as f:
            bad += [f"{name}:{n}: {m!r}" for n, m in hits(f.read())]
    check(len(files) > 100, f"only {len(files)} files scanned: is this a git checkout?")
    check(not bad, f"{len(bad)} lines name the project's process:\n" + "\n".join(bad[:40]))


if __name__ == "__main__":
    sys.exit(ktap.main(tests))
