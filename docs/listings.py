#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""listings.py pages|links ROOT OUT: every snippet's whole file, one click away.

A snippet shows a few lines; a reader who wants the rest of the function, or
what calls it, needs the whole file. The docs target runs this twice, around
Doxygen:

  listings.py pages ROOT OUT.md  writes OUT.md: a page "Every file, whole"
      and, under it, one page per file that a snippet on ROOT/docs/*.md
      quotes, the file entire with line numbers (\\includelineno, so
      Doxygen highlights it as it does the snippets). The file's page is
      src_ and its path with every other character made _, so
      06-mr-pool/client_runs.c is src_06_mr_pool_client_runs_c. Then a
      page per exercise (exercises/ID: its hint and its reference solution,
      ex_ID with every other character _), which the chapter pages link.
  listings.py links ROOT HTMLDIR  rewrites, in every page Doxygen wrote, the
      link each snippet's caption carries (href="src/FILE#NAME", from the
      aliases of docs/Doxyfile.in) into the file's page, at the line of the
      snippet's first [NAME] marker.

Exit: 0 done; 1 a caption's link names a file or marker not found, or a
listing page is missing (each named); 2 bad arguments.
"""
import glob
import os
import re
import sys

from rexpages import marker_lines, snippets_of

CAPTION_LINK = re.compile(r'href="src/([^"#]+)#([^"]+)"')


def label_of(path):
    return 'src_' + re.sub(r'[^A-Za-z0-9]', '_', path)


def page_label(page):
    with open(page, encoding='utf-8') as f:
        m = re.search(r'\{#(\w+)\}|\\page (\w+)', f.read())
    return (m.group(1) or m.group(2)) if m else None


def write_pages(root, out):
    users = {}  # file -> labels of the pages that quote it, in page order
    # A chapter's core page (05-async.md) before its parts (05-async-machine.md).
    for page in sorted(glob.glob(os.path.join(root, 'docs', '*.md')), key=lambda p: p[:-3]):
        label = page_label(page)
        for _, path, _ in snippets_of(page):
            users.setdefault(path, [])
            if label and label not in users[path]:
                users[path].append(label)
    # The chapters' files first, in chapter order, then the helpers.
    files = sorted(users, key=lambda p: (p.startswith('common/'), p))
    text = ['# Every file, whole {#sources}', '',
            'Each file a snippet on these pages quotes, entire, with line numbers. The',
            'caption of every snippet links here, to the line where the snippet starts.',
            'The chapters\' files first, then the helpers of `common/` (their contracts,',
            'with every argument and return value, are in the headers\' reference).', '']
    text += [f'- \\subpage {label_of(p)}' for p in files]
    for path in files:
        quoted = ', '.join(f'\\ref {label}' for label in users[path])
        text += ['', f'\\page {label_of(path)} {path}', '',
                 f'The whole of `{path}`; snippets of it are on {quoted}.', '',
                 f'\\includelineno {path}']
    text += exercise_pages(root)
    with open(out, 'w', encoding='utf-8') as f:
        f.write('\n'.join(text) + '\n')
    return 0


def page_text(folder, name):
    """The lines of an exercise's markdown file, for its page: written into
    the page itself, since Doxygen's \\include{doc} runs its paragraphs
    together."""
    with open(os.path.join(folder, name), encoding='utf-8') as f:
        return f.read().rstrip('\n').split('\n')


def exercise_pages(root):
    """A page per exercise: what it is, its hint, its reference solution."""
    confs = [(page_order(conf), conf) for conf in
             glob.glob(os.path.join(root, 'exercises', '*', 'exercise.conf'))]
    confs = [conf for _, conf in sorted(confs)]
    if not confs:
        return []
    index = ['', '\\page exercises The exercises, checked', '',
             'Each chapter\'s exercises, with what `scripts/exercise` checks: a *build*',
             'exercise is checked by what the changed program does, an *observe* one by',
             'the break being in place and the answers to the page\'s questions, a *measure*',
             'one (nothing to change: the programs run with the page\'s options) by the',
             'answers to its questions (the main page says how it works). In the order of',
             'the pages; each page here has the hint, then the reference solution.', '']
    text = []
    for conf in confs:
        folder = os.path.dirname(conf)
        ex = os.path.basename(folder)
        with open(conf, encoding='utf-8') as f:
            fields = {m[0]: m[1] or m[2] for m in
                      re.findall(r'^([A-Z]+)=(?:"([^"]*)"|(\S*))', f.read(), re.M)}
        rel = os.path.relpath(folder, root)
        label = 'ex_' + re.sub(r'[^A-Za-z0-9]', '_', ex)
        kind = fields.get('KIND', '')
        index.append(f'- \\subpage {label} ({fields.get("WHERE", "")}, {kind})')
        text += ['', f'\\page {label} {ex}: {fields.get("TITLE", ex)}', '',
                 f'Exercise {fields.get("WHERE", "")}, a *{kind}* exercise. Check it with',
                 f'`scripts/exercise check {ex}` (in a terminal: it asks the page\'s questions).', '',
                 '**The hint.**', ''] + page_text(folder, 'hint.md') + ['']
        if kind == 'measure':
            text += ['**The answers.**', '',
                     'Try the exercise first: the check asks the questions and explains its',
                     f'answers. They are (`{rel}/solution.md`):', '',
                     ] + page_text(folder, 'solution.md')
        else:
            text += ['**The reference solution.**', '',
                     'Try the exercise first: the check says what is missing. The patch that',
                     f'the suite proves the check with (`{rel}/solution.patch`):', '',
                     f'\\verbinclude {rel}/solution.patch']
    return index + text


def page_order(conf):
    """Where an exercise is, as (chapter, part, number), from WHERE in its
    exercise.conf: "02-send-recv #1" is (2, 1, 1), "02 part 2 #1" (2, 2, 1)."""
    with open(conf, encoding='utf-8') as f:
        m = re.search(r'^WHERE="(\d+)\S*(?: part (\d+))? #(\d+)"', f.read(), re.M)
    if not m:
        raise SystemExit(f'{conf}: WHERE is not "NN-page #N" or "NN part P #N"')
    return (int(m[1]), int(m[2] or 1), int(m[3]))


def rewrite_links(root, html):
    failed = False
    for name in sorted(os.listdir(html)):
        if not name.endswith('.html'):
            continue
        page = os.path.join(html, name)
        with open(page, encoding='utf-8') as f:
            text = f.read()

        def target(m):
            nonlocal failed
            path, marker = m.group(1), m.group(2)
            listing = label_of(path) + '.html'
            try:
                line = marker_lines(root, path, marker)[0]
            except LookupError as e:
                print(f'{name}: a snippet caption links to {e}')
                failed = True
                return m.group(0)
            if not os.path.exists(os.path.join(html, listing)):
                print(f'{name}: no page {listing} for {path}: was "listings.py pages" run before Doxygen?')
                failed = True
                return m.group(0)
            return f'href="{listing}#l{line:05d}"'

        new = CAPTION_LINK.sub(target, text)
        if 'href="src/' in CAPTION_LINK.sub('', new):
            print(f'{name}: a link into src/ without a snippet marker (#NAME)')
            failed = True
        if new != text:
            with open(page, 'w', encoding='utf-8') as f:
                f.write(new)
    return 1 if failed else 0


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ('pages', 'links'):
        print('usage: listings.py pages ROOT OUT.md | listings.py links ROOT HTMLDIR', file=sys.stderr)
        return 2
    step, root, out = sys.argv[1:]
    if step == 'pages':
        return write_pages(root, out)
    return rewrite_links(root, out)


if __name__ == '__main__':
    sys.exit(main())
