"""The majority rate's profile interval: its region against a brute-force profile, its
boundary at tau^2 = 0, its fallbacks, and (slow) its coverage on a seeded crossed design."""

from __future__ import annotations

import math

import numpy as np
import pytest

from judge_transfer_audit.statistics.estimands import beta_upper_tail
from judge_transfer_audit.statistics.prediction_powered.majority import (
    majority_rate_interval,
    pivots,
    profile_region_slices,
    satterthwaite_quantile,
)

Z = 1.959963984540054


def _cov(sd_v: float, sd_e2: float, rho: float) -> np.ndarray:
    return np.array([[sd_v**2, rho * sd_v * sd_e2], [rho * sd_v * sd_e2, sd_e2**2]])


def _brute_force(mean, cov, within, n_pairs=None, grid=1200, scale_v=1.0, scale_t=1.0):
    """The profile region's M range on a dense (V, tau^2) grid, W from the same pivots."""
    piv = pivots(mean, cov, within, n_pairs, scale_v=scale_v, scale_t=scale_t)
    v = np.linspace(1e-6, 1 - 1e-6, grid)[:, None]
    tau2 = np.linspace(0.0, 1.0, grid)[None, :] * v * (1 - v)
    x1 = np.broadcast_to(piv.x_v(v), tau2.shape)
    x2 = piv.x_total(tau2 + within)
    w = (x1**2 - 2 * piv.rho * x1 * x2 + x2**2) / (1 - piv.rho**2)
    inside = w <= w.min() + Z**2
    vv = np.broadcast_to(v, tau2.shape)[inside]
    m = beta_upper_tail(vv, tau2[inside])
    return float(m.min()), float(m.max()), float(w.min())


@pytest.mark.parametrize(
    ("mean", "cov", "within"),
    [
        # an estimate well inside: V 0.72, tau^2 0.03, 60 pairs x 12 readers
        ((0.72, 0.72**2 + 0.03), _cov(0.035, 0.05, 0.97), 0.015),
        # tau^2 estimated at 0.005: the region reaches tau^2 = 0
        ((0.80, 0.80**2 + 0.005), _cov(0.05, 0.08, 0.95), 0.05),
        # near V = 1/2, where M moves with V
        ((0.48, 0.48**2 + 0.04), _cov(0.04, 0.04, 0.5), 0.03),
    ],
)
@pytest.mark.parametrize(("q_v", "q_t"), [(Z, Z), (3.1, 2.2)])
def test_region_matches_a_brute_force_profile(mean, cov, within, q_v, q_t):
    lo, hi = majority_rate_interval(mean, cov, within, quantile_v=q_v, quantile_t=q_t, n_pairs=40)
    blo, bhi, _ = _brute_force(mean, cov, within, n_pairs=40, scale_v=q_v / Z, scale_t=q_t / Z)
    # the grid's resolution: 1/1200 of the range of V and of tau^2
    assert lo == pytest.approx(blo, abs=3e-3)
    assert hi == pytest.approx(bhi, abs=3e-3)


def test_estimate_below_the_boundary_measures_the_region_from_the_nearest_admissible_point():
    """E[p^2] below V^2 + within's reach: the best fit sits at tau^2 = 0 and W's minimum is > 0."""
    mean = (0.8, 0.8**2 - 0.049)  # tau^2 estimated at -0.049 with within 0.05: T = 0.001
    cov = _cov(0.04, 0.06, 0.9)
    piv = pivots(mean, cov, 0.05, 30)
    _, _, _, w_min = profile_region_slices(piv, 0.95)
    blo, bhi, bw_min = _brute_force(mean, cov, 0.05, n_pairs=30)
    assert w_min > 0.5
    assert w_min == pytest.approx(bw_min, rel=0.02)
    lo, hi = majority_rate_interval(mean, cov, 0.05, n_pairs=30)
    assert hi == 1.0  # tau^2 = 0 with V > 1/2: every pair's majority for the focal system
    assert lo == pytest.approx(blo, abs=3e-3)


def test_boundary_is_reached_only_when_tau2_is_near_zero_against_its_error():
    cov = _cov(0.01, 0.015, 0.95)
    near = majority_rate_interval((0.75, 0.75**2 + 0.002), cov, 0.01, n_pairs=60)
    far = majority_rate_interval((0.75, 0.75**2 + 0.04), cov, 0.01, n_pairs=60)
    assert near[1] == 1.0
    assert far[1] < 1.0
    assert far[0] < float(beta_upper_tail(np.array(0.75), np.array(0.04))) < far[1]


def test_larger_quantiles_widen_the_interval():
    args = ((0.7, 0.7**2 + 0.03), _cov(0.04, 0.055, 0.95), 0.02)
    lo1, hi1 = majority_rate_interval(*args, n_pairs=40)
    lo2, hi2 = majority_rate_interval(*args, quantile_v=3.0, n_pairs=40)
    lo3, hi3 = majority_rate_interval(*args, quantile_t=3.0, n_pairs=40)
    assert lo2 < lo1 and hi2 >= hi1
    assert lo3 < lo1 and hi3 >= hi1


