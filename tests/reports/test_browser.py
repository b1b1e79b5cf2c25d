"""The fixture's report in headless Chromium: it loads cleanly and shows what it should.

Marked ``browser`` (not in the default run): ``python -m pytest tests/reports -m browser``.
Skipped with a reason where Debian's ``chromium`` is not installed (``.ci/run`` installs it).
Checks: the console shows nothing (a report has no script, so any console line is a CSP
violation, a blocked request or an error); the DOM after load holds the headline, the
transfer table with one row per cell and every figure; screenshots are not blank and show
the figures' colours where they should be.
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

from judge_transfer_audit.reports.html import write_html
from tests.reports.browser import A4_CONTENT_PX, CHROMIUM, LETTER_CONTENT_PX, console_lines, layout, pdf_pages, run

pytestmark = pytest.mark.browser

#: the fixture report prints on at most this many Letter pages (figures print whole at the page width, in
#: parts when tall: legible before short)
FIXTURE_MAX_PAGES = 16
#: no printed page but the last is filled to less than this fraction of its height (more than ~3/4 blank)
MIN_PAGE_FILL = 0.25
#: the 150-cell and 2,000-reader studies: long tables, the heat maps past the fourth and the parts of a
#: figure past the second are collapsed in print (measured: 20 and 15 Letter pages)
LARGE_MAX_PAGES = 22
LARGE_CRITERIA = ("authenticity", "empathy", "engagement", "style", "overall")


def _need_chromium():
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"headless Chromium not found at {CHROMIUM}; install Debian's `chromium` package")


@pytest.fixture(scope="module")
def rendered(tmp_path_factory, result):
    """The fixture study's report (the README demo, through the real pipeline)."""
    _need_chromium()
    tmp = tmp_path_factory.mktemp("browser")
    path = write_html(result, tmp / "report.html")
    return {"result": result, "path": path, "tmp": tmp}


@pytest.fixture(scope="module")
def large(tmp_path_factory):
    """A 150-cell study (30 matchups x 5 criteria, 12 pairs x 5 readers each) through the pipeline."""
    _need_chromium()
    from tests.reports.study import run_study, write_study

    tmp = tmp_path_factory.mktemp("browser-large")
    result = run_study(
        write_study(tmp / "in", n_matchups=30, n_pairs=12, n_readers=5, criteria=LARGE_CRITERIA), n_boot=200
    )
    assert len(result.cells) == 150
    return {"result": result, "path": write_html(result, tmp / "report.html"), "tmp": tmp}


#: the 2,000-reader study: 2 matchups x 400 pairs, each pair read by 10 of 2,000 readers
READERS_2K = {"n_matchups": 2, "n_pairs": 400, "n_readers": 2000, "readers_per_pair": 10}


@pytest.fixture(scope="module")
def readers2k(tmp_path_factory):
    """A study with 2,000 readers through the pipeline: reader-level figures must stay legible."""
    _need_chromium()
    from tests.reports.study import run_study, write_study

    tmp = tmp_path_factory.mktemp("browser-2k")
    result = run_study(write_study(tmp / "in", **READERS_2K), n_boot=200)
    assert result.readers.payload.n_readers > 1900  # a reader drawn for no pair has no vote
    return {"result": result, "path": write_html(result, tmp / "report.html"), "tmp": tmp}


def _chromium(rendered, *args: str):
    return run(rendered["path"], rendered["tmp"], *args)


@pytest.fixture(scope="module")
def dom(rendered):
    proc = _chromium(rendered, "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


def _screenshot(rendered, name: str, height: int) -> np.ndarray:
    from PIL import Image

    png = rendered["tmp"] / name
    proc = _chromium(rendered, f"--screenshot={png}", f"--window-size=1280,{height}")
    assert proc.returncode == 0 and png.exists(), proc.stderr[-2000:]
    return np.asarray(Image.open(png).convert("RGB")).astype(int)


def _near(img: np.ndarray, hex_colour: str, tol: int = 12) -> np.ndarray:
    rgb = np.array([int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)])
    return (np.abs(img - rgb) <= tol).all(axis=-1)


def test_console_is_silent(dom, large, readers2k):
    assert console_lines(dom.stderr) == []
    for study in (large, readers2k):
        proc = run(study["path"], study["tmp"], "--dump-dom")
        assert proc.returncode == 0 and console_lines(proc.stderr) == []


