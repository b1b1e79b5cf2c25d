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
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from reports.html import write_html

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0", "--hide-scrollbars"]


def _fixture_result():
    """The shipped fixture through the real pipeline (the README demo); synthetic if absent."""
    deployment, dev = FIXTURES / "deployment", FIXTURES / "dev"
    if not (deployment / "judge.csv").exists():
        from tests.reports.synthetic import make_result

        return make_result(), "synthetic (fixtures/ not present)"
    from audit.data import load_audit_data
    from audit.pipeline import run_audit
    from audit.spec import AuditSpec

    data = load_audit_data(str(deployment / "judge.csv"), str(deployment / "humans.csv"),
                           pairs=str(deployment / "pairs.csv"), stories=str(deployment / "stories.csv"),
                           dev_judge=str(dev / "judge.csv"), dev_humans=str(dev / "humans.csv"))
    return run_audit(data, AuditSpec(seed=1, n_boot=400)), "fixture"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"headless Chromium not found at {CHROMIUM}; install Debian's `chromium` package")
    tmp = tmp_path_factory.mktemp("browser")
    result, source = _fixture_result()
    path = write_html(result, tmp / "report.html")
    return {"result": result, "source": source, "path": path, "tmp": tmp}


def _chromium(rendered, *args: str) -> subprocess.CompletedProcess:
    profile = rendered["tmp"] / f"profile-{len(list(rendered['tmp'].glob('profile-*')))}"
    cmd = [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args, rendered["path"].as_uri()]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=rendered["tmp"])


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
    rgb = np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)])
    return (np.abs(img - rgb) <= tol).all(axis=-1)


def test_console_is_silent(dom):
    console = [line for line in dom.stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]
    assert console == []


def test_dom_has_headline_transfer_table_and_every_figure(dom, rendered):
    html = dom.stdout
    result = rendered["result"]
    assert 'id="verdict"' in html and 'id="dev-validity"' in html and 'id="deployment-findings"' in html
    assert html.count('title="') >= len(result.cells)
    table = html[html.index('id="transfer-table"'):]
    table = table[: table.index("</table>")]
    assert table.count("<tr") == len(result.cells) + 1  # header + one row per cell
    expected = ["fig-preference"]
    if result.uncertainty.payload is not None:
        expected += ["fig-bootstrap", "fig-loro"]
    if result.readers.payload is not None:
        expected += ["fig-heatmap-1", "fig-dendrogram", "fig-timing"]
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
    badge = {"FAIL": "#c62828", "PASS": "#1a7f37", "WARN": "#9a6700", "ERROR": "#8250df", "SKIPPED": "#6e7781",
             "INCONCLUSIVE": "#9a6700"}[status]  # INCONCLUSIVE wears the warning colour
    assert _near(top, badge, 20).sum() > 100  # the status badge and the verdict rule


def test_every_figure_is_painted(rendered):
    img = _screenshot(rendered, "full.png", 16000)
    rows_with_ink = np.where((img.sum(axis=-1) < 600).any(axis=1))[0]
    assert rows_with_ink.max() > 6000  # the page goes on well past the headline
    assert _near(img, "#0072b2", 10).sum() > 2000  # preference / bootstrap / scatter palette colour
    if rendered["result"].readers.payload is not None:
        assert _near(img, "#67001f", 40).sum() + _near(img, "#b2182b", 40).sum() > 2000  # heat-map reds
        assert _near(img, "#e69f00", 10).sum() > 500
