"""The summary printed after `audit run`, on the real fixture result."""

from __future__ import annotations

from dataclasses import replace

import pytest

from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.reports.terminal import render_summary


def test_summary_lists_verdict_judge_counts_cells_and_report_path(result):
    out = render_summary(result, "audit-out/report.html", max_cells=5)
    lines = out.splitlines()
    assert lines[0] == f"judge-audit: {result.status.value}"
    assert lines[1] == result.verdict
    configs = sorted({k.judge for c in result.cells if c.judge is not None for k in c.judge.configurations})
    assert lines[2].startswith(f"Judge: {result.provenance.primary_judge} (audited; {len(configs)} configurations: ")
    assert all(name in lines[2] for name in configs)
    assert lines[2].endswith(f"tie rule {result.provenance.tie_rule}: a tie counts half for each system")
    corr = result.dev.payload.correlations
    mine = corr[corr["judge"] == result.provenance.primary_judge]
    expected = ", ".join(f"{r.criterion} {r.spearman:.2f}" for r in mine.itertuples())
    assert f"Dev set (Spearman of {result.provenance.primary_judge} with humans): {expected}" in out
    counts = result.counts
    cells_line = next(line for line in lines if line.startswith("Cells: "))
    assert cells_line == (
        f"Cells: {counts['FAIL']} FAIL, {counts['ERROR']} ERROR, {counts['INCONCLUSIVE']} INCONCLUSIVE, "
        f"{counts['INSUFFICIENT']} INSUFFICIENT, {counts['PASS']} PASS (of {len(result.cells)}; "
        "margin 10 points)"
    )
    shown = counts["FAIL"] + counts["ERROR"] + counts["INCONCLUSIVE"]
    assert shown > 5, "the fixture has more than 5 cells to look at"
    assert f"Cells to look at ({shown}, worst first;" in out
    assert f"... and {shown - 5} more" in out
    full = render_summary(result, max_cells=50).splitlines()
    listed = [
        (line.split()[0], float(line.split(" distance ")[1].split()[0]))
        for line in full
        if line.startswith("  ") and line.split()[0] in ("FAIL", "ERROR", "INCONCLUSIVE")
    ]
    order = {"FAIL": 0, "ERROR": 1, "INCONCLUSIVE": 2}
    # worst first: by status, then largest distance from the human band (no 0.0 ahead of 50 points)
    assert len(listed) == shown and listed == sorted(listed, key=lambda x: (order[x[0]], -abs(x[1])))
    assert lines[-1] == "Report: audit-out/report.html"
    n_checks = sum(c.status is Status.FAIL for c in result.checks)
    assert f"Checks: {n_checks} FAIL" in out


def test_degenerate_cells_are_announced(bare_result):
    cells = list(bare_result.cells)
    for k in (1, 2, 4):
        cells[k] = replace(cells[k], human=replace(cells[k].human, glmm=replace(cells[k].human.glmm, degenerate=True)))
    assert "GLMM degenerate in 3 cell(s)" in render_summary(replace(bare_result, cells=tuple(cells)))


def test_summary_without_failures_or_dev(bare_result):
    cells = tuple(replace(c, transfer=replace(c.transfer, status=Status.PASS)) for c in bare_result.cells)
    out = render_summary(replace(bare_result, cells=cells, status=Status.PASS))
    assert "Cells to look at" not in out
    assert "Dev set: no development set given" in out and "not given (no development set given" not in out
    assert "Report:" not in out


def test_tie_rule_is_named_in_words(bare_result):
    prov = replace(bare_result.provenance, tie_rule="decisive")
    out = render_summary(replace(bare_result, provenance=prov))
    assert "tie rule decisive: ties are left out of the denominator" in out


def test_colour_only_when_asked(result):
    status = result.status.value
    code = {"FAIL": "31", "INCONCLUSIVE": "33", "PASS": "32", "ERROR": "35"}[status]
    assert "\x1b[" not in render_summary(result)
    assert f"\x1b[1;{code}m{status}\x1b[0m" in render_summary(result, colour=True)


def test_every_listed_cell_shows_its_numbers(result):
    out = render_summary(result, max_cells=50)
    for c in result.cells:
        t = c.transfer
        if t.status in (Status.FAIL, Status.INCONCLUSIVE):
            assert (
                f"distance {100 * t.difference.estimate:+.1f} [{100 * t.difference.ci_low:+.1f}, "
                f"{100 * t.difference.ci_high:+.1f}]"
            ) in out
    assert "INSUFFICIENT" not in out.split("Cells to look at")[1].split("Checks:")[0].replace("0 INSUFFICIENT", "")


def test_adjusted_p_is_the_cell_p_even_when_the_conflict_p_is_zero(result):
    """The cell's adjusted p is the smaller of its two components; a 0.0 conflict p is not 'missing'."""
    cell = next(c for c in result.cells if c.transfer.p_outside_adjusted is not None)
    transfer = replace(cell.transfer, status=Status.FAIL, p_outside_adjusted=0.25, p_conflict_adjusted=0.0)
    changed = replace(result, cells=(replace(cell, transfer=transfer),))
    line = next(x for x in render_summary(changed).splitlines() if f"{cell.matchup} / {cell.criterion}" in x)
    floor = 1 / (cell.transfer.n_boot + 1)
    assert f"adj. p < {floor:.2g}" in line and "adj. p 0.25" not in line


@pytest.mark.parametrize("p, shown", [(4e-4, "adj. p < 0.001"), (0.0012, "adj. p 0.0012"), (0.2, "adj. p 0.2")])
def test_a_p_below_one_over_b_plus_one_is_shown_as_below_it(result, p, shown):
    """Below 1 / (B + 1) a bootstrap p is an extrapolation: the terminal says ``< 0.001`` at B = 999."""
    cell = next(c for c in result.cells if c.transfer.p_outside_adjusted is not None)
    transfer = replace(cell.transfer, status=Status.FAIL, n_boot=999, p_outside_adjusted=p, p_conflict_adjusted=1.0)
    changed = replace(result, cells=(replace(cell, transfer=transfer),))
    line = next(x for x in render_summary(changed).splitlines() if f"{cell.matchup} / {cell.criterion}" in x)
    assert f"{shown}  " in line + "  " and "e-0" not in line


def test_summary_shows_the_study_and_every_matchup(result):
    out = render_summary(result)
    assert f"Study (criteria pooled per matchup): {result.study_transfer.reason}" in out
    for m in result.matchup_transfers:
        assert f"  matchup {m.matchup}: {m.status.value} ({m.n_fail} FAIL" in out


def test_many_matchups_are_cut_to_the_worst_with_a_count_of_the_rest(result):
    from judge_transfer_audit.model.cells import MatchupTransfer

    many = tuple(
        MatchupTransfer(f"m{k:02d} vs x", Status.INCONCLUSIVE, "", 1, 1, 0, 0, 0.5, 0.5 + k / 100) for k in range(30)
    )
    failing = MatchupTransfer("bad vs x", Status.FAIL, "", 1, 1, 1, 0, 0.001, 0.01)
    changed = replace(result, matchup_transfers=(*many, failing))
    lines = render_summary(changed, max_cells=5).splitlines()
    listed = [x for x in lines if x.startswith("  matchup ")]
    assert [x.split(":")[0] for x in listed] == [
        "  matchup bad vs x",
        "  matchup m00 vs x",
        "  matchup m01 vs x",
        "  matchup m02 vs x",
        "  matchup m03 vs x",
    ]
    assert "  (5 of 31 matchups, worst first)" in lines
    assert "  ... and 26 more (result.json's matchup_transfers; the report)" in lines
