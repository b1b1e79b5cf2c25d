"""`audit budget --width`: votes to a target vote-share interval width with and without the judge."""

from __future__ import annotations

import math

import pytest

from judge_transfer_audit.statistics.prediction_powered.budget import width_budget, width_budget_text
from judge_transfer_audit.statistics.prediction_powered.result import CorrectedRow, PredictionPowered


def _row(se: float, human_se: float, imputed: float) -> CorrectedRow:
    return CorrectedRow(
        matchup="a vs b",
        criterion="overall",
        estimand="vote_share",
        estimate=0.6,
        ci_low=0.6 - 1.96 * se,
        ci_high=0.6 + 1.96 * se,
        lam=0.5,
        human_estimate=0.6,
        human_ci_low=0.6 - 1.96 * human_se,
        human_ci_high=0.6 + 1.96 * human_se,
        judge_estimate=0.62,
        judge_ci_low=0.6,
        judge_ci_high=0.64,
        n_pairs_voted=100,
        n_votes=300,
        n_pairs_judge_only=900,
        width_ratio=se / human_se,
        effective_votes=math.nan,
        judge_worth_votes=math.nan,
        se=se,
        human_se=human_se,
        imputed_variance=imputed,
        quantile=1.96,
    )


def _payload(row: CorrectedRow) -> PredictionPowered:
    return PredictionPowered("judge", "random", 0.95, 100, 900, (row,), None, 0)


def test_human_only_votes_follow_the_square_root_law():
    (b,) = width_budget(_payload(_row(0.04, 0.05, 0.00005)), 0.098)
    # human-only: width 2 * 1.96 * 0.05 = 0.196 halves at 4x the pairs: 300 more pairs, 900 more votes
    assert b.pairs_without_judge == pytest.approx(400.0)
    assert b.more_votes_without_judge == pytest.approx(900.0)
    assert b.more_votes_with_judge < b.more_votes_without_judge


def test_a_useless_judge_needs_what_human_only_needs():
    (b,) = width_budget(_payload(_row(0.05, 0.05, 0.0)), 0.098)
    assert b.more_votes_with_judge == b.more_votes_without_judge


def test_text_names_the_matchup_and_both_figures():
    text = width_budget_text(width_budget(_payload(_row(0.04, 0.05, 0.0002)), 0.1), 0.1)
    assert "a vs b / overall" in text and "with the judge" in text and "without" in text


def test_audit_budget_width_option(tmp_path, capsys):
    """`audit budget RESULT --width W` prints the width budget (and says when a result has none)."""
    from dataclasses import replace

    from judge_transfer_audit.cli import main
    from judge_transfer_audit.model.section_result import Computed
    from judge_transfer_audit.results.result import result_to_json
    from tests.reports.synthetic import make_result

    result = make_result(sections=False)
    path = tmp_path / "result.json"
    path.write_text(result_to_json(result), encoding="utf-8")
    assert main(["budget", str(path), "--width", "0.1"]) == 0
    assert "no prediction-powered figures in this result" in capsys.readouterr().out
    with_ppi = replace(result, prediction_powered=Computed(_payload(_row(0.04, 0.05, 0.00005))))
    path.write_text(result_to_json(with_ppi), encoding="utf-8")
    assert main(["budget", str(path), "--width", "0.1"]) == 0
    out = capsys.readouterr().out
    assert "a vs b / overall: now 0.157 (human-only 0.196)" in out
    assert main(["budget", str(path), "--width", "0"]) == 3  # a usage error, as --power 1.5
