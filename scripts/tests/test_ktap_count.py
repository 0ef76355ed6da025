#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of scripts/ktap_count.py, the test accounting of make check.

KTAP output; exit 0 if all passed.
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
COUNT = os.path.join(HERE, "..", "ktap_count.py")
results = []

PROGRAM_OK = """\
# selftests: sbpn: sbpn_a
# TAP version 13
# 1..3
# ok 1 a.one
# ok 2 a.two
# ok 3 a.three # SKIP no tracefs
ok 1 selftests: sbpn: sbpn_a
"""
PROGRAM_CRASHED = """\
# selftests: sbpn: sbpn_b
# TAP version 13
# 1..3
# ok 1 b.one
not ok 2 selftests: sbpn: sbpn_b # exit=139
"""
SCRIPT_OK = "ok 3 selftests: dccp: dccp_modules.sh\n"


def run(log, rc, *opts):
    with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
        f.write(log)
    try:
        out = subprocess.run([sys.executable, COUNT, "suite", f.name, str(rc), *opts],
                             capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(f.name)
    lines = out.strip().split("\n")
    return tuple(int(x) for x in lines[-1].split()), "\n".join(lines[:-1])


def test(name, log, rc, want, *opts, says=None):
    got, text = run(log, rc, *opts)
    ok = got == want and (says is None or says in text)
    results.append(ok)
    print(f"{'ok' if ok else 'not ok'} {len(results)} {name}")
    if not ok:
        print(f"# got {got}, want {want}; output:\n# " + text.replace("\n", "\n# "))


def main():
    print("TAP version 13")
    print("1..13")
    test("nested cases count, a skipped case as a skip",
         "1..2\n" + PROGRAM_OK + SCRIPT_OK.replace("ok 3", "ok 2"), 0, (3, 0, 1))
    test("a program that crashed after some cases is one failure more",
         "1..2\n" + PROGRAM_OK + PROGRAM_CRASHED, 1, (3, 1, 1),
         says="failed after 1 cases without a failing one")
    test("a program with fewer cases than its plan fails",
         "1..1\n" + PROGRAM_CRASHED.replace("not ok 2", "ok 1"), 0, (1, 1, 0),
         says="1 of 3 planned cases")
    test("a wholly skipped suite fails", "1..0 # SKIP iperf3 missing\n", 4, (0, 1, 0),
         says="nothing ran")
    test("... unless it is allowed to, with the reason printed",
         "1..0 # SKIP iperf3 missing\n", 4, (0, 0, 0), "--allow-skip", "no iperf3 here",
         says="skipped, as allowed: no iperf3 here")
    test("an expected program without a result fails", "1..1\n" + PROGRAM_OK, 0, (2, 1, 1),
         "--expect", "sbpn_a", "sbpn_gone", says="sbpn_gone: expected")
    test("a failing exit status without a failing result fails",
         "1..1\n" + PROGRAM_OK, 1, (2, 1, 1), says="exited 1")
    test("a suite that stopped before its plan fails", "1..3\n" + PROGRAM_OK, 0, (2, 1, 1),
         says="planned 3 results, got 1")
    test("a failed program is found by name despite its directive, and fails once",
         "1..1\n" + PROGRAM_CRASHED.replace("not ok 2", "not ok 1"), 1, (1, 1, 0),
         "--expect", "sbpn_b")
    # dccp_stress runs rounds until its time budget ends: 1 to 4 per boot
    stress = lambda rounds, bad=(): (  # noqa: E731
        "# selftests: stress: dccp_stress\n# TAP version 13\n" +
        "".join(f"# {'not ok' if r in bad else 'ok'} {r} round {r}\n"
                for r in range(1, rounds + 1)) +
        f"# 1..{rounds}\n{'not ok' if bad else 'ok'} 1 selftests: stress: dccp_stress\n")
    test("a --one-case program's rounds count as one case, whatever their number",
         "1..1\n" + stress(3), 0, (1, 0, 0), "--one-case", "dccp_stress")
    test("... four rounds the same as three", "1..1\n" + stress(4), 0, (1, 0, 0),
         "--one-case", "dccp_stress", "--expect", "dccp_stress")
    test("... and a failed round fails that one case", "1..1\n" + stress(4, bad=(2,)), 1,
         (0, 1, 0), "--one-case", "dccp_stress", says="dccp_stress: 1 of its 4 results failed")
    test("... other programs of the suite count their cases as before",
         "1..2\n" + PROGRAM_OK + stress(2).replace("ok 1 selftests: stress", "ok 2 selftests: stress"),
         0, (3, 0, 1), "--one-case", "dccp_stress")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
