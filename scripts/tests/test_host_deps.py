#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of scripts/host-deps.sh's choice of package list per release.

Only its --list and --release modes run (OS_RELEASE points it at a made-up
/etc/os-release): nothing is installed.  KTAP output; exit 0 if all passed.
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
HOST_DEPS = os.path.join(HERE, "..", "host-deps.sh")
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
results = []

BOOKWORM = """\
PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
NAME="Debian GNU/Linux"
VERSION_ID="12"
VERSION="12 (bookworm)"
VERSION_CODENAME=bookworm
ID=debian
"""
TRIXIE = BOOKWORM.replace("12", "13").replace("bookworm", "trixie")
SID = """\
PRETTY_NAME="Debian GNU/Linux forky/sid"
NAME="Debian GNU/Linux"
VERSION_CODENAME=forky
ID=debian
"""
UBUNTU = """\
PRETTY_NAME="Ubuntu 24.04.1 LTS"
NAME="Ubuntu"
VERSION_ID="24.04"
VERSION_CODENAME=noble
ID=ubuntu
ID_LIKE=debian
"""


def run(os_release, *args):
    """host-deps.sh ARGS with OS_RELEASE holding @os_release: (rc, out, err)."""
    with tempfile.NamedTemporaryFile("w", suffix="-os-release", delete=False) as f:
        f.write(os_release)
    try:
        p = subprocess.run([HOST_DEPS, *args], capture_output=True, text=True,
                           env={**os.environ, "OS_RELEASE": f.name})
    finally:
        os.unlink(f.name)
    return p.returncode, p.stdout.split(), p.stderr


def test(name, ok, why=""):
    results.append(ok)
    print(f"{'ok' if ok else 'not ok'} {len(results)} {name}")
    if not ok and why:
        print("# " + why.replace("\n", "\n# "))


def main():
    print("TAP version 13")
    print("1..14")
    rc, bookworm, err = run(BOOKWORM, "--list")
    test("Debian 12 gets clang 14's libFuzzer runtime",
         rc == 0 and "libclang-rt-14-dev" in bookworm and "clang" in bookworm
         and not any(p.startswith("libclang-rt-19") for p in bookworm), f"{rc} {bookworm} {err}")
    rc, trixie, err = run(TRIXIE, "--list")
    test("Debian 13 gets clang 19's",
         rc == 0 and "libclang-rt-19-dev" in trixie
         and "libclang-rt-14-dev" not in trixie, f"{rc} {trixie} {err}")
    test("both share everything else, once each",
         set(bookworm) - {"libclang-rt-14-dev"} == set(trixie) - {"libclang-rt-19-dev"}
         and len(set(trixie)) == len(trixie) and "qemu-system-x86" in trixie)
    dkms = {"dpkg-dev", "debhelper", "dh-dkms", "debootstrap"}
    test("both have what builds and tests the DKMS package (dkms itself only in the test roots)",
         dkms <= set(bookworm) and dkms <= set(trixie)
         and "dkms" not in bookworm and "dkms" not in trixie, f"{bookworm} {trixie}")
    rc, out, err = run(TRIXIE.replace("VERSION_CODENAME=trixie\n", ""), "--release")
    test("without VERSION_CODENAME, VERSION_ID 13 is trixie", rc == 0 and out == ["trixie"],
         f"{rc} {out} {err}")
    rc, out, _ = run(TRIXIE, "--list", "bookworm")
    test("--list RELEASE ignores the host's release", rc == 0 and out == bookworm)
    rc, out, _ = run(BOOKWORM, "--releases")
    test("--releases names both", rc == 0 and out == ["bookworm", "trixie"], f"{out}")
    rc, out, err = run(SID, "--list")
    test("an unknown Debian release stops, named",
         rc != 0 and not out and "forky" in err and "bookworm" in err, f"{rc} {out} {err}")
    rc, out, err = run(UBUNTU, "--release")
    test("another distribution stops, named", rc != 0 and not out and "Ubuntu 24.04.1" in err
         and "noble" in err, f"{rc} {out} {err}")
    rc, out, err = run(BOOKWORM, "--kvers")
    test("Debian 12 targets 6.1 by default, 6.12 too", rc == 0 and out == ["6.1", "6.12"],
         f"{rc} {out} {err}")
    rc, out, err = run(TRIXIE, "--kvers")
    test("Debian 13 targets 6.12 only (its archive has no 6.1)", rc == 0 and out == ["6.12"],
         f"{rc} {out} {err}")
    got = {}
    for name, osr in (("bookworm", BOOKWORM), ("trixie", TRIXIE)):
        with tempfile.TemporaryDirectory() as cache:
            for k in ("6.1", "6.12"):
                open(os.path.join(cache, f"{k}.env"), "w").close()
            with tempfile.NamedTemporaryFile("w", suffix="-os-release", delete=False) as f:
                f.write(osr)
            env = {k: v for k, v in os.environ.items() if k not in ("KVER", "ALSO_KVERS")}
            env.update(OS_RELEASE=f.name, CACHE=cache, ROOT=ROOT)
            p = subprocess.run(["bash", "-c", '. "$ROOT/scripts/target.sh" && echo "$KVER"'],
                               env=env, capture_output=True, text=True)
            os.unlink(f.name)
            got[name] = (p.returncode, p.stdout.strip(), p.stderr.strip())
    test("target.sh's default KVER is the host release's",
         got["bookworm"][:2] == (0, "6.1") and got["trixie"][:2] == (0, "6.12"), str(got))
    got = {}
    for name, osr, kver in (("trixie", TRIXIE, ""), ("ubuntu", UBUNTU, ""),
                            ("bookworm 7.3", BOOKWORM, "7.3"), ("trixie 6.1", TRIXIE, "6.1")):
        with tempfile.NamedTemporaryFile("w", suffix="-os-release", delete=False) as f:
            f.write(osr)
        env = {k: v for k, v in os.environ.items() if k != "KVER"}
        env.update(OS_RELEASE=f.name, ROOT=ROOT, **({"KVER": kver} if kver else {}))
        p = subprocess.run(["bash", "-c", '. "$ROOT/scripts/kver.sh" && echo "$KVER"'],
                           env=env, capture_output=True, text=True)
        os.unlink(f.name)
        got[name] = p.stdout.strip()
    test("kver.sh (target.sh's and kernel-inputs.sh's KVER): 6.1 on another system, "
         "a KVER given kept",
         got == {"trixie": "6.12", "ubuntu": "6.1", "bookworm 7.3": "7.3", "trixie 6.1": "6.1"},
         str(got))
    rc, out, err = run(BOOKWORM, "--list", "forky")
    test("--list of an unknown release stops, named", rc != 0 and not out and "'forky'" in err,
         f"{rc} {out} {err}")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
