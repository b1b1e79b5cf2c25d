"""Intervals and p-values read from replicates agree with each other and with normal theory."""

import numpy as np
import pytest
from scipy import stats
from scipy.special import ndtr

from judge_transfer_audit.verdict.intervals import P_MIN, ReplicateDistribution


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


def _bisection_quantile(d, prob):
    """A 60-step bisection of the smoothed F: the reference the Newton quantile is checked against."""
    lo, hi = d._reps[0] - 40 * d._h, d._reps[-1] + 40 * d._h
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if d.cdf(mid) < prob:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_newton_quantile_is_the_bisection_root(seed):
    rng = np.random.default_rng(seed)
    shapes = [rng.normal(0.3, 0.1, 999), rng.exponential(0.05, 999) - 0.2, np.r_[rng.normal(0, 0.01, 990), [-0.5] * 9]]
    for reps in shapes:
        d = ReplicateDistribution(float(np.median(reps)), reps, df=12.0)
        for prob in (1e-9, 1e-4, 0.0042, 0.02, 0.05, 0.5, 0.95, 0.9999):
            assert d.quantile(prob) == pytest.approx(_bisection_quantile(d, prob), abs=1e-9), prob


def test_far_tail_p_values_are_stable_across_monte_carlo_streams():
    """Beyond the anchor the p is the Gaussian continuation (or the replicates' own tail where that is
    heavier): over streams of 999 normal replicates it has the t tail's value and moves by about its
    Monte Carlo SE (log-SD 0.37 at 4 SD; the previous smoothed kernel tail had median 4.7e-6 against the
    t tail's 1.9e-4 and a log-SD of 2.7 over 200 streams)."""
    ps, ses = [], []
    for seed in range(60):
        reps = np.random.default_rng(100 + seed).normal(0.0, 1.0, 999)
        d = ReplicateDistribution(0.0, reps, df=30.0)
        ps.append(d.p_greater(-4.0))
        ses.append(d.p_mc_se(-4.0, greater=True))
    ps, ses = np.array(ps), np.array(ses)
    assert np.median(ps) == pytest.approx(stats.t.sf(4.0, 30), rel=0.2)
    assert np.log(ps).std(ddof=1) < 0.55
    # the delta-method SE is the spread over streams (measured ratio 1.46: the streams whose own
    # replicates reach the null take the heavier kernel tail, whose binomial SE is the smaller)
    assert 1 / 1.7 < ps.std(ddof=1) / np.median(ses) < 1.7


def test_dense_p_values_have_the_binomial_monte_carlo_se():
    ps, ses = [], []
    for seed in range(40):
        d = ReplicateDistribution(0.0, np.random.default_rng(seed).normal(0.0, 1.0, 999))
        ps.append(d.p_greater(-1.0))
        ses.append(d.p_mc_se(-1.0, greater=True))
    assert d.p_anchor == pytest.approx(0.02)
    assert np.median(ses) == pytest.approx(np.sqrt(0.1587 * 0.8413 / 999), rel=0.1)
    assert 1 / 1.6 < np.std(ps, ddof=1) / np.median(ses) < 1.6


def test_the_p_value_is_continuous_and_monotone_through_the_anchor():
    d = ReplicateDistribution(0.0, np.random.default_rng(7).normal(0.0, 1.0, 999), df=20.0)
    x_a = d.quantile(d.p_anchor)
    left, right = d.p_greater(x_a - 1e-9), d.p_greater(x_a + 1e-9)
    assert left == pytest.approx(right, rel=1e-6)
    grid = np.linspace(x_a - 3, x_a + 3, 61)
    p = np.array([d.p_greater(x) for x in grid])
    assert np.all(np.diff(p) > 0)
    # the interval still excludes a null exactly when the p is below its tail, above the anchor
    lo = d.lower(0.05)
    assert d.p_greater(lo) == pytest.approx(0.05, abs=1e-6)


def test_a_mirrored_distribution_reads_the_same_numbers():
    d = ReplicateDistribution(0.2, np.random.default_rng(8).normal(0.2, 0.05, 999), df=15.0, bounds=(0, 1))
    m = d.mirrored(1.0)
    assert m.estimate == pytest.approx(0.8) and m.bounds == (0.0, 1.0)
    assert m.p_less(0.5) == d.p_greater(0.5) and m.p_greater(0.9) == d.p_less(1.0 - 0.9)
    assert m.p_mc_se(0.5, greater=False) == d.p_mc_se(0.5, greater=True)
    lo, hi = d.interval(0.9)
    assert m.interval(0.9) == (1.0 - hi, 1.0 - lo)
    assert m.mirrored(1.0) is d


def test_an_estimated_df_adds_its_monte_carlo_error_to_the_p_value():
    """``df_se``: the p-value's SE gains ``|dT_df(z)/d df| df_se`` in quadrature (the p itself is unchanged)."""
    reps = np.random.default_rng(11).normal(0.0, 1.0, 999)
    known = ReplicateDistribution(0.0, reps, df=3.0)
    estimated = ReplicateDistribution(0.0, reps, df=3.0, df_se=0.3)
    for null in (-1.0, -3.0):  # the dense region and the Gaussian continuation
        p = known.p_greater(null)
        assert estimated.p_greater(null) == p
        z = stats.t.ppf(p, 3.0)
        slope = (stats.t.cdf(z, 3.03) - stats.t.cdf(z, 2.97)) / 0.06
        expected = np.hypot(known.p_mc_se(null, greater=True), slope * 0.3)
        assert estimated.p_mc_se(null, greater=True) == pytest.approx(expected, rel=1e-3)
        assert estimated.p_mc_se(null, greater=True) > known.p_mc_se(null, greater=True)
    # in the tail a t on 3 df is read at, the df's 10% error is most of the p-value's error
    assert estimated.p_mc_se(-3.0, greater=True) > 1.5 * known.p_mc_se(-3.0, greater=True)
    assert estimated.mirrored(0.0).p_mc_se(1.0, greater=False) == estimated.p_mc_se(-1.0, greater=True)
    assert ReplicateDistribution(0.0, reps, df_se=0.3).df_se == 0.0  # a normal tail has no df to be wrong about
