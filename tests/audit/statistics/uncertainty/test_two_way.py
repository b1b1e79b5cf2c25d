"""Variance-corrected two-way bootstrap: same-draw loop, ANOVA identities, t calibration."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from judge_transfer_audit.statistics.uncertainty._cells import cell_tables
from judge_transfer_audit.statistics.uncertainty.bootstrap import (
    cluster_bootstrap,
    multinomial_weights,
    replicate_rates,
    two_way_replicates,
)
from judge_transfer_audit.statistics.uncertainty.two_way import (
    correct_two_way,
    t_calibrated_level,
    t_calibrated_p_value,
)

from .conftest import make_votes
from .test_bootstrap import _loop_bootstrap


def _reference_correction(est, prod, pairs, readers, n_p, n_r):
    """The correction written out from the formulas in audit/statistics/uncertainty/two_way.py."""
    a_p = n_p / (n_p - 1) * pairs.var(ddof=1)
    a_r = n_r / (n_r - 1) * readers.var(ddof=1)
    a_e = n_p * n_r / ((n_p - 1) * (n_r - 1)) * (prod - pairs - readers).var(ddof=1)
    c_p, c_r = max(a_p - a_e, 0.0), max(a_r - a_e, 0.0)
    v = a_e + c_p + c_r
    df = v**2 / (c_p**2 / (n_p - 1) + c_r**2 / (n_r - 1) + a_e**2 / ((n_p - 1) * (n_r - 1)))
    return est + np.sqrt(v / prod.var(ddof=1)) * (prod - est), v, df


def test_corrected_two_way_equals_loop_with_same_draws():
    votes = make_votes(11, n_pairs=6, n_readers=4, tie_prob=0.1)
    n_boot, seed = 300, 42
    prod = _loop_bootstrap(votes, "two-way-product", n_boot, seed)
    pairs = _loop_bootstrap(votes, "pairs", n_boot, seed, draw_both=True)
    readers = _loop_bootstrap(votes, "readers", n_boot, seed, draw_both=True)
    est = float(votes["y"].mean())
    reps, v, df = _reference_correction(est, prod, pairs, readers, 6, 4)
    tail = scipy.stats.norm.cdf(-scipy.stats.t.ppf(0.975, df))
    lo, hi = np.quantile(reps, [tail, 1 - tail])

    res = cluster_bootstrap(votes, schemes=("two-way",), n_boot=n_boot, intervals=("percentile",), rng=seed)
    row = res.cells.iloc[0]
    assert row["scheme"] == "two-way"
    assert row["se"] == pytest.approx(np.sqrt(v), rel=1e-10)
    assert row["df"] == pytest.approx(df, rel=1e-10)
    assert row["product_scale"] == pytest.approx(np.sqrt(v / prod.var(ddof=1)), rel=1e-10)
    assert (row["ci_low_percentile"], row["ci_high_percentile"]) == pytest.approx((lo, hi), abs=1e-12)
    # the plain product interval is kept under its own name, from the same draws
    both = cluster_bootstrap(votes, schemes=("two-way", "two-way-product"), n_boot=n_boot, rng=seed).cells
    p_row = both[both["scheme"] == "two-way-product"].iloc[0]
    assert p_row["ci_low_percentile"] == pytest.approx(np.quantile(prod, 0.025), abs=1e-12)
    assert np.isnan(p_row["df"]) and np.isnan(p_row["ci_low_cgm"])


def test_product_deviation_is_pairs_plus_readers_plus_interaction_in_a_balanced_cell():
    """One vote per pair x reader, no ties: each product replicate's deviation equals the
    pairs-only plus the readers-only deviation (same weights) plus sum w_i v_r z_ir / (P R),
    z the two-way ANOVA residuals -- the decomposition the correction rests on."""
    v = make_votes(2, n_pairs=9, n_readers=5)
    t = cell_tables(v, ("matchup", "criterion"))[0]
    rng = np.random.default_rng(0)
    wp, wr = multinomial_weights(rng, 9, 400), multinomial_weights(rng, 5, 400)
    est = t.rate
    d = {s: replicate_rates(t.S, t.N, s, wp, wr) - est for s in ("pairs", "readers", "two-way-product")}
    y = t.S
    z = y - y.mean(1, keepdims=True) - y.mean(0, keepdims=True) + y.mean()
    interaction = np.einsum("bi,br,ir->b", wp, wr, z) / y.size
    np.testing.assert_allclose(d["two-way-product"], d["pairs"] + d["readers"] + interaction, atol=1e-12)


def test_corrected_components_match_anova_mean_squares():
    """With many replicates the corrected components converge to the classical two-way ANOVA
    estimates (statsmodels ``anova_lm`` mean squares): A_e = MS_resid / (P R),
    pair component = max(MS_pair - MS_resid, 0) / (P R), same for readers."""
    import statsmodels.api as sm
    import statsmodels.formula.api as smf

    v = make_votes(8, n_pairs=20, n_readers=7, sd_pair=0.8, sd_reader=0.8)
    table = sm.stats.anova_lm(smf.ols("y ~ C(pair_id) + C(reader_id)", data=v).fit())
    ms = table["mean_sq"]
    n = len(v)
    t = cell_tables(v, ("matchup", "criterion"))[0]
    rng = np.random.default_rng(1)
    corr = two_way_replicates(t.S, t.N, multinomial_weights(rng, 20, 40_000), multinomial_weights(rng, 7, 40_000))
    assert corr.residual_component == pytest.approx(ms["Residual"] / n, rel=0.04)
    assert corr.pair_component == pytest.approx(max(ms["C(pair_id)"] - ms["Residual"], 0) / n, rel=0.08, abs=1e-5)
    assert corr.reader_component == pytest.approx(max(ms["C(reader_id)"] - ms["Residual"], 0) / n, rel=0.08, abs=1e-5)
    assert corr.variance < corr.variance_product


@pytest.mark.parametrize("seed", range(6))
def test_corrected_two_way_bounds(seed):
    """V >= P/(P-1) V_pairs and R/(R-1) V_readers, and min(df_k) <= df <= sum(df_k)."""
    v = make_votes(seed, n_pairs=12, n_readers=5, sd_pair=0.5 * (seed % 3), sd_reader=0.4 * (seed % 2))
    c = cluster_bootstrap(v, n_boot=500, rng=seed).cells.set_index("scheme")
    assert c.loc["two-way", "se"] ** 2 >= 12 / 11 * c.loc["pairs", "se"] ** 2 - 1e-15
    assert c.loc["two-way", "se"] ** 2 >= 5 / 4 * c.loc["readers", "se"] ** 2 - 1e-15
    assert 4 - 1e-9 <= c.loc["two-way", "df"] <= 11 + 4 + 44 + 1e-9
    assert c.loc["two-way", "ci_low_percentile"] <= c.loc["two-way", "rate"] <= c.loc["two-way", "ci_high_percentile"]


def test_t_calibration_of_levels_and_p_values():
    assert t_calibrated_level(0.95, float("inf")) == 0.95
    assert t_calibrated_level(0.9, float("nan")) == 0.9
    lvl = t_calibrated_level(0.95, 6.0)
    assert scipy.stats.norm.ppf(0.5 + lvl / 2) == pytest.approx(scipy.stats.t.ppf(0.975, 6), rel=1e-12)
    assert t_calibrated_p_value(0.05, float("inf")) == 0.05
    assert t_calibrated_p_value(2 * scipy.stats.norm.sf(1.7), 6.0) == pytest.approx(2 * scipy.stats.t.sf(1.7, 6))
    # the two-way p-value agrees with its interval about the null
    votes = make_votes(6, n_matchups=3, n_criteria=4, n_pairs=20, n_readers=7, b0=0.35)
    c = cluster_bootstrap(votes, n_boot=4000, rng=2).cells
    tw = c[c["scheme"] == "two-way"]
    excludes = (tw["ci_low_percentile"] > 0.5) | (tw["ci_high_percentile"] < 0.5)
    clear = (tw["p_value"] - 0.05).abs() > 0.005
    assert ((tw["p_value"] < 0.05) == excludes)[clear].all()


def test_constant_votes_give_zero_width_not_nan():
    corr = correct_two_way(1.0, np.ones(50), np.ones(50), np.ones(50), 5, 3)
    assert corr.variance == 0.0 and corr.scale == 0.0 and np.all(corr.replicates == 1.0)
    short = correct_two_way(0.5, np.array([0.5]), np.array([0.5]), np.array([0.5]), 5, 3)
    assert np.isnan(short.variance)


def test_bca_of_corrected_replicates_is_the_rescaled_product_bca():
    """z0 and the acceleration do not change under rescaling around the estimate, so the
    corrected BCa interval is the product BCa read at the t-calibrated level, rescaled."""
    votes = make_votes(3, n_pairs=15, n_readers=6)
    c = cluster_bootstrap(votes, schemes=("two-way", "two-way-product"), n_boot=3000, rng=4).cells.set_index("scheme")
    tw, pr = c.loc["two-way"], c.loc["two-way-product"]
    assert tw["z0"] == pytest.approx(pr["z0"]) and tw["acceleration"] == pytest.approx(pr["acceleration"])
    assert isinstance(c, pd.DataFrame) and tw["ci_low_bca"] < tw["rate"] < tw["ci_high_bca"]
