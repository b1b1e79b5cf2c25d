"""Every piece of user text is escaped: markup injected everywhere never becomes active.

A real audit of a seeded study (tests/reports/study.py) whose system, criterion, matchup,
reader and judge names, comments and stories all carry ``inject``'s markup, run through the
pipeline (so it reaches check reasons, the verdict, tables and figures as the producers write
them).
The HTML is parsed with html.parser (as a browser's tokenizer would see it) and must contain
no script element, no img element, no event-handler attribute; the injected text must still be
there as visible text (escaped, not dropped), including inside the SVG figures.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

from judge_transfer_audit.reports.html import render_html
from judge_transfer_audit.reports.junit import render_junit
from judge_transfer_audit.reports.terminal import render_summary
from tests.reports.study import run_study, write_study

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
PAYLOADS = (SCRIPT, IMG, "'><svg onload=alert(1)>", "$x$ & {{ 7*7 }}")


def inject(s: str) -> str:
    return s + " " + " ".join(PAYLOADS)


class Scanner(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list]] = []
        self.text: list[str] = []
        self.stack: list[str] = []
        self.svg_text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))
        self.stack.append(tag)

    def handle_endtag(self, tag):
        while self.stack and self.stack.pop() != tag:
            pass

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, attrs))

    def handle_data(self, data):
        self.text.append(data)
        if "svg" in self.stack and self.stack and self.stack[-1] in ("text", "tspan"):
            self.svg_text.append(data)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    return run_study(write_study(tmp_path_factory.mktemp("hostile"), text=inject))


@pytest.fixture(scope="module")
def hostile_html(hostile):
    return render_html(hostile)


@pytest.fixture(scope="module")
def scanned(hostile_html):
    s = Scanner()
    s.feed(hostile_html)
    s.close()
    return s


def test_no_active_elements(scanned):
    tags = [t for t, _ in scanned.tags]
    for forbidden in ("script", "img", "iframe", "object", "embed", "foreignobject"):
        assert forbidden not in tags, forbidden
    # the only <svg> elements are the figures' roots (ids fig-...), never an injected one
    svg_ids = [dict(a).get("id", "") for t, a in scanned.tags if t == "svg"]
    assert svg_ids and all(i.startswith("fig-") for i in svg_ids)


def test_no_event_handler_or_script_url_attributes(scanned):
    for tag, attrs in scanned.tags:
        for name, value in attrs:
            assert not name.lower().startswith("on"), (tag, name, value)
            assert "javascript:" not in (value or "").lower(), (tag, name, value)


def test_injected_text_is_shown_not_dropped(scanned):
    text = "".join(scanned.text)
    assert text.count(SCRIPT) >= 20  # names, cells, checks, comments, excerpts ...
    assert text.count(IMG) >= 20
    assert "{{ 7*7 }}" in text and "49" not in text.split("{{ 7*7 }}")[0][-3:]  # no template evaluation


def test_injected_text_in_svg_is_plain_text(scanned):
    svg = "".join(scanned.svg_text)
    assert SCRIPT in svg and '"><img' in svg  # reached the figures as (truncated) text labels


def test_dollar_signs_are_not_mathtext():
    import pandas as pd

    from judge_transfer_audit.presentation.figures.heatmap import reader_heatmap_svg

    svg = reader_heatmap_svg(
        pd.DataFrame([{"row": "$x$ <b>", "kind": "reader", "criterion": "$\\alpha$", "rate": 0.5}])
    )
    assert "$x$ &lt;b&gt;" in svg and "$\\alpha$" in svg


def test_every_user_field_reaches_the_report_escaped(hostile_html):
    html = hostile_html
    escaped = "&lt;script&gt;alert(1)&lt;/script&gt;"
    for field in ("reader1", "ensemble", "mini", "sys1-new", "sys2-old", "authenticity", "felt more alive"):
        assert re.search(re.escape(field) + r"[^<]*" + re.escape(escaped), html), field


def test_junit_escapes_and_parses(hostile):
    xml = render_junit(hostile.checks)
    root = ET.fromstring(xml)
    assert not list(root.iter("script")) and not list(root.iter("img"))
    names = [e.get("name") or "" for e in root.iter("testcase")]
    assert sum(SCRIPT in n for n in names) >= len(hostile.cells)  # each cell's scope round-trips as text


def test_terminal_strips_control_characters(bare_result):
    """The loader refuses control characters in names; an edited result.json must not smuggle them in either."""
    from dataclasses import replace

    bad = "\x1b[2J\x07"
    cells = tuple(
        replace(
            c,
            matchup=c.matchup + bad,
            criterion=c.criterion + bad,
            transfer=replace(c.transfer, reason=c.transfer.reason + bad),
        )
        for c in bare_result.cells
    )
    prov = replace(bare_result.provenance, primary_judge="ensemble" + bad, tie_rule="even-split" + bad)
    out = render_summary(replace(bare_result, cells=cells, provenance=prov, verdict=bare_result.verdict + bad))
    assert "\x1b" not in out and "\x07" not in out
    assert "ensemble" in out and bare_result.cells[0].matchup in out
    assert "\x1b" not in out and "\x07" not in out
