#!/usr/bin/env python3
"""Check that formulas, code blocks and tables fit the column of the built docs.

Every page is loaded in headless Chromium at a 1280 x 900 window (the default
theme width: alabaster's 1100 px page, an 800 px content column), and once
MathJax has typeset the formulas (served offline from ``_static/mathjax``) a
script measures every ``pre``, ``div.highlight``, ``.math``, ``mjx-container``
and ``table`` element: an element overflows when its content is wider than its
box (``scrollWidth > clientWidth``: a horizontal scrollbar, or content spilling
out) or when its right edge passes the right edge of the content column
(``div.body``).  The page itself overflows when the document is wider than the
window.  One report per cause: of nested boxes too narrow for their content the
innermost, of nested elements past the column's edge the outermost (a wide
table, not each formula in it).  Formulas MathJax could not typeset (its red
error boxes) are reported too.

Usage (one command, after ``bash docs/build.sh``)::

    python docs/check_width.py                    # docs/_build/html
    python docs/check_width.py docs/_build/html --all --jobs 4

It prints, per page, the overflowing elements (tag, the first 60 characters of
their text, the excess in pixels) and exits with 1 when a guide page
(``guide/*.html``) has one or a formula MathJax could not typeset, 0 when none
has (the other pages are reported but do not fail the check; ``--strict`` fails
on any page), 2 when Chromium is missing or a page could not be measured (each
page has ``--timeout`` seconds, 60 by default).

Needs only the Python standard library and a Chromium (or Chrome) binary; on
Debian / Ubuntu::

    apt-get update && apt-get install -y chromium      # or chromium-headless-shell

(set ``CHROMIUM=/path/to/binary`` or pass ``--chromium`` for another one).  The
pages are served from a local HTTP server on 127.0.0.1, which adds the
measuring script to each HTML page it sends; nothing in the build directory is
written.  Widths depend on the fonts installed: alabaster's code font list
includes DejaVu Sans Mono (Debian's ``fonts-dejavu-core``, pulled in by
chromium), the font this check was calibrated with.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import functools
import html
import io
import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

WINDOW = (1280, 900)
REPORT_ID = "width-report"

#: Injected before </body>: waits for the load event, MathJax's first typeset
#: (when the page loads MathJax) and the fonts, then writes the measurements as
#: JSON into <pre id="width-report">, which --dump-dom prints.
MEASURE_JS = r"""
<script>
(function () {
  var SELECTOR = "pre, div.highlight, .math, mjx-container, table";
  function label(el) {                      // a formula's TeX source, else the element's text
    var mj = window.MathJax, box = el.tagName === "MJX-CONTAINER" ? el
             : el.classList.contains("math") ? el.querySelector("mjx-container") : null;
    if (box && mj && mj.startup && mj.startup.document && mj.startup.document.getMathItemsWithin) {
      try {
        var items = mj.startup.document.getMathItemsWithin(box);
        if (items.length) return items[0].math;
      } catch (e) { /* fall through */ }
    }
    return el.textContent || "";
  }
  function measure(mathjax) {
    var col = document.querySelector("div.body") || document.querySelector("[role=main]")
              || document.body;
    var cr = col.getBoundingClientRect(), cs = getComputedStyle(col);
    var colRight = cr.right - parseFloat(cs.paddingRight || "0");
    var found = [];
    document.querySelectorAll(SELECTOR).forEach(function (el) {
      var r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) return;            // hidden
      var st = getComputedStyle(el);
      var inline = st.display.indexOf("inline") === 0 && st.display !== "inline-block";
      var scroll = inline ? 0 : el.scrollWidth - el.clientWidth;
      var edge = r.right - colRight;
      var excess = Math.max(scroll, edge);
      if (excess > 1) {
        found.push({el: el, kind: scroll > 1 ? "scroll" : "edge", tag: el.tagName.toLowerCase() + (el.className && typeof el.className === "string"
                      ? "." + el.className.trim().split(/\s+/).join(".") : ""),
                    text: label(el).replace(/\s+/g, " ").trim().slice(0, 60),
                    section: (el.closest("section[id]") || {id: ""}).id,
                    excess: Math.round(excess), scrollbar: scroll > 1 && /auto|scroll/.test(st.overflowX)});
      }
    });
    // One report per cause: of nested elements whose content is too wide for their box,
    // the innermost; of nested elements that pass the column's edge, the outermost (a
    // wide table, not each formula in it).
    var kept = found.filter(function (a) {
      return !found.some(function (b) {
        if (b === a) return false;
        if (a.kind === "scroll" && b.kind === "scroll") return a.el.contains(b.el);
        if (a.kind === "edge" && b.kind === "edge") return b.el.contains(a.el);
        return false;
      });
    }).map(function (a) { delete a.el; delete a.kind; return a; });
    var doc = document.documentElement;
    var errors = [];                         // formulas MathJax could not typeset (red text)
    document.querySelectorAll("mjx-merror").forEach(function (e) {
      var box = e.closest("mjx-container");
      errors.push(((box ? label(box) : "") + " -- " + (e.getAttribute("data-mjx-error") || e.textContent || ""))
                  .replace(/\s+/g, " ").trim().slice(0, 120));
    });
    var out = {page_excess: Math.max(0, doc.scrollWidth - window.innerWidth), column_right: Math.round(colRight),
               mathjax: mathjax, overflows: kept, math_errors: errors};
    var pre = document.createElement("pre");
    pre.id = "%(id)s";
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }
  function afterFonts(mathjax) {
    var fonts = document.fonts ? document.fonts.ready : Promise.resolve();
    fonts.then(function () { setTimeout(function () { measure(mathjax); }, 100); });   // no rAF: headless may draw no frame
  }
  function start() {
    var usesMathJax = !!document.querySelector('script[src*="mathjax"]');
    if (!usesMathJax) return afterFonts("none");
    var tries = 0;
    (function poll() {                      // the loader defines MathJax.startup.promise
      var mj = window.MathJax;
      if (mj && mj.startup && mj.startup.promise) {
        mj.startup.promise.then(function () { afterFonts("typeset"); },
                                function () { afterFonts("failed"); });
      } else if (++tries > 80) {
        afterFonts("not loaded");
      } else {
        setTimeout(poll, 50);
      }
    })();
  }
  if (document.readyState === "complete") start(); else window.addEventListener("load", start);
})();
</script>
""".replace("%(id)s", REPORT_ID)


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves the build directory; HTML pages get the measuring script."""

    def log_message(self, *args):   # quiet
        pass

    def send_head(self):
        path = self.translate_path(self.path)
        if not path.endswith(".html") or not os.path.isfile(path):
            return super().send_head()
        body = Path(path).read_bytes()
        i = body.rfind(b"</body>")
        body = body[:i] + MEASURE_JS.encode() + body[i:] if i >= 0 else body + MEASURE_JS.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)


