"""Entries of the inverse of the readers' Schur complement without forming it: conjugate gradients
and random probes, for the one-step of cells with many readers who share pairs.

The one-step (:mod:`audit.uncertainty.one_step`) needs a few entries of ``S^-1``, where ``S`` is the
``(1 + readers)``-square Schur complement of the penalised Hessian left after eliminating the pairs:
its ``(b0, b0)`` entry and ``b0`` row, its diagonal, and, for every pair, its entries between the
readers of that pair (contracted with the pair's coupling ``w_a``). Written densely that is a cubic
factorisation and a quadratic block. Here:

- the readers' block ``Sr = diag(d) - C'C`` (``C`` the pairs x readers coupling scaled by the pair
  block, sparse) is applied by two sparse products and solved by conjugate gradients preconditioned
  by ``1 / d``. ``Sr`` has every eigenvalue at least 1 (it is a Schur complement of a matrix that is
  the identity plus a positive semi-definite one), so the iterations stay few;
- the ``b0`` row and column are one exact solve ``y = Sr^-1 s`` and the Sherman-Morrison identity:
  ``S^-1[0, 0] = 1 / sigma``, ``S^-1[0, j] = -y_j / sigma``, ``S^-1[i, j] = Sr^-1[i, j] + y_i y_j / sigma``
  with ``sigma = S[0, 0] - s'y``;
- the entries of ``M = Sr^-1`` are estimated with random sign probes ``Z`` (Hutchinson's estimator,
  ``E[Z Z'] = I``) around an exact control variate, the first two terms of the Neumann series
  ``M = T1 + T1 A T1 + M (A T1)^2`` (``T1 = diag(1/d)``, ``A = C'C``): the probes only estimate the
  remainder ``(M - T1 - T1 A T1) Z``, whose rows are 2-5x smaller than those of ``M - T1``. ``A``'s
  entries between the readers of one pair are looked up on its sparse pattern (``sum_a m_a^2``
  entries, as the dense path gathers).

Cost: ``probes x votes x iterations`` for the solves plus ``sum_a m_a^2`` for the lookups, memory
``readers x probes``; nothing readers x readers dense. The estimate's Monte-Carlo error is measured
by the one-step from two independent halves of the probes (:func:`audit.uncertainty.one_step`), and
validated against the dense path in ``tests/audit/uncertainty/test_stochastic_inverse.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# entries gathered at once (bounds the memory of a slab: 16 MB)
SLAB_ENTRIES = 2_000_000


def block_cg(matvec, B: np.ndarray, precond: np.ndarray, *, tol: float = 1e-10, max_iter: int = 10_000):
    """Preconditioned conjugate gradients on every column of ``B`` at once.

    ``matvec`` applies an SPD matrix to a block, ``precond`` is the inverse of its diagonal (a
    column); each column is solved to a residual ``tol`` times its norm. Returns the solutions and
    whether every column converged. (scipy's ``cg`` takes one right-hand side at a time; a block of
    probes in one sparse product per iteration is what makes the estimate fast.)"""
    X = np.zeros_like(B)
    res = B.copy()
    z = precond * res
    d = z.copy()
    rz = np.einsum("ij,ij->j", res, z)
    bound = tol * np.sqrt(np.einsum("ij,ij->j", B, B))
    for _ in range(max_iter):
        Ad = matvec(d)
        curvature = np.einsum("ij,ij->j", d, Ad)
        alpha = np.divide(rz, curvature, out=np.zeros_like(rz), where=curvature > 0)
        X += d * alpha
        res -= Ad * alpha
        if np.all(np.sqrt(np.einsum("ij,ij->j", res, res)) <= bound):
            return X, True
        z = precond * res
        rz_new = np.einsum("ij,ij->j", res, z)
        d = z + d * np.divide(rz_new, rz, out=np.zeros_like(rz), where=rz > 0)
        rz = rz_new
    return X, False


def reader_schur_solve(C, d: np.ndarray, B: np.ndarray):
    """Solve ``(diag(d) - C'C) X = B`` (the readers' Schur complement) by conjugate gradients
    preconditioned by ``1 / d``; returns ``X`` and whether it converged."""
    CT = C.T.tocsr()
    return block_cg(lambda X: d[:, None] * X - CT @ (C @ X), B, (1.0 / d)[:, None])


def pair_slabs(cell_pair: np.ndarray, cell_reader: np.ndarray, n_pairs: int):
    """The cells of the pairs read by ``m`` readers, for each ``m``, in slabs of at most
    :data:`SLAB_ENTRIES` reader x reader entries: ``(K, rk)``, the cells (pairs x m) and their readers."""
    starts = np.searchsorted(cell_pair, np.arange(n_pairs + 1))
    degree = np.diff(starts)
    for m in np.unique(degree):
        if m == 0:
            continue
        pairs_m = np.flatnonzero(degree == m)
        slab = max(1, SLAB_ENTRIES // int(m) ** 2)
        for lo in range(0, pairs_m.size, slab):
            K = starts[pairs_m[lo : lo + slab]][:, None] + np.arange(m)[None, :]
            yield K, cell_reader[K]


@dataclass(frozen=True)
class ProbeSums:
    """Sums over ``probes`` random probes of the remainder's estimates (internal)."""

    probes: int
    diagonal: np.ndarray  #: per reader, sum over probes of (R3 Z)_j Z_j
    coupled: np.ndarray  #: per cell (a, j), sum over probes of (R3 Z)_j (Z' w_a)


