"""The Laplace deviance and its analytic gradient, on both storage layouts of the coupling."""

from __future__ import annotations

import numpy as np
import pytest

import judge_transfer_audit.statistics.glmm.laplace as laplace
from judge_transfer_audit.statistics.glmm.laplace import LaplaceDeviance


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
    _assert_gradient_matches_differences(lap, K, np.concatenate([np.linspace(0.4, 1.1, K), [0.1, -0.3]]))


def _assert_gradient_matches_differences(lap, K, x):
    """The analytic gradient at ``x = (theta, beta)`` against central differences of the deviance."""
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


def test_sparse_solve_gives_scipys_matrix_vector_products_to_the_last_bit(monkeypatch):
    y, X, codes = _problem(4, [60, 9])
    lap = _make(y, X, codes, [60, 9], False, monkeypatch)
    rng = np.random.default_rng(5)
    f = lap._factor(np.array([0.8, 0.4]), rng.uniform(0.05, 0.25, y.size))
    rA, rR = rng.normal(size=lap.na), rng.normal(size=lap.qR)
    xA, xR = lap._solve(f, rA, rR)
    import scipy.sparse as sp

    C, D = sp.csr_matrix((f["C_values"], lap.cell_r, lap.indptr), shape=(lap.na, lap.qR)), f["D"]
    expected_xR = f["cho"].solve(rR - C.T @ (rA / D))
    assert xR.tobytes() == expected_xR.tobytes()
    assert xA.tobytes() == ((rA - C @ expected_xR) / D).tobytes()


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
    from judge_transfer_audit.statistics.glmm.laplace import stable_order

    rng = np.random.default_rng(5)
    for bound in (7, 40_000, 1 << 16, 3_000_000, 1 << 32, 1 << 40):
        keys = rng.integers(0, bound, 200_000)
        keys[::3] = keys[0]  # many ties
        assert np.array_equal(stable_order(keys, bound), np.argsort(keys, kind="stable")), bound


def test_lower_entries_read_either_layout():
    from judge_transfer_audit.statistics.glmm.laplace import _lower_entries

    a = np.arange(36.0).reshape(6, 6)
    i, j = np.array([5, 3, 2, 4]), np.array([0, 1, 2, 4])
    for m in (a, np.asfortranarray(a), a[::1, ::1].T.T, np.tile(a, 2)[:, ::2]):
        assert np.array_equal(_lower_entries(m, i * 6 + j, j * 6 + i), m[i, j])


def _one_reader_per_pair(seed, n_pair=200, n_reader=30, n=None):
    """Each pair read by one reader (several votes of that reader allowed), a covariate."""
    rng = np.random.default_rng(seed)
    reader_of_pair = rng.integers(0, n_reader, n_pair)
    pair = np.arange(n_pair) if n is None else rng.integers(0, n_pair, n)
    reader = reader_of_pair[pair]
    X = np.column_stack([np.ones(pair.size), rng.normal(size=pair.size)])
    eta = 0.2 + 0.5 * X[:, 1] + rng.normal(0, 0.8, n_pair)[pair] + rng.normal(0, 0.6, n_reader)[reader]
    y = (rng.random(pair.size) < 1 / (1 + np.exp(-eta))).astype(float)
    _, r = np.unique(reader, return_inverse=True)
    _, a = np.unique(pair, return_inverse=True)
    return y, X, [a, r], [int(a.max()) + 1, int(r.max()) + 1]


@pytest.mark.parametrize("n", [None, 500])
@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_diagonal_path_gives_the_factorised_paths_deviance_gradient_and_vcov(n, layout, monkeypatch):
    """One reader per pair: the diagonal path (auto) against the Cholesky of the same block on
    either coupling layout (forced dense), at theta in the interior and at a boundary."""
    monkeypatch.setattr(laplace, "DIAGONAL_MIN_LEVELS", 10)
    y, X, codes, n_levels = _one_reader_per_pair(4, n=n)
    monkeypatch.setattr(laplace, "_DENSE_COUPLING_MAX", 10**9 if layout == "dense" else 0)
    auto = LaplaceDeviance(y, X, codes, n_levels)
    forced = LaplaceDeviance(y, X, codes, n_levels, factorization="dense")
    assert auto.diagonal and auto.path.path == "diagonal"
    assert not forced.diagonal and forced.path.path == "dense"
    for theta in ([0.9, 0.6], [0.0, 0.7], [1.5, 0.0]):
        x = np.array(theta + [0.1, 0.4])
        values = [(lap(x[:2], x[2:]), lap.gradient(), lap.vcov_rx()) for lap in (auto, forced)]
        assert values[0][0] == pytest.approx(values[1][0], abs=1e-9)
        np.testing.assert_allclose(values[0][1], values[1][1], atol=1e-8)
        np.testing.assert_allclose(values[0][2], values[1][2], atol=1e-10)


def test_diagonal_path_gradient_matches_central_differences(monkeypatch):
    monkeypatch.setattr(laplace, "DIAGONAL_MIN_LEVELS", 10)
    y, X, codes, n_levels = _one_reader_per_pair(5, n=400)
    lap = LaplaceDeviance(y, X, codes, n_levels)
    assert lap.path.path == "diagonal"
    _assert_gradient_matches_differences(lap, 2, np.array([0.7, 0.5, 0.1, 0.3]))


def test_the_diagonal_path_is_taken_only_when_the_reader_block_is_diagonal(monkeypatch):
    y, X, codes, n_levels = _one_reader_per_pair(6)
    assert laplace.one_column_per_level(codes[0], [codes[1]], n_levels[0])
    # at most DIAGONAL_MIN_LEVELS readers: the dense Cholesky, as the stacked small cells
    assert LaplaceDeviance(y, X, codes, n_levels).path.path == "dense"
    monkeypatch.setattr(laplace, "DIAGONAL_MIN_LEVELS", 10)
    assert LaplaceDeviance(y, X, codes, n_levels).path.path == "diagonal"
    second = codes[1].copy()
    second[-1] = (second[np.flatnonzero(codes[0] == codes[0][-1])[0]] + 1) % n_levels[1]
    # one pair with a second reader couples two readers: the dense Cholesky
    a = np.concatenate([codes[0], codes[0][-1:]])
    r = np.concatenate([codes[1], second[-1:]])
    lap = LaplaceDeviance(np.concatenate([y, y[-1:]]), np.vstack([X, X[-1:]]), [a, r], n_levels)
    assert not lap.diagonal and lap.path.path == "dense"
    # a third factor couples readers with it: not diagonal either
    batch = np.arange(y.size) % 3
    lap = LaplaceDeviance(y, X, [codes[0], codes[1], batch], n_levels + [3])
    assert not lap.diagonal
