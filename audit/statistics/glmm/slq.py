"""Stochastic Lanczos quadrature (SLQ) for ``log det`` of a symmetric positive-definite operator.

For a probe ``z`` with ``E[z z'] = I`` (Rademacher), ``z' log(A) z`` is estimated by Gauss
quadrature on the Lanczos tridiagonal ``T`` started at ``z / |z|``:
``|z|^2 * sum_l tau_l^2 log(lambda_l)`` with ``(lambda_l, tau_l)`` the eigenvalues and first
eigenvector components of ``T`` (Ubaru, Chen and Saad 2017). ``T`` is read off the coefficients of
conjugate gradients (the CG-Lanczos relation), so one run of preconditioned CG on the probes gives
both ``A^{-1} V`` (for trace estimators) and the log-determinant.

With a diagonal preconditioner ``M`` and right-hand sides ``v_j = M^{1/2} z_j``, preconditioned CG on
``A`` is CG on ``M^{-1/2} A M^{-1/2}`` started at ``z_j``, so

    log det A = sum log M + mean_j  z_j' log(M^{-1/2} A M^{-1/2}) z_j

and ``mean_j (A^{-1} v_j) (M^{-1} v_j)'`` is an unbiased estimate of ``A^{-1}``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla


@dataclass(frozen=True)
class ProbeSolve:
    """Outcome of :func:`pcg_probes`."""

    X: np.ndarray  # A^{-1} V, one column per probe
    logdet: float  # SLQ estimate of log det A (preconditioner part included)
    iterations: int  # CG iterations of the slowest probe
    per_probe: np.ndarray  # the SLQ terms z_j' log(M^{-1/2} A M^{-1/2}) z_j


def rademacher(n: int, m: int, seed: int) -> np.ndarray:
    """A fixed (n, m) probe block of +/-1 entries from ``seed``."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, 2, size=(n, m)).astype(float) * 2.0 - 1.0


def gauss_log_quadrature(alpha: np.ndarray, beta: np.ndarray) -> float:
    """``e1' log(T) e1`` for the Lanczos tridiagonal ``T`` of a CG run with step lengths
    ``alpha_0..alpha_{k-1}`` and ratios ``beta_0..beta_{k-2}`` (``beta_i = r_{i+1}'z_{i+1} / r_i'z_i``)."""
    k = alpha.size
    if k == 0:
        return 0.0
    diag = 1.0 / alpha
    diag[1:] += beta[: k - 1] / alpha[: k - 1]
    off = np.sqrt(beta[: k - 1]) / alpha[: k - 1]
    if k == 1:
        return float(np.log(diag[0]))
    lam, vec = sla.eigh_tridiagonal(diag, off)
    lam = np.maximum(lam, np.finfo(float).tiny)
    return float(np.sum(vec[0] ** 2 * np.log(lam)))


def pcg_probes(matvec, precond: np.ndarray, Z: np.ndarray, rtol: float = 1e-10, maxiter: int = 500) -> ProbeSolve:
    """Preconditioned CG on ``A X = M^{1/2} Z`` for every column of ``Z`` at once (independent
    recurrences, one block matvec per iteration), and the SLQ estimate of ``log det A``.

    ``matvec`` applies ``A`` to an (n, m) block; ``precond`` is the diagonal of ``M`` (positive).
    Each column stops when its residual falls below ``rtol`` of its start; its Lanczos tridiagonal
    is the one accumulated until then.
    """
    n, m = Z.shape
    sq = np.sqrt(precond)
    R = Z * sq[:, None]  # residual, x0 = 0
    X = np.zeros_like(R)
    Zp = R / precond[:, None]
    P = Zp.copy()
    rz = np.einsum("ij,ij->j", R, Zp)
    rz0 = rz.copy()
    active = np.ones(m, dtype=bool)
    alphas = np.zeros((maxiter, m))
    betas = np.zeros((maxiter, m))
    steps = np.zeros(m, dtype=np.int64)
    it = 0
    for it in range(1, maxiter + 1):
        # converged columns are frozen (step 0) rather than dropped: no column copies
        AP = matvec(P)
        pap = np.einsum("ij,ij->j", P, AP)
        a = np.divide(rz, pap, out=np.zeros(m), where=active & (pap > 0))
        X += P * a
        R -= AP * a
        Zc = R / precond[:, None]
        rz_new = np.einsum("ij,ij->j", R, Zc)
        b = np.divide(rz_new, rz, out=np.zeros(m), where=active & (rz > 0))
        alphas[it - 1] = a
        betas[it - 1] = b
        steps += active
        P = Zc + P * b
        rz = np.where(active, rz_new, rz)
        active &= rz_new > (rtol * rtol) * rz0
        if not active.any():
            break
    terms = np.array(
        [
            float(Z[:, j] @ Z[:, j]) * gauss_log_quadrature(alphas[: steps[j], j].copy(), betas[: steps[j], j].copy())
            for j in range(m)
        ]
    )
    logdet = float(np.log(precond).sum() + terms.mean())
    return ProbeSolve(X=X, logdet=logdet, iterations=it, per_probe=terms)


def slq_logdet(A, n_probes: int = 32, seed: int = 0, precond: np.ndarray | None = None, rtol: float = 1e-10) -> float:
    """SLQ estimate of ``log det A`` for a symmetric positive-definite matrix or sparse matrix
    (Jacobi preconditioner unless ``precond`` is given)."""
    n = A.shape[0]
    d = np.asarray(A.diagonal(), dtype=float) if precond is None else np.asarray(precond, dtype=float)
    Z = rademacher(n, n_probes, seed)
    return pcg_probes(lambda V: A @ V, d, Z, rtol=rtol).logdet
