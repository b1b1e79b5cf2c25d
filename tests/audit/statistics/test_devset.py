"""Tests of judge_transfer_audit.statistics.devset.dev_validity."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.core.serialize import from_jsonable, to_jsonable
from judge_transfer_audit.statistics.devset import DevValidity, dev_validity


def simulate(seed=0, n_items=40, criteria=("authenticity", "empathy"), strengths=(0.3, 0.3, 0.3, 0.3), n_readers=3):
    rng = np.random.default_rng(seed)
    judge, humans = [], []
    for i in range(n_items):
        for c in criteria:
            truth = rng.normal()
            for r in range(n_readers):
                humans.append(dict(item_id=f"i{i}", reader_id=f"r{r}", criterion=c, rating=truth + rng.normal()))
            for j, s in enumerate(strengths):
                judge.append(dict(item_id=f"i{i}", criterion=c, judge=f"cfg{j}", score=s * truth + rng.normal()))
    return pd.DataFrame(judge), pd.DataFrame(humans)


def test_spearman_per_configuration_by_hand():
    judge, humans = simulate()
    dv = dev_validity(judge, humans, rng=0)
    means = humans.groupby(["criterion", "item_id"])["rating"].mean()
    scores = judge[judge.judge == "cfg2"].set_index(["criterion", "item_id"])["score"]
    expected = stats.spearmanr(scores.loc["empathy"].sort_index(), means.loc["empathy"].sort_index()).statistic
    row = dv.correlations.set_index(["judge", "criterion"]).loc[("cfg2", "empathy")]
    assert row["spearman"] == pytest.approx(expected) and row["n_items"] == 40


def test_routing_picks_the_best_in_sample():
    judge, humans = simulate(seed=4)
    dv = dev_validity(judge, humans, rng=0)
    for row in dv.routing.itertuples():
        corr = dv.correlations[dv.correlations.criterion == row.criterion].set_index("judge")["spearman"]
        assert row.selected_judge == corr.idxmax()
        assert row.in_sample_spearman == pytest.approx(corr.max())
    assert dv.selection_shares_data and "share data" in dv.warning


def test_out_of_fold_selection_uses_training_folds_only():
    judge, humans = simulate(seed=5)
    dv = dev_validity(judge, humans, k=4, repeats=3, rng=11)
    means = humans.groupby(["criterion", "item_id"])["rating"].mean()
    wide = judge.pivot_table(index=["criterion", "item_id"], columns="judge", values="score")
    assert len(dv.fold_selection) == 3 * 4 * wide.index.get_level_values(0).nunique()
    for row in dv.fold_selection.itertuples():
        split = dv.fold_assignment[dv.fold_assignment["repeat"] == row.repeat]
        fold_of = split.set_index("item_id")["fold"]
        sub = wide.loc[row.criterion]
        train = sub[sub.index.map(fold_of) != row.fold]
        rhos = {j: stats.spearmanr(train[j], means.loc[row.criterion].loc[train.index]).statistic for j in sub}
        assert row.selected_judge == max(rhos, key=rhos.get)
        assert row.training_spearman == pytest.approx(max(rhos.values()))
    for _, split in dv.fold_assignment.groupby("repeat"):
        assert sorted(split["fold"].value_counts()) == [10, 10, 10, 10]
    splits = [tuple(s["fold"]) for _, s in dv.fold_assignment.groupby("repeat")]
    assert len(set(splits)) == 3  # independent splits


def test_repeated_splits_are_averaged():
    judge, humans = simulate(seed=6)
    dv = dev_validity(judge, humans, k=5, repeats=4, rng=2)
    assert dv.repeats == 4 and len(dv.oof_pooled_by_repeat) == 4
    assert dv.oof_pooled == pytest.approx(np.mean(dv.oof_pooled_by_repeat))
    assert dv.optimism_pooled == pytest.approx(dv.routed_in_sample_pooled - dv.oof_pooled)
    assert (dv.routing["folds_agreeing"] <= 4 * 5).all()
    single = dev_validity(judge, humans, k=5, repeats=1, rng=2)
    assert single.oof_pooled == single.oof_pooled_by_repeat[0]
    assert "repeated 4 times" in str(dv) and "splits" in str(dv)
    with pytest.raises(InputError, match="repeats must be"):
        dev_validity(judge, humans, repeats=0)


@pytest.mark.slow
def test_selection_on_noise_is_optimistic_on_average():
    """All configurations equally weak: the in-sample winner is a winner's-curse estimate."""
    optimism = [
        dev_validity(*simulate(seed=s, n_items=30, criteria=("c",), strengths=(0.2,) * 6), rng=s).optimism_mean
        for s in range(12)
    ]
    assert np.mean(optimism) > 0.05


