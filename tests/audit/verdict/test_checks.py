"""Checks, counts, overall status and the verdict sentence from decided cells."""

import math

import pandas as pd
import pytest

from judge_transfer_audit.model.checks import Check, Status
from judge_transfer_audit.model.policy import Policy
from judge_transfer_audit.results.result import Cell, GlmmSummary, HumanSide, Interval, JudgeSide, Transfer
from judge_transfer_audit.verdict import cell_checks, cell_counts, overall_status, summary_checks, verdict_sentence


def _cell(status: Status, name="c", *, distance=0.0, judge=True, below=False, ties_only=False):
    glmm = GlmmSummary(0.5, 0.4, 0.6, 0.0, 0.2, 0.1, 0.1, False, True, False, -50.0)
    human = HumanSide(0.5, 0 if ties_only else 50, 0 if ties_only else 50, 100 if ties_only else 0, 0.5, glmm)
    j = JudgeSide("j", name, 0.9, 18, 2, 0, 0, 20, "even-split", False) if judge else None
    t = Transfer(
        status,
        f"{status.value}: reason",
        margin=0.1,
        difference=Interval(distance, distance - 0.05, distance + 0.05, 0.9),
        interval_level=0.9,
        judge_vs_majority=0.6,
        reader_baseline=0.7 if below else 0.6,
        below_reader_baseline=below,
    )
    return Cell("m", name, "f", "o", 20, 5, 100, human, j, t)


AGREEMENT = pd.DataFrame([{"level": "all", "matchup": "all", "criterion": "all", "krippendorff_alpha": 0.07}])
NO_JUDGE_PAIRS = pd.DataFrame(columns=["outcome"])


def test_one_decision_check_per_cell_whose_status_is_the_cell_status():
    cells = [_cell(Status.FAIL, "a", distance=0.3), _cell(Status.INCONCLUSIVE, "b"), _cell(Status.INSUFFICIENT, "c")]
    checks = [c for c in cell_checks(cells, Policy()) if c.name == "transfer.decision"]
    assert [c.status for c in checks] == [Status.FAIL, Status.INCONCLUSIVE, Status.INSUFFICIENT]
    assert checks[0].scope == "m/a" and checks[0].value == pytest.approx(0.3) and checks[0].threshold == 0.1


def test_severity_can_demote_or_remove_the_decision_check():
    cells = [_cell(Status.FAIL, "a", distance=0.3)]
    warn = cell_checks(cells, Policy(severity={"transfer.decision": "WARN"}))
    decision = next(c for c in warn if c.name == "transfer.decision")
    assert decision.status is Status.WARN and "reported as WARN" in decision.reason
    off = cell_checks(cells, Policy(severity={"transfer.decision": "OFF", "agreement.human_alpha": "OFF"}))
    assert not any(c.name == "transfer.decision" for c in off)
    summary = {
        c.name: c
        for c in summary_checks(cells, AGREEMENT, Policy(severity={"agreement.human_alpha": "OFF"}), NO_JUDGE_PAIRS)
    }
    assert "agreement.human_alpha" not in summary


def test_below_the_reader_baseline_is_a_warning():
    checks = cell_checks([_cell(Status.PASS, below=True)], Policy())
    base = next(c for c in checks if c.name == "transfer.judge_vs_reader_baseline")
    assert base.status is Status.WARN and base.value == pytest.approx(-0.1)


def test_nothing_assessed_is_an_error():
    cells = [_cell(Status.INSUFFICIENT, "a"), _cell(Status.INSUFFICIENT, "b")]
    assessed = {c.name: c for c in summary_checks(cells, AGREEMENT, Policy(), NO_JUDGE_PAIRS)}["transfer.assessed"]
    assert assessed.status is Status.ERROR and "2 INSUFFICIENT" in assessed.reason
    no_judge = [_cell(Status.INSUFFICIENT, judge=False)]
    reason = {c.name: c for c in summary_checks(no_judge, AGREEMENT, Policy(), NO_JUDGE_PAIRS)}[
        "transfer.assessed"
    ].reason
    assert "criterion names" in reason
    ties = [_cell(Status.ERROR, ties_only=True)]
    reason = {c.name: c for c in summary_checks(ties, AGREEMENT, Policy(), NO_JUDGE_PAIRS)}["transfer.assessed"].reason
    assert "every human vote is a tie" in reason


