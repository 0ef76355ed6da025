#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host test of the analysis package's layering (scripts/sbpnlab); KTAP
output.

Data flows one way, scenario -> run -> records -> statistics -> tables
and figures, so no module of sbpnlab imports one that imports it back,
directly or through others: the graph of the package's imports, read from
the source with ast (at module level and inside functions alike, so a
late import does not hide a circle), has no cycle.  Standard library
only: nothing is imported, only parsed.
Run: .venv/bin/python scripts/tests/test_imports.py (or any python3).
Exit 1 if any test failed.
"""
import ast
import os
import sys

sys.dont_write_bytecode = True
SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, SCRIPTS)
import ktap  # noqa: E402 - beside this file

PACKAGE = "sbpnlab"
PACKAGE_DIR = os.path.join(SCRIPTS, PACKAGE)
test, tests = ktap.collector()
check = ktap.check


def modules(package_dir=PACKAGE_DIR):
    """{module name: path} of the package's modules; the package itself
    (__init__.py) is named after it."""
    out = {}
    for name in sorted(os.listdir(package_dir)):
        if name.endswith(".py"):
            stem = name[:-3]
            out[PACKAGE if stem == "__init__" else stem] = os.path.join(package_dir, name)
    return out


def imported(path, names):
    """The package's modules (of names) that the module at path imports,
    anywhere in it: "import sbpnlab.x", "from sbpnlab import x",
    "from . import x" and "from .x import y" all import x; "from . import
    CONSTANT" imports the package itself."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == PACKAGE:
                    found.add(parts[1] if len(parts) > 1 else PACKAGE)
        elif isinstance(node, ast.ImportFrom):
            if node.level > 1:
                raise AssertionError(f"{path}:{node.lineno}: an import from outside the "
                                     "package")
            if node.level == 1:
                base = node.module.split(".") if node.module else []
            elif node.module and node.module.split(".")[0] == PACKAGE:
                base = node.module.split(".")[1:]
            else:
                continue
            if base:
                found.add(base[0])
            else:
                # from the package: each name is a module, or else an
                # attribute of the package itself
                found |= {a.name if a.name in names else PACKAGE for a in node.names}
    return found & set(names)


def graph(package_dir=PACKAGE_DIR):
    """{module: set of the package's modules it imports} (not itself)."""
    names = modules(package_dir)
    return {m: imported(p, names) - {m} for m, p in names.items()}


def cycles(edges):
    """Import circles of edges ({module: modules it imports}), each as
    [a, b, ..., a]: one per back edge of a depth-first search, so none if
    and only if the graph is acyclic."""
    found, state, path = [], {}, []

    def visit(m):
        state[m] = "open"
        path.append(m)
        for n in sorted(edges.get(m, ())):
            if state.get(n) == "open":
                found.append(path[path.index(n):] + [n])
            elif n not in state:
                visit(n)
        path.pop()
        state[m] = "done"

    for m in sorted(edges):
        if m not in state:
            visit(m)
    return found


@test
def the_check_sees_circles():
    """The graph reader and the cycle search on a package written here:
    a circle closed by a function's late import, one through a chain, and
    a constant of the package that is not a circle."""
    import tempfile
    tmp = tempfile.mkdtemp(prefix="sbpn-imports.")
    try:
        files = {"__init__.py": "FORMAT = 1\n",
                 "low.py": "from . import FORMAT\n",
                 "a.py": "from . import low\nfrom .b import thing\n",
                 "b.py": "import os\n\ndef f():\n    from . import a\n    return a\n",
                 "c.py": "import sbpnlab.d\n",
                 "d.py": "from sbpnlab import e\n",
                 "e.py": "def g():\n    from .c import h\n"}
        for name, text in files.items():
            with open(os.path.join(tmp, name), "w", encoding="utf-8") as f:
                f.write(text)
        edges = graph(tmp)
        check(edges == {"sbpnlab": set(), "low": {"sbpnlab"}, "a": {"low", "b"}, "b": {"a"},
                        "c": {"d"}, "d": {"e"}, "e": {"c"}}, f"graph {edges}")
        found = cycles(edges)
        check(found == [["a", "b", "a"], ["c", "d", "e", "c"]], f"cycles {found}")
    finally:
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)


@test
def package_imports_have_no_circle():
    """No module of sbpnlab imports, at module level or in a function, a
    module that imports it back, directly or through a chain."""
    edges = graph()
    check(len(edges) > 10 and "report" in edges and "stats" in edges["report"],
          f"read too little of {PACKAGE_DIR}: {sorted(edges)}")
    found = cycles(edges)
    check(not found, "import circles (move what both sides need to the lower module):\n"
          + "\n".join(" -> ".join(c) for c in found))


def main():
    return ktap.main(tests)


if __name__ == "__main__":
    sys.exit(main())
