"""Many tiny crossed GLMMs fitted together: one deviance evaluation for all cells at once (issue 15).

A study with 10k criteria of 18 votes each has 10k cells of 6 pairs x 3 readers. Fitted one by one,
each cell costs ~40 Laplace evaluations of a few dozen small numpy calls each: Python overhead,
not arithmetic. :func:`fit_many` runs every cell's optimiser (the very generator
:func:`audit.glmm.fit.optimise_steps` that :func:`audit.glmm.fit.fit_native` runs, so every
cell makes the same decisions: start values, projected BFGS, boundary probes, restarts, snapping,
the finite-difference vcov) and answers the evaluation requests of all cells of one shape (votes,
pairs, readers) together: PIRLS, log det and the analytic gradient on stacked dense ``q x q``
systems (``q`` = pairs + readers), each cell's modes warm-started as the per-cell engine does.

Only tiny cells take this path (:func:`batchable`: at most :data:`BATCH_MAX_VOTES` votes and
:data:`BATCH_MAX_LEVELS` levels, two factors, intercept only, not every vote one way); every
other cell is fitted by :func:`audit.glmm.fit.fit_native` itself. The dense stacked solve
differs from the per-cell Schur elimination by rounding only; ``tests/audit/glmm/test_glmm_batch.py``
holds the two to 1e-6 on hundreds of random small cells, boundary fits included.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from scipy.special import expit

from audit.glmm._threads import single_threaded_blas
from audit.glmm.design import Design
from audit.glmm.fit import VCOV_RX_NOTE, _start_values, canonical_order, fit_native, native_result, optimise_steps
from audit.glmm.laplace import LaplaceDeviance
from audit.glmm.model import GlmmResult
from audit.glmm.pirls import _HALVINGS, _PIRLS_MAXIT

#: cells with at most this many votes ...
BATCH_MAX_VOTES = 64
#: ... and at most this many pairs + readers are fitted together
BATCH_MAX_LEVELS = 32
# PIRLS stops when the Newton decrement is below this (as audit.glmm.laplace)
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
            # step halving, each cell on its own
            step = np.ones(active.size)
            accepted = np.zeros(active.size, dtype=bool)
            u_acc = np.empty((active.size, self.q))
            eta_acc = np.empty((active.size, eta.shape[1]))
            pdev_acc = np.empty(active.size)
            for _ in range(_HALVINGS):
                todo = np.flatnonzero(~accepted)
                if todo.size == 0:
                    break
                cells = active[todo]
                u_new = u[cells] + step[todo, None] * delta[todo]
                eta_new, pdev_new = self._penalised(y[cells], fixed[cells], M[cells], u_new)
                ok = pdev_new <= pdev[cells] + 1e-12 * np.abs(pdev[cells])
                hit = todo[ok]
                u_acc[hit], eta_acc[hit], pdev_acc[hit] = u_new[ok], eta_new[ok], pdev_new[ok]
                accepted[hit] = True
                step[todo[~ok]] *= 0.5
            moved = active[accepted]  # the others: no descent possible, at the mode
            u[moved], eta[moved], pdev[moved] = u_acc[accepted], eta_acc[accepted], pdev_acc[accepted]
            active = moved
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


def fit_many(designs: Sequence[Design], *, level: float = 0.95) -> list[GlmmResult]:
    """:func:`audit.glmm.fit.fit_native` of every design, the tiny ones (:func:`batchable`)
    evaluated together; the results in the designs' order."""
    with single_threaded_blas():
        return _fit_many(designs, level)


def _fit_many(designs: Sequence[Design], level: float) -> list[GlmmResult]:
    results: list[GlmmResult | None] = [None] * len(designs)
    shapes: dict[tuple[int, int, int], list[tuple[int, Design]]] = {}
    for i, design in enumerate(designs):
        design = canonical_order(design)
        if batchable(design):
            shape = (design.y.size, len(design.levels[0]), len(design.levels[1]))
            shapes.setdefault(shape, []).append((i, design))
        else:
            results[i] = fit_native(design, level=level)
    for members in shapes.values():
        for i, result in zip((i for i, _ in members), _fit_shape([d for _, d in members], level)):
            results[i] = result
    return results  # type: ignore[return-value]


def _fit_shape(designs: list[Design], level: float) -> list[GlmmResult]:
    """Fit cells of one shape in lockstep: each round answers every pending request at once."""
    stack = StackedLaplace(designs)
    notes = [list(d.notes) for d in designs]
    steps = [optimise_steps(d, _start_values(d, None, 2, 1), 2, notes[g]) for g, d in enumerate(designs)]
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
        if V is None:
            notes[g].append(VCOV_RX_NOTE)
            lap = LaplaceDeviance(design.y, design.X, design.codes, [len(lv) for lv in design.levels])
            lap(opt.x[:2], opt.x[2:])
            V = lap.vcov_rx()
        modes = stack.modes(g, opt.x[:2])
        out.append(native_result(design, opt, V, modes, notes[g], level=level, separated=False, factorization="dense"))
    return out


__all__ = ["fit_many", "batchable", "StackedLaplace", "BATCH_MAX_VOTES", "BATCH_MAX_LEVELS"]
