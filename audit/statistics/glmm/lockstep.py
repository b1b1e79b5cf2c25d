"""Small crossed GLMMs fitted in lockstep with the per-cell engine's own arithmetic, to the last bit.

:mod:`judge_transfer_audit.statistics.glmm.batch` fits many small cells together on a dense stacked system: the same
optimiser, but
sums in another order, so its estimates differ from :func:`judge_transfer_audit.statistics.glmm.fit.fit_native`'s by
rounding (amplified by the optimiser to ~1e-7). Where a caller's results must not move at all (leave-one-reader-out
refits of the most influential readers, made one by one with ``fit_native`` before), this module runs
``fit_native``'s decisions for many cells at once and answers every evaluation with **the same
floating-point operations** as :class:`judge_transfer_audit.statistics.glmm.laplace.LaplaceDeviance` on its dense path:
the pairs' block eliminated (``D``), the coupling ``C`` and the Schur block ``S = E - (C/D)' C`` formed and solved by
the same numpy / BLAS / LAPACK calls, one per cell of the stack (numpy's stacked ``matmul``, ``solve``,
``cholesky`` and ``inv`` call the same routine per cell as the 2-d calls; ``bincount`` over offset keys
sums each level's votes in the same order; row reductions use the same pairwise summation), the PIRLS
loop with its chord steps, step halving and stopping rules kept per cell. So every cell's optimum equals
``fit_native``'s bit for bit (tests/audit/statistics/glmm/test_glmm_lockstep.py checks it on hundreds of seeded
cells, boundary fits included).

What it covers (:func:`lockstep_able`): two crossed factors, an intercept only, the automatic (dense)
factorisation with at most :data:`LOCKSTEP_MAX_VOTES` votes and a reader block of at most 64 levels, no
subsample start, and not every vote the same way. Cells of one shape (votes, levels of each factor) run
together; anything that raises in a stacked evaluation (a Schur block not positive definite) sends the
whole group back to ``fit_native``, one by one, so a failure is recorded as it always was.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy.special import expit

from judge_transfer_audit.core.threads import single_threaded_blas
from judge_transfer_audit.statistics.glmm.design import Design
from judge_transfer_audit.statistics.glmm.fit import (
    _CONVERGED_GRAD,
    SINGULAR_TOL,
    _start_values,
    canonical_order,
    optimum_steps,
)
from judge_transfer_audit.statistics.glmm.laplace import _CHORD_STEPS, _PIRLS_TOL
from judge_transfer_audit.statistics.glmm.optimize import projected_gradient
from judge_transfer_audit.statistics.glmm.pirls import _HALVINGS, _PIRLS_MAXIT

#: cells with at most this many votes take the lockstep path (their chord factorisation is not reused
#: across deviance calls: ``LaplaceDeviance._chord_factor`` needs votes x reader levels >= 2M)
LOCKSTEP_MAX_VOTES = 20_000
#: the reader block is solved by ``numpy.linalg.solve`` (``_Cholesky`` up to this size)
_MAX_SCHUR = 64


@dataclass(frozen=True)
class LockstepFit:
    """One cell's optimum: ``x`` (thetas, then the intercept), the flags :func:`fit_native` would give."""

    x: np.ndarray
    converged: bool
    singular: bool

    @property
    def b0(self) -> float:
        return float(self.x[2])


def lockstep_able(design: Design, start=None) -> bool:
    """Whether a (canonically ordered) design's :func:`fit_native` run is reproduced here."""
    from judge_transfer_audit.statistics.glmm.iterative import use_iterative

    y = design.y
    n_levels = [len(lv) for lv in design.levels]
    return (
        len(design.codes) == 2
        and design.X.shape[1] == 1
        and bool(np.all(design.X == 1.0))
        and design.factorization == "auto"
        and 2 <= y.size <= LOCKSTEP_MAX_VOTES
        and min(n_levels) * max(n_levels) <= 400_000  # LaplaceDeviance's dense coupling
        and min(n_levels) <= _MAX_SCHUR
        and y.size * min(n_levels) < 2_000_000  # no chord factor kept between calls
        and not bool(np.all(y == y[0]))
        and use_iterative(design.codes, n_levels, design.factorization) is None
    )


