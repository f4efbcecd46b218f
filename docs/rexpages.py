# SPDX-License-Identifier: MIT
"""What the docs' scripts share: how a page names the code it shows.

Pages show code only through the snippet aliases of docs/Doxyfile.in.
ALIAS finds them on a line; source_of() turns one into the file it quotes
(\\serversnippet{DIR,NAME} is DIR/server.c, \\commonsnippet{FILE,NAME} is
common/FILE, the others name the file); marker_lines() finds the lines that
hold a snippet's [NAME] marker, the way Doxygen's \\snippet does.
"""
import os
import re

ALIAS = re.compile(r'\\(server|client|clientfile|serverfile|shared|common|program)snippet\{([^,}]+),([^}]+)\}')


def source_of(kind, arg):
    if kind == 'server':
        return os.path.join(arg, 'server.c')
    if kind == 'client':
        return os.path.join(arg, 'client.c')
    if kind == 'common':
        return os.path.join('common', arg)
    return arg


def snippets_of(page):
    """(line number, file, marker) of each snippet on PAGE, in order."""
    found = []
    with open(page, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            for m in ALIAS.finditer(line):
                found.append((n, source_of(m.group(1), m.group(2).strip()), m.group(3).strip()))
    return found


def marker_lines(root, path, name):
    """The 1-based numbers of the lines of PATH that hold [NAME]; at least
    two, or LookupError."""
    try:
        with open(os.path.join(root, path), encoding='utf-8') as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise LookupError(f'{path}: {e.strerror}')
    marks = [i for i, line in enumerate(lines, 1) if '[' + name + ']' in line]
    if len(marks) < 2:
        raise LookupError(f'{path}: no pair of [{name}] markers')
    return marks
