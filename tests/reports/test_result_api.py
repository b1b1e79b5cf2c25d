"""The result as a Python object, on the fixture's real result (every section computed):
the lossless JSON round trip of every section, ``to_frame()`` / ``frames()``, ``_repr_html_``."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from audit.checks import Status
from audit.result import AuditResult, result_from_json, result_to_json
from audit.section_types import SECTION_TYPES

#: the fixture's judge gives scores, so it has no presentation order: judge_position is SKIPPED there
#: (its payload's round trip is tested on verdicts in tests/audit/test_judge_position.py)
COMPUTED = tuple(n for n in AuditResult.section_names() if n != "judge_position")


def test_every_section_is_computed_in_the_fixture_result(result):
    assert set(AuditResult.section_names()) == set(SECTION_TYPES)
    assert result.judge_position.status is Status.SKIPPED and "scores" in result.judge_position.reason
    for name in COMPUTED:
        section = getattr(result, name)
        assert section.status is Status.PASS, (name, section.reason)
        assert isinstance(section.payload, SECTION_TYPES[name]), name


def test_every_section_round_trips_through_json_losslessly(result):
    text = result_to_json(result)
    back = result_from_json(text)
    assert result_to_json(back) == text
    assert back.cells == result.cells and back.checks == result.checks and back.provenance == result.provenance
    for name in AuditResult.section_names():
        before, after = getattr(result, name), getattr(back, name)
        assert type(after.payload) is type(before.payload), name
        assert (after.status, after.reason) == (before.status, before.reason), name
        pd.testing.assert_frame_equal(after.to_frame(), before.to_frame(), check_dtype=False, obj=name)
    for name, frame in result.frames().items():
        pd.testing.assert_frame_equal(back.frames()[name], frame, check_dtype=False, obj=name)


def test_to_frame_and_frames_name_every_table(result):
    pd.testing.assert_frame_equal(result.to_frame(), result.cells_frame())
    frames = result.frames()
    assert {"cells", "checks", "agreement", "reader_baseline", "judge_pairs"} <= set(frames)
    assert set(COMPUTED) <= set(frames) and "judge_position" not in frames
    assert len(frames["readers"]) and list(frames["readers"].columns) == list(result.readers.payload.to_frame().columns)
    assert len(frames["checks"]) == len(result.checks)


def test_a_skipped_section_has_no_frame_and_says_why(bare_result):
    assert bare_result.readers.to_frame().empty
    assert "readers" not in bare_result.frames()
    assert "not computed" in bare_result.readers._repr_html_()


def test_repr_html_shows_status_verdict_cells_and_the_checks_not_passed(result):
    page = result._repr_html_()
    assert page.startswith(f"<p><b>judge-audit: {result.status.value}</b>")
    assert page.count("<tr>") >= len(result.cells) + 1
    not_pass = [c for c in result.checks if c.status is not Status.PASS]
    assert f"{len(not_pass)} check(s) not PASS" in page
    assert result.readers._repr_html_().startswith("<p><b>PASS</b>")


def test_repr_html_escapes_names(result):
    cell = replace(result.cells[0], matchup="<script>alert(1)</script>")
    page = replace(result, cells=(cell, *result.cells[1:]), verdict="a < b & c")._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;" in page and "a &lt; b &amp; c" in page