def test_satterthwaite_quantile():
    from scipy.stats import t

    # one part: the t on its degrees of freedom; two equal parts on 9 and 2 df: 4 / (1/9 + 1/2)
    assert satterthwaite_quantile((1.0, 0.0), (9.0, 2.0)) == pytest.approx(t.ppf(0.975, 9))
    assert satterthwaite_quantile((1.0, 1.0), (9.0, 2.0)) == pytest.approx(t.ppf(0.975, 4 / (1 / 9 + 1 / 2)))
    # a part without degrees of freedom (no readers) is left out; nothing at all: the normal one
    assert satterthwaite_quantile((1.0, 0.0), (19.0, -1.0)) == pytest.approx(t.ppf(0.975, 19))
    assert satterthwaite_quantile((0.0, 0.0), (19.0, 2.0)) == pytest.approx(Z)


@pytest.mark.parametrize(
    ("mean", "cov", "within"),
    [
        ((1.0, 1.0), np.zeros((2, 2)), 0.0),  # every vote for the focal system
        ((0.7, 0.48), _cov(0.04, 0.05, 0.9), 0.0),  # the pairs' shares vary less than V's error alone
        ((0.7, 0.52), np.array([[np.nan, 0.0], [0.0, 1.0]]), 0.01),
    ],
)
def test_degenerate_inputs_return_none(mean, cov, within):
    assert majority_rate_interval(mean, cov, within) is None


def test_unanimous_pairs_fall_back_to_wilsons_interval_at_the_voted_pairs():
    from judge_transfer_audit.statistics.prediction_powered.compute import majority_ppi, wilson_interval
    from judge_transfer_audit.statistics.prediction_powered.estimators import ppi_mean

    n, readers = 20, 3
    pair = np.repeat(np.arange(n), readers)
    reader = np.tile(np.arange(readers), n)
    credit = np.ones(n * readers)
    f = np.ones(n)
    fu = np.ones(40)
    share = ppi_mean(credit, pair, f, fu, reader_of_vote=reader)
    m, lo, hi, *_ = majority_ppi(credit, pair, reader, f, fu, share, 0.95)
    assert m == 1.0
    assert (lo, hi) == pytest.approx(wilson_interval(1.0, 1.0, 0.0, n, Z))


def _study(rng, n_voted, readers, fraction, quality, b0, sd_reader):
    """One seeded crossed study: pairs' logits b0 + u, readers' leniency v, the judge a noisy side."""
    from judge_transfer_audit.statistics.prediction_powered.compute import majority_ppi
    from judge_transfer_audit.statistics.prediction_powered.estimators import ppi_mean

    n_total = int(round(n_voted / fraction))
    u = rng.normal(0.0, 1.0, n_total)
    v = rng.normal(0.0, sd_reader, readers)
    sees = rng.uniform(size=n_total) < 2.0 * quality - 1.0
    f = np.where(sees, b0 + u + rng.normal(0.0, 0.5, n_total) > 0, rng.uniform(size=n_total) < 0.5).astype(float)
    voted = rng.permutation(n_total)[:n_voted]
    unl = np.setdiff1d(np.arange(n_total), voted)
    pair = np.repeat(np.arange(n_voted), readers)
    reader = np.tile(np.arange(readers), n_voted)
    p = 1.0 / (1.0 + np.exp(-(b0 + u[voted][pair] + v[reader])))
    credit = (rng.uniform(size=len(p)) < p).astype(float)
    share = ppi_mean(credit, pair, f[voted], f[unl], reader_of_vote=reader)
    return majority_ppi(credit, pair, reader, f[voted], f[unl], share, 0.95)


@pytest.mark.slow
@pytest.mark.parametrize(("b0", "sd_reader"), [(1.2, 0.6), (0.4, 0.3)])
def test_coverage_smoke(b0, sd_reader):
    """400 seeded studies of 40 voted pairs x 6 readers, 20% voted, a helpful judge: the
    corrected and the human-only intervals cover the true majority rate Phi(b0) 90-99% of the
    time (Monte Carlo standard error about 0.011)."""
    from judge_transfer_audit.statistics.distributions import norm

    true = float(norm.cdf(b0))
    rng = np.random.default_rng(2024)
    cover = human = 0
    studies = 400
    for _ in range(studies):
        m, lo, hi, _, hm, hlo, hhi, _, _ = _study(rng, 40, 6, 0.2, 0.85, b0, sd_reader)
        cover += lo <= true <= hi
        human += hlo <= true <= hhi
    assert 0.90 <= cover / studies <= 0.99
    assert 0.90 <= human / studies <= 0.99
    assert math.isfinite(m) and math.isfinite(hm)
