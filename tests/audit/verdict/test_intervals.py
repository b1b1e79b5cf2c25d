"""Intervals and p-values read from replicates agree with each other and with normal theory."""

import numpy as np
import pytest
from scipy import stats
from scipy.special import ndtr

from audit.verdict.intervals import P_MIN, ReplicateDistribution


@pytest.fixture(scope="module")
def normal():
    reps = np.random.default_rng(1).normal(0.3, 0.1, 4000)
    return ReplicateDistribution(0.3, reps)


def test_percentiles_of_normal_replicates_are_the_normal_interval(normal):
    lo, hi = normal.interval(0.95)
    assert lo == pytest.approx(0.3 - 1.96 * 0.1, abs=0.01) and hi == pytest.approx(0.3 + 1.96 * 0.1, abs=0.01)


def test_the_interval_excludes_a_null_exactly_when_the_p_value_is_below_its_tail(normal):
    lo = normal.lower(0.05)
    assert normal.p_greater(lo) == pytest.approx(0.05, abs=1e-6)
    assert normal.p_greater(lo - 0.01) < 0.05 < normal.p_greater(lo + 0.01)
    hi = normal.upper(0.05)
    assert normal.p_less(hi) == pytest.approx(0.05, abs=1e-6)


def test_far_tails_give_small_smooth_p_values(normal):
    # beyond every replicate: not 1 / (B + 1), a smooth extrapolation, and monotone
    p1, p2 = normal.p_greater(-0.2), normal.p_greater(-0.3)
    assert 0 < p2 < p1 < 1 / 4001


def test_student_t_calibration_widens_the_tails():
    reps = np.random.default_rng(2).normal(0.0, 1.0, 4000)
    z = ReplicateDistribution(0.0, reps)
    t5 = ReplicateDistribution(0.0, reps, df=5)
    assert t5.upper(0.025) == pytest.approx(stats.t.ppf(0.975, 5), rel=0.05)
    assert t5.p_greater(-2.5) == pytest.approx(stats.t.sf(2.5, 5), rel=0.15)
    assert z.upper(0.025) < t5.upper(0.025)


def test_bounds_clip_the_interval_not_the_p_value():
    reps = np.random.default_rng(3).normal(0.98, 0.03, 2000)
    d = ReplicateDistribution(0.98, reps, bounds=(0.0, 1.0))
    assert d.interval(0.95)[1] == 1.0
    assert 0 < d.p_less(1.0) < 1


def test_constant_and_empty_replicates():
    c = ReplicateDistribution(0.5, np.full(100, 0.5))
    # no replicate reaches the null: a count, floored at 1 / (B + 1), never 0
    assert c.interval(0.9) == (0.5, 0.5) and c.p_greater(0.4) == 1 / 101 and c.p_less(0.6) == 1 / 101
    assert c.count_floor == 1 / 101 and c.p_greater(0.6) == 1.0
    e = ReplicateDistribution(0.5, np.zeros(0))
    assert not e.defined and np.isnan(e.interval(0.9)[0]) and np.isnan(e.p_greater(0.5))


@pytest.mark.parametrize("df", [float("inf"), 5.0])
def test_a_p_value_is_never_zero_even_where_the_smoothed_tail_underflows(df):
    reps = np.random.default_rng(4).normal(0.0, 0.01, 999)
    d = ReplicateDistribution(0.0, reps, df=df)
    assert float(np.mean(ndtr((-5.0 - d._reps) / d._h))) == 0.0  # the kernel tail itself underflows
    for p in (d.p_greater(-5.0), d.p_less(5.0)):
        assert 0.0 < p < d.count_floor
    assert d.p_greater(-5.0) >= P_MIN


def test_the_t_calibration_keeps_p_values_below_1e_16():
    """1 - p rounds to 1 below 1e-16: the calibration must not turn such a p into 0."""
    reps = np.random.default_rng(5).normal(0.0, 0.01, 999)
    d = ReplicateDistribution(0.0, reps, df=30)
    z = ReplicateDistribution(0.0, reps)
    raw = z.p_greater(-0.12)  # ~12 SD: a smoothed tail far below 1e-16 but not underflowed
    assert 0.0 < raw < 1e-20
    assert d.p_greater(-0.12) == pytest.approx(stats.t.sf(-stats.norm.ppf(raw), 30), rel=1e-9)
    assert d.p_greater(-0.12) > raw  # the t tail is the heavier one, never 0
