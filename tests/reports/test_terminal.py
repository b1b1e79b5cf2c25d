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
    counts = result.counts
    assert lines[3] == (f"Cells: {counts['FAIL']} FAIL, {counts['ERROR']} ERROR, {counts['INCONCLUSIVE']} INCONCLUSIVE, "
                        f"{counts['INSUFFICIENT']} INSUFFICIENT, {counts['PASS']} PASS (of 18; margin 10 points)")
    shown = counts["FAIL"] + counts["ERROR"] + counts["INCONCLUSIVE"]
    assert f"Cells to look at ({shown};" in out
    assert f"... and {shown - 5} more" in out
    full = render_summary(result, max_cells=50).splitlines()
    listed = [line.split()[0] for line in full if line.startswith("  ") and line.split()[0] in ("FAIL", "ERROR",
                                                                                                   "INCONCLUSIVE")]
    order = {"FAIL": 0, "ERROR": 1, "INCONCLUSIVE": 2}
    assert len(listed) == shown and listed == sorted(listed, key=order.get)  # worst first
    assert lines[-1] == "Report: audit-out/report.html"
    n_checks = sum(c.status is Status.FAIL for c in result.checks)
    assert f"Checks: {n_checks} FAIL" in out
    assert "GLMM degenerate in 3 cell(s)" in out


def test_summary_without_failures_or_dev(bare_result):
    cells = tuple(replace(c, transfer=replace(c.transfer, status=Status.PASS)) for c in bare_result.cells)
    out = render_summary(replace(bare_result, cells=cells, status=Status.PASS))
    assert "Cells to look at" not in out
    assert "Dev set: no development set given" in out and "not given (no development set given" not in out
    assert "Report:" not in out


def test_colour_only_when_asked(result):
    assert "\x1b[" not in render_summary(result)
    assert "\x1b[1;31mFAIL\x1b[0m" in render_summary(result, colour=True)


def test_every_listed_cell_shows_its_numbers(result):
    out = render_summary(result, max_cells=50)
    for c in result.cells:
        t = c.transfer
        if t.status in (Status.FAIL, Status.INCONCLUSIVE):
            assert (f"distance {100 * t.difference.estimate:+.1f} [{100 * t.difference.ci_low:+.1f}, "
                    f"{100 * t.difference.ci_high:+.1f}]") in out
    assert "INSUFFICIENT" not in out.split("Cells to look at")[1].split("GLMM degenerate")[0]
