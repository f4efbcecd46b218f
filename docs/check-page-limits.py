#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-page-limits.py [--report] ROOT: the test docs.page_limits.

A page is read in one sitting only while it stays short, and nothing but a
test keeps it so. For each walkthrough in ROOT/docs (and every page a chapter
adds there), this resolves each snippet alias of docs/Doxyfile.in
(\\serversnippet{DIR,NAME} is DIR/server.c between its two [NAME] markers, and
so on) and counts the lines Doxygen will show, then reads every trace the page
includes with \\verbinclude (docs/wire/) and every ```text block on it. It fails, naming
the page and what grew, when
  - a chapter page shows more than MAX_SNIPPETS snippets,
  - a snippet is longer than MAX_SNIPPET_LINES lines,
  - a page other than the primer links no term to the primer's glossary
    (\\ref gl_...): every page links the terms it uses,
  - a trace or output line is wider than MAX_COLUMNS columns (wider lines are
    cut off at the right edge of the rendered page). A results table
    (docs/results/) may be wider: its columns are the table's, and the box
    scrolls sideways (docs/rex.css).
--report prints each page's figures (snippets, longest, widest) and passes.
Exit: 0 pass, 1 a limit passed, 2 a snippet or file that cannot be found.
"""
import os
import re
import sys

from rexpages import ALIAS, marker_lines, source_of

MAX_SNIPPETS = 16
MAX_SNIPPET_LINES = 30
MAX_COLUMNS = 100

VERBINCLUDE = re.compile(r'\\verbinclude\s+(\S+)')


def snippet_lines(root, path, name):
    """The lines Doxygen shows for \\snippet PATH NAME: those between the
    first two lines that hold [NAME]."""
    marks = marker_lines(root, path, name)
    return marks[1] - marks[0] - 1


def glossary_linked(page):
    with open(page, encoding='utf-8') as f:
        return re.search(r'\\ref gl_\w+', f.read()) is not None


def check_page(root, page):
    problems = []
    with open(page, encoding='utf-8') as f:
        text = f.read().splitlines()
    snippets = []
    widest = (0, '')
    fence = False
    for n, line in enumerate(text, 1):
        if re.match(r'\s*(```|~~~)', line):
            fence = not fence if not fence else False
            label = re.sub(r'^\s*(```+|~~~+)\s*', '', line).strip('{}. \t')
            in_text = fence and label == 'text'
            continue
        if fence:
            if in_text and len(line) > widest[0]:
                widest = (len(line), f'{os.path.basename(page)}:{n}')
            continue
        for m in ALIAS.finditer(line):
            kind, arg, name = m.group(1), m.group(2).strip(), m.group(3).strip()
            path = source_of(kind, arg)
            count = snippet_lines(root, path, name)
            snippets.append((count, f'{path} [{name}] (line {n})'))
        for m in VERBINCLUDE.finditer(line):
            inc = m.group(1)
            if not inc.startswith('docs/wire/'):
                continue
            try:
                with open(os.path.join(root, inc), encoding='utf-8') as f:
                    for k, l in enumerate(f.read().splitlines(), 1):
                        if len(l) > widest[0]:
                            widest = (len(l), f'{inc}:{k}')
            except OSError as e:
                raise LookupError(f'{inc}: {e.strerror}')
    longest = max(snippets, default=(0, ''))
    return snippets, longest, widest


def main():
    args = sys.argv[1:]
    report = bool(args) and args[0] == '--report'
    if report:
        args = args[1:]
    root = args[0] if args else '.'
    docs = os.path.join(root, 'docs')
    pages = sorted(os.path.join(docs, p) for p in os.listdir(docs) if p.endswith('.md'))
    failed = False
    for page in pages:
        name = os.path.basename(page)
        try:
            snippets, longest, widest = check_page(root, page)
        except LookupError as e:
            print(f'{name}: {e}')
            return 2
        if report:
            print(f'{name:24} snippets {len(snippets):3}  longest {longest[0]:3} {longest[1]}  widest {widest[0]:3} {widest[1]}')
            continue
        if len(snippets) > MAX_SNIPPETS:
            print(f'{name}: {len(snippets)} snippets, more than {MAX_SNIPPETS}: link to the file for the rest')
            failed = True
        for count, where in snippets:
            if count > MAX_SNIPPET_LINES:
                print(f'{name}: a snippet of {count} lines, more than {MAX_SNIPPET_LINES}: {where}')
                failed = True
        if name != 'primer.md' and not glossary_linked(page):
            print(f'{name}: no term linked to the glossary (\\ref gl_... "term", docs/primer.md)')
            failed = True
        if widest[0] > MAX_COLUMNS:
            print(f'{name}: a line of {widest[0]} columns, more than {MAX_COLUMNS}: {widest[1]}')
            failed = True
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
