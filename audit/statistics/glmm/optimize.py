"""Numerical pieces shared by the fit and the profile: bounded minimisation, finite differences,
start values and the separation check."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit

# lme4's deriv12 step, used for the Hessian behind vcov().
HESSIAN_STEP = 1e-4


@dataclass
class OptimResult:
    """Outcome of :func:`minimize_bounded`."""

    x: np.ndarray
    fun: float
    jac: np.ndarray
    success: bool
    message: str
    nfev: int
    nit: int
    inverse_hessian: np.ndarray | None = None
    boundary_log: list = field(default_factory=list)


def run_steps(steps, fun_grad):
    """Drive a generator of evaluation requests to its end: each point ``x`` it yields is answered
    with ``fun_grad(x)`` (a ``(value, gradient)`` pair); returns the generator's return value.

    The ``*_steps`` generators of this module are the optimiser written once, whoever evaluates:
    one objective (:func:`minimize_bounded`) or many cells' objectives evaluated together
    (:mod:`judge_transfer_audit.statistics.glmm.batch`), which gives every cell exactly the same sequence of decisions.
    """
    try:
        x = next(steps)
        while True:
            x = steps.send(fun_grad(x))
    except StopIteration as stop:
        return stop.value


def minimize_bounded(
    fun_grad,
    x0,
    n_bounded,
    maxiter=200,
    gtol=1e-6,
    probe=True,
    inverse_hessian=None,
    restart=True,
    decrease_tol=None,
):
    """:func:`minimize_bounded_steps` with ``fun_grad(x)`` answering each evaluation."""
    return run_steps(
        minimize_bounded_steps(x0, n_bounded, maxiter, gtol, probe, inverse_hessian, restart, decrease_tol), fun_grad
    )


def minimize_bounded_steps(
    x0,
    n_bounded,
    maxiter=200,
    gtol=1e-6,
    probe=True,
    inverse_hessian=None,
    restart=True,
    decrease_tol=None,
):
    """Minimise with the first ``n_bounded`` coordinates >= 0 (see :func:`_projected_bfgs`),
    without stopping at a false boundary.

    The Laplace deviance is even in each theta, so its derivative vanishes at theta = 0 even
    when 0 is a maximum along that axis, and quasi-Newton steps that hit the bound can leave a
    theta at 0 or at a rounding-level value (1e-18) where the gradient is ~0 too. After
    convergence (``probe=True``), every theta below :data:`NEAR_ZERO` is

    * probed: the deviance is evaluated with that theta at each of :data:`BOUNDARY_PROBES`, and
      the search restarts from the best probe when it is lower;
    * with ``restart=True``, the search is also restarted once from the interior (every such
      theta set to :data:`INTERIOR_RESTART`, the other coordinates where they are), whatever the
      probes say, since the deviance can have a local minimum at 0 and a lower one inside;
    * snapped to exactly 0 when that is not worse (to the deviance's rounding).

    The lowest deviance found is kept. ``OptimResult.boundary_log`` records what was tried
    (first stop, restarts, whether they improved), for the notes of the fit.

    ``decrease_tol`` (deviance units) stops a search once the quasi-Newton model predicts less
    gain than that: for objectives computed to a known accuracy (the iterative path's
    stochastic log-determinant), where iterating further only follows the estimator's noise.
    """
    res = yield from _projected_bfgs_steps(x0, n_bounded, maxiter, gtol, inverse_hessian, decrease_tol)
    nfev = res.nfev
    log: list[BoundaryEvent] = []
    if probe and n_bounded:
        tried_interior = not restart
        for _ in range(_MAX_BOUNDARY_ROUNDS):
            near = [k for k in range(n_bounded) if res.x[k] < NEAR_ZERO]
            if not near:
                break
            candidates = []
            for k in near:
                for value in BOUNDARY_PROBES:
                    trial = res.x.copy()
                    trial[k] = value
                    f_trial, _ = yield trial
                    nfev += 1
                    if np.isfinite(f_trial) and f_trial < res.fun - _IMPROVEMENT_TOL:
                        candidates.append((f_trial, "probe", trial))
            if not tried_interior:
                trial = res.x.copy()
                trial[near] = INTERIOR_RESTART
                candidates.append((np.inf, "interior", trial))
                tried_interior = True
            if not candidates:
                break
            candidates.sort(key=lambda c: c[0])
            # restart from the best probe (if any) and from the interior (if not tried yet)
            starts = [candidates[0]]
            starts += [c for c in candidates[1:] if c[1] == "interior"]
            improved = False
            for _, kind, trial in starts:
                new = yield from _projected_bfgs_steps(trial, n_bounded, maxiter, gtol, None, decrease_tol)
                nfev += new.nfev
                gain = res.fun - new.fun
                log.append(
                    BoundaryEvent(
                        kind=kind,
                        stopped_at=res.x[:n_bounded].copy(),
                        fun_before=res.fun,
                        fun_after=new.fun,
                        improved=bool(gain > _IMPROVEMENT_TOL),
                        x_after=new.x[:n_bounded].copy(),
                    )
                )
                if gain > _IMPROVEMENT_TOL:
                    res, improved = new, True
            if not improved:
                break
        res = yield from _snap_to_zero_steps(res, n_bounded)
        nfev += res.nfev
    res.nfev = nfev
    res.boundary_log = log
    return res


@dataclass(frozen=True)
class BoundaryEvent:
    """One restart made because a theta stopped near 0 (see :func:`minimize_bounded`)."""

    kind: str  # "probe" (from a probe that was lower) or "interior"
    stopped_at: np.ndarray  # theta where the previous search stopped
    fun_before: float
    fun_after: float
    improved: bool
    x_after: np.ndarray


def _snap_to_zero_steps(res, n_bounded):
    """Set thetas below NEAR_ZERO to exactly 0 when the objective is not worse there; the
    returned result's ``nfev`` counts only the evaluations made here."""
    near = [k for k in range(n_bounded) if 0.0 < res.x[k] < NEAR_ZERO]
    if not near:
        res.nfev = 0
        return res
    trial = res.x.copy()
    trial[near] = 0.0
    f_trial, g_trial = yield trial
    if np.isfinite(f_trial) and f_trial <= res.fun + max(_IMPROVEMENT_TOL, 1e2 * np.finfo(float).eps * abs(res.fun)):
        return OptimResult(
            x=trial,
            fun=float(f_trial),
            jac=g_trial,
            success=res.success,
            message=res.message,
            nfev=1,
            nit=res.nit,
            inverse_hessian=res.inverse_hessian,
        )
    res.nfev = 1
    return res


# A theta below this after convergence is treated as having reached the bound (probed, snapped).
NEAR_ZERO = 1e-3
# Values a theta at the bound is probed at (relative sds: the logit-scale sds for binomial).
BOUNDARY_PROBES = (0.01, 0.05, 0.3)
# Where a restart from the interior puts the thetas that stopped at the bound.
INTERIOR_RESTART = 0.5
_MAX_BOUNDARY_ROUNDS = 3
# A restart must lower the deviance by more than this to be kept.
_IMPROVEMENT_TOL = 1e-10
# Stop when the quasi-Newton step would lower the deviance by less than this.
_PREDICTED_DECREASE_TOL = 1e-12


def _projected_bfgs(fun_grad, x0, n_bounded, maxiter=200, gtol=1e-6, inverse_hessian=None, decrease_tol=None):
    """:func:`_projected_bfgs_steps` with ``fun_grad(x)`` answering each evaluation."""
    return run_steps(_projected_bfgs_steps(x0, n_bounded, maxiter, gtol, inverse_hessian, decrease_tol), fun_grad)


def _projected_bfgs_steps(x0, n_bounded, maxiter=200, gtol=1e-6, inverse_hessian=None, decrease_tol=None):
    """Minimise with the first ``n_bounded`` coordinates >= 0: projected BFGS with Armijo
    backtracking (a few parameters, smooth objective, analytic gradient).

    A generator: each evaluation is ``value, gradient = yield x`` (:func:`run_steps`). Written here
    rather than calling scipy's L-BFGS-B because that routine's BLAS thread pool competes with numpy's on small problems
    (milliseconds per call on a loaded two-core machine).
    """
    n = x0.size
    lower = np.concatenate([np.zeros(n_bounded), np.full(n - n_bounded, -np.inf)])
    x = np.maximum(np.asarray(x0, dtype=float), lower)
    f, g = yield x
    nfev = 1
    eye = np.eye(n)
    B = eye
    scaled = False
    if inverse_hessian is not None:
        B = np.array(inverse_hessian, dtype=float)
        scaled = True
    message = "maximum number of iterations reached"
    success = False
    for it in range(maxiter):  # noqa: B007  (read after the loop)
        active = (x <= lower) & (g > 0)
        pg = np.where(active, 0.0, g)
        if np.abs(pg).max() < gtol:
            success, message = True, "projected gradient below tolerance"
            break
        if active.any():
            free = ~active
            d = np.zeros(n)
            d[free] = -B[np.ix_(free, free)] @ g[free]
        else:  # every coordinate free (the same products as the subset above)
            d = -B @ g
        if g @ d >= 0:
            B = eye
            scaled = False
            d = -pg
        if not scaled:
            d = d / max(1.0, 4.0 * np.abs(d).max())
        elif -(g @ d) < max(_PREDICTED_DECREASE_TOL, 10.0 * np.finfo(float).eps * abs(f), decrease_tol or 0.0):
            # the quasi-Newton model predicts a negligible gain: at the optimum to the accuracy
            # the deviance itself is computed with (its rounding grows with N)
            success, message = True, "predicted decrease below tolerance"
            break
        t = 1.0
        while True:
            x_new = np.maximum(x + t * d, lower)
            f_new, g_new = yield x_new
            nfev += 1
            if np.isfinite(f_new) and f_new <= f + 1e-4 * (g @ (x_new - x)) and f_new <= f:
                break
            t *= 0.5
            if t < 1e-4:
                break
        if t < 1e-4:
            if scaled and np.abs(pg).max() >= 1e3 * gtol:
                # a poor quasi-Newton model (e.g. after a step onto the bound): forget it and
                # retry along the projected gradient rather than stop far from the optimum
                B = eye
                scaled = False
                continue
            success = bool(np.abs(pg).max() < 1e3 * gtol or (scaled and -(g @ d) < 1e3 * _PREDICTED_DECREASE_TOL))
            message = "line search could not decrease the objective further"
            break
        s_vec = x_new - x
        y_vec = g_new - g
        sy = s_vec @ y_vec
        if sy > 1e-12 * np.sqrt((s_vec @ s_vec) * (y_vec @ y_vec)):
            if not scaled:
                B = eye * (sy / (y_vec @ y_vec))
                scaled = True
            rho = 1.0 / sy
            V = eye - rho * (s_vec[:, None] * y_vec[None, :])  # np.outer, without its call overhead
            B = V @ B @ V.T + rho * (s_vec[:, None] * s_vec[None, :])
        converged_f = abs(f - f_new) <= 1e-15 * max(1.0, abs(f)) and np.abs(s_vec).max() < 1e-12
        x, f, g = x_new, f_new, g_new
        if converged_f:
            success, message = True, "no further progress"
            break
    return OptimResult(
        x=x,
        fun=float(f),
        jac=g,
        success=bool(success),
        message=message,
        nfev=nfev,
        nit=it + 1,
        inverse_hessian=B if scaled else None,
    )


def hessian_from_gradient(grad, x, delta=HESSIAN_STEP, g0=None):
    """:func:`hessian_steps` with ``grad(x)`` answering each evaluation."""
    return run_steps(hessian_steps(x, delta, g0), grad)


def hessian_steps(x, delta=HESSIAN_STEP, g0=None):
    """Symmetrised finite-difference Jacobian of an analytic gradient: central differences
    (2 * len(x) calls), or forward differences from ``g0`` = grad(x) when given (len(x) calls;
    error O(delta) ~ 1e-4 relative, used for large data)."""
    n = x.size
    H = np.empty((n, n))
    for i in range(n):
        e = np.zeros(n)
        e[i] = delta
        if g0 is None:
            g_plus = yield x + e
            g_minus = yield x - e
            H[:, i] = (g_plus - g_minus) / (2.0 * delta)
        else:
            H[:, i] = ((yield x + e) - g0) / delta
    return (H + H.T) / 2.0


def projected_gradient(g, x, n_bounded):
    """Gradient with the components pushing a bounded coordinate below 0 removed."""
    pg = g.copy()
    at_bound = (x[:n_bounded] <= 0.0) & (g[:n_bounded] > 0.0)
    pg[:n_bounded][at_bound] = 0.0
    return pg


def logistic_start(y, X, maxit=30, return_converged=False):
    """Fixed-effect start values from an ordinary logistic regression (Newton/IRLS)."""
    p = X.shape[1]
    beta = np.zeros(p)
    converged = False
    for _ in range(maxit):
        mu = expit(X @ beta)
        w = np.maximum(mu * (1 - mu), 1e-10)
        step = np.linalg.lstsq(X.T @ (X * w[:, None]), X.T @ (y - mu), rcond=None)[0]
        beta = beta + step
        if np.max(np.abs(beta)) > 30:
            break
        if np.max(np.abs(step)) < 1e-10:
            converged = True
            break
    beta = np.clip(beta, -30, 30)
    return (beta, converged) if return_converged else beta


def is_separated(y, X):
    """True when a fixed-effect direction separates the 0s from the 1s (complete or
    quasi-complete separation), so the maximum-likelihood estimate is infinite.

    Uses the linear programme of Konis (2007): maximise sum_i s_i x_i'd subject to
    s_i x_i'd >= 0 and -1 <= d <= 1, with s_i = 2 y_i - 1; separation iff the optimum is > 0.
    """
    if np.all(y == y[0]):
        return bool(np.any(np.abs(X).sum(axis=0) > 0))
    if X.shape[1] == 1 or np.all(np.ptp(X, axis=0) == 0):
        return False  # only constant columns: separation needs a constant response
    beta, converged = logistic_start(y, X, return_converged=True)
    if converged and np.max(np.abs(beta)) < 20:
        return False  # a finite maximum-likelihood estimate exists: no separation
    from scipy.optimize import linprog  # imported here: only a suspected separation needs the LP (0.15 s)

    s = 2.0 * y - 1.0
    A = X * s[:, None]
    res = linprog(-A.sum(axis=0), A_ub=-A, b_ub=np.zeros(len(y)), bounds=[(-1, 1)] * X.shape[1], method="highs")
    return bool(res.status == 0 and -res.fun > 1e-7 * max(1.0, np.abs(A).sum()))
