#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check that every page in Documentation/ parses without a docutils warning.

A table row that outgrew its column or a title longer than its underline
still "renders", as garbage or as plain text; docutils only warns.  Here any
warning fails the check, with the file and line.
"""
import pathlib
import sys

import docutils.core
import docutils.utils

DOCS = pathlib.Path(__file__).resolve().parent.parent / "Documentation"


def check(page):
    """Return docutils' first complaint about @page, or None."""
    try:
        docutils.core.publish_doctree(
            page.read_text(encoding="utf-8"), source_path=str(page),
            settings_overrides={"report_level": 2, "halt_level": 2,
                                "warning_stream": False})
    except docutils.utils.SystemMessage as e:
        return str(e)
    return None


def main():
    pages = sorted(DOCS.glob("*.rst"))
    bad = 0
    for page in pages:
        problem = check(page)
        if problem:
            print(f"docs: {problem}", file=sys.stderr)
            bad += 1
    if not pages:
        print(f"docs: no pages in {DOCS}", file=sys.stderr)
        return 1
    print(f"docs: {len(pages) - bad} of {len(pages)} pages parse without a warning")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
