"""The exact Laplace-approximated deviance of a logistic GLMM with crossed random intercepts.

The deviance, the modes and the PIRLS loop are those of :mod:`judge_transfer_audit.statistics.glmm.pirls` (the objective
of ``lme4::glmer(nAGQ = 1)`` in its second stage); this module gives the exact factorisation of
the penalised Hessian ``H = I + Lambda Z' W Z Lambda``, its solves and log det, and the analytic
gradient.

Structure used for speed: the factor with the most levels ("A") has a diagonal block ``D`` in
the penalised Hessian, so it is eliminated by a Schur complement; only the remaining columns
("R", e.g. the readers) form a dense ``q_R x q_R`` matrix ``S = E - C' D^{-1} C`` that is
Cholesky-factorised. The coupling ``C`` is stored dense when small and otherwise as its values on
a fixed CSR pattern (``cell_a``, ``cell_r``), so one Newton step costs O(N + nnz(C) + q_R^3).
When there is one other factor and each level of A meets a single level of it (one reader per
pair, as in Chatbot Arena's one vote per battle), ``S`` is diagonal and a step costs O(N) (the
"diagonal" path).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.special import expit

from judge_transfer_audit.statistics.glmm.pirls import PirlsDeviance

# Above this many entries the coupling between the eliminated factor and the rest is sparse.
_DENSE_COUPLING_MAX = 400_000
_PIRLS_TOL = 1e-22
# Newton steps with a reused factorisation before refactorising.
_CHORD_STEPS = 8
# Below this N * q_R an exact factorisation is cheaper than the extra chord steps.
_CHORD_MIN_WORK = 2_000_000
# A diagonal reader block (one reader per pair) takes the diagonal path above this many reader
# levels. Below it the dense Cholesky costs little, and the cells that judge_transfer_audit.statistics.glmm.batch fits
# together (on their own dense path, at most 200 levels) report the path a fit of one cell does.
DIAGONAL_MIN_LEVELS = 200


class _Cholesky:
    """Cholesky factor of a symmetric positive-definite matrix; plain numpy below a size where
    scipy's wrappers cost more than the factorisation."""

    _SMALL = 64

    def __init__(self, S):
        self.S = S
        if S.shape[0] <= self._SMALL:
            self.L = np.linalg.cholesky(S)
            self.cho = None
        else:
            self.cho = sla.cho_factor(S, lower=True, check_finite=False)
            self.L = self.cho[0]
        self.logdet = 2.0 * float(np.log(np.diag(self.L)).sum())

    def solve(self, b):
        if self.cho is None:
            return np.linalg.solve(self.S, b)
        return sla.cho_solve(self.cho, b, check_finite=False)

    def inverse(self):
        if self.cho is None:
            return np.linalg.inv(self.S)
        inv, info = sla.lapack.dpotri(self.L, lower=1)
        if info != 0:
            return sla.cho_solve(self.cho, np.eye(self.S.shape[0]), check_finite=False)
        inv = np.tril(inv)
        return inv + np.tril(inv, -1).T


class _LowerCholeskyInPlace:
    """Cholesky factor of a large dense S given only by its upper triangle (row-major), factorised
    in place as the lower triangle of the Fortran view ``S.T``: no symmetrising copy of S.
    ``inverse()`` returns S^{-1} valid on its lower triangle only (read entries as
    ``inv[max(i, j), min(i, j)]``)."""

    lower_only = True

    def __init__(self, S_upper):
        self.L, _ = sla.cho_factor(S_upper.T, lower=True, overwrite_a=True, check_finite=False)
        self.logdet = 2.0 * float(np.log(np.diag(self.L)).sum())

    def solve(self, b):
        return sla.cho_solve((self.L, True), b, check_finite=False)

    def inverse(self):
        inv, info = sla.lapack.dpotri(self.L, lower=1)
        if info != 0:
            inv = sla.cho_solve((self.L, True), np.eye(self.L.shape[0]), check_finite=False)
        return inv


class _DiagonalFactor:
    """The factor of a diagonal S (given by its diagonal ``d``): solves and log det in O(m) (its inverse,
    ``1 / d``, is read from ``d`` by the gradient)."""

    def __init__(self, d):
        self.d = d
        self.logdet = float(np.log(d).sum())

    def solve(self, b):
        return b / self.d