def test_dom_has_headline_transfer_table_and_every_figure(dom, rendered):
    html = dom.stdout
    result = rendered["result"]
    assert 'id="verdict"' in html and 'id="dev-validity"' in html and 'id="deployment-findings"' in html
    assert html.count('title="') >= len(result.cells)
    table = html[html.index('id="transfer-table"') :]
    table = table[: table.index("</table>")]
    assert table.count("<tr") == len(result.cells) + 1  # header + one row per cell
    expected = ["fig-preference"]
    if result.uncertainty.payload is not None:
        expected += ["fig-bootstrap", "fig-loro"]
    if result.readers.payload is not None:
        expected += ["fig-heatmap-1", "fig-clusters", "fig-dendrogram", "fig-timing"]
    if result.surface.payload is not None:
        expected += ["fig-surface"]
    for fig in expected:
        assert f'<svg id="{fig}"' in html, fig
    assert html.count("<svg") >= len(expected)


def test_headline_screenshot_is_not_blank(rendered):
    img = _screenshot(rendered, "headline.png", 4000)
    assert img.shape[:2] == (4000, 1280)
    top = img[:700]
    assert (top.sum(axis=-1) < 200).mean() > 0.002  # dark headline text
    assert img.std() > 20 and len(np.unique(img.reshape(-1, 3), axis=0)) > 200
    status = rendered["result"].status.value
    badge = {
        "FAIL": "#c62828",
        "PASS": "#1a7f37",
        "WARN": "#9a6700",
        "ERROR": "#8250df",
        "SKIPPED": "#6e7781",
        "INCONCLUSIVE": "#9a6700",
    }[status]  # INCONCLUSIVE wears the warning colour
    assert _near(top, badge, 20).sum() > 100  # the status badge and the verdict rule


def test_every_figure_is_painted(rendered):
    img = _screenshot(rendered, "full.png", 16000)
    rows_with_ink = np.where((img.sum(axis=-1) < 600).any(axis=1))[0]
    assert rows_with_ink.max() > 6000  # the page goes on well past the headline
    assert _near(img, "#0072b2", 10).sum() > 2000  # preference / bootstrap / scatter palette colour
    if rendered["result"].readers.payload is not None:
        assert _near(img, "#67001f", 40).sum() + _near(img, "#b2182b", 40).sum() > 2000  # heat-map reds
        assert _near(img, "#e69f00", 10).sum() > 500


@pytest.mark.parametrize("which", ["rendered", "large", "readers2k"])
@pytest.mark.parametrize("width", [1280, 1400, 800])
def test_layout_every_figure_painted_nothing_too_wide_no_text_overlap(request, which, width):
    """Measured in the laid-out page: figure sizes, elements past the viewport, colliding SVG text boxes."""
    report = request.getfixturevalue(which)
    probe = layout(report["path"], report["tmp"], width=width)
    shown = [f for f in probe["figures"] if not f["hidden"]]
    assert shown, "no figure in the page"
    for f in shown:
        assert f["width"] > 50 and f["height"] > 50, f
    assert probe["page_width"] <= probe["viewport"], "the page scrolls sideways"
    assert probe["too_wide"] == []
    assert probe["overlaps"] == []
    if width >= 1280:  # the transfer table fits its box: no sideways scrolling inside the page either
        assert "transfer-table" in probe["scroll_overflow"]
        assert probe["scroll_overflow"]["transfer-table"] <= 1, probe["scroll_overflow"]


@pytest.mark.parametrize("paper", ["Letter", "A4"])
@pytest.mark.parametrize("which", ["rendered", "large", "readers2k"])
def test_print_layout_keeps_every_table_column_on_the_page(request, which, paper):
    """With the print stylesheet applied at Letter's (A4's) printable width, no table (nor anything else) is
    wider than the page: every column printed is on paper, none clipped or scrolled away (the columns left
    off on paper are named under their table)."""
    report = request.getfixturevalue(which)
    width = {"Letter": LETTER_CONTENT_PX, "A4": A4_CONTENT_PX}[paper]
    probe = layout(report["path"], report["tmp"], width=width, print_media=True)
    assert probe["viewport"] == width
    assert probe["page_width"] <= probe["viewport"], "the printed page is wider than Letter"
    assert probe["too_wide"] == []
    assert all(v <= 1 for v in probe["scroll_overflow"].values()), probe["scroll_overflow"]


