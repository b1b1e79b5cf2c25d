"""The summary printed after `audit run`."""

from __future__ import annotations

from dataclasses import replace

from audit.checks import Status
from reports.terminal import render_summary


def test_summary_lists_verdict_failing_cells_and_report_path(result):
    out = render_summary(result, "audit-out/report.html", max_cells=5)
    lines = out.splitlines()
    assert lines[0] == "judge-audit: FAIL"
    assert lines[1] == result.verdict
    assert "Dev set (Spearman of ensemble with humans): authenticity 0.65, emotion_provocation 0.65" in out
    assert "0.50" not in out  # only the primary judge's correlations
    n_fail = sum(c.transfer.verdict is Status.FAIL for c in result.cells)
    assert f"Failing cells ({n_fail}):" in out
    assert f"... and {n_fail - 5} more" in out
    assert lines[-1] == "Report: audit-out/report.html"
    assert "18 FAIL" in out and "1 WARN" in out


def test_summary_without_failures_or_dev(bare_result):
    cells = tuple(replace(c, transfer=replace(c.transfer, verdict=Status.PASS)) for c in bare_result.cells)
    out = render_summary(replace(bare_result, cells=cells, status=Status.PASS))
    assert "Failing cells" not in out
    assert "Dev set: no development set given" in out and "not given (no development set given" not in out
    assert "Report:" not in out


def test_colour_only_when_asked(result):
    assert "\x1b[" not in render_summary(result)
    assert "\x1b[1;31mFAIL\x1b[0m" in render_summary(result, colour=True)


def test_outside_count_uses_the_assessed_cells_like_the_verdict(result):
    # a cell whose human interval is missing (e.g. all ties) cannot be inside or outside
    first = result.cells[0]
    cells = (replace(first, transfer=replace(first.transfer, judge_in_human_ci=None)),) + tuple(result.cells[1:])
    out = render_summary(replace(result, cells=cells))
    n = len(cells) - 1
    outside = sum(c.transfer.judge_in_human_ci is False for c in cells)
    assert f"Deployment: judge outside the human 95% interval in {outside} of {n} cells (1 not assessed)" in out
