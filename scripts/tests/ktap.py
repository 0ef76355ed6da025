# SPDX-License-Identifier: GPL-2.0
"""What the host tests of the analysis share (test_decide, test_quality,
test_stats, test_friendliness): a list of test functions, check(), and a
main() that runs them and prints KTAP.  (The in-VM tests share
labtest.py.)

    test, tests = ktap.collector()

    @test
    def something():
        ktap.check(1 + 1 == 2, "arithmetic")

    sys.exit(ktap.main(tests, TMP))
"""
import shutil


def collector():
    """A decorator that collects test functions, and the list it fills."""
    tests = []

    def test(fn):
        tests.append(fn)
        return fn
    return test, tests


def check(cond, msg):
    """Fail the running test with msg unless cond."""
    if not cond:
        raise AssertionError(msg)


def main(tests, tmp=None):
    """Run tests in order, printing KTAP: a failed check or a crash is "not
    ok", its reason first as "# " lines.  Removes tmp (a directory the
    tests wrote in), if given.  Exit status: 0 all passed, 1 one failed."""
    print("TAP version 13")
    print(f"1..{len(tests)}")
    failed = 0
    for n, fn in enumerate(tests, 1):
        try:
            fn()
            print(f"ok {n} {fn.__name__}", flush=True)
        except Exception as e:  # noqa: BLE001 - a crash is a failure too, with its reason
            failed += 1
            for line in f"{type(e).__name__}: {e}".splitlines():
                print(f"# {line}")
            print(f"not ok {n} {fn.__name__}", flush=True)
    if tmp:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0
