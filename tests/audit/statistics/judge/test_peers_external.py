"""The judge sections on MT-Bench (marker ``external``): judge agreement with intervals, the
configurations ranked, the six-system leaderboard. Converted into pytest's tmp directory."""

from __future__ import annotations

import numpy as np
import pytest

from judge_transfer_audit.engine.pipeline import judge_choices
from judge_transfer_audit.inputs import load_audit_data
from judge_transfer_audit.model.tie_rules import EVEN_SPLIT
from judge_transfer_audit.verdict.judge_side import judge_pair_outcomes

pytestmark = pytest.mark.external


@pytest.fixture(scope="module")
def mtbench(converted_datasets):
    d = converted_datasets / "mtbench"
    data = load_audit_data(d / "judge.csv", d / "humans.csv", pairs=d / "pairs.csv")
    outcomes = judge_pair_outcomes(data, EVEN_SPLIT, np.random.default_rng(0))
    return data, {j: judge_choices(outcomes, j, data.criteria) for j in data.judges}


def test_alpha_difference_with_interval(mtbench):
    """Judge-human minus human-human alpha of gpt-4o over all 120 pairs, expected disagreement
    taken within each of the 5 matchups: -0.324 [-0.568, -0.081]. Another package gives -0.185
    [-0.336, -0.052], its alpha taking chance from the shares pooled over matchups as oriented
    (model_a focal); with gpt-3.5-turbo focal everywhere that figure is -0.200. Within-matchup
    chance does not depend on the orientation, and is stricter: knowing which system
    of a matchup usually wins earns nothing."""
    from judge_transfer_audit.statistics.judge.agreement import judge_agreement

    data, choices = mtbench
    row = judge_agreement(data.votes, choices["gpt-4o"], n_boot=2000, rng=0).row()
    assert row.alpha_difference.estimate == pytest.approx(-0.324, abs=5e-4)
    assert row.alpha_difference.ci_low < -0.324 < row.alpha_difference.ci_high < 0
    assert row.scheme == "two-way" and row.n_pairs == 120 and row.n_readers == 3
    assert 0.2 < row.kappa_majority.estimate < 0.4


def test_agreement_does_not_move_with_the_orientation(mtbench):
    """Swapping focal and other in two of the five matchups changes no estimate."""
    from judge_transfer_audit.statistics.judge.agreement import judge_agreement

    data, choices = mtbench
    votes, choice = data.votes, choices["gpt-4o"]
    flip = sorted(votes["matchup"].unique())[:2]
    v = votes["matchup"].isin(flip)
    flipped_votes = votes.assign(y=np.where(v, 1.0 - votes["y"], votes["y"]))
    pairs = set(votes.loc[v, "pair_id"])
    j = choice["pair_id"].isin(pairs)
    flipped_choice = choice.assign(y_judge=np.where(j, 1.0 - choice["y_judge"], choice["y_judge"]))
    a = judge_agreement(votes, choice, n_boot=0).to_frame()
    b = judge_agreement(flipped_votes, flipped_choice, n_boot=0).to_frame()
    cols = ["kappa_majority", "kappa_readers", "alpha_judge_human", "alpha_human", "alpha_difference"]
    np.testing.assert_allclose(a[cols].to_numpy(float), b[cols].to_numpy(float), atol=1e-12)


def test_configurations_ranked_and_panel(mtbench):
    from judge_transfer_audit.verdict.judge_configurations import rank_judge_configurations

    data, choices = mtbench
    configs = rank_judge_configurations(data.votes, choices, n_boot=0, rng=0)
    assert configs.selected == "gpt-4o" and len(configs.rows) == 6
    assert 1.0 < configs.effective.nyholt < 6.0
    assert set(configs.dawid_skene.accuracy) == set(data.judges)


def test_six_system_leaderboard(mtbench):
    from judge_transfer_audit.statistics.leaderboard.fit import bradley_terry_leaderboard

    data, choices = mtbench
    board = bradley_terry_leaderboard(data.votes, choices["gpt-4o"], pairs=data.pairs, n_boot=30, rng=0)
    assert board.connected and len(board.systems) == 6 and board.cluster == "group"
    assert board.systems[0].system == "gpt-4"  # the humans' strongest system
    assert -1.0 <= board.kendall_tau.ci_low <= board.kendall_tau.estimate <= board.kendall_tau.ci_high <= 1.0
