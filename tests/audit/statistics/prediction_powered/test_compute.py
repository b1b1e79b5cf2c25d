"""The majority rate's interval: Wilson's score interval at an effective number of pairs."""

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


def test_section_majority_interval_is_wilsons_at_the_draws_spread():
    from judge_transfer_audit.statistics.prediction_powered.compute import majority_ppi
    from judge_transfer_audit.statistics.prediction_powered.estimators import ppi_mean

    rng = np.random.default_rng(5)
    n, readers = 30, 6
    p = 1 / (1 + np.exp(-(0.4 + rng.normal(0, 1, n))))
    pair = np.repeat(np.arange(n), readers)
    reader = np.tile(np.arange(readers), n)
    credit = (rng.uniform(size=n * readers) < p[pair]).astype(float)
    f = (p > 0.5).astype(float)
    fu = (rng.uniform(size=200) < 0.6).astype(float)
    share = ppi_mean(credit, pair, f, fu, reader_of_vote=reader)
    m, lo, hi, _, hm, hlo, hhi, se, hse = majority_ppi(credit, pair, reader, f, fu, share, 0.95, rng=1)
    assert lo <= m <= hi and hlo <= hm <= hhi
    # the human-only interval: Wilson's at the pairs its spread is worth
    n_eff = min(hm * (1 - hm) / hse**2, n)
    wilson_width = 2 * Z / (1 + Z * Z / n_eff) * math.sqrt(hm * (1 - hm) / n_eff + Z * Z / (4 * n_eff**2))
    assert hhi - hlo == pytest.approx(wilson_width, rel=0.05)  # n_eff there uses the draws' mean, here M