def test_invalid_fraction_and_the_aggregate_counted_once():
    judge_pairs = pd.DataFrame(
        {"criterion": ["a"] * 10 + ["aggregate"] * 10, "outcome": ["invalid"] + ["win"] * 9 + ["invalid"] + ["win"] * 9}
    )
    checks = {c.name: c for c in summary_checks([_cell(Status.PASS)], AGREEMENT, Policy(), judge_pairs)}
    assert checks["judge.invalid_fraction"].status is Status.FAIL
    assert (
        checks["judge.invalid_fraction"].value == pytest.approx(0.1)
        and "1 of 10" in checks["judge.invalid_fraction"].reason
    )


def test_overall_status_order():
    assert overall_status([Check("a", Status.PASS), Check("b", Status.WARN)]) is Status.WARN
    assert overall_status([Check("a", Status.INCONCLUSIVE), Check("b", Status.WARN)]) is Status.INCONCLUSIVE
    assert overall_status([Check("a", Status.INCONCLUSIVE), Check("b", Status.FAIL)]) is Status.FAIL
    assert overall_status([Check("a", Status.ERROR), Check("b", Status.FAIL)]) is Status.ERROR
    assert overall_status([Check("a", Status.INSUFFICIENT), Check("b", Status.SKIPPED)]) is Status.PASS


def test_counts_and_sentence_match():
    cells = [
        _cell(Status.FAIL, "a", distance=0.3),
        _cell(Status.PASS, "b"),
        _cell(Status.INCONCLUSIVE, "c"),
        _cell(Status.INSUFFICIENT, "d"),
    ]
    counts = cell_counts(cells)
    assert counts == {"PASS": 1, "FAIL": 1, "INCONCLUSIVE": 1, "INSUFFICIENT": 1, "ERROR": 0}
    s = verdict_sentence(cells, Status.FAIL, margin=0.1)
    assert s.startswith(
        "The judge does not transfer to this data: 1 cell fails, 1 undecided, 1 passes "
        "(of 3 compared cells; 1 insufficient cell(s) counted apart;"
    )
    assert "10-point margin" in s
    passing = verdict_sentence([_cell(Status.PASS, "a"), _cell(Status.PASS, "b")], Status.PASS, margin=0.1)
    assert passing.startswith("The judge transfers") and "all 2 compared cells pass" in passing
    undecided = verdict_sentence([_cell(Status.PASS, "a"), _cell(Status.INCONCLUSIVE, "b")], Status.INCONCLUSIVE)
    assert undecided.startswith("Not decided yet") and "pairs_needed" in undecided
    nothing = verdict_sentence([_cell(Status.INSUFFICIENT)], Status.ERROR)
    assert nothing.startswith("Nothing was compared")
    assert not math.isnan(cells[0].transfer.difference.estimate)


def test_headline_says_the_counts_in_words():
    from judge_transfer_audit.verdict.checks import headline_text

    cells = [_cell(Status.FAIL, "a", distance=0.3)] * 3 + [_cell(Status.INCONCLUSIVE, "c")] * 15
    assert headline_text(Status.FAIL, cells) == "FAIL: 3 cells fail, 15 undecided, none pass"
    two = [_cell(Status.PASS, "a"), _cell(Status.PASS, "b"), _cell(Status.ERROR, "e")]
    assert headline_text(Status.ERROR, two) == "ERROR: no cell fails, none undecided, 2 pass (1 error)"
    assert headline_text(Status.ERROR, [_cell(Status.INSUFFICIENT)]) == "ERROR: nothing was compared"
