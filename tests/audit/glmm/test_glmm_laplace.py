"""The Laplace deviance and its analytic gradient, on both storage layouts of the coupling."""

from __future__ import annotations

import numpy as np
import pytest

import audit.glmm.laplace as laplace
from audit.glmm.laplace import LaplaceDeviance


def _problem(seed, n_levels, n=300, p=2):
    rng = np.random.default_rng(seed)
    codes = [rng.integers(0, m, n) for m in n_levels]
    X = np.column_stack([np.ones(n), rng.normal(size=(n, p - 1))])
    eta = 0.2 + sum(rng.normal(0, 0.7, m)[c] for c, m in zip(codes, n_levels))
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    return y, X, codes


def _make(y, X, codes, n_levels, dense, monkeypatch):
    monkeypatch.setattr(laplace, "_DENSE_COUPLING_MAX", 10**9 if dense else 0)
    return LaplaceDeviance(y, X, codes, n_levels)


@pytest.mark.parametrize("n_levels", [[40], [40, 7], [7, 40], [40, 7, 4], []])
@pytest.mark.parametrize("dense", [True, False])
def test_gradient_matches_central_differences(n_levels, dense, monkeypatch):
    y, X, codes = _problem(1, n_levels)
    lap = _make(y, X, codes, n_levels, dense, monkeypatch)
    K = len(n_levels)
    x = np.concatenate([np.linspace(0.4, 1.1, K), [0.1, -0.3]])
    f = lambda z: lap(z[:K], z[K:])  # noqa: E731
    f(x)
    analytic = lap.gradient()
    h = 1e-5
    numeric = np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)])
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-5)


def test_dense_and_sparse_layouts_agree(monkeypatch):
    y, X, codes = _problem(2, [50, 9, 3])
    x = np.array([0.9, 0.5, 0.3, 0.2, -0.1])
    values = []
    for dense in (True, False):
        lap = _make(y, X, codes, [50, 9, 3], dense, monkeypatch)
        values.append((lap(x[:3], x[3:]), lap.gradient(), lap.vcov_rx()))
    assert values[0][0] == pytest.approx(values[1][0], abs=1e-9)
    np.testing.assert_allclose(values[0][1], values[1][1], atol=1e-8)
    np.testing.assert_allclose(values[0][2], values[1][2], atol=1e-10)


def test_deviance_is_even_in_theta_and_independent_of_warm_start():
    y, X, codes = _problem(3, [30, 6])
    lap = LaplaceDeviance(y, X, codes, [30, 6])
    beta = np.array([0.1, 0.2])
    base = lap(np.array([0.8, 0.4]), beta)
    assert lap(np.array([-0.8, 0.4]), beta) == pytest.approx(base, abs=1e-8)
    lap.u[:] = 3.0  # a poor start must reach the same mode
    assert lap(np.array([0.8, 0.4]), beta) == pytest.approx(base, abs=1e-8)


def test_theta_zero_reduces_to_logistic_deviance():
    y, X, codes = _problem(4, [30, 6])
    lap = LaplaceDeviance(y, X, codes, [30, 6])
    beta = np.array([0.3, -0.2])
    eta = X @ beta
    expected = -2 * np.sum(y * eta - np.logaddexp(0, eta))
    assert lap(np.zeros(2), beta) == pytest.approx(expected, abs=1e-10)


def test_stable_order_is_a_stable_argsort():
    from audit.glmm.laplace import stable_order

    rng = np.random.default_rng(5)
    for bound in (7, 40_000, 1 << 16, 3_000_000, 1 << 32, 1 << 40):
        keys = rng.integers(0, bound, 200_000)
        keys[::3] = keys[0]  # many ties
        assert np.array_equal(stable_order(keys, bound), np.argsort(keys, kind="stable")), bound


def test_lower_entries_read_either_layout():
    from audit.glmm.laplace import _lower_entries

    a = np.arange(36.0).reshape(6, 6)
    i, j = np.array([5, 3, 2, 4]), np.array([0, 1, 2, 4])
    for m in (a, np.asfortranarray(a), a[::1, ::1].T.T, np.tile(a, 2)[:, ::2]):
        assert np.array_equal(_lower_entries(m, i * 6 + j, j * 6 + i), m[i, j])
