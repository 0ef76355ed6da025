#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Copy named definitions out of fetched kernel sources (the 7.x target).

Linux 6.16 unexported, or removed, the inet functions that only DCCP used
from a module.  The 7.x target carries them inside the DCCP modules: this
script copies each one, verbatim, from the upstream file and version that
patches/7.x/carry.list names, into one generated C file per line of the
list; the patches of patches/7.x/ then adapt the copies (build-tree.sh
applies them right after this runs).  Nothing upstream is committed.

carry.list, one line per generated file (# starts a comment):

    OUT  VERSION  UPSTREAM-FILE  NAME...

OUT is the file written below --out; VERSION is 7.3 (the target's source)
or 6.12 (DCCP's, for what 7.x removed); each NAME is a top-level
definition of UPSTREAM-FILE: a function, or a variable or type ending in
"};" or ";".  They are written in the list's order, each after the static
functions, variables and #defines of the same file that it uses (found by
name, recursively: the list names only what DCCP calls and the non-static
functions those need), after the upstream file's #include <...> lines
(its own directory's "..." headers are left to the patches), under a
header that names file, version and every definition copied.  A NAME not
found, or found twice, is an error.

Two mechanical changes, the same for every copy, keep the patches small:
a named definition is made external (a "static" or "inline" before it is
dropped: DCCP's files call it), and each generated file includes
"compat.h" after the upstream includes (DCCP's declarations of what the
copies use of it).  With --aliases, the script also writes the header
that net/dccp/Makefile gives every file of the modules first
(-include): "#define NAME dccp_compat_NAME" for each NAME of the list,
so that the copies, DCCP's calls to them and the kernel's own
declarations of them all take the prefixed name, under which the kernel
has no symbol (compat/compat.h says why).

--check MODULE... is the build's guard on that renaming: it fails if a
module names a listed function without the prefix, which would bind it
to the kernel's own function of that name (nm(1) of the .ko files).
"""

import argparse
import re
import subprocess
import sys
import textwrap

PREFIX = 'dccp_compat_'


def find_definition(lines, name):
    """Return (start, end) line indices of NAME's top-level definition."""
    ident = re.compile(r'(?<![A-Za-z0-9_])' + re.escape(name) + r'(?![A-Za-z0-9_])')
    found = []
    for i, line in enumerate(lines):
        if not line or line[0] in ' \t#}/*' or not ident.search(line):
            continue
        if line.startswith(('EXPORT_SYMBOL', 'EXPORT_IPV6_MOD', 'module_', 'late_initcall')):
            continue
        # The head ends at the first line ending in '{', ';' or '= {'.
        j = i
        while j < len(lines) and not lines[j].rstrip().endswith(('{', ';')):
            j += 1
        if j == len(lines):
            continue
        head = ' '.join(lines[i:j + 1])
        # Before the name: a declaration's type; a call or an assignment is
        # no definition of NAME.
        before = ident.split(head, 1)[0]
        if '(' in before or '=' in before:
            continue
        if lines[j].rstrip().endswith(';'):
            # A prototype is skipped; a one-line variable is a definition.
            if re.search(ident.pattern + r'\s*\(', head) and '=' not in head:
                continue
            found.append((i, j))
            continue
        # A function or an initialised variable: up to the closing brace.
        k = j
        while k < len(lines) and not re.match(r'^\}', lines[k]):
            k += 1
        if k == len(lines):
            raise SystemExit(f'carry: {name}: no closing brace')
        found.append((i, k))
    # A return type on the line before the name ("static int\nfoo(...)").
    result = []
    for i, k in found:
        while i > 0 and lines[i - 1] and lines[i - 1][0] not in ' \t#}/*' and \
                not lines[i - 1].rstrip().endswith((';', '}', '*/', ')')):
            i -= 1
        result.append((i, k))
    return result


def top_level_names(lines):
    """Map each static top-level definition and #define of a file to its span."""
    found = {}
    for i, line in enumerate(lines):
        m = re.match(r'#define\s+([A-Za-z_][A-Za-z0-9_]*)', line)
        if m:
            k = i
            while lines[k].endswith('\\') and k + 1 < len(lines):
                k += 1
            found.setdefault(m.group(1), (i, k))
            continue
        if not line.startswith('static') and not (i + 1 < len(lines) and
                                                   lines[i].startswith('static')):
            continue
        # The name may stand on the next line ("static int *\nfoo(...)").
        m = re.search(r'([A-Za-z_][A-Za-z0-9_]*)\s*(\(|\[|=|;)', line)
        if not m and i + 1 < len(lines):
            m = re.match(r'([A-Za-z_][A-Za-z0-9_]*)\s*\(', lines[i + 1])
        if not m or m.group(1) in ('__read_mostly', '__initdata'):
            continue
        name = m.group(1)
        if name in found:
            continue
        spans = find_definition(lines, name)
        if len(spans) == 1:
            found[name] = spans[0]
    return found


def carry(out_dir, version, upstream, names, sources, label):
    path = f'{sources[version]}/{upstream}'
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    spdx = lines[0] if 'SPDX-License-Identifier' in lines[0] else '// SPDX-License-Identifier: GPL-2.0'
    # The file's own includes, less its directory's private headers; a
    # header's definitions need the header's declarations too.
    includes = [l for l in lines if l.startswith('#include <')]
    if upstream.startswith('include/'):
        includes.append(f'#include <{upstream[len("include/"):]}>')
    statics = top_level_names(lines)
    ident = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
    done, order, pulled, named_spans = set(), [], [], set()

    def visit(name, span, named):
        # Dependencies first: the file's static helpers, variables and
        # macros that the definition uses, then the definition itself.
        if name in done:
            return
        done.add(name)
        text = '\n'.join(lines[span[0]:span[1] + 1])
        for word in ident.findall(text):
            if word != name and word in statics and word not in names:
                visit(word, statics[word], False)
        order.append(span)
        if not named:
            pulled.append(name)

    for name in names:
        spans = find_definition(lines, name)
        if len(spans) != 1:
            raise SystemExit(f'carry: {upstream} ({version}): {name}: '
                             f'{"not found" if not spans else "found %d times" % len(spans)}')
        named_spans.add(spans[0])
        visit(name, spans[0], True)
    body = []
    for i, k in order:
        text = '\n'.join(lines[i:k + 1])
        if (i, k) in named_spans:
            # DCCP's files call it: no longer static to its file.
            text = re.sub(r'^(?:(?:static|inline|__always_inline)\s+)+', '', text)
        body.append(text)
    header = [spdx, '/*',
              f' * Generated by scripts/carry.py from {upstream} of {label[version]}:',
              *textwrap.wrap(', '.join(names) + '.', 72, initial_indent=' * ',
                             subsequent_indent=' * '),
              *(textwrap.wrap('With the static definitions they use: ' + ', '.join(pulled) + '.',
                              72, initial_indent=' * ', subsequent_indent=' * ')
                if pulled else []),
              ' * Copied verbatim (the named ones made external; compat/alias.h',
              f' * gives them the {PREFIX} prefix); patches/7.x/ adapt them.',
              ' * Do not edit: edit patches/7.x/carry.list or the patches.',
              ' */']
    includes.append('#include "compat.h"')
    return '\n'.join(header + includes) + '\n\n' + '\n\n'.join(body) + '\n'


def read_list(path, sources):
    """The lines of carry.list: (OUT, VERSION, UPSTREAM-FILE, [NAME...])."""
    entries = []
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            line = line.split('#', 1)[0].split()
            if not line:
                continue
            if len(line) < 4 or (sources is not None and line[1] not in sources):
                sys.exit(f'carry: {path}:{n}: want OUT VERSION FILE NAME..., '
                         f'VERSION one of {", ".join(sources or [])}')
            entries.append((line[0], line[1], line[2], line[3:]))
    return entries


def aliases(entries, list_path):
    """The -include header: every listed NAME becomes PREFIX + NAME."""
    names = [n for _, _, _, ns in entries for n in ns]
    return '\n'.join([
        '/* SPDX-License-Identifier: GPL-2.0 */',
        '/*',
        f' * Generated by scripts/carry.py from {list_path}.  Included first',
        ' * in every file of the DCCP modules (net/dccp/Makefile): the kernel',
        ' * functions they carry, the calls to them and the kernel\'s own',
        f' * declarations of them all take a {PREFIX} name, under which the',
        ' * kernel has no symbol (compat/compat.h).',
        ' */',
        '#ifndef _DCCP_COMPAT_ALIAS_H',
        '#define _DCCP_COMPAT_ALIAS_H',
        '',
        *(f'#define {n} {PREFIX}{n}' for n in names),
        '',
        '#endif /* _DCCP_COMPAT_ALIAS_H */',
        ''])


def check(entries, modules):
    """Fail if a module names a listed function without the prefix."""
    names = {n for _, _, _, ns in entries for n in ns}
    bad = 0
    for ko in modules:
        out = subprocess.run(['nm', ko], check=True, capture_output=True,
                             text=True).stdout
        for line in out.splitlines():
            sym = line.split()[-1] if line.strip() else ''
            if sym in names:
                print(f'carry: {ko}: {line.strip()}: a carried function under the '
                      f'kernel\'s name, not {PREFIX}{sym}: is compat/alias.h '
                      'included first?', file=sys.stderr)
                bad += 1
    if bad:
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--list', required=True, help='patches/7.x/carry.list')
    ap.add_argument('--src', action='append', metavar='VERSION=DIR[=LABEL]',
                    help='where the sources of VERSION are (and how to name them)')
    ap.add_argument('--out', help='directory of the generated files')
    ap.add_argument('--aliases', metavar='FILE',
                    help='also write the prefixing header (compat/alias.h)')
    ap.add_argument('--check', nargs='+', metavar='MODULE',
                    help='only check the built modules (nm) for unprefixed names')
    args = ap.parse_args()
    if args.check:
        check(read_list(args.list, None), args.check)
        return
    if not args.src or not args.out:
        ap.error('--src and --out are needed unless --check is given')
    sources, label = {}, {}
    for s in args.src:
        v, d, *rest = s.split('=', 2)
        sources[v] = d
        label[v] = rest[0] if rest else f'Linux {v}'
    entries = read_list(args.list, sources)
    for out, version, upstream, names in entries:
        text = carry(args.out, version, upstream, names, sources, label)
        with open(f'{args.out}/{out}', 'w', encoding='utf-8') as g:
            g.write(text)
    if args.aliases:
        with open(args.aliases, 'w', encoding='utf-8') as g:
            g.write(aliases(entries, 'patches/7.x/carry.list'))


if __name__ == '__main__':
    main()
