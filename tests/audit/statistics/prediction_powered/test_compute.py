"""The majority rate's interval: Wilson's score interval (the fallback when the pairs' covariance
is degenerate) and the section's profile interval."""

from __future__ import annotations

import math

import numpy as np
import pytest

from judge_transfer_audit.statistics.prediction_powered.compute import wilson_interval

Z = 1.959963984540054


@pytest.mark.parametrize(
    ("successes", "n", "expected"),
    [
        # statsmodels.stats.proportion.proportion_confint(13, 20, method="wilson") (statsmodels 0.14)
        (13, 20, (0.43285427668523624, 0.818808175898918)),
        # proportion_confint(20, 20, method="wilson"): a rate at 1 still gets a lower bound
        (20, 20, (0.8388748419471804, 1.0)),
    ],
)
def test_binomial_spread_gives_wilsons_interval(successes, n, expected):
    p = successes / n
    sd = math.sqrt(p * (1 - p) / n)
    lo, hi = wilson_interval(p, p, sd, n, Z)
    assert (lo, hi) == pytest.approx(expected, abs=1e-12)


def test_effective_pairs_are_at_most_the_pairs():
    """A spread smaller than the pairs allow (or none at all) counts as the pairs themselves."""
    assert wilson_interval(0.65, 0.65, 1e-9, 20, Z) == wilson_interval(0.65, 0.65, math.sqrt(0.65 * 0.35 / 20), 20, Z)
    assert wilson_interval(1.0, 1.0, 0.0, 20, Z) == pytest.approx((20 / (20 + Z * Z), 1.0))


@pytest.mark.parametrize("estimate", [0.0, 0.05, 0.5, 0.7, 0.97, 1.0])
def test_interval_contains_the_estimate_and_reaches_toward_one_half(estimate):
    lo, hi = wilson_interval(estimate, estimate, 0.1, 50, Z)
    assert 0.0 <= lo <= estimate <= hi <= 1.0
    centre = (lo + hi) / 2
    assert abs(centre - 0.5) <= abs(estimate - 0.5) + 1e-12


def _crossed_votes(seed: int, n: int, readers: int, b0: float):
    """Every reader votes on every pair: (rng, the pairs' shares, pair and reader of each vote, its credit)."""
    rng = np.random.default_rng(seed)
    p = 1 / (1 + np.exp(-(b0 + rng.normal(0, 1, n))))
    pair = np.repeat(np.arange(n), readers)
    reader = np.tile(np.arange(readers), n)
    credit = (rng.uniform(size=n * readers) < p[pair]).astype(float)
    return rng, p, pair, reader, credit


def test_section_majority_interval_is_the_profile_interval():
    from judge_transfer_audit.statistics.prediction_powered.compute import majority_ppi
    from judge_transfer_audit.statistics.prediction_powered.estimators import ppi_mean
    from judge_transfer_audit.statistics.prediction_powered.majority import (
        majority_rate_interval,
        satterthwaite_quantile,
    )

    rng, p, pair, reader, credit = _crossed_votes(5, 30, 6, 0.4)
    n, readers = 30, 6
    f = (p > 0.5).astype(float)
    fu = (rng.uniform(size=200) < 0.6).astype(float)
    share = ppi_mean(credit, pair, f, fu, reader_of_vote=reader)
    m, lo, hi, _, hm, hlo, hhi, se, hse = majority_ppi(credit, pair, reader, f, fu, share, 0.95)
    assert lo <= m <= hi and hlo <= hm <= hhi
    # the human-only interval by hand: the two means, their pair-clustered covariance plus the
    # readers' shift of V and of E[p^2] (2 V times it plus tau^2's change at a fixed Beta
    # concentration), V's pivot on the vote share's quantile, T's on Satterthwaite's t
    h = np.bincount(pair, weights=credit) / readers
    s2 = np.bincount(pair, weights=(credit - h[pair]) ** 2) / (readers - 1)
    q = h**2 - s2 / readers
    m1, m2 = h.mean(), q.mean()
    r = np.stack([h - m1, q - m2]) / n
    d = 2 * m1 + (m2 - m1**2) * (1 - 2 * m1) / (m1 * (1 - m1))
    cov_pairs = r @ r.T
    cov = cov_pairs + share.reader_variance * np.array([[1, d], [d, d * d]])
    var_t_pairs = cov_pairs[1, 1] - 4 * m1 * cov_pairs[0, 1] + 4 * m1 * m1 * cov_pairs[0, 0]
    var_t_readers = share.reader_variance * (d - 2 * m1) ** 2
    q_t = satterthwaite_quantile((var_t_pairs, var_t_readers), (n - 1, readers - 1))
    expected = majority_rate_interval(
        (m1, m2),
        cov,
        float(np.mean(s2 / readers)),
        quantile_v=share.human_quantile,
        quantile_t=q_t,
        n_pairs=n,
    )
    assert (hlo, hhi) == pytest.approx(expected, abs=1e-12)
    assert hse == pytest.approx((hhi - hlo) / (2 * Z))


def test_human_majority_rate_is_the_sections_human_only_figure():
    from judge_transfer_audit.statistics.prediction_powered.compute import human_majority_rate, majority_ppi
    from judge_transfer_audit.statistics.prediction_powered.estimators import ppi_mean

    n, readers = 25, 5
    rng, _, pair, reader, credit = _crossed_votes(8, n, readers, 0.8)
    f = (rng.uniform(size=n) < 0.5).astype(float)
    fu = (rng.uniform(size=100) < 0.5).astype(float)
    share = ppi_mean(credit, pair, f, fu, reader_of_vote=reader)
    *_, hm, hlo, hhi, _, _ = majority_ppi(credit, pair, reader, f, fu, share, 0.95)
    m, lo, hi = human_majority_rate(credit, pair, reader, 0.95)
    assert (m, lo, hi) == pytest.approx((hm, hlo, hhi), abs=1e-12)
    assert lo < m < hi
    # pairs read once carry nothing on the between-pair variance: M is not estimable
    assert human_majority_rate(credit[:n], np.arange(n), np.arange(n) % readers) is None
