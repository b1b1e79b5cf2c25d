"""Entries of the inverse of the readers' Schur complement without forming it: conjugate gradients
and random probes, for the one-step of cells with many readers who share pairs.

The one-step (:mod:`judge_transfer_audit.statistics.uncertainty.one_step`) needs a few entries of ``S^-1``, where ``S``
is the ``(1 + readers)``-square Schur complement of the penalised Hessian left after eliminating the pairs:
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

Cost: ``probes x votes x iterations`` for the solves plus ``sum_a m_a^2`` for the lookups (capped at
:data:`NEUMANN_MAX_ENTRIES`: past it only ``A``'s diagonal is used), memory ``(readers + pairs) x
probes`` in bounded blocks; nothing readers x readers dense. The estimate's Monte-Carlo error is measured
by the one-step from two independent halves of the probes
(:func:`judge_transfer_audit.statistics.uncertainty.one_step`), and
validated against the dense path in ``tests/audit/statistics/uncertainty/test_stochastic_inverse.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# entries gathered at once (bounds the memory of a slab: 16 MB)
SLAB_ENTRIES = 2_000_000
#: at most this many reader x reader entries within pairs (sum over pairs of readers^2), the exact
#: part of the estimate is T1 + T1 A T1 (A's entries looked up on its pattern); past it, T1 + diag(T1 A T1)
NEUMANN_MAX_ENTRIES = 20_000_000


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


def reader_schur_solve(C, d: np.ndarray, B: np.ndarray, CT=None):
    """Solve ``(diag(d) - C'C) X = B`` (the readers' Schur complement) by conjugate gradients
    preconditioned by ``1 / d``; returns ``X`` and whether it converged. ``CT``: ``C'`` in CSR, when
    the caller solves several times."""
    CT = C.T.tocsr() if CT is None else CT
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
    diagonal ``d``. ``reason`` is non-empty when the block could not be solved. ``seed`` keys the
    probes (with the batch number), so two cells do not share their probes.

    The exact part is ``T1 + T1 A T1`` when the readers' entries within pairs number at most
    :data:`NEUMANN_MAX_ENTRIES` (``sum over pairs of readers^2``); past that (a panel design: most
    readers reading most pairs, where ``A`` is readers x readers dense) it is ``T1 + diag(T1 A T1)``,
    which needs no entry of ``A`` off its diagonal: still unbiased, with more probes to the same error.
    """

    def __init__(self, table, v: np.ndarray, D: np.ndarray, s_00: float, s0r: np.ndarray, d: np.ndarray, seed=0):
        import scipy.sparse as sp

        a, r = table.cell_pair, table.cell_reader
        P, R = table.n_pairs, table.n_readers
        self.a, self.r, self.P, self.R, self.v, self.d, self.seed = a, r, P, R, v, d, seed
        self.C = sp.csr_matrix((v / np.sqrt(D[a]), (a, r)), shape=(P, R))
        self.CT = self.C.T.tocsr()
        self.reason = ""
        x, converged = reader_schur_solve(self.C, d, s0r[:, None], self.CT)
        y = x[:, 0]
        sigma = s_00 - s0r @ y
        if not converged:
            self.reason = "the conjugate gradients on the readers' block did not converge"
            return
        if not sigma > 0:
            self.reason = "the penalised Hessian is not positive definite"
            return
        self.s00, self.s0 = 1.0 / sigma, -y / sigma
        diag_A = np.bincount(r, v * v / D[a], R)  # A's diagonal: sum over the reader's pairs of C^2
        degree = np.bincount(a, minlength=P)
        self.neumann = bool(np.sum(degree.astype(np.int64) ** 2) <= NEUMANN_MAX_ENTRIES)
        # exact parts: T1 + T1 A T1 (or its diagonal) and the b0 rank-one term
        self.base_diagonal = 1.0 / d + diag_A / d**2 + y**2 / sigma
        u = v / d[r]
        coupled = u + y[r] * np.bincount(a, v * y[r], P)[a] / sigma
        if self.neumann:
            A = (self.CT @ self.C).tocsr()
            A.sum_duplicates()
            A.sort_indices()
            keys = np.repeat(np.arange(R, dtype=np.int64), np.diff(A.indptr)) * R + A.indices
            for K, rk in pair_slabs(a, r, P):
                wanted = rk[:, :, None] * np.int64(R) + rk[:, None, :]
                found = np.minimum(np.searchsorted(keys, wanted), max(keys.size - 1, 0))
                # an entry missing from A's pattern is 0 (a coupling that is exactly 0 is not stored)
                entries = np.where(keys[found] == wanted, A.data[found], 0.0) if keys.size else np.zeros(wanted.shape)
                coupled[K] += np.einsum("pij,pj->pi", entries, u[K]) / d[rk]
        else:
            coupled += u * diag_A[r] / d[r]
        self.diag_A = diag_A
        self.base_coupled = coupled

    def probe(self, probes: int, batch: int) -> ProbeSums | str:
        """The remainder (``M`` minus the exact part) seen through ``probes`` random sign vectors,
        seeded by ``(seed, batch)``; a reason string when the solves did not converge. Solved in
        blocks of at most ``SLAB_ENTRIES * 4 / pairs`` columns, so the pairs x probes products stay
        within ~64 MB each."""
        a, r, d = self.a, self.r, self.d
        rng = np.random.default_rng(np.random.SeedSequence([int(self.seed), int(batch)]))
        Z = rng.choice([-1.0, 1.0], size=(self.R, probes))
        width = int(min(probes, max(8, 4 * SLAB_ENTRIES // max(self.P, 1))))
        diagonal = np.zeros(self.R)
        coupled = np.zeros(a.size)
        step = max(1, SLAB_ENTRIES // width)
        for lo in range(0, probes, width):
            Zb = Z[:, lo : lo + width]
            X, converged = reader_schur_solve(self.C, d, Zb, self.CT)
            if not converged:
                return "the conjugate gradients on the readers' block did not converge"
            T1Z = Zb / d[:, None]
            if self.neumann:
                X -= T1Z + (self.CT @ (self.C @ T1Z)) / d[:, None]  # (M - T1 - T1 A T1) Z
            else:
                X -= T1Z + T1Z * (self.diag_A / d)[:, None]  # (M - T1 - diag(T1 A T1)) Z
            diagonal += np.einsum("ij,ij->i", X, Zb)
            W = np.zeros((self.P, Zb.shape[1]))  # Z' w_a per pair (w_a: the pair's row of the coupling)
            for c0 in range(0, a.size, step):
                sl = slice(c0, c0 + step)
                np.add.at(W, a[sl], self.v[sl, None] * Zb[r[sl]])
            for c0 in range(0, a.size, step):
                sl = slice(c0, c0 + step)
                coupled[sl] += np.einsum("ij,ij->i", X[r[sl]], W[a[sl]])
        return ProbeSums(probes, diagonal, coupled)

    def entries(self, sums: list[ProbeSums]) -> tuple[np.ndarray, np.ndarray]:
        """``S^-1``'s diagonal over readers and, per cell ``(a, j)``, ``sum over the pair's cells c'
        of v_c' S^-1[r_c', j]``, estimated from the probes in ``sums``."""
        k = sum(s.probes for s in sums)
        diagonal = self.base_diagonal + sum(s.diagonal for s in sums) / k
        coupled = self.base_coupled + sum(s.coupled for s in sums) / k
        return diagonal, coupled
