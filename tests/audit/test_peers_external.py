"""Issue 17 on MT-Bench (marker ``external``): judge agreement with intervals, the
configurations ranked, the six-system leaderboard. Converted into pytest's tmp directory."""

from __future__ import annotations

import numpy as np
import pytest

from audit.data import load_audit_data
from audit.judge_side import judge_pair_outcomes
from audit.pipeline import judge_choices

pytestmark = pytest.mark.external


@pytest.fixture(scope="module")
def mtbench(converted_datasets):
    d = converted_datasets / "mtbench"
    data = load_audit_data(d / "judge.csv", d / "humans.csv", pairs=d / "pairs.csv")
    outcomes = judge_pair_outcomes(data, "even-split", np.random.default_rng(0))
    return data, {j: judge_choices(outcomes, j, data.criteria) for j in data.judges}


@pytest.mark.xfail(strict=True, reason="the pooled alpha over matchups depends on which system is focal: since the orientation rule changed (gpt-3.5-turbo focal everywhere) it is -0.200, not the -0.185 of the native model_a orientation; judge_agreement must pool within matchup (chance per matchup), issue 12 item 6")
def test_alpha_difference_with_interval(mtbench):
    """Judge-human minus human-human alpha of gpt-4o over all 120 pairs: -0.185, the figure
    issue 17 quotes from another package (its interval, [-0.336, -0.052], comes from a
    prompt-cluster bootstrap; ours resamples pairs and the 3 readers, so it is wider)."""
    from audit.judge_agreement import judge_agreement

    data, choices = mtbench
    row = judge_agreement(data.votes, choices["gpt-4o"], n_boot=2000, rng=0).row()
    assert row.alpha_difference.estimate == pytest.approx(-0.185, abs=5e-4)
    assert row.alpha_difference.ci_low < -0.185 < row.alpha_difference.ci_high
    assert row.scheme == "two-way" and row.n_pairs == 120 and row.n_readers == 3
    assert 0.55 < row.kappa_majority.estimate < 0.7


def test_configurations_ranked_and_panel(mtbench):
    from audit.judge_configurations import rank_judge_configurations

    data, choices = mtbench
    configs = rank_judge_configurations(data.votes, choices, n_boot=0, rng=0)
    assert configs.selected == "gpt-4o" and len(configs.rows) == 6
    assert 1.0 < configs.effective.nyholt < 6.0
    assert set(configs.dawid_skene.accuracy) == set(data.judges)


def test_six_system_leaderboard(mtbench):
    from audit.leaderboard import bradley_terry_leaderboard

    data, choices = mtbench
    board = bradley_terry_leaderboard(data.votes, choices["gpt-4o"], pairs=data.pairs, n_boot=30, rng=0)
    assert board.connected and len(board.systems) == 6 and board.cluster == "group"
    assert board.systems[0].system == "gpt-4"  # the humans' strongest system
    assert -1.0 <= board.kendall_tau.ci_low <= board.kendall_tau.estimate <= board.kendall_tau.ci_high <= 1.0
