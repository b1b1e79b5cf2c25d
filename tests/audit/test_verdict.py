import pandas as pd
import pytest

from audit.checks import Check, Status
from audit.policy import Policy
from audit.result import Cell, GlmmSummary, HumanSide, JudgeSide, Transfer
from audit.verdict import cell_checks, overall_status, summary_checks, verdict_sentence


def _cell(inside: bool, conflict: bool, name="c"):
    glmm = GlmmSummary(0.5, 0.4, 0.6, 0.0, 0.2, 0.1, 0.1, False, True, False, -50.0)
    human = HumanSide(0.5, 50, 50, 0, 0.5, glmm)
    judge = JudgeSide("j", name, 0.9 if not inside else 0.5, 18, 2, 0, 0, 20, "even-split", False)
    transfer = Transfer(inside, conflict, "chance", "focal" if conflict else "chance", 0.6, 0.6, False,
                        Status.FAIL if conflict and not inside else Status.PASS, "")
    return Cell("m", name, "f", "o", 20, 5, 100, human, judge, transfer)


AGREEMENT = pd.DataFrame([{"level": "all", "matchup": "all", "criterion": "all", "krippendorff_alpha": 0.07}])
NO_JUDGE_PAIRS = pd.DataFrame(columns=["outcome"])


def test_summary_fails_above_the_fraction_threshold():
    cells = [_cell(False, True, "a"), _cell(True, False, "b"), _cell(True, False, "c")]
    checks = {c.name: c for c in summary_checks(cells, AGREEMENT, Policy(), NO_JUDGE_PAIRS)}
    outside = checks["transfer.fraction_outside_ci"]
    assert outside.status is Status.FAIL and outside.value == pytest.approx(1 / 3) and outside.threshold == 0.25
    assert checks["agreement.human_alpha"].status is Status.WARN
    assert checks["agreement.human_alpha"].value == pytest.approx(0.07)


def test_summary_passes_below_threshold():
    cells = [_cell(True, False, x) for x in "abcd"] + [_cell(False, False, "e")]
    checks = {c.name: c for c in summary_checks(cells, AGREEMENT, Policy(), NO_JUDGE_PAIRS)}
    assert checks["transfer.fraction_outside_ci"].status is Status.PASS  # 0.2 <= 0.25


def test_severity_overrides():
    policy = Policy(severity={"transfer.fraction_outside_ci": "WARN", "agreement.human_alpha": "OFF",
                              "transfer.judge_in_human_ci": "FAIL"})
    cells = [_cell(False, True)]
    summary = {c.name: c for c in summary_checks(cells, AGREEMENT, policy, NO_JUDGE_PAIRS)}
    assert summary["transfer.fraction_outside_ci"].status is Status.WARN
    assert "agreement.human_alpha" not in summary
    per_cell = {c.name: c for c in cell_checks(cells, policy)}
    assert per_cell["transfer.judge_in_human_ci"].status is Status.FAIL
    assert per_cell["transfer.judge_in_human_ci"].scope == "m/c"


def test_invalid_fraction():
    judge_pairs = pd.DataFrame({"criterion": ["a"] * 20, "outcome": ["win"] * 18 + ["invalid"] * 2})
    checks = {c.name: c for c in summary_checks([_cell(True, False)], AGREEMENT, Policy(), judge_pairs)}
    assert checks["judge.invalid_fraction"].status is Status.FAIL
    assert checks["judge.invalid_fraction"].value == pytest.approx(0.1)


def test_overall_status_and_sentence():
    assert overall_status([Check("a", Status.PASS), Check("b", Status.WARN)]) is Status.WARN
    assert overall_status([Check("a", Status.ERROR)]) is Status.FAIL
    assert overall_status([Check("a", Status.SKIPPED)]) is Status.PASS
    sentence = verdict_sentence([_cell(False, True), _cell(True, False)], Status.FAIL)
    assert sentence.startswith("The judge does not transfer") and "1 of 2 cells" in sentence


def test_invalid_fraction_does_not_count_the_aggregate_twice():
    judge_pairs = pd.DataFrame({"criterion": ["a"] * 10 + ["aggregate"] * 10,
                                "outcome": ["invalid"] + ["win"] * 9 + ["invalid"] + ["win"] * 9})
    checks = {c.name: c for c in summary_checks([_cell(True, False)], AGREEMENT, Policy(), judge_pairs)}
    assert checks["judge.invalid_fraction"].value == pytest.approx(0.1)
    assert "1 of 10" in checks["judge.invalid_fraction"].reason