def test_a_dominant_configuration_is_stable():
    judge, humans = simulate(seed=2, strengths=(0.1, 2.0, 0.1))
    dv = dev_validity(judge, humans, k=5, rng=1)
    assert (dv.routing["selected_judge"] == "cfg1").all() and (dv.routing["folds_agreeing"] == 5 * dv.repeats).all()
    assert abs(dv.optimism_pooled) < 0.05


def test_seed_recorded_and_reproducible():
    judge, humans = simulate()
    a, b = dev_validity(judge, humans, rng=7), dev_validity(judge, humans, rng=7)
    assert a.seed == 7 and a.oof_pooled == b.oof_pooled
    assert dev_validity(judge, humans, rng=None).seed is not None


def test_exclusions_and_averaging_are_counted():
    judge, humans = simulate(n_items=12)
    judge = pd.concat([judge, judge.iloc[[0]].assign(score=judge.iloc[0]["score"] + 1.0)])
    humans = pd.concat([humans, pd.DataFrame([dict(item_id="extra", reader_id="r0", criterion="empathy", rating=3.0)])])
    dv = dev_validity(judge, humans, k=3, rng=0)
    assert dv.n_scores_averaged == 2 and dv.n_units_excluded == 1 and dv.n_items == 24


def test_bad_input():
    judge, humans = simulate(n_items=6)
    with pytest.raises(InputError, match="missing column"):
        dev_validity(judge.drop(columns="judge"), humans)
    with pytest.raises(InputError, match="k must be"):
        dev_validity(judge, humans, k=1)
    with pytest.raises(InputError, match="no item x criterion"):
        dev_validity(judge.assign(item_id="other"), humans)
    typo = judge.astype({"score": object})
    typo.loc[3, "score"] = "4,5"
    with pytest.raises(InputError, match="line 5.*score"):
        dev_validity(typo, humans)
    infinite = humans.astype({"rating": object})
    infinite.loc[0, "rating"] = float("inf")
    with pytest.raises(InputError, match="dev_humans.*rating"):
        dev_validity(judge, infinite)
    no_reader = humans.astype({"reader_id": object})
    no_reader.loc[4, "reader_id"] = None
    with pytest.raises(InputError, match="line 6, column 'reader_id'"):
        dev_validity(judge, no_reader)


def test_round_trip_and_str():
    judge, humans = simulate(n_items=15)
    dv = dev_validity(judge, humans, k=3, rng=2)
    back = from_jsonable(DevValidity, json.loads(json.dumps(to_jsonable(dv))))
    pd.testing.assert_frame_equal(back.routing, dv.routing)
    assert back.oof_pooled == dv.oof_pooled and back.seed == 2
    assert "WARNING" in str(dv)


@pytest.mark.parametrize("seed", range(6))
def test_spearman_equals_scipy_bit_for_bit(seed):
    """The in-house Spearman (average ranks, np.corrcoef, Student's t) gives scipy's spearmanr
    statistic and p-value exactly, with ties, NaN pairs left out, and the undefined cases."""
    from judge_transfer_audit.statistics.devset import _spearman

    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 60))
    x = rng.integers(0, 6, n).astype(float) if seed % 2 else rng.normal(size=n)
    y = x * rng.uniform(-1, 1) + rng.integers(0, 4, n)
    x[rng.random(n) < 0.1] = np.nan
    ok = ~(np.isnan(x) | np.isnan(y))
    rho, p = _spearman(x, y)
    want = stats.spearmanr(x[ok], y[ok])
    assert (rho, p) == (float(want.statistic), float(want.pvalue))
    assert np.isnan(_spearman(np.ones(5), np.arange(5.0))).all()
    assert np.isnan(_spearman(np.arange(2.0), np.arange(2.0))).all()
