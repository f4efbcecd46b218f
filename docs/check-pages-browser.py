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
  - a page shows markup as text (MARKUP_AS_TEXT, say "<tt>" in its words):
    Doxygen gave up on a paragraph's Markdown, as after a \\ref whose quoted
    text runs across lines, or a line that "---" under it makes a heading;
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
import fcntl
import glob
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

WINDOW = (1280, 900)
SCREEN_PX = 765        # the content a 1280x900 window shows at once, below the header
HEIGHT_PX = 5000
REFERENCE = {'troubleshooting', 'iwarp'}
BROWSERS = ('chromium', 'chromium-browser', 'google-chrome')

# Evaluated in the page once it has loaded: measures it, again every 200 ms
# until two readings agree (Doxygen's scripts set the side bar and the
# column after the load event), and hands the figures back.
MEASURE = r"""
(async function () {
  function figures() {
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
    return {height: Math.round(scroller.scrollHeight), column: contents.clientWidth,
            sideways: scroller.scrollWidth - scroller.clientWidth, words: words, wide: wide};
  }
  function pause(ms) { return new Promise(function (done) { setTimeout(done, ms); }); }
  await pause(200);
  var last = JSON.stringify(figures());
  for (var i = 0; i < 50; i++) {
    await pause(200);
    var now = JSON.stringify(figures());
    if (now === last)
      return now;
    last = now;
  }
  return last;
})()
"""
LABEL = re.compile(r'^#\s.*\{#([A-Za-z0-9_]+)\}\s*$')
# HTML tags escaped into a page's text: Markdown Doxygen did not render.
MARKUP_AS_TEXT = re.compile(r'&lt;/?(tt|code|strong|em|b|i|a|p)(&gt;| )')


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


class Chromium:
    """One headless Chromium for every page, driven over its DevTools pipe
    (--remote-debugging-pipe: Chromium reads commands on its fd 3 and writes
    answers and events on its fd 4, each a JSON text ending in a NUL byte).
    Starting a browser per page cost about a second of CPU each, minutes in
    all on a loaded host; one browser loads a page in a fraction of that."""

    def __init__(self, path, profile):
        cmd_r, cmd_w = os.pipe()
        ans_r, ans_w = os.pipe()
        # Ours above 9, so that the shell's redirections below cannot clobber
        # them; bash (dash takes one digit only) puts Chromium's ends on 3 and 4.
        cmd_r, cmd_w, ans_r, ans_w = [self._high(fd) for fd in (cmd_r, cmd_w, ans_r, ans_w)]
        args = [path, '--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
                '--hide-scrollbars', '--user-data-dir=' + profile,
                '--window-size=%d,%d' % WINDOW, '--remote-debugging-pipe', 'about:blank']
        shell = f'exec "$0" "$@" 3<&{cmd_r} 4>&{ans_w} {cmd_r}<&- {ans_w}>&-'
        self.proc = subprocess.Popen(['bash', '-c', shell] + args, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     pass_fds=(cmd_r, ans_w))
        os.close(cmd_r)
        os.close(ans_w)
        self.out, self.inp = cmd_w, ans_r
        self.buf = b''
        self.last_id = 0
        self.session = None

    @staticmethod
    def _high(fd):
        high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(fd)
        return high

    def _message(self, deadline):
        """The next message from Chromium, or None once the deadline passed."""
        while b'\0' not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.inp], [], [], left)[0]:
                return None
            chunk = os.read(self.inp, 1 << 16)
            if not chunk:
                raise RuntimeError('Chromium closed its DevTools pipe (it exited: %s)'
                                   % self.proc.poll())
            self.buf += chunk
        text, self.buf = self.buf.split(b'\0', 1)
        return json.loads(text)

    def call(self, method, seconds=60, **params):
        """Send a command; its result, once it comes (events before it are dropped)."""
        self.last_id += 1
        msg = {'id': self.last_id, 'method': method, 'params': params}
        if self.session:
            msg['sessionId'] = self.session
        os.write(self.out, json.dumps(msg).encode() + b'\0')
        deadline = time.monotonic() + seconds
        while True:
            m = self._message(deadline)
            if m is None:
                raise RuntimeError(f'{method}: no answer from Chromium within {seconds} s')
            if m.get('id') == self.last_id:
                if 'error' in m:
                    raise RuntimeError(f'{method}: {m["error"].get("message")}')
                return m.get('result', {})

    def open_tab(self):
        target = self.call('Target.createTarget', url='about:blank')['targetId']
        self.session = self.call('Target.attachToTarget', targetId=target,
                                 flatten=True)['sessionId']
        self.call('Emulation.setDeviceMetricsOverride', width=WINDOW[0], height=WINDOW[1],
                  deviceScaleFactor=1, mobile=False)
        self.call('Page.enable')

    def measure(self, page, seconds=60):
        """Load the page, wait for its load event, and measure it."""
        self.call('Page.navigate', url='file://' + page)
        deadline = time.monotonic() + seconds
        while True:
            m = self._message(deadline)
            if m is None:
                raise RuntimeError(f'{page}: not loaded within {seconds} s')
            if m.get('method') == 'Page.loadEventFired' and m.get('sessionId') == self.session:
                break
        result = self.call('Runtime.evaluate', seconds, expression=MEASURE,
                           awaitPromise=True, returnByValue=True)
        if 'exceptionDetails' in result:
            raise RuntimeError(f'{page}: the measuring script failed: '
                               f'{result["exceptionDetails"].get("text")}')
        return json.loads(result['result']['value'])

    def close(self):
        try:
            os.close(self.out)  # Chromium exits when its pipe closes
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.inp)


def check(label, fig, html=''):
    problems = []
    shown = MARKUP_AS_TEXT.search(html)
    if shown:
        at = html[max(0, shown.start() - 60):shown.end() + 40].replace('\n', ' ')
        problems.append(f'markup shown as text, Markdown Doxygen did not render: "...{at}..."')
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
        chromium = Chromium(chrome, os.path.join(tmp, 'profile'))
        try:
            chromium.open_tab()
            for label, name in pages(root, built):
                if only and label != only:
                    continue
                path = os.path.abspath(os.path.join(built, name))
                if not os.path.isfile(path):
                    print(f'{name}: no such page in {built} (build the docs first)', file=sys.stderr)
                    return 2
                fig = chromium.measure(path)
                widest = max((w['hidden'] for w in fig['wide']), default=0)
                if report:
                    print(f'{label:20} {fig["height"]:6} px {fig["height"] / SCREEN_PX:5.1f} screens '
                          f'{fig["words"]:6} words  widest +{widest} px', flush=True)
                with open(path, encoding='utf-8') as f:
                    html = f.read()
                for p in check(label, fig, html):
                    print(f'{name}: {p}', flush=True)
                    failed += 1
        except RuntimeError as e:
            print(f'docs.browser: {e}', file=sys.stderr)
            return 2
        finally:
            chromium.close()
    if report:
        return 0
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
