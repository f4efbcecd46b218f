#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-pages-browser.py [--report] [--only LABEL] ROOT HTML: the test docs.browser.

The page limits of check-page-limits.py count snippets and lines: what the
Markdown holds. What a reader meets is the rendered page, so this renders
every page of ROOT/docs (the main page and each page a chapter adds) from
the built HTML directory HTML in headless Chromium, in a window 1280 px
wide (the content column is then about 1,000 px), and measures it there.
It fails, naming the page and the element, when
  - anything on a page is wider than the content column: a table, an output
    or results box, a snippet, a diagram, a line of text (the part hidden
    behind a scrollbar or past the column's edge is what a reader misses),
    or the page itself scrolls sideways;
  - a page is taller than HEIGHT_PX (about six screens of 765 px, the
    lesson a reader takes in one sitting, and each subpage that goes
    deeper). The reference pages (REFERENCE: read by looking one thing up)
    are exempt, and so are the pages docs/listings.py writes (the whole
    files the snippets' captions link to, "sources" and src_*, and the
    exercises' hints and solutions, "exercises" and ex_*), which are
    checked for width only.
--report prints each page's height, screens, words and widest element and
passes. Exit: 0 pass, 1 a page fails, 2 bad arguments or no browser or page.
"""
import glob
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

WINDOW = (1280, 900)
SCREEN_PX = 765        # the content a 1280x900 window shows at once, below the header
HEIGHT_PX = 5000
REFERENCE = {'troubleshooting', 'iwarp'}
BROWSERS = ('chromium', 'chromium-browser', 'google-chrome')

# Run in the page once it has loaded and Doxygen's side bar has set the
# column: measures the page and writes the figures into the DOM, where
# --dump-dom hands them back.
MEASURE = r'''
<script>
window.addEventListener('load', function () { setTimeout(function () {
  var scroller = document.getElementById('doc-content') || document.scrollingElement;
  var contents = document.querySelector('div.contents') || document.body;
  var left = contents.getBoundingClientRect().left;
  var right = left + contents.clientWidth;
  var wide = [];
  var sel = 'table, pre, div.fragment, img, svg, object, iframe, div.image, div.dotgraph, p, li, h1, h2, h3';
  contents.querySelectorAll(sel).forEach(function (e) {
    var r = e.getBoundingClientRect();
    var inner = e.clientWidth > 0 ? e.scrollWidth - e.clientWidth : 0;
    var past = Math.round(r.right - right);
    var hidden = Math.max(inner, past);
    if (hidden > 1) {
      var what = e.getAttribute('src') || e.getAttribute('data') || e.textContent || '';
      wide.push({tag: e.tagName.toLowerCase(), hidden: hidden,
                 text: what.replace(/\s+/g, ' ').trim().slice(0, 70)});
    }
  });
  var words = (contents.innerText || '').split(/\s+/).filter(function (w) { return w; }).length;
  var out = {height: Math.round(scroller.scrollHeight), column: contents.clientWidth,
             sideways: scroller.scrollWidth - scroller.clientWidth, words: words, wide: wide};
  var pre = document.createElement('pre');
  pre.id = 'rex-figures';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}, 1500); });
</script>
'''
FIGURES = re.compile(r'<pre id="rex-figures">(.*?)</pre>', re.S)
LABEL = re.compile(r'^#\s.*\{#([A-Za-z0-9_]+)\}\s*$')


def pages(root, built):
    """Each page's label and file name in the HTML: docs/mainpage.md is
    index.html, any other page LABEL.html (its first heading's {#LABEL});
    then the whole files' pages that docs/listings.py had Doxygen write."""
    found = []
    for md in sorted(glob.glob(os.path.join(root, 'docs', '*.md'))):
        if os.path.basename(md) == 'mainpage.md':
            found.append(('index', 'index.html'))
            continue
        with open(md, encoding='utf-8') as f:
            for line in f:
                m = LABEL.match(line)
                if m:
                    found.append((m.group(1), m.group(1) + '.html'))
                    break
    listed = [os.path.basename(p) for pattern in ('src_*.html', 'ex_*.html')
              for p in glob.glob(os.path.join(built, pattern))]
    for name in ['sources.html', 'exercises.html'] + sorted(listed):
        found.append((name[:-len('.html')], name))
    return found


def browser():
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def measure(chrome, page, profile):
    cmd = [chrome, '--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
           '--hide-scrollbars',
           '--user-data-dir=' + profile, '--window-size=%d,%d' % WINDOW,
           '--virtual-time-budget=10000', '--dump-dom', 'file://' + page]
    try:
        out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True, timeout=120).stdout
    except subprocess.TimeoutExpired:
        return None
    m = FIGURES.search(out)
    return json.loads(html.unescape(m.group(1))) if m else None


def check(label, fig):
    problems = []
    if fig['sideways'] > 0:
        problems.append(f'the page scrolls sideways by {fig["sideways"]} px')
    for w in fig['wide']:
        problems.append(f'{w["tag"]} wider than the {fig["column"]} px column by '
                        f'{w["hidden"]} px: "{w["text"]}"')
    if label in REFERENCE or label in ('sources', 'exercises') or label.startswith(('src_', 'ex_')):
        return problems
    if fig['height'] > HEIGHT_PX:
        problems.append(f'{fig["height"]} px tall, over the {HEIGHT_PX} px budget '
                        f'({fig["height"] / SCREEN_PX:.1f} screens): move what goes '
                        f'deeper to a subpage')
    return problems


def main(argv):
    report = '--report' in argv
    argv = [a for a in argv if a != '--report']
    only = None
    if len(argv) >= 2 and argv[0] == '--only':
        only, argv = argv[1], argv[2:]
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    root, built = argv
    chrome = browser()
    if chrome is None:
        print('docs.browser: no Chromium (apt-get install chromium)', file=sys.stderr)
        return 2
    failed = 0
    with tempfile.TemporaryDirectory(prefix='rex-pages-') as tmp:
        copy = os.path.join(tmp, 'html')
        shutil.copytree(built, copy)
        for label, name in pages(root, built):
            if only and label != only:
                continue
            path = os.path.join(copy, name)
            try:
                with open(path, encoding='utf-8') as f:
                    text = f.read()
            except OSError as e:
                print(f'{name}: {e.strerror} (build the docs first)', file=sys.stderr)
                return 2
            with open(path, 'w', encoding='utf-8') as f:
                f.write(text.replace('</body>', MEASURE + '</body>', 1))
            fig = measure(chrome, path, os.path.join(tmp, 'profile'))
            if fig is None:
                print(f'{name}: Chromium gave no figures for the page', file=sys.stderr)
                return 2
            widest = max((w['hidden'] for w in fig['wide']), default=0)
            if report:
                print(f'{label:20} {fig["height"]:6} px {fig["height"] / SCREEN_PX:5.1f} screens '
                      f'{fig["words"]:6} words  widest +{widest} px')
            for p in check(label, fig):
                print(f'{name}: {p}')
                failed += 1
    if report:
        return 0
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
