"""judge_transfer_audit.statistics.distributions returns scipy.stats' bits: every function against its scipy.stats twin
on grids.

"The same" means the same IEEE-754 double (compared as 64-bit patterns, so 0.0 vs -0.0 and NaN payloads
count), the same scalar-or-array shape and, for scalars, numpy scalars as scipy returns them. The grids
include the edges scipy.stats handles around its scipy.special call: 0, 1, +-inf, NaN, q outside [0, 1],
df <= 0, ties, constant samples and NaN in a sample.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.stats as st

from judge_transfer_audit.statistics import distributions as D

X = np.concatenate(
    [
        np.linspace(-40, 40, 801),
        [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, -1e-300, 5e-324, 1e300, -1e300],
        np.logspace(-20, 3, 120),
        -np.logspace(-20, 3, 120),
    ]
)
Q = np.concatenate(
    [
        np.linspace(0, 1, 401),
        [0.0, 1.0, -0.1, 1.1, np.nan, 5e-324, 1e-300, 0.5, 1 - 1e-16, np.inf, -np.inf],
        np.logspace(-300, -1, 150),
        1 - np.logspace(-16, -1, 80),
    ]
)
DF = [0.3, 0.5, 1, 1.5, 2, 2.5, 3, 4, 5, 7, 10, 30, 100, 1e3, 1e5, 1e8, 1e12, np.inf, 0, -1, np.nan]


def _bits(a) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    return np.where(np.isnan(a), np.uint64(0x7FF8000000000000), a.view(np.uint64))


def assert_same(ours, theirs, *, strict_type: bool = True) -> None:
    """The same bits and shape; with ``strict_type`` the same type (scipy.stats' numpy scalars), else only
    array or not (scipy's correlations return a Python float in a few edge branches; callers take ``float``)."""
    assert np.shape(ours) == np.shape(theirs)
    if strict_type:
        assert type(ours) is type(theirs)
    assert isinstance(ours, np.ndarray) == isinstance(theirs, np.ndarray)
    assert np.array_equal(_bits(ours), _bits(theirs)), (ours, theirs)


def test_assert_same_sees_a_sign_and_a_last_bit():
    """The comparison can fail: -0.0 against 0.0, one ulp apart, a float against a numpy scalar."""
    for a, b in [(np.float64(0.0), np.float64(-0.0)), (np.float64(1.0), np.nextafter(1.0, 2.0)), (1.0, np.float64(1))]:
        with pytest.raises(AssertionError):
            assert_same(a, b)


@pytest.mark.parametrize("method", ["cdf", "sf", "pdf"])
def test_normal_on_x(method):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_same(getattr(D.norm, method)(X), getattr(st.norm, method)(X))
        for x in X[::9]:
            assert_same(getattr(D.norm, method)(float(x)), getattr(st.norm, method)(float(x)))


@pytest.mark.parametrize("method", ["ppf", "isf"])
def test_normal_on_q(method):
    assert_same(getattr(D.norm, method)(Q), getattr(st.norm, method)(Q))
    for q in Q[::5]:
        assert_same(getattr(D.norm, method)(float(q)), getattr(st.norm, method)(float(q)))


@pytest.mark.parametrize("df", DF)
def test_student_t(df):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for method in ("cdf", "sf", "pdf"):
            assert_same(getattr(D.t, method)(X, df), getattr(st.t, method)(X, df))
        for method in ("ppf", "isf"):
            assert_same(getattr(D.t, method)(Q, df), getattr(st.t, method)(Q, df))


def test_student_t_scalars_and_broadcasting():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        grid_x, grid_df = np.meshgrid(X[::20], np.array(DF))
        for method in ("cdf", "sf", "pdf"):
            assert_same(getattr(D.t, method)(grid_x, grid_df), getattr(st.t, method)(grid_x, grid_df))
            for x in (1.5, 0, -2, 3.0, -0.0):
                for df in (3, 4.5, np.float64(7.0), 2.0 + 0.01 * 2.0):
                    assert_same(getattr(D.t, method)(x, df), getattr(st.t, method)(x, df))
        for q in (0.975, 0.5, 0.0, 1.0, 0.025):
            for df in (1, 3, 17.25, np.inf):
                assert_same(D.t.ppf(q, df), st.t.ppf(q, df))
                assert_same(D.t.isf(q, df), st.t.isf(q, df))


def _samples(seed: int, n_trials: int = 600):
    """Pairs of samples: continuous, heavily tied, nearly collinear, mixed, some with a NaN or constant."""
    rng = np.random.default_rng(seed)
    for trial in range(n_trials):
        n = int(rng.integers(0, 30))
        kind = trial % 5
        if kind == 0:
            x, y = rng.normal(size=n), rng.normal(size=n)
        elif kind == 1:
            x, y = rng.integers(0, 4, n).astype(float), rng.integers(0, 3, n).astype(float)
        elif kind == 2:
            x = rng.normal(size=n)
            y = 2 * x + 0.01 * rng.normal(size=n)
        elif kind == 3:
            x, y = rng.integers(0, 5, n).astype(float), rng.normal(size=n)
        else:
            x, y = np.full(n, 1.5), rng.normal(size=n)
        if n > 3 and trial % 7 == 0:
            x[1] = np.nan
        yield x, y


def test_rankdata():
    for x, _ in _samples(1):
        assert_same(D.rankdata(x), st.rankdata(x))
    assert_same(D.rankdata(np.array([3, 1, 2, 2, 1])), st.rankdata(np.array([3, 1, 2, 2, 1])))


def test_spearman():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for x, y in _samples(2):
            if len(x) == 0:
                continue
            ours, theirs = D.spearmanr(x, y), st.spearmanr(x, y)
            assert_same(ours.statistic, theirs.statistic, strict_type=False)
            assert_same(ours.pvalue, theirs.pvalue, strict_type=False)


def test_kendall_tau_b():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for x, y in _samples(3):
            if len(x) == 0:
                continue
            assert_same(D.kendalltau(x, y).statistic, st.kendalltau(x, y).statistic, strict_type=False)
        ranks = np.array([0.0, 0.3, -0.2, 1.1, 0.9])
        assert_same(
            D.kendalltau(ranks, ranks[::-1]).statistic, st.kendalltau(ranks, ranks[::-1]).statistic, strict_type=False
        )


def test_linregress():
    fields = ("slope", "intercept", "rvalue", "pvalue", "stderr", "intercept_stderr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for x, y in _samples(4):
            if len(x) == 0 or (len(x) > 1 and np.ptp(x) == 0):
                continue
            ours, theirs = D.linregress(x, y), st.linregress(x, y)
            for field in fields:
                assert_same(getattr(ours, field), getattr(theirs, field), strict_type=False)
        x = np.arange(8.0)
        with pytest.raises(ValueError):
            D.linregress(np.full(4, 2.0), x[:4])
        for field in fields:  # two points and an exact line
            assert_same(
                getattr(D.linregress(x[:2], x[:2]), field),
                getattr(st.linregress(x[:2], x[:2]), field),
                strict_type=False,
            )
            assert_same(
                getattr(D.linregress(x, 3 * x), field), getattr(st.linregress(x, 3 * x), field), strict_type=False
            )


@pytest.mark.slow
def test_clopper_pearson():
    rng = np.random.default_rng(5)
    for n in [*range(1, 25), 100, 999, 2520]:
        for k in sorted({0, 1, n // 3, n // 2, n - 1, n, *rng.integers(0, n + 1, 2).tolist()}):
            for level in (0.95, 0.9, 0.99, 0.5):
                ci = st.binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
                low, high = D.clopper_pearson(k, n, level)
                assert_same(low, float(ci.low))
                assert_same(high, float(ci.high))
    with pytest.raises(ValueError):
        D.clopper_pearson(3, 2, 0.95)