def find_chromium(explicit: str | None) -> str | None:
    for name in ([explicit] if explicit else []) + [os.environ.get("CHROMIUM", "")] + [
            "chromium", "chromium-browser", "chromium-headless-shell", "chrome-headless-shell",
            "google-chrome", "google-chrome-stable", "chrome"]:
        if name and (path := shutil.which(name)):
            return path
    return None


def measure_page(chromium: str, url: str, timeout: float, budget_ms: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="check-width-") as profile:
        cmd = [chromium, "--headless=new", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
               "--no-first-run", "--no-default-browser-check", "--disable-extensions",
               f"--user-data-dir={profile}", f"--window-size={WINDOW[0]},{WINDOW[1]}",
               f"--virtual-time-budget={budget_ms}", "--dump-dom", url]
        # its own process group, so that a timeout ends the browser's helpers too
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.communicate()
            return {"error": f"timed out after {timeout:g} s"}
    m = re.search(rf'<pre id="{REPORT_ID}">(.*?)</pre>', stdout, re.S)
    if not m:
        err = [line for line in stderr.strip().splitlines() if "dbus" not in line]
        return {"error": f"no measurement (exit {proc.returncode}): " + (err[-1] if err else "no output")}
    return json.loads(html.unescape(m.group(1)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", nargs="?", default=str(Path(__file__).resolve().parent / "_build" / "html"),
                    help="the built HTML site (default: docs/_build/html)")
    ap.add_argument("--all", action="store_true",
                    help="also the pages below generated/ (the API stubs)")
    ap.add_argument("--page", action="append", default=[],
                    help="check only these pages (paths relative to the build; repeatable)")
    ap.add_argument("--strict", action="store_true", help="fail on an overflow on any page, not only guide/")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per page (default 60)")
    ap.add_argument("--budget", type=int, default=15000,
                    help="Chromium's virtual time budget per page in ms (default 15000)")
    ap.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1), help="pages loaded at once")
    ap.add_argument("--chromium", help="the browser binary (default: $CHROMIUM, chromium, ...)")
    args = ap.parse_args(argv)

    chromium = find_chromium(args.chromium)
    if chromium is None:
        print("check_width: no Chromium found; install one (apt-get install -y chromium) "
              "or set CHROMIUM=/path/to/chromium", file=sys.stderr)
        return 2
    root = Path(args.build).resolve()
    if not (root / "index.html").is_file():
        print(f"check_width: {root} has no index.html; build the docs first (bash docs/build.sh)",
              file=sys.stderr)
        return 2
    if args.page:
        pages = [Path(p) for p in args.page]
    else:
        pages = sorted(p.relative_to(root) for p in root.glob("*.html"))
        pages += sorted(p.relative_to(root) for p in (root / "guide").glob("*.html"))
        if args.all:
            pages += sorted(p.relative_to(root) for p in (root / "generated").rglob("*.html"))

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Handler, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            results = dict(zip(pages, pool.map(
                lambda p: measure_page(chromium, base + p.as_posix(), args.timeout, args.budget), pages)))
    finally:
        server.shutdown()

    n_over = n_guide = n_math_errors = 0
    failed_pages = errors = 0
    for page, res in results.items():
        guide = page.parts[0] == "guide"
        if "error" in res:
            errors += 1
            print(f"{page}: ERROR {res['error']}")
            continue
        items = res["overflows"]
        note = "" if res["mathjax"] in ("none", "typeset") else f" (MathJax {res['mathjax']})"
        if res["mathjax"] not in ("none", "typeset"):
            errors += 1
        for err in res.get("math_errors", []):
            print(f"{page}: MathJax error in {err}")
        n_math_errors += len(res.get("math_errors", []))
        if res.get("math_errors") and (guide or args.strict):
            failed_pages += 1
        if not items and not res["page_excess"]:
            print(f"{page}: ok{note}")
            continue
        n_over += len(items)
        n_guide += len(items) if guide else 0
        if guide or args.strict:
            failed_pages += 1
        extra = f", page {res['page_excess']} px wider than the window" if res["page_excess"] else ""
        print(f"{page}: {len(items)} overflowing{extra}{note}")
        for it in items:
            bar = " scrollbar" if it["scrollbar"] else ""
            where = f"  (#{it['section']})" if it.get("section") else ""
            print(f"    {it['tag']:<28} +{it['excess']:>4} px{bar:<10} {it['text']}{where}")
    print(f"\n{len(results)} pages checked at {WINDOW[0]}x{WINDOW[1]}: {n_over} overflowing elements "
          f"({n_guide} on guide pages), {n_math_errors} formulas MathJax could not typeset, "
          f"{errors} pages not measured")
    if errors:
        return 2
    return 1 if failed_pages else 0


if __name__ == "__main__":
    sys.exit(main())
