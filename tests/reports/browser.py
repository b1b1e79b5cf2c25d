"""Headless Chromium for the report's browser tests: DOM dumps, screenshots, print-to-PDF, a layout probe.

The report itself carries no script (its CSP forbids any). To measure the laid-out page, the probe
writes a *copy* of the report with the CSP meta tag removed and one script appended; the script
measures the page after load and writes its findings as JSON into ``<pre id="layout-probe">``,
which ``--dump-dom`` returns. The report under test is never modified.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
    "--hide-scrollbars",
]

PROBE = r"""
<script>
window.addEventListener("load", () => {
  const vw = document.documentElement.clientWidth;
  const out = {viewport: vw, page_width: document.documentElement.scrollWidth, figures: [], too_wide: [], overlaps: [],
               scroll_overflow: {}};
  const inScroller = (el) => { for (let p = el.parentElement; p; p = p.parentElement) {
      const s = getComputedStyle(p);
      if (s.overflowX === "auto" || s.overflowX === "scroll" || s.overflowX === "hidden") return true; }
    return false; };
  const hidden = (el) => el.closest("details:not([open])") !== null;
  for (const svg of document.querySelectorAll("figure svg")) {
    const r = svg.getBoundingClientRect();
    out.figures.push({id: svg.id, width: r.width, height: r.height, hidden: hidden(svg)});
    if (hidden(svg)) continue;
    // text boxes inside this figure: two labels that overlap by more than 1.5 px both ways collide
    const boxes = [];
    for (const t of svg.querySelectorAll("text")) {
      const b = t.getBoundingClientRect();
      if (b.width > 0.5 && b.height > 0.5 && t.textContent.trim()) boxes.push([b, t.textContent.trim()]);
    }
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const [a, ta] = boxes[i], [b, tb] = boxes[j];
      const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (w > 1.5 && h > 1.5) out.overlaps.push({figure: svg.id, a: ta.slice(0, 60), b: tb.slice(0, 60), w: w, h: h});
    }
  }
  for (const el of document.body.querySelectorAll("*")) {
    if (hidden(el) || el.closest("svg") && el.tagName.toLowerCase() !== "svg") continue;
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > vw + 1 && !inScroller(el))
      out.too_wide.push({tag: el.tagName.toLowerCase(), id: el.id,
                         cls: el.className && el.className.baseVal === undefined ? el.className : "",
                         right: r.right, text: (el.textContent || "").trim().slice(0, 60)});
  }
  // tables in a sideways-scrolling box: how much wider the table is than its box (0: it fits)
  for (const box of document.querySelectorAll(".scroll")) {
    const t = box.querySelector("table");
    if (t && t.id && !hidden(box)) out.scroll_overflow[t.id] = box.scrollWidth - box.clientWidth;
  }
  // every section: laid out (not display:none, not inside a closed <details>) and with a height
  out.sections = [];
  for (const sec of document.querySelectorAll("section[id]")) {
    const r = sec.getBoundingClientRect(), h = sec.querySelector("h1, h2, h3");
    out.sections.push({id: sec.id, heading: h ? h.textContent.trim().slice(0, 80) : "",
                       shown: !hidden(sec) && sec.getClientRects().length > 0 && r.height > 0,
                       heading_shown: h !== null && !hidden(h) && h.getClientRects().length > 0});
  }
  const pre = document.createElement("pre"); pre.id = "layout-probe"; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""


def run(path: Path, workdir: Path, *args: str, timeout: int = 240) -> subprocess.CompletedProcess:
    """Chromium on ``path`` with a fresh profile in ``workdir``."""
    profile = workdir / f"profile-{len(list(workdir.glob('profile-*')))}"
    cmd = [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args, path.as_uri()]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=workdir)


def console_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


#: Letter's printable width at 96 px per inch: 8.5 in less the report's @page margins (11 mm each side)
LETTER_CONTENT_PX = round(8.5 * 96 - 2 * 11 / 25.4 * 96)
#: A4's printable width with the same margins (210 mm less 22 mm)
A4_CONTENT_PX = round((210 - 2 * 11) / 25.4 * 96)


def layout(report: Path, workdir: Path, width: int = 1280, print_media: bool = False) -> dict:
    """The probe's measurements of ``report`` laid out at ``width`` px; with ``print_media`` the report's
    ``@media print`` rules applied on screen (the paper layout, measured by the same probe)."""
    html = report.read_text(encoding="utf-8")
    html, n = re.subn(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
    if n != 1:
        raise AssertionError("the report has no Content-Security-Policy meta tag")
    if print_media:
        html, n = re.subn(r"@media print\s*\{", "@media all {", html)
        if n == 0:
            raise AssertionError("the report has no print stylesheet")
    probe = workdir / f"probe-{report.stem}-{width}{'-print' if print_media else ''}.html"
    probe.write_text(html.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    proc = run(probe, workdir, "--dump-dom", f"--window-size={width},1000", "--virtual-time-budget=10000")
    if proc.returncode != 0:
        raise AssertionError(proc.stderr[-2000:])
    found = re.search(r'<pre id="layout-probe">(.*?)</pre>', proc.stdout, re.S)
    if found is None:
        raise AssertionError("the layout probe did not run: " + "\n".join(console_lines(proc.stderr))[-2000:])
    text = found.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return json.loads(text)


def pdf_pages(report: Path, workdir: Path, size: str = "Letter") -> int:
    """Pages of ``report`` printed to PDF by Chromium: on the report's own @page size (Letter) or, with
    ``size="A4"``, on a copy whose @page rule says A4 (how a reader with A4 paper prints it)."""
    if size != "Letter":
        html, n = re.subn(r"@page \{ size: Letter;", f"@page {{ size: {size};", report.read_text(encoding="utf-8"))
        if n != 1:
            raise AssertionError("the report has no Letter @page rule")
        report = workdir / f"{report.stem}-{size}.html"
        report.write_text(html, encoding="utf-8")
    pdf = workdir / f"{report.stem}.pdf"
    proc = run(report, workdir, "--no-pdf-header-footer", f"--print-to-pdf={pdf}")
    if proc.returncode != 0 or not pdf.exists():
        raise AssertionError(proc.stderr[-2000:])
    return len(re.findall(rb"/Type\s*/Page[^s]", pdf.read_bytes()))