def one_column_per_level(ga: np.ndarray, col_other: list, na: int) -> bool:
    """Whether there is one other factor and every level of the eliminated one (codes ``ga``, ``na``
    levels) meets a single level of it (``col_other[0]``): then the Schur block S is diagonal."""
    if len(col_other) != 1:
        return False
    c = col_other[0]
    first = np.full(na, -1, dtype=np.int64)
    first[ga] = c
    return bool(np.array_equal(first[ga], c))


def stable_order(keys: np.ndarray, bound: int) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` of non-negative integer keys below ``bound``: the same
    permutation (a stable sort is unique), by numpy's radix sort on 16-bit digits where they fit
    (least significant digit first), ~10 times faster than the comparison sort of int64 keys."""
    if bound <= 1 << 16:
        return np.argsort(keys.astype(np.uint16), kind="stable")
    if bound <= 1 << 32:
        order = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
        return order[np.argsort((keys[order] >> 16).astype(np.uint16), kind="stable")]
    return np.argsort(keys, kind="stable")


def _lower_entries(a: np.ndarray, pos_c: np.ndarray, pos_f: np.ndarray) -> np.ndarray:
    """Entries of the square matrix ``a`` at memory positions ``pos_c`` (C order) or ``pos_f`` (Fortran
    order), whichever layout ``a`` has (the values ``a[i, j]`` fancy indexing would give)."""
    if a.flags.c_contiguous:
        return a.reshape(-1).take(pos_c)
    if a.flags.f_contiguous:
        return a.T.reshape(-1).take(pos_f)
    n = a.shape[0]
    return a[pos_c // n, pos_c % n]


class LaplaceDeviance(PirlsDeviance):
    """Callable Laplace deviance for one data set, exact (internal; see module docstring).

    Parameters as :class:`judge_transfer_audit.statistics.glmm.pirls.PirlsDeviance`, and ``factorization`` ("auto",
    "dense" or "sparse") for the reader block's Cholesky factor.
    """

    chord_steps = _CHORD_STEPS

    def __init__(self, y, X, codes, n_levels, factorization="auto"):
        super().__init__(y, X, codes, n_levels)
        self._sparse = None
        self.diagonal = False
        if self.K == 0:
            return
        # one non-eliminated factor, and each level of A meets a single level of it (one reader per
        # pair): C' D^{-1} C and E are diagonal, so S is (the "diagonal" path, O(N) per factorisation)
        self.diagonal = (
            factorization == "auto"
            and self.qR > DIAGONAL_MIN_LEVELS
            and one_column_per_level(self.ga, self.col_other, self.na)
        )
        if self.diagonal:  # a factorisation costs no more than a solve: no chord steps
            self.chord_steps = 0
        # the dense coupling layout for small cells (not with a forced sparse factorisation nor a
        # diagonal block)
        self.dense = self.na * self.qR <= _DENSE_COUPLING_MAX and factorization != "sparse" and not self.diagonal
        if self.qR:
            keys = [self.ga * self.qR + c for c in self.col_other]
            if self.dense:
                self.cell_keys = keys
            else:
                uniq, inv = np.unique(np.concatenate(keys), return_inverse=True)
                self.n_cells = uniq.size
                self.cell_keys = [inv[j * self.n : (j + 1) * self.n] for j in range(len(keys))]
                cell_a = uniq // self.qR
                self.cell_a = cell_a
                self.cell_r = (uniq % self.qR).astype(np.int32)
                self.indptr = np.concatenate([[0], np.cumsum(np.bincount(cell_a, minlength=self.na))])
            # pairs of non-eliminated factors (k < l) couple R columns with each other
            self.pair_keys = []
            for j in range(len(self.others)):
                for l in range(j + 1, len(self.others)):
                    self.pair_keys.append(self.col_other[j] * self.qR + self.col_other[l])
            self._choose_path(factorization)

    def _choose_path(self, factorization):
        """Dense or sparse factorisation of the Schur block (cost rule in
        :mod:`judge_transfer_audit.statistics.glmm.sparse`)."""
        from judge_transfer_audit.statistics.glmm import sparse as sparse_mod

        force = None if factorization == "auto" else factorization
        if self.diagonal:
            self.path = sparse_mod.PathChoice(
                "diagonal",
                "each level of the eliminated factor meets one reader: the reader block is diagonal",
                self.qR,
            )
            return
        if self.dense or (force is None and self.qR <= sparse_mod.DENSE_ALWAYS_MAX) or force == "dense":
            self.path = sparse_mod.PathChoice(
                "dense",
                "forced" if force == "dense" else "small Schur block" if not self.dense else "dense coupling",
                self.qR,
                dense_flops=self.qR**3 / 3.0,
            )
            return
        if not hasattr(self, "_pair_i"):
            self._build_cell_pairs()
        m = self.qR
        diag = np.arange(m, dtype=np.int64) * (m + 1)
        parts = [diag, self._pair_flat] + list(self.pair_keys)
        keys = np.unique(np.concatenate(parts))
        pattern = sp.csc_matrix(
            (np.ones(keys.size), keys % m, np.concatenate([[0], np.cumsum(np.bincount(keys // m, minlength=m))])),
            shape=(m, m),
        )
        choice, symbolic = sparse_mod.choose_path(pattern, force)
        self.path = choice
        if choice.path != "sparse":
            return
        self._sparse = sparse_mod.SparseSchur(pattern, symbolic)
        self._sp_keys = keys
        self._sp_diag_pos = np.searchsorted(keys, diag)
        self._sp_pair_pos = np.searchsorted(keys, self._pair_flat)
        self._sp_ekey_pos = [np.searchsorted(keys, k) for k in self.pair_keys]

    # ------------------------------------------------------------------ the factorisation
    def _factor(self, theta, w):
        """Factorise H = I + Lambda Z' W Z Lambda by eliminating factor A."""
        tA = theta[self.ia]
        D = 1.0 + tA * tA * np.bincount(self.ga, w, self.na)
        f = {"D": D}
        if not self.qR:
            f["logdet"] = float(np.log(D).sum())
            return f
        tcol = self._theta_cols(theta)
        diag = np.zeros(self.qR)
        for c in self.col_other:
            diag += np.bincount(c, w, self.qR)
        if self.dense:
            E = np.zeros((self.qR, self.qR))
            E[np.diag_indices(self.qR)] = 1.0 + tcol * tcol * diag
            for key in self.pair_keys:
                blk = np.bincount(key, w, self.qR * self.qR).reshape(self.qR, self.qR)
                blk *= np.outer(tcol, tcol)
                E += blk + blk.T
        if self.dense:
            cw = np.zeros(self.na * self.qR)
            for key in self.cell_keys:
                cw += np.bincount(key, w, self.na * self.qR)
            C = cw.reshape(self.na, self.qR) * (tA * tcol)[None, :]
            S = E - (C / D[:, None]).T @ C
        else:
            vals = np.zeros(self.n_cells)
            for key in self.cell_keys:
                vals += np.bincount(key, w, self.n_cells)
            # C's entries at (cell_a, cell_r), in CSR order: kept as values, used only through them
            vals *= tA * tcol[self.cell_r]
            if self.diagonal:  # one cell per level of A: C' D^{-1} C has no off-diagonal term
                s = 1.0 + tcol * tcol * diag - np.bincount(self.cell_r, vals * vals / D[self.cell_a], self.qR)
                chol = _DiagonalFactor(s)
                f.update(C_values=vals, cho=chol, logdet=float(np.log(D).sum() + chol.logdet))
                return f
            if self._sparse is not None:
                chol = self._sparse.factor(self._sparse_schur_values(tcol, diag, w, vals, D))
                f.update(C_values=vals, cho=chol, logdet=float(np.log(D).sum() + chol.logdet))
                return f
            # C' D^{-1} C from the precomputed pairs of cells sharing a level of A (the symbolic
            # product is fixed, so only the products of values are summed); only the upper
            # triangle of S is formed, and factorised in place
            if not hasattr(self, "_pair_i"):
                self._build_cell_pairs()
            vd = vals / D[self.cell_a]
            S = np.bincount(self._pair_flat, vd[self._pair_i] * vals[self._pair_j], self.qR * self.qR)
            if S.dtype != np.float64:  # no pair of cells: numpy's bincount of nothing is an int array
                S = S.astype(np.float64)
            np.negative(S, out=S)
            S = S.reshape(self.qR, self.qR)
            S[np.diag_indices(self.qR)] = 1.0 + tcol * tcol * diag - np.bincount(self.cell_r, vd * vals, self.qR)
            for key in self.pair_keys:
                S += np.bincount(key, w, self.qR * self.qR).reshape(self.qR, self.qR) * np.outer(tcol, tcol)
            chol = _LowerCholeskyInPlace(S)
            f.update(C_values=vals, cho=chol, logdet=float(np.log(D).sum() + chol.logdet))
            return f
        chol = _Cholesky(S)
        f.update(C=C, cho=chol, logdet=float(np.log(D).sum() + chol.logdet))
        return f

    def _sparse_schur_values(self, tcol, diag, w, vals, D):
        """Entries of S = E - C' D^{-1} C on the fixed sparse pattern (lower triangle)."""
        m = self.qR
        nnz = self._sp_keys.size
        vd = vals / D[self.cell_a]
        data = np.zeros(nnz)
        data[self._sp_diag_pos] = 1.0 + tcol * tcol * diag - np.bincount(self.cell_r, vd * vals, m)
        data -= np.bincount(self._sp_pair_pos, vd[self._pair_i] * vals[self._pair_j], nnz)
        for key, pos in zip(self.pair_keys, self._sp_ekey_pos):
            data += np.bincount(pos, w * tcol[key // m] * tcol[key % m], nnz)
        return data

    def _solve(self, f, rA, rR, kind="newton"):
        """Solve H [xA; xR] = [rA; rR] with a factorisation from :meth:`_factor` (exact for any kind)."""
        D = f["D"]
        if not self.qR:
            return rA / D, np.zeros(0)
        if self.dense:
            C = f["C"]
            xR = f["cho"].solve(rR - C.T @ (rA / D))
            xA = (rA - C @ xR) / D
            return xA, xR
        # the sparse C's products as sums over its entries (at rows cell_a, columns cell_r), added in
        # the order scipy's CSR matrix-vector products add them: the same numbers, with no sparse
        # matrix (and its transpose) built per factorisation and solve
        c = f["C_values"]
        xR = f["cho"].solve(rR - np.bincount(self.cell_r, c * (rA / D)[self.cell_a], self.qR))
        xA = (rA - np.bincount(self.cell_a, c * xR[self.cell_r], self.na)) / D
        return xA, xR

    def _converged(self, decrement, pdev):
        return decrement < _PIRLS_TOL

    def _chord_factor(self):
        # the previous call's factorisation, where refactorising costs more than the extra steps
        return getattr(self, "_last_factor", None) if self.n * max(self.qR, 1) >= _CHORD_MIN_WORK else None

    def _log_det(self, theta, f):
        return f["logdet"], {}

    # ------------------------------------------------------------------ gradient
    def _sinv_blocks(self, f):
        """Entries of H^{-1} needed per observation: the (A,A) diagonal per level of A, the (A,R)
        entries at the observed cells and S^{-1} (the (R,R) block)."""
        D = f["D"]
        if not self.qR:
            return 1.0 / D, None, None
        if self.diagonal:  # G at the observed cells (one per level of A) and S^{-1} on its diagonal
            sinv = 1.0 / f["cho"].d
            ct = f["C_values"] / D[self.cell_a]
            G_cell = ct * sinv[self.cell_r]
            hAA = 1.0 / D + np.bincount(self.cell_a, ct * G_cell, self.na)
            return hAA, G_cell, lambda r, c: np.where(r == c, sinv[r], 0.0)
        if self._sparse is not None:
            Sinv = None
        else:
            Sinv = f["cho"].inverse()
        if self.dense:
            Ct = f["C"] / D[:, None]
            G = Ct @ Sinv
            hAA = 1.0 / D + np.einsum("ij,ij->i", G, Ct)
            return hAA, G.ravel(), Sinv
        # sparse: G = C~ S^{-1} is needed only at the observed cells; sum over the cells that
        # share a level of A (precomputed pairs of cells within one CSR row)
        if not hasattr(self, "_pair_i"):
            self._build_cell_pairs()
        ct = f["C_values"] / D[self.cell_a]
        # G[c] = sum over cells c' in the same row of ct[c'] * Sinv[r(c'), r(c)]: the diagonal
        # term plus each unordered pair once (Sinv is symmetric), gathered in memory order
        if self._sparse is not None:
            zsel = f["cho"].selected_inverse()
            G_cell = ct * zsel[self._sp_diag_pos][self.cell_r]
            s_pair = zsel[self._sp_pair_pos]
        else:
            # Sinv is valid on its lower triangle: entry (max, min) of each pair, gathered by its position
            G_cell = ct * Sinv[self.cell_r, self.cell_r]
            s_pair = _lower_entries(Sinv, self._pair_lower_c, self._pair_lower_f)
        G_cell += np.bincount(self._pair_i, ct[self._pair_j] * s_pair, self.n_cells)
        G_cell += np.bincount(self._pair_j, ct[self._pair_i] * s_pair, self.n_cells)
        hAA = 1.0 / D + np.bincount(self.cell_a, ct * G_cell, self.na)
        if self._sparse is not None:
            keys = self._sp_keys
            m = self.qR

            def sinv_at(r, c):
                lo, hi = np.minimum(r, c), np.maximum(r, c)
                return zsel[np.searchsorted(keys, lo * m + hi)]

            return hAA, G_cell, sinv_at
        return hAA, G_cell, Sinv

    def _build_cell_pairs(self):
        """Unordered pairs (i < j) of cells sharing a level of the eliminated factor, sorted by
        their position in S^{-1} so that the gather streams through memory."""
        counts = np.diff(self.indptr)
        starts = self.indptr[:-1]
        parts_i, parts_j = [], []
        for m in np.unique(counts):
            if m < 2:
                continue
            ti, tj = np.triu_indices(int(m), 1)
            rows = starts[counts == m]
            parts_i.append((rows[:, None] + ti[None, :]).ravel())
            parts_j.append((rows[:, None] + tj[None, :]).ravel())
        if parts_i:
            pi = np.concatenate(parts_i).astype(np.int64)
            pj = np.concatenate(parts_j).astype(np.int64)
        else:
            pi = pj = np.zeros(0, dtype=np.int64)
        ri = self.cell_r[pi].astype(np.int64)
        rj = self.cell_r[pj].astype(np.int64)
        flat = np.minimum(ri, rj) * self.qR + np.maximum(ri, rj)
        order = stable_order(flat, self.qR * self.qR)
        self._pair_i, self._pair_j, self._pair_flat = pi[order], pj[order], flat[order]
        # entry (max, min) of each pair in S^-1 (lower triangle) as a position in memory, for either layout
        self._pair_lower_c = (self._pair_flat % self.qR) * self.qR + self._pair_flat // self.qR
        self._pair_lower_f = self._pair_flat

    def gradient(self):
        """Gradient of the Laplace deviance w.r.t. (theta, beta) at the last call (analytic:
        envelope theorem for the modes plus the derivative of log det H through W(eta(u(.))))."""
        st = self.state
        theta = st["theta"]
        eta = st["eta"]
        mu = expit(eta)
        r = mu - self.y
        if self.K == 0:
            return np.concatenate([np.zeros(0), self.X.T @ (2.0 * r)])
        w = mu * (1.0 - mu)
        u = st["u"]
        f = st["factor"]
        hAA, G, Sinv = self._sinv_blocks(f)
        tA = theta[self.ia]
        a = self.ga
        PA = tA * hAA[a]  # (P theta)_A per observation
        PR = []
        if self.qR:
            for j, k in enumerate(self.others):
                key = self.cell_keys[j]
                PAR = -G[key]
                PA = PA + theta[k] * PAR
                row = tA * PAR
                for l, k2 in enumerate(self.others):
                    cj, cl = self.col_other[j], self.col_other[l]
                    if callable(Sinv):
                        row = row + theta[k2] * Sinv(cj, cl)
                    elif self.dense:
                        row = row + theta[k2] * Sinv[cj, cl]
                    else:  # lower triangle valid
                        row = row + theta[k2] * Sinv[np.maximum(cj, cl), np.minimum(cj, cl)]
                PR.append(row)
        h = tA * PA
        for j, k in enumerate(self.others):
            h = h + theta[k] * PR[j]
        v = w * (1.0 - 2.0 * mu) * h
        tvA, tvR = self._solve(f, *self._lambda_zt(theta, v))
        t = np.concatenate([tvA, tvR])
        e = 2.0 * r + v - w * self._eta_re(theta, t)
        g_theta = np.empty(self.K)
        g_theta[self.ia] = (u[: self.na][a] @ e) + 2.0 * (w @ PA) - tvA @ np.bincount(a, r, self.na)
        uR = u[self.na :]
        for j, k in enumerate(self.others):
            c = self.col_other[j]
            lo, hi = self.r_off[j], self.r_off[j + 1]
            g_theta[k] = (
                (uR[c] @ e) + 2.0 * (w @ PR[j]) - tvR[lo:hi] @ np.bincount(self.g_other[j], r, self.n_levels[k])
            )
        return np.concatenate([g_theta, self.X.T @ e])
