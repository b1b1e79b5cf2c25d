"""The named designs of the agreement decision's calibration (audit/verdict/agreement_calibration.py): the
shapes they promise (ties, one vote per pair, vote counts) and a few studies decided (``slow``)."""

from __future__ import annotations

import numpy as np
import pytest

from judge_transfer_audit.verdict.agreement_calibration import (
    NAMED_JUDGES,
    STUDY_DESIGNS,
    calibrate_named,
    simulate_named_study,
)


@pytest.mark.parametrize("name", ["paper", "ties", "arena5k"])
def test_a_named_study_has_the_shape_it_names(name):
    design = STUDY_DESIGNS[name]
    votes, choices = simulate_named_study(design, np.random.default_rng(0))
    assert votes["matchup"].nunique() == design.matchups
    assert votes.groupby("matchup")["criterion"].nunique().eq(design.criteria).all()
    per_pair = votes.groupby(["pair_id", "criterion"]).size()
    assert per_pair.eq(design.n_readers).all()
    ties = votes["y"].isna().mean()
    if name == "ties":
        assert 0.4 < ties < 0.6
    else:
        assert ties == 0.0
    if name == "arena5k":
        assert 4_900 <= len(votes) <= 5_100 and design.n_readers == 1
    for kind in NAMED_JUDGES:
        c = choices[kind]
        assert len(c) == design.matchups * design.criteria * design.n_pairs
        assert c["y_judge"].isin([0.0, 0.5, 1.0]).all()


def test_following_counts_ties_as_a_category():
    votes, choices = simulate_named_study(STUDY_DESIGNS["ties"], np.random.default_rng(1))
    merged = votes.merge(choices["following"], on=["pair_id", "criterion"])
    counts = merged.assign(t=merged["y"].isna(), f=merged["y"].eq(1.0), o=merged["y"].eq(0.0))
    g = counts.groupby(["pair_id", "criterion"]).agg(
        t=("t", "sum"), f=("f", "sum"), o=("o", "sum"), j=("y_judge", "first")
    )
    tie_plurality = g["t"] > g[["f", "o"]].max(axis=1)
    assert (g.loc[tie_plurality, "j"] == 0.5).all() and tie_plurality.any()


@pytest.mark.slow
def test_the_named_designs_fail_the_coin_and_not_the_judges_that_follow_the_readers():
    table = calibrate_named(("paper",), studies=6, seed=5, n_boot=199).set_index("judge")
    for judge in ("following", "majority", "reader-like"):
        assert table.loc[judge, "any_fail"] == 0.0, judge
    for judge in ("coin", "biased", "wrong-side"):
        assert table.loc[judge, "study_fail"] >= 5 / 6, judge