def _rows_bincount(codes: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    """Per row, ``np.bincount(codes[g], values[g], size)`` (the same sums in the same order)."""
    m = codes.shape[0]
    keys = codes + (np.arange(m) * size)[:, None]
    return np.bincount(keys.ravel(), values.ravel(), m * size).reshape(m, size)


def _dots(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per row, ``a[g] @ b[g]`` (numpy's 1-d ``@``: the same BLAS dot)."""
    return np.matmul(a[:, None, :], b[:, :, None])[:, 0, 0]


class _Factors:
    """The dense-path factorisation of many cells: ``D``, ``C``, ``S`` and log det (stacked)."""

    def __init__(self, m: int, na: int, qr: int):
        self.D = np.empty((m, na))
        self.C = np.empty((m, na, qr))
        self.S = np.empty((m, qr, qr))
        self.logdet = np.empty(m)

    def put(self, at: np.ndarray, D, C, S, logdet) -> None:
        self.D[at], self.C[at], self.S[at], self.logdet[at] = D, C, S, logdet


class LockstepLaplace:
    """:class:`judge_transfer_audit.statistics.glmm.laplace.LaplaceDeviance` (two factors, dense path) of G cells of
    one shape, evaluated for any subset at once with the per-cell arithmetic; each cell keeps its own modes."""

    def __init__(self, designs: Sequence[Design]):
        first = designs[0]
        sizes = [len(lv) for lv in first.levels]
        self.ia = int(np.argmax(sizes))  # the factor eliminated first ("A": the most levels)
        self.ir = 1 - self.ia
        self.na, self.qr = sizes[self.ia], sizes[self.ir]
        self.q = self.na + self.qr
        self.y = np.stack([d.y for d in designs])
        self.ga = np.stack([d.codes[self.ia] for d in designs]).astype(np.int64)
        self.gr = np.stack([d.codes[self.ir] for d in designs]).astype(np.int64)
        self.ones = np.ones((len(designs), self.y.shape[1], 1))
        G = len(designs)
        self.u = np.zeros((G, self.q))
        self.theta_prev = np.full((G, 2), np.nan)
        self.factors = _Factors(G, self.na, self.qr)
        self.eta = np.zeros(self.y.shape)

    # ------------------------------------------------------------------ pieces of LaplaceDeviance
    def _eta_re(self, idx, tA, tR, u):
        """Z Lambda u per vote: ``theta_A u_A[a] + theta_R u_R[r]`` (u: one contiguous row per cell)."""
        flat = u.reshape(-1)
        rows = (np.arange(idx.size) * self.q)[:, None]
        return tA[:, None] * flat[self.ga[idx] + rows] + tR[:, None] * flat[self.gr[idx] + (rows + self.na)]

    def _penalised(self, idx, fixed, tA, tR, u):
        eta = fixed + self._eta_re(idx, tA, tR, u)
        return eta, -2.0 * (_dots(self.y[idx], eta) - np.logaddexp(0.0, eta).sum(1)) + _dots(u, u)

    def _grad_u(self, idx, tA, tR, u, resid):
        gA = tA[:, None] * _rows_bincount(self.ga[idx], resid, self.na) + u[:, : self.na]
        gR = tR[:, None] * _rows_bincount(self.gr[idx], resid, self.qr)
        g = np.concatenate([gA, gR], axis=1)
        g[:, self.na :] += u[:, self.na :]
        return g

    def _factor(self, idx, tA, tR, w):
        D = 1.0 + (tA * tA)[:, None] * _rows_bincount(self.ga[idx], w, self.na)
        diag = _rows_bincount(self.gr[idx], w, self.qr)
        m = idx.size
        E = np.zeros((m, self.qr, self.qr))
        E[:, np.arange(self.qr), np.arange(self.qr)] = 1.0 + (tR * tR)[:, None] * diag
        cw = _rows_bincount(self.ga[idx] * self.qr + self.gr[idx], w, self.na * self.qr)
        C = cw.reshape(m, self.na, self.qr) * (tA * tR)[:, None, None]
        S = E - np.matmul(np.swapaxes(C / D[:, :, None], 1, 2), C)
        L = np.linalg.cholesky(S)
        logdet = np.log(D).sum(1) + 2.0 * np.log(np.diagonal(L, axis1=1, axis2=2)).sum(1)
        return D, C, S, logdet

    def _solve(self, at, rA, rR):
        f = self.factors
        D, C, S = f.D[at], f.C[at], f.S[at]
        xR = np.linalg.solve(S, (rR - np.matmul(np.swapaxes(C, 1, 2), (rA / D)[:, :, None])[:, :, 0])[:, :, None])
        xR = xR[:, :, 0]
        xA = (rA - np.matmul(C, xR[:, :, None])[:, :, 0]) / D
        return xA, xR

    def _warm_start(self, idx, tA, tR):
        u = self.u[idx].copy()
        u[~np.all(np.isfinite(u), axis=1)] = 0.0
        prev = self.theta_prev[idx]
        for k, t, sl in ((self.ia, tA, slice(0, self.na)), (self.ir, tR, slice(self.na, self.q))):
            ok = np.isfinite(prev[:, k]) & (prev[:, k] != 0.0) & (t != 0.0)
            ratio = np.where(ok, prev[:, k] / np.where(t != 0.0, t, 1.0), 1.0)
            u[:, sl] *= ratio[:, None]
        return u

    # ------------------------------------------------------------------ one evaluation
    def evaluate(self, idx: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Deviances and gradients (theta in factor order, then the intercept) of cells ``idx`` at ``z``."""
        theta = z[:, :2]
        tA, tR = theta[:, self.ia].copy(), theta[:, self.ir].copy()
        fixed = np.matmul(self.ones[idx], z[:, 2:3, None])[:, :, 0]  # X @ beta, as the 2-d product
        u = self._warm_start(idx, tA, tR)
        self.theta_prev[idx] = theta
        eta, pdev = self._penalised(idx, fixed, tA, tR, u)
        m = idx.size
        chord_left = np.zeros(m, dtype=np.int64)
        at_u = np.zeros(m, dtype=bool)
        done = np.zeros(m, dtype=bool)
        for _ in range(_PIRLS_MAXIT):
            act = np.flatnonzero(~done)
            if act.size == 0:
                break
            mu = expit(eta[act])
            w = mu * (1.0 - mu)
            g = self._grad_u(idx[act], tA[act], tR[act], u[act], mu - self.y[idx[act]])
            exact = chord_left[act] <= 0
            if exact.any():
                e = act[exact]
                self.factors.put(idx[e], *self._factor(idx[e], tA[e], tR[e], w[exact]))
                at_u[e] = True
            dA, dR = self._solve(idx[act], -g[:, : self.na], -g[:, self.na :])
            delta = np.concatenate([dA, dR], axis=1)
            converged = -_dots(g, delta) < _PIRLS_TOL
            chord_left[act[~exact & converged]] = 0  # a converged chord step: verify exactly next
            done[act[exact & converged]] = True
            chord_left[act[exact & ~converged]] = _CHORD_STEPS
            chord_left[act[~exact & ~converged]] -= 1
            go = ~converged
            stepping = act[go]
            if stepping.size == 0:
                continue
            moved = self._halve(idx, fixed, tA, tR, u, eta, pdev, stepping, delta[go])
            failed = stepping[~moved]
            chord_left[failed[~at_u[failed]]] = 0  # no descent along a chord step: verify exactly
            done[failed[at_u[failed]]] = True  # no descent possible: at the mode
            at_u[stepping[moved]] = False
        stale = np.flatnonzero(~at_u)  # iteration limit: factorise at the final modes
        if stale.size:
            mu = expit(eta[stale])
            self.factors.put(idx[stale], *self._factor(idx[stale], tA[stale], tR[stale], mu * (1.0 - mu)))
        self.u[idx] = u
        self.eta[idx] = eta
        return pdev + self.factors.logdet[idx], self._gradient(idx, tA, tR, u, eta)

    def _halve(self, idx, fixed, tA, tR, u, eta, pdev, cells, delta):
        """PIRLS's step halving for ``cells`` (positions in ``idx``); updates the moved ones in place and
        returns which of ``cells`` moved (a mask)."""
        step = np.ones(cells.size)
        accepted = np.zeros(cells.size, dtype=bool)
        for _ in range(_HALVINGS):
            todo = np.flatnonzero(~accepted)
            if todo.size == 0:
                break
            c = cells[todo]
            u_new = u[c] + step[todo, None] * delta[todo]
            eta_new, pdev_new = self._penalised(idx[c], fixed[c], tA[c], tR[c], u_new)
            ok = pdev_new <= pdev[c] + 1e-12 * np.abs(pdev[c])
            hit = c[ok]
            u[hit], eta[hit], pdev[hit] = u_new[ok], eta_new[ok], pdev_new[ok]
            accepted[todo[ok]] = True
            step[todo[~ok]] *= 0.5
        return accepted

    def _gradient(self, idx, tA, tR, u, eta):
        """:meth:`LaplaceDeviance.gradient` (dense path) of cells ``idx`` at their last evaluation."""
        y = self.y[idx]
        ga, gr = self.ga[idx], self.gr[idx]
        mu = expit(eta)
        r = mu - y
        w = mu * (1.0 - mu)
        f = self.factors
        D, C, S = f.D[idx], f.C[idx], f.S[idx]
        Sinv = np.linalg.inv(S)
        Ct = C / D[:, :, None]
        Gm = np.matmul(Ct, Sinv)
        hAA = 1.0 / D + np.einsum("gij,gij->gi", Gm, Ct)
        m = idx.size
        rows_a = (np.arange(m) * self.na)[:, None]
        rows_r = (np.arange(m) * self.qr)[:, None]
        PA = tA[:, None] * hAA.reshape(-1)[ga + rows_a]
        PAR = -Gm.reshape(-1)[ga * self.qr + gr + rows_a * self.qr]
        PA = PA + tR[:, None] * PAR
        row = tA[:, None] * PAR
        sdiag = np.diagonal(Sinv, axis1=1, axis2=2).copy()
        row = row + tR[:, None] * sdiag.reshape(-1)[gr + rows_r]
        h = tA[:, None] * PA
        h = h + tR[:, None] * row
        v = w * (1.0 - 2.0 * mu) * h
        vA = tA[:, None] * _rows_bincount(ga, v, self.na)
        vR = tR[:, None] * _rows_bincount(gr, v, self.qr)
        tvA, tvR = self._solve(idx, vA, vR)
        tv = np.concatenate([tvA, tvR], axis=1)
        e = 2.0 * r + v - w * self._eta_re(idx, tA, tR, tv)
        flat = u.reshape(-1)
        rows_u = (np.arange(m) * self.q)[:, None]
        g_a = _dots(flat[ga + rows_u], e) + 2.0 * _dots(w, PA) - _dots(tvA, _rows_bincount(ga, r, self.na))
        g_r = _dots(flat[gr + (rows_u + self.na)], e) + 2.0 * _dots(w, row) - _dots(tvR, _rows_bincount(gr, r, self.qr))
        out = np.empty((idx.size, 3))
        out[:, self.ia], out[:, self.ir] = g_a, g_r
        out[:, 2] = np.matmul(np.swapaxes(self.ones[idx], 1, 2), e[:, :, None])[:, 0, 0]
        return out


def fit_optima(designs: Sequence[Design], starts: Sequence | None = None) -> list[LockstepFit | None]:
    """:func:`judge_transfer_audit.statistics.glmm.fit.fit_native`'s optimum of every design it covers
    (:func:`lockstep_able`),
    fitted in lockstep by shape; None for the others and for a group whose stacked evaluation raised
    (the caller fits those with ``fit_native``). The covariance is not computed (no extra evaluations)."""
    starts = [None] * len(designs) if starts is None else list(starts)
    out: list[LockstepFit | None] = [None] * len(designs)
    shapes: dict[tuple[int, int, int], list[tuple[int, Design]]] = {}
    for i, design in enumerate(designs):
        design = canonical_order(design)
        if lockstep_able(design, starts[i]):
            shape = (design.y.size, len(design.levels[0]), len(design.levels[1]))
            shapes.setdefault(shape, []).append((i, design))
    with single_threaded_blas():
        for members in shapes.values():
            try:
                fits = _fit_shape([d for _, d in members], [starts[i] for i, _ in members])
            except (np.linalg.LinAlgError, ValueError, FloatingPointError):
                continue
            for (i, _), fit in zip(members, fits):
                out[i] = fit
    return out


def _fit_shape(designs: list[Design], starts: list) -> list[LockstepFit]:
    stack = LockstepLaplace(designs)
    steps = [optimum_steps(d, _start_values(d, starts[g], 2, 1), 2, list(d.notes)) for g, d in enumerate(designs)]
    pending = {g: next(gen) for g, gen in enumerate(steps)}
    optima: list = [None] * len(designs)
    while pending:
        idx = np.fromiter(pending, dtype=np.int64, count=len(pending))
        dev, grad = stack.evaluate(idx, np.stack([pending[g] for g in idx]))
        pending = {}
        for j, g in enumerate(idx.tolist()):
            try:
                pending[g] = steps[g].send((float(dev[j]), grad[j].copy()))
            except StopIteration as stop:
                optima[g] = stop.value
    fits = []
    for _, x, _, grad, _ in optima:
        pg = projected_gradient(grad, x, 2)
        fits.append(
            LockstepFit(
                x=x, converged=bool(np.max(np.abs(pg)) < _CONVERGED_GRAD), singular=bool(np.any(x[:2] < SINGULAR_TOL))
            )
        )
    return fits


__all__ = ["LockstepFit", "LockstepLaplace", "fit_optima", "lockstep_able", "LOCKSTEP_MAX_VOTES"]
