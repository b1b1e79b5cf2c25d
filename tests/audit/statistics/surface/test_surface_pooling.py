"""The pooled surface scope does not depend on which system of each matchup is focal:
pair differences centred within matchups, one GLMM intercept per matchup."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from judge_transfer_audit.statistics.surface import POOLED, surface_associations
from tests.audit.statistics.surface.test_surface import make_data


def _flip(pairs, votes, matchup):
    m = pairs["matchup"] == matchup
    pairs = pairs.copy()
    pairs.loc[m, ["focal", "other"]] = pairs.loc[m, ["other", "focal"]].to_numpy()
    flipped = set(pairs.loc[m, "pair_id"])
    votes = votes.copy()
    v = votes["pair_id"].isin(flipped)
    votes.loc[v, "y"] = 1.0 - votes.loc[v, "y"]
    return pairs, votes


@pytest.fixture(scope="module")
def two_ways():
    feats, scores, pairs, votes = make_data(n_pairs=16, human_weight=0.8, seed=4, matchups=("a vs b", "c vs d"))
    fp, fv = _flip(pairs, votes, "c vs d")
    a = surface_associations(feats, scores, pairs, votes, n_boot=0)
    b = surface_associations(feats, scores, fp, fv, n_boot=0)
    return (feats, scores, pairs, votes), a, b


def test_pooled_within_pair_beta_is_orientation_free(two_ways):
    _, a, b = two_ways
    pa, pb = (r.within_pair[r.within_pair["scope"] == POOLED].reset_index(drop=True) for r in (a, b))
    np.testing.assert_allclose(pa["beta"], pb["beta"], rtol=1e-10)
    np.testing.assert_allclose(pa["slope"], pb["slope"], rtol=1e-10)
    ca, cb = (r.correlations[r.correlations["scope"] == POOLED].reset_index(drop=True) for r in (a, b))
    np.testing.assert_allclose(ca["pearson_r"], cb["pearson_r"], rtol=1e-12)


def test_pooled_human_glmm_slope_is_orientation_free(two_ways):
    _, a, b = two_ways
    ha, hb = (r.humans[r.humans["scope"] == POOLED].reset_index(drop=True) for r in (a, b))
    np.testing.assert_allclose(ha["coef"], hb["coef"], atol=1e-5)
    np.testing.assert_allclose(ha["pair_share_r"], hb["pair_share_r"], rtol=1e-10)
    assert (ha["coef"].abs() > 0).all()


def test_pooled_beta_equals_ols_with_one_intercept_per_matchup(two_ways):
    (feats, scores, pairs, _), a, _ = two_ways
    f = feats.set_index(["pair_id", "system"])["style"]
    s = scores[scores["criterion"] == "depth"].set_index(["pair_id", "system"])["score"]
    dF = np.array([f[(p, fo)] - f[(p, ot)] for p, fo, ot in zip(pairs["pair_id"], pairs["focal"], pairs["other"])])
    dS = np.array([s[(p, fo)] - s[(p, ot)] for p, fo, ot in zip(pairs["pair_id"], pairs["focal"], pairs["other"])])
    dummies = pd.get_dummies(pairs["matchup"]).to_numpy(float)
    # Frisch-Waugh: the slope of dS on dF with matchup intercepts, on standardised residuals
    rF = sm.OLS(dF, dummies).fit().resid
    rS = sm.OLS(dS, dummies).fit().resid
    expected = sm.OLS(rS / rS.std(), rF / rF.std()).fit().params[0]
    row = a.within_pair.query("scope == @POOLED and criterion == 'depth' and feature == 'style'").iloc[0]
    assert row["beta"] == pytest.approx(expected, rel=1e-10)
    assert row["slope"] == pytest.approx(sm.OLS(dS, np.column_stack([dummies, dF])).fit().params[-1], rel=1e-10)