class ReaderBlockInverse:
    """The exact parts of ``S^-1``'s entries, and the probes' estimates of the rest (internal).

    Built from the one-step's cell quantities: the coupling ``v`` per cell, the pair block ``D``,
    the Schur complement's ``(b0, b0)`` entry ``s_00``, its ``b0`` row ``s0r`` and its readers'
    diagonal ``d``. ``reason`` is non-empty when the block could not be solved."""

    def __init__(self, table, v: np.ndarray, D: np.ndarray, s_00: float, s0r: np.ndarray, d: np.ndarray):
        import scipy.sparse as sp

        a, r = table.cell_pair, table.cell_reader
        P, R = table.n_pairs, table.n_readers
        self.a, self.r, self.P, self.R, self.v, self.d = a, r, P, R, v, d
        self.C = sp.csr_matrix((v / np.sqrt(D[a]), (a, r)), shape=(P, R))
        self.CT = self.C.T.tocsr()
        self.reason = ""
        x, converged = reader_schur_solve(self.C, d, s0r[:, None])
        y = x[:, 0]
        sigma = s_00 - s0r @ y
        if not converged:
            self.reason = "the conjugate gradients on the readers' block did not converge"
            return
        if not sigma > 0:
            self.reason = "the penalised Hessian is not positive definite"
            return
        self.s00, self.s0 = 1.0 / sigma, -y / sigma
        A = (self.CT @ self.C).tocsr()
        A.sum_duplicates()
        A.sort_indices()
        # exact parts: T1 + T1 A T1 on the diagonal and within pairs, and the b0 rank-one term
        self.base_diagonal = 1.0 / d + A.diagonal() / d**2 + y**2 / sigma
        u = v / d[r]
        coupled = u + y[r] * np.bincount(a, v * y[r], P)[a] / sigma
        keys = np.repeat(np.arange(R, dtype=np.int64), np.diff(A.indptr)) * R + A.indices
        for K, rk in pair_slabs(a, r, P):
            # every (reader, reader) of one pair is on A's pattern (the pair itself couples them)
            found = np.searchsorted(keys, rk[:, :, None] * np.int64(R) + rk[:, None, :])
            coupled[K] += np.einsum("pij,pj->pi", A.data[found], u[K]) / d[rk]
        self.base_coupled = coupled

    def probe(self, probes: int, seed: int) -> ProbeSums | str:
        """The remainder ``(M - T1 - T1 A T1)`` seen through ``probes`` random sign vectors (seeded);
        a reason string when the solves did not converge."""
        a, r, d = self.a, self.r, self.d
        Z = np.random.default_rng(seed).choice([-1.0, 1.0], size=(self.R, probes))
        X, converged = reader_schur_solve(self.C, d, Z)
        if not converged:
            return "the conjugate gradients on the readers' block did not converge"
        T1Z = Z / d[:, None]
        X -= T1Z + (self.CT @ (self.C @ T1Z)) / d[:, None]  # (M - T1 - T1 A T1) Z
        W = np.zeros((self.P, probes))  # Z' w_a per pair (w_a: the pair's row of the coupling)
        coupled = np.empty(a.size)
        step = max(1, SLAB_ENTRIES // probes)
        for lo in range(0, a.size, step):
            sl = slice(lo, lo + step)
            np.add.at(W, a[sl], self.v[sl, None] * Z[r[sl]])
        for lo in range(0, a.size, step):
            sl = slice(lo, lo + step)
            coupled[sl] = np.einsum("ij,ij->i", X[r[sl]], W[a[sl]])
        return ProbeSums(probes, np.einsum("ij,ij->i", X, Z), coupled)

    def entries(self, sums: list[ProbeSums]) -> tuple[np.ndarray, np.ndarray]:
        """``S^-1``'s diagonal over readers and, per cell ``(a, j)``, ``sum over the pair's cells c'
        of v_c' S^-1[r_c', j]``, estimated from the probes in ``sums``."""
        k = sum(s.probes for s in sums)
        diagonal = self.base_diagonal + sum(s.diagonal for s in sums) / k
        coupled = self.base_coupled + sum(s.coupled for s in sums) / k
        return diagonal, coupled