@pytest.mark.parametrize("which", ["rendered", "large", "readers2k"])
def test_print_layout_keeps_every_section(request, which):
    """On paper every section of the report is there, with its heading: the print stylesheet folds long
    tables and leaves figures off paper, but never a whole section ("every section present")."""
    report = request.getfixturevalue(which)
    html = report["path"].read_text(encoding="utf-8")
    ids = re.findall(r'<section[^>]*\bid="([^"]+)"', html)
    probe = layout(report["path"], report["tmp"], width=LETTER_CONTENT_PX, print_media=True)
    sections = {s["id"]: s for s in probe["sections"]}
    assert sorted(sections) == sorted(ids)
    for required in ("preference", "transfer", "checks", "methods"):
        assert required in sections, required
    missing = [s for s in probe["sections"] if not (s["shown"] and s["heading_shown"])]
    assert missing == []


def test_large_study_report_stays_small_and_folds(large):
    html = large["path"].read_text(encoding="utf-8")
    assert len(html.encode("utf-8")) < 5_000_000
    assert "126 more cells (all rows in cells.csv)" in html  # 150 cells, 24 shown open
    first_map = html[html.index('id="fig-heatmap-1-figure"') : html.index('id="fig-heatmap-2-figure"')]
    assert "31 heat maps would be drawn; the first 13 are shown" in first_map  # beside the heat maps, not after them
    from judge_transfer_audit.sections.readers.render import PRINT_HEATMAPS

    # on paper: the first PRINT_HEATMAPS heat maps, then a note saying where the others are
    assert html.count('<figure id="fig-heatmap-') == 13
    assert len(re.findall(r'<figure id="fig-heatmap-[^>]*class="screen-only"', html)) == 13 - PRINT_HEATMAPS
    assert f"On paper the first {PRINT_HEATMAPS} of the 13 heat maps are printed" in html


def _svg_of(html: str, fig_id: str) -> str:
    start = html.index(f'<svg id="{fig_id}"')
    return html[start : html.index("</svg>", start)]


def test_2000_readers_are_aggregated_not_one_row_each(readers2k):
    """Heat maps, leave-one-reader-out and Fig 2 show a distribution plus a capped number of readers."""
    from judge_transfer_audit.presentation.figures.clusters import MAX_LEAVES
    from judge_transfer_audit.presentation.figures.heatmap import MAX_READERS

    html = readers2k["path"].read_text(encoding="utf-8")
    assert len(html.encode("utf-8")) < 5_000_000
    readers = {f"reader{r + 1}" for r in range(2000)}
    for fig_id in ("fig-heatmap-1", "fig-loro", "fig-clusters"):
        svg = _svg_of(html, fig_id)
        drawn = {r for r in readers if f">{r}<" in svg or f">without {r}<" in svg}
        assert 0 < len(drawn) <= max(MAX_READERS, MAX_LEAVES), (fig_id, len(drawn))
    assert "readers&#x27; median" in _svg_of(html, "fig-heatmap-1") or "readers' median" in _svg_of(
        html, "fig-heatmap-1"
    )
    assert "other readers (range)" in _svg_of(html, "fig-loro")
    assert "clusters (mean profile per cluster)" in _svg_of(html, "fig-clusters")
    assert "readers&#x27; medians" in _svg_of(html, "fig-timing") or "readers' medians" in _svg_of(html, "fig-timing")


def test_print_to_pdf_page_count(rendered, large, readers2k, capsys):
    """The fixture prints on at most FIXTURE_MAX_PAGES Letter pages with every section present; the counts go to
    docs/report.md."""
    size_2k = readers2k["path"].stat().st_size
    for paper in ("Letter", "A4"):
        pages = pdf_pages(rendered["path"], rendered["tmp"], paper)
        pages_large = pdf_pages(large["path"], large["tmp"], paper)
        pages_2k = pdf_pages(readers2k["path"], readers2k["tmp"], paper)
        with capsys.disabled():
            print(
                f"\nprint-to-PDF ({paper}): fixture {pages} pages, 150-cell study {pages_large} pages, "
                f"2,000-reader study {pages_2k} pages ({size_2k / 1e6:.2f} MB)"
            )
        assert 1 <= pages <= FIXTURE_MAX_PAGES, paper
        assert pages_large <= LARGE_MAX_PAGES and pages_2k <= LARGE_MAX_PAGES, paper


