"""Many tiny crossed GLMMs fitted together: one deviance evaluation for all cells at once.

A study with 10k criteria of 18 votes each has 10k cells of 6 pairs x 3 readers. Fitted one by one,
each cell costs ~40 Laplace evaluations of a few dozen small numpy calls each: Python overhead,
not arithmetic. :func:`fit_many` runs every cell's optimiser (the very generator
:func:`judge_transfer_audit.statistics.glmm.fit.optimise_steps` that
:func:`judge_transfer_audit.statistics.glmm.fit.fit_native` runs, so every
cell makes the same decisions: start values, projected BFGS, boundary probes, restarts, snapping,
the finite-difference vcov) and answers the evaluation requests of all cells of one shape (votes,
pairs, readers) together: PIRLS, log det and the analytic gradient on stacked dense ``q x q``
systems (``q`` = pairs + readers), each cell's modes warm-started as the per-cell engine does.

Only tiny cells take this path (:func:`batchable`: at most :data:`BATCH_MAX_VOTES` votes and
:data:`BATCH_MAX_LEVELS` levels, two factors, intercept only, not every vote one way); every
other cell is fitted by :func:`judge_transfer_audit.statistics.glmm.fit.fit_native` itself. The dense stacked solve
differs from the per-cell Schur elimination by rounding only; ``tests/audit/statistics/glmm/test_glmm_batch.py``
holds the two to 1e-6 on hundreds of random small cells, boundary fits included.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from scipy.special import expit

from judge_transfer_audit.core.threads import single_threaded_blas
from judge_transfer_audit.statistics.glmm.design import Design
from judge_transfer_audit.statistics.glmm.fit import (
    _SUBSAMPLE_START_N,
    VCOV_RX_NOTE,
    _factorization_note,
    _start_values,
    canonical_order,
    fit_native,
    native_result,
    optimise_steps,
)
from judge_transfer_audit.statistics.glmm.laplace import LaplaceDeviance
from judge_transfer_audit.statistics.glmm.model import GlmmResult
from judge_transfer_audit.statistics.glmm.optimize import is_separated
from judge_transfer_audit.statistics.glmm.pirls import _HALVINGS, _PIRLS_MAXIT

#: cells with at most this many votes ...
BATCH_MAX_VOTES = 64
#: ... and at most this many pairs + readers are fitted together
BATCH_MAX_LEVELS = 32
# PIRLS stops when the Newton decrement is below this (as judge_transfer_audit.statistics.glmm.laplace)
_PIRLS_TOL = 1e-22


def batchable(design: Design) -> bool:
    """Whether a (canonically ordered) design takes the stacked path: two crossed factors,
    intercept only, automatic factorisation, tiny, and not every response the same."""
    y = design.y
    return (
        len(design.codes) == 2
        and design.X.shape[1] == 1
        and bool(np.all(design.X == 1.0))
        and design.factorization == "auto"
        and 2 <= y.size <= BATCH_MAX_VOTES
        and sum(len(lv) for lv in design.levels) <= BATCH_MAX_LEVELS
        and not bool(np.all(y == y[0]))
    )


def _halved_steps(u, eta, pdev, active, delta, penalised) -> np.ndarray:
    """One PIRLS step of the ``active`` cells along ``delta``, halved for each cell on its own until its
    penalised deviance does not rise (at most ``_HALVINGS`` times); ``u``, ``eta`` and ``pdev`` are updated
    in place for the cells that moved, which are returned (the others: no descent possible, at the mode).
    ``penalised(cells, u_new)`` is ``(eta, pdev)`` of those cells at ``u_new``."""
    step = np.ones(active.size)
    accepted = np.zeros(active.size, dtype=bool)
    u_acc = np.empty((active.size, u.shape[1]))
    eta_acc = np.empty((active.size, eta.shape[1]))
    pdev_acc = np.empty(active.size)
    for _ in range(_HALVINGS):
        todo = np.flatnonzero(~accepted)
        if todo.size == 0:
            break
        cells = active[todo]
        u_new = u[cells] + step[todo, None] * delta[todo]
        eta_new, pdev_new = penalised(cells, u_new)
        ok = pdev_new <= pdev[cells] + 1e-12 * np.abs(pdev[cells])
        hit = todo[ok]
        u_acc[hit], eta_acc[hit], pdev_acc[hit] = u_new[ok], eta_new[ok], pdev_new[ok]
        accepted[hit] = True
        step[todo[~ok]] *= 0.5
    moved = active[accepted]
    u[moved], eta[moved], pdev[moved] = u_acc[accepted], eta_acc[accepted], pdev_acc[accepted]
    return moved


class StackedLaplace:
    """The Laplace deviance and its gradient for G cells of one shape (n votes, m0 + m1 levels),
    evaluated for any subset of them at once; each cell keeps its own modes between calls.

    Cell ``g``'s spherical random effects ``u[g]`` hold factor 0's levels, then factor 1's; the
    penalised Hessian ``H = I + Lambda Z' W Z Lambda`` is formed dense (``q x q``) per cell.
    """

    def __init__(self, designs: Sequence[Design]):
        first = designs[0]
        self.m0, self.m1 = (len(lv) for lv in first.levels)
        self.q = self.m0 + self.m1
        self.y = np.stack([d.y for d in designs])
        n = self.y.shape[1]
        self.cols = (np.stack([d.codes[0] for d in designs]), np.stack([d.codes[1] for d in designs]) + self.m0)
        G = len(designs)
        self.Z = np.zeros((G, n, self.q))
        rows = np.arange(n)
        for c in self.cols:
            self.Z[np.arange(G)[:, None], rows[None, :], c] = 1.0
        self.u = np.zeros((G, self.q))
        self.theta_prev = np.full((G, 2), np.nan)
        self.eye = np.eye(self.q)

    def _lam(self, theta):
        return np.concatenate([np.repeat(theta[:, :1], self.m0, 1), np.repeat(theta[:, 1:], self.m1, 1)], axis=1)

    def _warm_start(self, idx, theta):
        """The previous modes on the b = theta * u scale (as :meth:`PirlsDeviance._warm_start`)."""
        u = self.u[idx].copy()
        u[~np.all(np.isfinite(u), axis=1)] = 0.0
        prev = self.theta_prev[idx]
        for k, sl in ((0, slice(0, self.m0)), (1, slice(self.m0, self.q))):
            ok = np.isfinite(prev[:, k]) & (prev[:, k] != 0.0) & (theta[:, k] != 0.0)
            ratio = np.where(ok, prev[:, k] / np.where(theta[:, k] != 0.0, theta[:, k], 1.0), 1.0)
            u[:, sl] *= ratio[:, None]
        self.theta_prev[idx] = theta
        return u

    @staticmethod
    def _penalised(y, fixed, M, u):
        eta = fixed[:, None] + (M @ u[:, :, None])[:, :, 0]
        pdev = -2.0 * ((y * eta).sum(1) - np.logaddexp(0.0, eta).sum(1)) + (u * u).sum(1)
        return eta, pdev

    def _hessian(self, M, w):
        return self.eye + np.swapaxes(M * w[:, :, None], 1, 2) @ M

    def evaluate(self, idx: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Deviances (len(idx),) and gradients (len(idx), 3) of cells ``idx`` at ``z`` (theta0,
        theta1, beta0 per row); the cells' modes are left at these points."""
        theta, fixed = z[:, :2], z[:, 2]
        y = self.y[idx]
        M = self.Z[idx] * self._lam(theta)[:, None, :]
        u = self._warm_start(idx, theta)
        eta, pdev = self._penalised(y, fixed, M, u)
        active = np.arange(len(idx))
        for _ in range(_PIRLS_MAXIT):
            if active.size == 0:
                break
            Ma, ya = M[active], y[active]
            mu = expit(eta[active])
            g = (np.swapaxes(Ma, 1, 2) @ (mu - ya)[:, :, None])[:, :, 0] + u[active]
            delta = -np.linalg.solve(self._hessian(Ma, mu * (1.0 - mu)), g[:, :, None])[:, :, 0]
            go = -(g * delta).sum(1) >= _PIRLS_TOL  # the others are at their modes
            active, delta = active[go], delta[go]
            if active.size == 0:
                break
            active = _halved_steps(
                u,
                eta,
                pdev,
                active,
                delta,
                lambda cells, u_new: self._penalised(y[cells], fixed[cells], M[cells], u_new),
            )
        mu = expit(eta)
        w = mu * (1.0 - mu)
        H = self._hessian(M, w)
        L = np.linalg.cholesky(H)
        logdet = 2.0 * np.log(np.diagonal(L, axis1=1, axis2=2)).sum(1)
        P = np.linalg.inv(H)
        self.u[idx] = u
        return pdev + logdet, self._gradient(idx, theta, u, M, mu, w, P, y)

    def _gradient(self, idx, theta, u, M, mu, w, P, y):
        """The analytic gradient in (theta, beta), dense form of :meth:`LaplaceDeviance.gradient`."""
        r = mu - y
        PM = np.swapaxes(P @ np.swapaxes(M, 1, 2), 1, 2)  # row i: P m_i
        h = (M * PM).sum(2)  # m_i' P m_i
        v = w * (1.0 - 2.0 * mu) * h
        t = (P @ (np.swapaxes(M, 1, 2) @ v[:, :, None]))[:, :, 0]
        e = 2.0 * r + v - w * (M @ t[:, :, None])[:, :, 0]
        out = np.empty((len(idx), 3))
        for k, cols in enumerate(self.cols):
            c = cols[idx]
            own = np.take_along_axis(PM, c[:, :, None], 2)[:, :, 0]
            out[:, k] = (
                (np.take_along_axis(u, c, 1) * e).sum(1)
                + 2.0 * (w * own).sum(1)
                - (r * np.take_along_axis(t, c, 1)).sum(1)
            )
        out[:, 2] = e.sum(1)
        return out

    def modes(self, g: int, theta: np.ndarray) -> list[np.ndarray]:
        """Cell ``g``'s conditional modes b_k = theta_k u_k (factor order) at its last evaluation."""
        return [theta[0] * self.u[g, : self.m0], theta[1] * self.u[g, self.m0 :]]


