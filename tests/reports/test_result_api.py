"""The result as a Python object, on the fixture's real result (every section computed):
the lossless JSON round trip of every section, ``to_frame()`` / ``frames()``, ``_repr_html_``."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import pytest

from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.results.result import AuditResult, result_from_json, result_to_json
from judge_transfer_audit.sections.registry import section_types

#: the fixture's judge gives scores, so it has no presentation order: judge_position is SKIPPED there
#: (its payload's round trip is tested on verdicts in tests/audit/statistics/judge/test_judge_position.py); every
#: judged pair of the fixture has votes, so prediction_powered is SKIPPED too (its round trip:
#: tests/audit/statistics/prediction_powered/test_section.py)
COMPUTED = tuple(n for n in AuditResult.section_names() if n not in ("judge_position", "prediction_powered"))


def test_every_section_is_computed_in_the_fixture_result(result):
    assert set(AuditResult.section_names()) == set(section_types())
    assert result.judge_position.status is Status.SKIPPED and "scores" in result.judge_position.reason
    assert result.prediction_powered.status is Status.SKIPPED and "only the judge" in result.prediction_powered.reason
    for name in COMPUTED:
        section = getattr(result, name)
        assert section.status is Status.PASS, (name, section.reason)
        assert isinstance(section.payload, section_types()[name]), name


@pytest.mark.slow
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
    assert page.startswith(f"<p><b>{result.status.value}: ")
    assert f"<p>{result.verdict}</p>" in page or "&" in result.verdict
    assert page.count("<tr>") >= len(result.cells) + 1
    not_pass = [c for c in result.checks if c.status is not Status.PASS]
    assert f"{len(not_pass)} check(s) not PASS" in page
    assert result.readers._repr_html_().startswith("<p><b>PASS</b>")


def test_repr_is_a_short_summary_with_the_headline_and_the_worst_cell(result):
    text = repr(result)
    lines = text.splitlines()
    assert 3 <= len(lines) <= 8 and len(text) < 1_000
    counts = result.counts
    assert lines[0].startswith(f"<AuditResult {result.status.value}: {counts['FAIL']} cells fail")
    worst = max(
        (c for c in result.cells if c.transfer.status is Status.FAIL), key=lambda c: abs(c.transfer.difference.estimate)
    )
    assert f"worst cell: {worst.matchup} / {worst.criterion} FAIL" in text
    assert ".to_frame()" in text and ".frames()" in text


def test_repr_html_escapes_names(result):
    cell = replace(result.cells[0], matchup="<script>alert(1)</script>")
    page = replace(result, cells=(cell, *result.cells[1:]), verdict="a < b & c")._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;" in page and "a &lt; b &amp; c" in page


def test_each_section_is_a_variant_holding_its_typed_result(result):
    """Computed(X) with X the section's own type; the fixture's judge_position Skipped with its reason."""
    from judge_transfer_audit.model.section_result import Computed, Skipped
    from judge_transfer_audit.results.tables import AgreementRows, BaselineRows, JudgePairs

    for name in COMPUTED:
        assert type(getattr(result, name)) is Computed, name
    assert type(result.judge_position) is Skipped
    assert type(result.agreement) is AgreementRows and type(result.reader_baseline) is BaselineRows
    assert type(result.judge_pairs) is JudgePairs and len(result.judge_pairs) == len(result.frames()["judge_pairs"])
    back = result_from_json(result_to_json(result))
    assert type(back.agreement) is AgreementRows and back.agreement.rows == result.agreement.rows
    assert back.reader_baseline.rows == result.reader_baseline.rows and back.judge_pairs == result.judge_pairs


def test_failed_sections_render_and_round_trip(result):
    """Every optional section Failed: the report says why for each, the JSON keeps reason and error type."""
    from judge_transfer_audit.model.section_result import Failed
    from judge_transfer_audit.reports.html import render_html
    from judge_transfer_audit.reports.terminal import render_summary

    failed = {name: Failed(f"{name} could not be computed: boom {i}", "AuditError") for i, name in enumerate(COMPUTED)}
    broken = replace(result, **failed)
    back = result_from_json(result_to_json(broken))
    for name, section in failed.items():
        assert getattr(back, name) == section, name
        assert name not in back.frames()
    page = render_html(back)
    for section in failed.values():
        assert section.reason in page
    assert render_summary(back)


@pytest.mark.slow
def test_a_schema_2_2_result_loads_re_renders_and_gates(result, tmp_path):
    """2.3 only adds ``error`` to a Failed section: a 2.2 result.json (no such key) reads, renders the
    same report and gates with the same exit status."""
    import json

    from judge_transfer_audit.cli import main
    from judge_transfer_audit.reports.html import render_html
    from judge_transfer_audit.results.result import SCHEMA_VERSION, read_result

    new = tmp_path / "new.json"
    new.write_text(result_to_json(result), encoding="utf-8")
    data = json.loads(result_to_json(result))
    assert SCHEMA_VERSION == "2.5" and data["schema_version"] == "2.5"
    data["schema_version"] = "2.2"
    data["readers"] = {"status": "ERROR", "reason": "reader analysis could not be computed: old", "payload": None}
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data), encoding="utf-8")
    loaded = read_result(old)
    assert loaded.schema_version == "2.2" and loaded.readers.error == "" and loaded.readers.status is Status.ERROR
    assert "reader analysis could not be computed: old" in render_html(loaded)
    # the same result as 2.2, untouched otherwise: the same report (but for the version) and the same gate
    data = json.loads(result_to_json(result))
    data["schema_version"] = "2.2"
    old.write_text(json.dumps(data), encoding="utf-8")
    assert render_html(read_result(old)).replace("2.2", "2.5") == render_html(read_result(new)).replace("2.2", "2.5")
    assert main(["gate", str(old)]) == main(["gate", str(new)]) == 1  # the fixture's judge fails


@pytest.mark.slow
def test_check_reasons_are_compared_within_the_schema_version_only(result, tmp_path):
    """A check's reason is this version's wording: a result of an older schema whose reasons were
    worded otherwise still gates; a result of this schema with a reworded reason is refused."""
    import json

    from judge_transfer_audit.cli import main

    data = json.loads(result_to_json(result))
    index = next(i for i, c in enumerate(data["checks"]) if c["name"] == "readers.judge_outside_reader_range")
    data["checks"][index]["reason"] = "judge rate 0.500 within the readers' range [0.400, 0.600]"
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data), encoding="utf-8")
    assert main(["gate", str(edited)]) == 2  # this schema: the reason must be the one its data give
    data["schema_version"] = "2.4"
    edited.write_text(json.dumps(data), encoding="utf-8")
    assert main(["gate", str(edited)]) == 1  # an older schema keeps its wording: the fixture's judge fails


def test_reader_reasons_name_the_system_of_each_rate(result):
    """Every rate in the reader and leave-one-reader-out reasons names the system it is the share of."""
    focal = {c.matchup: c.focal for c in result.cells}
    named = [c for c in result.checks if c.name in ("readers.judge_outside_reader_range", "readers.group_difference")]
    assert named
    for check in named:
        if check.status is Status.SKIPPED:
            continue
        matchup = check.scope.split("/", 1)[0]
        system = focal.get(matchup, "each matchup's focal system")  # a pooled row
        assert f"for {system} " in check.reason, check.reason
    loro = next(c for c in result.checks if c.name == "uncertainty.loro_max_shift")
    assert "(raw rate for " in loro.reason and "the focal system" not in loro.reason, loro.reason


def test_a_result_file_read_in_blocks_is_the_result_read_whole(result, tmp_path, monkeypatch):
    """``result_from_file`` (``audit.load_result``, ``audit report``): the fixture result's tables read a block of
    rows at a time, in chunks of a few kB, give the result ``result_from_json`` reads from the whole text (the
    same JSON text again, the same frames, dtypes and values), without reading the text whole."""
    import judge_transfer_audit.results.result as result_module
    from judge_transfer_audit.core import json_read, serialize

    text = result_to_json(result, end="\n")
    path = tmp_path / "result.json"
    path.write_text(text, encoding="utf-8")
    whole = result_from_json(text)
    monkeypatch.setattr(json_read, "BLOCK_ROWS", 40)  # more than the 28 agreement rows, fewer than 10 tables'
    monkeypatch.setattr(json_read, "CHUNK_BYTES", 4096)
    read_in_blocks = []
    frame_from_blocks = serialize._frame_from_blocks

    def recorded(columns, dtypes, blocks):
        read_in_blocks.append(columns)
        return frame_from_blocks(columns, dtypes, blocks)

    def read_whole(*args, **kwargs):
        raise AssertionError("read whole")

    monkeypatch.setattr(serialize, "_frame_from_blocks", recorded)
    monkeypatch.setattr(result_module, "result_from_json", read_whole)
    ours = result_module.result_from_file(path)
    assert len(read_in_blocks) > 5 and "pair_id" in read_in_blocks[0]
    assert result_to_json(ours, end="\n") == text
    for name, frame in whole.frames().items():
        pd.testing.assert_frame_equal(ours.frames()[name], frame, check_exact=True, check_column_type=True)


def test_a_result_file_of_another_layout_is_read_whole(result, tmp_path, monkeypatch):
    """Compact JSON (another writer's) has no table read in blocks, and agreement rows (read as rows, not as a
    frame) longer than a block are not read in blocks: the whole text is read, the same result."""
    import json

    from judge_transfer_audit.core import json_read
    from judge_transfer_audit.results.result import result_from_file

    text = result_to_json(result)
    path = tmp_path / "result.json"
    path.write_text(json.dumps(json.loads(text)), encoding="utf-8")
    assert result_to_json(result_from_file(path)) == text
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(json_read, "BLOCK_ROWS", 8)
    assert result_to_json(result_from_file(path)) == text