#: Letter's printable height (11 in less the report's 12 mm margins), CSS px
LETTER_HEIGHT_PX = round(11 * 96 - 2 * 12 / 25.4 * 96)


@pytest.mark.parametrize("which", ["rendered", "large"])
def test_printed_figures_fit_a_page_and_are_not_shrunk(request, which):
    """On paper every figure prints at its own size or, when wider than the page, at the page width: never
    shrunk to a height (tall figures come in parts), and no part taller than a page (Chromium would slice it
    across two pages, through its rows)."""
    report = request.getfixturevalue(which)
    html = report["path"].read_text(encoding="utf-8")
    natural = {
        m.group(1): float(m.group(2)) * 96 / 72
        for m in re.finditer(r'<svg id="([^"]+)" role="img"[^>]*? width="([\d.]+)pt"', html)
    }
    probe = layout(report["path"], report["tmp"], width=LETTER_CONTENT_PX, print_media=True)
    shown = [f for f in probe["figures"] if not f["hidden"] and f["width"] > 0 and f["id"] in natural]
    assert len(shown) >= 5
    for f in shown:
        expected = min(natural[f["id"]], LETTER_CONTENT_PX)
        # a heat map prints two to a row: half the page
        if f["id"].startswith("fig-heatmap-"):
            expected = min(natural[f["id"]], LETTER_CONTENT_PX / 2 - 8)
        assert f["width"] >= expected - 3, (f["id"], f["width"], expected)
        assert f["height"] <= LETTER_HEIGHT_PX, (f["id"], f["height"])


def test_printed_pages_never_end_on_a_section_heading(rendered, large):
    """No page of the printed PDF ends on a section heading (its content on the next page)."""
    pdfium = pytest.importorskip("pypdfium2", reason="reading the printed PDF's text needs pypdfium2")
    for report in (rendered, large):
        html = report["path"].read_text(encoding="utf-8")
        headings = {" ".join(re.sub(r"<[^>]+>", "", h).split()) for h in re.findall(r"<h2[^>]*>(.*?)</h2>", html)}
        headings = {h.replace("&amp;", "&").replace("&#39;", "'") for h in headings}
        assert pdf_pages(report["path"], report["tmp"]) > 1
        pdf = pdfium.PdfDocument(str(report["tmp"] / f"{report['path'].stem}.pdf"))
        for i in range(len(pdf) - 1):
            lines = [ln.strip() for ln in pdf[i].get_textpage().get_text_range().splitlines() if ln.strip()]
            assert lines and lines[-1] not in headings, (i + 1, lines[-3:])


def _page_fills(pdf_path) -> list[float]:
    """Each page of a PDF: the fraction of its height down to its lowest painted row (rendered at 36 dpi)."""
    pdfium = pytest.importorskip("pypdfium2", reason="rendering the printed PDF's pages needs pypdfium2")
    fills = []
    for page in pdfium.PdfDocument(str(pdf_path)):
        grey = np.asarray(page.render(scale=0.5).to_pil().convert("L"))
        painted = np.flatnonzero((grey < 245).any(axis=1))
        fills.append((painted[-1] + 1) / grey.shape[0] if painted.size else 0.0)
    return fills


@pytest.mark.parametrize("paper", ["Letter", "A4"])
def test_no_printed_page_but_the_last_is_mostly_blank(rendered, paper):
    """A section's last page is not left three-quarters blank for the next section (a page break forced
    before it): every page of the printed fixture report but the last is filled to at least MIN_PAGE_FILL
    of its height. (A figure part taller than what is left of a page still moves whole to the next one:
    the 150-cell study's first preference part leaves its page 4 about 18% filled, legible before short.)"""
    pdf_pages(rendered["path"], rendered["tmp"], paper)
    stem = rendered["path"].stem if paper == "Letter" else f"{rendered['path'].stem}-{paper}"
    fills = _page_fills(rendered["tmp"] / f"{stem}.pdf")
    assert len(fills) > 1
    blank = [(i + 1, round(f, 2)) for i, f in enumerate(fills[:-1]) if f < MIN_PAGE_FILL]
    assert blank == [], (paper, [round(f, 2) for f in fills])