#: cells beyond the tiny ones but with at most this many votes ...
STACK_MAX_VOTES = 20_000
#: ... and at most this many pairs + readers are fitted together by :class:`CrossedStackedLaplace`
STACK_MAX_LEVELS = 200
#: fewer cells of one level shape than this are fitted one by one (faster alone)
STACK_MIN_CELLS = 3
# one stacked evaluation holds at most about this many numbers (G cells x (q x q + n))
_STACK_CHUNK = 2_000_000


class CrossedStackedLaplace:
    """:class:`StackedLaplace` for cells past the tiny ones (leave-one-reader-out refits: a few
    hundred votes, some dozens of pairs, a handful of readers): the same PIRLS, deviance and
    gradient, the penalised Hessian eliminated as the per-cell engine does: factor 0's block
    (pairs) is diagonal, so ``H = [[A, B], [B', D]]`` is solved through the Schur complement
    ``S = D - B' A^-1 B`` of factor 1 (readers), ``m1 x m1`` per cell. ``A``, ``B`` and ``D`` are
    summed from the codes (``bincount``); a round costs ``O(G (n + m0 m1^2))``. Fixed effects:
    an intercept, or any full-rank ``X`` of the same width in every cell (the surface features'
    slopes).
    """

    def __init__(self, designs: Sequence[Design]):
        first = designs[0]
        self.m0, self.m1 = (len(lv) for lv in first.levels)
        self.q = self.m0 + self.m1
        G = len(designs)
        n = max(d.y.size for d in designs)
        # cells of one level shape, their votes padded to the largest (padding: mask 0, level 0)
        self.y = np.zeros((G, n))
        self.mask = np.zeros((G, n))
        self.c0 = np.zeros((G, n), dtype=np.int64)
        self.c1 = np.zeros((G, n), dtype=np.int64)
        for g, d in enumerate(designs):
            k = d.y.size
            self.y[g, :k], self.mask[g, :k], self.c0[g, :k], self.c1[g, :k] = d.y, 1.0, d.codes[0], d.codes[1]
        # fixed effects: None for an intercept only (beta0 added to every vote), else X padded with 0
        self.p = first.X.shape[1]
        self.X = None
        if not all(d.X.shape[1] == 1 and bool(np.all(d.X == 1.0)) for d in designs):
            self.X = np.zeros((G, n, self.p))
            for g, d in enumerate(designs):
                self.X[g, : d.y.size] = d.X
        self.u = np.zeros((G, self.q))
        self.theta_prev = np.full((G, 2), np.nan)

    _warm_start = StackedLaplace._warm_start

    def _zu(self, c0, c1, theta, u0, u1):
        """(Lambda Z u) per vote: theta0 u0[c0] + theta1 u1[c1]."""
        return theta[:, :1] * np.take_along_axis(u0, c0, 1) + theta[:, 1:] * np.take_along_axis(u1, c1, 1)

    def _penalised(self, y, mask, fixed, c0, c1, theta, u):
        eta = fixed + self._zu(c0, c1, theta, u[:, : self.m0], u[:, self.m0 :])
        pdev = -2.0 * (mask * (y * eta - np.logaddexp(0.0, eta))).sum(1) + (u * u).sum(1)
        return eta, pdev

    @staticmethod
    def _sum_into(codes, values, m):
        """Per cell, the values summed by level: (G, m)."""
        G = values.shape[0]
        keys = ((np.arange(G) * m)[:, None] + codes).ravel()
        return np.bincount(keys, values.ravel(), G * m).reshape(G, m)

    def _zt(self, c0, c1, theta, r):
        """(Lambda Z)' r per cell, (G, q)."""
        return np.concatenate(
            [theta[:, :1] * self._sum_into(c0, r, self.m0), theta[:, 1:] * self._sum_into(c1, r, self.m1)], axis=1
        )

    def _factor(self, c0, c1, theta, w):
        """The blocks of H = I + Lambda Z' W Z Lambda: diag(A) (G, m0), C = A^-1 B (G, m0, m1),
        the Cholesky factor of S (G, m1, m1)."""
        G = w.shape[0]
        t0, t1 = theta[:, :1], theta[:, 1:]
        a = 1.0 + t0 * t0 * self._sum_into(c0, w, self.m0)
        d = 1.0 + t1 * t1 * self._sum_into(c1, w, self.m1)
        B = self._sum_into(c0 * self.m1 + c1, w, self.m0 * self.m1).reshape(G, self.m0, self.m1)
        B *= (t0 * t1)[:, :, None]
        C = B / a[:, :, None]
        S = -np.swapaxes(B, 1, 2) @ C
        S[:, np.arange(self.m1), np.arange(self.m1)] += d
        return a, C, np.linalg.cholesky(S)

    def _solve(self, f, r):
        """H x = r for each cell's (G, q) right-hand side."""
        a, C, L = f
        r0, r1 = r[:, : self.m0], r[:, self.m0 :]
        rhs = r1 - (np.swapaxes(C, 1, 2) @ r0[:, :, None])[:, :, 0]
        x1 = _cho_solve(L, rhs)
        x0 = r0 / a - (C @ x1[:, :, None])[:, :, 0]
        return np.concatenate([x0, x1], axis=1)

    def evaluate(self, idx: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """As :meth:`StackedLaplace.evaluate`."""
        theta, beta = z[:, :2], z[:, 2:]
        y, mask, c0, c1 = self.y[idx], self.mask[idx], self.c0[idx], self.c1[idx]
        X = None if self.X is None else self.X[idx]
        fixed = beta if X is None else np.einsum("gnp,gp->gn", X, beta)  # (G, 1) or (G, n)
        u = self._warm_start(idx, theta)
        eta, pdev = self._penalised(y, mask, fixed, c0, c1, theta, u)
        active = np.arange(len(idx))
        for _ in range(_PIRLS_MAXIT):
            if active.size == 0:
                break
            ya, ma, a0, a1, ta = y[active], mask[active], c0[active], c1[active], theta[active]
            mu = expit(eta[active])
            g = self._zt(a0, a1, ta, ma * (mu - ya)) + u[active]
            delta = -self._solve(self._factor(a0, a1, ta, ma * mu * (1.0 - mu)), g)
            go = -(g * delta).sum(1) >= _PIRLS_TOL  # the others are at their modes
            active, delta = active[go], delta[go]
            if active.size == 0:
                break
            active = _halved_steps(
                u,
                eta,
                pdev,
                active,
                delta,
                lambda cells, u_new: self._penalised(
                    y[cells], mask[cells], fixed[cells], c0[cells], c1[cells], theta[cells], u_new
                ),
            )
        mu = expit(eta)
        w = mask * mu * (1.0 - mu)
        f = self._factor(c0, c1, theta, w)
        a, C, L = f
        logdet = np.log(a).sum(1) + 2.0 * np.log(np.diagonal(L, axis1=1, axis2=2)).sum(1)
        self.u[idx] = u
        return pdev + logdet, self._gradient(c0, c1, theta, u, mu, w, f, y, mask, X)

    def _gradient(self, c0, c1, theta, u, mu, w, f, y, mask, X):
        """:meth:`StackedLaplace._gradient` through the blocks of ``P = H^-1``: ``m_i`` has theta0
        at pair ``c0_i`` and theta1 at reader ``c1_i``, so ``m_i' P m_i`` and ``(P m_i)[c]`` take
        three entries of ``P``: ``P11 = S^-1``, ``P01 = -C S^-1``, ``diag P00 = 1/a + rows of C S^-1 C'``."""
        a, C, L = f
        G = a.shape[0]
        eye = np.broadcast_to(np.eye(self.m1), (G, self.m1, self.m1))
        Sinv = _cho_solve_matrix(L, eye)
        CS = C @ Sinv  # (G, m0, m1)
        p00 = np.take_along_axis(1.0 / a + (CS * C).sum(2), c0, 1)
        p11 = np.take_along_axis(Sinv.reshape(G, -1), c1 * self.m1 + c1, 1)
        p01 = -np.take_along_axis(CS.reshape(G, -1), c0 * self.m1 + c1, 1)
        t0, t1 = theta[:, :1], theta[:, 1:]
        r = mask * (mu - y)
        h = t0 * t0 * p00 + t1 * t1 * p11 + 2.0 * t0 * t1 * p01
        v = w * (1.0 - 2.0 * mu) * h
        t = self._solve(f, self._zt(c0, c1, theta, v))
        u0, u1, tt0, tt1 = u[:, : self.m0], u[:, self.m0 :], t[:, : self.m0], t[:, self.m0 :]
        e = 2.0 * r + v - w * self._zu(c0, c1, theta, tt0, tt1)
        out = np.empty((G, 2 + self.p))
        for k, (c, uk, tk, own) in enumerate(((c0, u0, tt0, t0 * p00 + t1 * p01), (c1, u1, tt1, t0 * p01 + t1 * p11))):
            out[:, k] = (
                (np.take_along_axis(uk, c, 1) * e).sum(1)
                + 2.0 * (w * own).sum(1)
                - (r * np.take_along_axis(tk, c, 1)).sum(1)
            )
        if X is None:
            out[:, 2] = e.sum(1)
        else:
            out[:, 2:] = np.einsum("gn,gnp->gp", e, X)
        return out

    def modes(self, g: int, theta: np.ndarray) -> list[np.ndarray]:
        """As :meth:`StackedLaplace.modes`."""
        return [theta[0] * self.u[g, : self.m0], theta[1] * self.u[g, self.m0 :]]


def _cho_solve(L, b):
    """Solve (L L') x = b for stacked lower factors L (G, m, m) and right-hand sides b (G, m)."""
    return _cho_solve_matrix(L, b[:, :, None])[:, :, 0]


def _cho_solve_matrix(L, B):
    from scipy.linalg import solve_triangular  # noqa: F401  (not stacked; numpy's solve is)

    Linv_b = np.linalg.solve(L, B)
    return np.linalg.solve(np.swapaxes(L, 1, 2), Linv_b)


def fit_many(
    designs: Sequence[Design], *, level: float = 0.95, starts: Sequence | None = None, defer_stacked: bool = False
) -> list[GlmmResult]:
    """:func:`judge_transfer_audit.statistics.glmm.fit.fit_native` of every design, the tiny ones (:func:`batchable`)
    and the middle-sized ones (:func:`stackable`) evaluated together; the results in the designs' order.
    ``starts`` (one per design, each None or what ``fit_native(start=...)`` takes) warm-starts the fits.

    ``defer_stacked``: the middle-sized stackable designs are not fitted (None in their place). Their
    stacked fits depend, by rounding, on which cells share their stack (votes padded to the longest),
    whereas a tiny cell's stacked fit and a fit alone do not: a caller that fits its cells in chunks
    fits the deferred ones of every chunk together afterwards, and gets the bits of one call."""
    starts = [None] * len(designs) if starts is None else list(starts)
    if len(starts) != len(designs):
        raise ValueError(f"fit_many: {len(starts)} start values for {len(designs)} designs")
    with single_threaded_blas():
        return _fit_many(designs, level, starts, defer_stacked)


def stackable(design: Design, start=None) -> bool:
    """Whether a (canonically ordered) design past the tiny ones takes
    :class:`CrossedStackedLaplace`: two crossed factors, any fixed effects, automatic factorisation,
    at most :data:`STACK_MAX_VOTES` votes and :data:`STACK_MAX_LEVELS` levels, not every response
    the same, and a fit that :func:`fit_native` would run on the exact path from the given start
    (no subsample start, no iterative path)."""
    from judge_transfer_audit.statistics.glmm.iterative import use_iterative

    y = design.y
    n_levels = [len(lv) for lv in design.levels]
    return (
        len(design.codes) == 2
        and design.factorization == "auto"
        and 2 <= y.size <= STACK_MAX_VOTES
        and sum(n_levels) <= STACK_MAX_LEVELS
        and (start is not None or y.size < _SUBSAMPLE_START_N)
        and not bool(np.all(y == y[0]))
        and use_iterative(design.codes, n_levels, design.factorization) is None
    )


def _fit_many(designs: Sequence[Design], level: float, starts: list, defer_stacked: bool = False) -> list:
    results: list[GlmmResult | None] = [None] * len(designs)
    shapes: dict[tuple[bool, int, int, int], list[tuple[int, Design]]] = {}
    for i, design in enumerate(designs):
        design = canonical_order(design)
        tiny = batchable(design)
        if tiny or stackable(design, starts[i]):
            if defer_stacked and not tiny:
                continue
            # tiny cells: one shape is (votes, pairs, readers); larger ones pad their votes
            shape = (tiny, design.y.size if tiny else design.X.shape[1], len(design.levels[0]), len(design.levels[1]))
            shapes.setdefault(shape, []).append((i, design))
        else:
            results[i] = fit_native(design, level=level, start=starts[i])
    for (tiny, _, m0, m1), members in shapes.items():
        if not tiny and len(members) < STACK_MIN_CELLS:  # alone, the per-cell engine is faster
            for i, design in members:
                results[i] = fit_native(design, level=level, start=starts[i])
            continue
        if not tiny:  # similar vote counts together (padding to the largest)
            members = sorted(members, key=lambda m: m[1].y.size)
        n = max(d.y.size for _, d in members)
        size = max(1, _STACK_CHUNK // (m0 * m1 * (m1 + 1) + 4 * n)) if not tiny else len(members)
        for lo in range(0, len(members), size):
            chunk = members[lo : lo + size]
            fitted = _fit_shape([d for _, d in chunk], level, [starts[i] for i, _ in chunk], tiny)
            for (i, _), result in zip(chunk, fitted):
                results[i] = result
    return results  # type: ignore[return-value]


def _fit_shape(designs: list[Design], level: float, starts: list, tiny: bool = True) -> list[GlmmResult]:
    """Fit cells of one shape in lockstep: each round answers every pending request at once."""
    stack = StackedLaplace(designs) if tiny else CrossedStackedLaplace(designs)
    notes = [list(d.notes) for d in designs]
    p = designs[0].X.shape[1]
    steps = [optimise_steps(d, _start_values(d, starts[g], 2, p), 2, notes[g]) for g, d in enumerate(designs)]
    pending = {g: next(gen) for g, gen in enumerate(steps)}
    optima = [None] * len(designs)
    while pending:
        idx = np.fromiter(pending, dtype=np.int64, count=len(pending))
        dev, grad = stack.evaluate(idx, np.stack([pending[g] for g in idx]))
        pending = {}
        for j, g in enumerate(idx.tolist()):
            try:
                pending[g] = steps[g].send((float(dev[j]), grad[j].copy()))
            except StopIteration as stop:
                optima[g] = stop.value
    out = []
    for g, (design, opt) in enumerate(zip(designs, optima)):
        V = opt.V
        lap = None
        factorization = "dense"
        separated = False  # tiny cells: an intercept only and not every vote one way
        if not tiny:  # the per-cell engine's factorisation, its note and separation check, as fit_native's
            lap = LaplaceDeviance(design.y, design.X, design.codes, [len(lv) for lv in design.levels])
            factorization = _factorization_note(lap, notes[g])
            separated = is_separated(design.y, design.X)
        if V is None:
            notes[g].append(VCOV_RX_NOTE)
            if lap is None:
                lap = LaplaceDeviance(design.y, design.X, design.codes, [len(lv) for lv in design.levels])
            lap(opt.x[:2], opt.x[2:])
            V = lap.vcov_rx()
        modes = stack.modes(g, opt.x[:2])
        out.append(
            native_result(
                design, opt, V, modes, notes[g], level=level, separated=separated, factorization=factorization
            )
        )
    return out


__all__ = [
    "fit_many",
    "batchable",
    "stackable",
    "StackedLaplace",
    "CrossedStackedLaplace",
    "BATCH_MAX_VOTES",
    "BATCH_MAX_LEVELS",
    "STACK_MAX_VOTES",
    "STACK_MAX_LEVELS",
    "STACK_MIN_CELLS",
]
