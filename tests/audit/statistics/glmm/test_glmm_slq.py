"""Stochastic Lanczos quadrature (audit/statistics/glmm/slq.py) against exact log-determinants."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse as sp

from judge_transfer_audit.statistics.glmm.slq import gauss_log_quadrature, pcg_probes, rademacher, slq_logdet


def _spd(n, seed, spread=3.0):
    rng = np.random.default_rng(seed)
    B = rng.normal(size=(n, n))
    return B @ B.T / n + np.diag(rng.uniform(0.5, spread, n))


def _jacobi_log(A):
    """log(M^{-1/2} A M^{-1/2}) with M = diag(A), exactly (eigendecomposition)."""
    d = np.sqrt(np.diag(A))
    lam, V = np.linalg.eigh(A / np.outer(d, d))
    return (V * np.log(lam)) @ V.T


def test_quadrature_terms_equal_the_exact_quadratic_forms():
    # one converged CG run per probe is Gauss quadrature with as many nodes as iterations: the
    # term of probe j is z_j' log(M^-1/2 A M^-1/2) z_j to the CG tolerance, not an approximation of it
    A = _spd(60, 1)
    Z = rademacher(60, 5, seed=3)
    res = pcg_probes(lambda V: A @ V, np.diag(A).copy(), Z, rtol=1e-13)
    L = _jacobi_log(A)
    exact = np.einsum("ij,ij->j", Z, L @ Z)
    np.testing.assert_allclose(res.per_probe, exact, rtol=1e-7, atol=1e-7)


def test_probe_solves_are_solves():
    A = _spd(80, 2)
    d = np.diag(A).copy()
    Z = rademacher(80, 7, seed=4)
    res = pcg_probes(lambda V: A @ V, d, Z, rtol=1e-12)
    np.testing.assert_allclose(A @ res.X, Z * np.sqrt(d)[:, None], atol=1e-9)


def test_gauss_quadrature_of_a_diagonal_tridiagonal():
    # CG on 2 I converges in one step with alpha = 1/2: T = [2], log 2
    assert gauss_log_quadrature(np.array([0.5]), np.array([0.0])) == pytest.approx(np.log(2.0))


def test_diagonal_matrix_is_exact():
    d = np.random.default_rng(5).uniform(0.1, 10.0, 200)
    assert slq_logdet(sp.diags(d).tocsr(), n_probes=4, seed=1) == pytest.approx(np.log(d).sum(), rel=1e-12)


@pytest.mark.parametrize("n", [50, 120])
def test_error_within_the_hutchinson_standard_error_and_shrinks_with_probes(n):
    A = _spd(n, 10 + n)
    exact = np.linalg.slogdet(A)[1]
    L = _jacobi_log(A)
    off = L - np.diag(np.diag(L))
    # variance of z' L z for Rademacher z: 2 * sum of squared off-diagonal entries
    sd_one = np.sqrt(2.0 * np.sum(off**2))
    errors = {}
    for m in (4, 64):
        errs = np.array([slq_logdet(A, n_probes=m, seed=s) - exact for s in range(24)])
        errors[m] = errs
        # the mean error over 24 seeds is within 4 standard errors of 0 (no bias) ...
        assert abs(errs.mean()) < 4.0 * sd_one / np.sqrt(m * 24)
        # ... and the spread is the Hutchinson one (a factor 2 either way)
        assert 0.5 * sd_one / np.sqrt(m) < errs.std() < 2.0 * sd_one / np.sqrt(m)
    assert np.sqrt(np.mean(errors[64] ** 2)) < 0.4 * np.sqrt(np.mean(errors[4] ** 2))


def test_sparse_operator_matches_dense():
    rng = np.random.default_rng(7)
    A = sp.random(400, 400, density=0.01, random_state=rng)
    A = (A @ A.T + sp.diags(rng.uniform(1, 2, 400))).tocsr()
    exact = 2.0 * np.log(np.diag(sla.cholesky(A.toarray()))).sum()
    est = slq_logdet(A, n_probes=256, seed=2)
    assert abs(est - exact) < 0.02 * abs(exact)
