"""The sparse path: symbolic analysis, selected inverse, and the same fit as the dense
path; the cost rule and the fallback without scikit-sparse."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import judge_transfer_audit.statistics.glmm.laplace as laplace
from judge_transfer_audit.core.errors import MissingDependencyError
from judge_transfer_audit.statistics.glmm import fit_crossed_glmm
from judge_transfer_audit.statistics.glmm import sparse as sparse_mod

needs_sksparse = pytest.mark.skipif(
    not sparse_mod.sksparse_available(),
    reason="scikit-sparse not installed (pip install 'judge-transfer-audit[sparse]')",
)


def _random_spd(n, density, seed):
    rng = np.random.default_rng(seed)
    A = sp.random(n, n, density=density, random_state=rng)
    A = A @ A.T + sp.diags(rng.uniform(1, 2, n))
    return sp.csc_matrix(A)


def _symbolic_factor(A):
    """Pattern of the Cholesky factor by plain symbolic elimination (boolean, dense)."""
    n = A.shape[0]
    P = A.toarray() != 0
    L = np.zeros((n, n), dtype=bool)
    for j in range(n):
        col = P[j:, j].copy()
        L[j:, j] = col
        rows = np.flatnonzero(col) + j
        rows = rows[rows > j]
        P[np.ix_(rows, rows)] = True
    return L


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_column_counts_and_elimination_tree_match_symbolic_elimination(seed):
    A = _random_spd(80, 0.02, seed)
    low = sp.tril(A).tocsc()
    low.sort_indices()
    parent = sparse_mod.elimination_tree(low.indptr, low.indices, 80)
    counts = sparse_mod.column_counts(low.indptr, low.indices, 80, parent)
    Lpat = _symbolic_factor(A)
    np.testing.assert_array_equal(counts, Lpat.sum(axis=0))
    for j in range(80):
        below = np.flatnonzero(Lpat[j + 1 :, j])
        assert parent[j] == (below[0] + j + 1 if below.size else -1)


@needs_sksparse
@pytest.mark.parametrize("n, density", [(300, 0.005), (200, 0.03), (50, 0.5)])
def test_selected_inverse_equals_the_dense_inverse_on_the_pattern(n, density):
    from sksparse.cholmod import cholesky

    A = _random_spd(n, density, 7)
    F = cholesky(A, ordering_method="amd")
    L = F.L().tocsc()
    L.sort_indices()
    Z = sparse_mod.selected_inverse(L)
    Ld = L.toarray()
    dense = np.linalg.inv(Ld @ Ld.T)
    rows = L.indices
    cols = np.repeat(np.arange(n), np.diff(L.indptr))
    np.testing.assert_allclose(Z, dense[rows, cols], rtol=1e-10, atol=1e-12)


def _study(seed, n_pair, n_reader, per_pair, batches=0, covariate=False):
    rng = np.random.default_rng(seed)
    reader = np.concatenate([rng.choice(n_reader, per_pair, replace=False) for _ in range(n_pair)])
    pair = np.repeat(np.arange(n_pair), per_pair)
    eta = 0.3 + rng.normal(0, 0.8, n_pair)[pair] + rng.normal(0, 0.5, n_reader)[reader]
    factors = {"pair": pair, "reader": reader}
    X = None
    if batches:
        b = rng.integers(0, batches, pair.size)
        factors["batch"] = b
        eta = eta + rng.normal(0, 0.4, batches)[b]
    if covariate:
        x = rng.normal(size=pair.size)
        eta = eta + 0.5 * x
        X = np.column_stack([np.ones(pair.size), x])
    y = (rng.random(pair.size) < 1 / (1 + np.exp(-eta))).astype(float)
    return y, factors, X


@needs_sksparse
@pytest.mark.parametrize(
    "case",
    [
        dict(seed=1, n_pair=300, n_reader=80, per_pair=3),
        dict(seed=2, n_pair=300, n_reader=80, per_pair=2, batches=4),
        dict(seed=3, n_pair=250, n_reader=60, per_pair=4, covariate=True),
    ],
)
def test_sparse_path_gives_the_dense_answers(case, monkeypatch):
    monkeypatch.setattr(laplace, "_DENSE_COUPLING_MAX", 0)  # the sparse coupling layout at this size
    y, factors, X = _study(**case)
    dense = fit_crossed_glmm(y, factors, X, factorization="dense")
    sparse = fit_crossed_glmm(y, factors, X, factorization="sparse")
    assert dense.factorization == "dense" and sparse.factorization == "sparse"
    assert any("sparse path" in n for n in sparse.notes)
    np.testing.assert_allclose(sparse.b, dense.b, rtol=0, atol=1e-8)
    np.testing.assert_allclose(sparse.se, dense.se, rtol=0, atol=1e-8)
    for name in dense.sd:
        assert sparse.sd[name] == pytest.approx(dense.sd[name], abs=1e-8)
    assert sparse.loglik == pytest.approx(dense.loglik, abs=1e-8)
    for name, modes in dense.conditional_modes.items():
        np.testing.assert_allclose(list(sparse.conditional_modes[name].values()), list(modes.values()), atol=1e-8)


@needs_sksparse
def test_profile_interval_on_the_sparse_path(monkeypatch):
    monkeypatch.setattr(laplace, "_DENSE_COUPLING_MAX", 0)
    y, factors, _ = _study(4, 200, 50, 3)
    dense = fit_crossed_glmm(y, factors, factorization="dense", profile=True)
    sparse = fit_crossed_glmm(y, factors, factorization="sparse", profile=True)
    np.testing.assert_allclose(sparse.profile_low, dense.profile_low, atol=1e-7)
    np.testing.assert_allclose(sparse.profile_high, dense.profile_high, atol=1e-7)


def test_small_cells_take_the_dense_path_without_a_note():
    y, factors, _ = _study(5, 40, 7, 7)
    res = fit_crossed_glmm(y, factors)
    assert res.factorization == "dense"
    assert not any("path" in n for n in res.notes)


def test_cost_rule_prefers_sparse_for_low_fill_and_dense_for_a_full_block(monkeypatch):
    if not sparse_mod.sksparse_available():
        pytest.skip("scikit-sparse not installed")
    monkeypatch.setattr(sparse_mod, "DENSE_ALWAYS_MAX", 10)
    # a chain (tridiagonal): factor has 2m - 1 nonzeros
    m = 400
    chain = sp.csc_matrix(sp.diags([np.ones(m - 1), np.full(m, 4.0)], [-1, 0]))
    choice, symbolic = sparse_mod.choose_path(chain)
    assert choice.path == "sparse" and choice.nnz_factor == 2 * m - 1 and symbolic is not None
    full = sp.csc_matrix(np.tril(np.ones((m, m))) + 3 * m * np.eye(m))
    choice, symbolic = sparse_mod.choose_path(full)
    assert choice.path == "dense" and choice.nnz_factor == m * (m + 1) // 2 and symbolic is None


def test_without_scikit_sparse_auto_falls_back_and_forcing_says_how_to_install(monkeypatch):
    monkeypatch.setattr(sparse_mod, "sksparse_available", lambda: False)
    monkeypatch.setattr(sparse_mod, "DENSE_ALWAYS_MAX", 10)
    monkeypatch.setattr(laplace, "_DENSE_COUPLING_MAX", 0)
    y, factors, _ = _study(6, 100, 30, 3)
    res = fit_crossed_glmm(y, factors)
    assert res.factorization == "dense"
    assert any("scikit-sparse is not installed" in n for n in res.notes)
    import sys

    monkeypatch.setitem(sys.modules, "sksparse", None)  # any import of it now raises ImportError
    monkeypatch.setitem(sys.modules, "sksparse.cholmod", None)
    with pytest.raises(MissingDependencyError, match=r"judge-transfer-audit\[sparse\]"):
        fit_crossed_glmm(y, factors, factorization="sparse")


def test_unknown_factorization_is_an_input_error():
    from judge_transfer_audit.core.errors import InputError

    with pytest.raises(InputError, match="factorization"):
        fit_crossed_glmm([0, 1, 1, 0], {"g": ["a", "b", "a", "b"]}, factorization="qr")
