"""The native fit: maximise the Laplace likelihood over (theta, beta) as glmer's second stage."""

from __future__ import annotations

import dataclasses
import math
from typing import Mapping

import numpy as np

from judge_transfer_audit.statistics.distributions import norm
from judge_transfer_audit.statistics.glmm.design import Design
from judge_transfer_audit.statistics.glmm.iterative import IterativeLaplace, iterative_after_exact_rule, use_iterative
from judge_transfer_audit.statistics.glmm.laplace import LaplaceDeviance
from judge_transfer_audit.statistics.glmm.model import GlmmResult
from judge_transfer_audit.statistics.glmm.optimize import (
    hessian_steps,
    is_separated,
    logistic_start,
    minimize_bounded,
    minimize_bounded_steps,
    projected_gradient,
    run_steps,
)

# lme4's isSingular() tolerance on theta.
SINGULAR_TOL = 1e-4
# A relative sd beyond this (logit scale) means the Laplace likelihood keeps increasing as the
# variance grows: near-separation by a random effect (e.g. 139 of 140 votes one way).
THETA_DIVERGENT = 25.0
# From this many observations the start values come from a subsample fit.
_SUBSAMPLE_START_N = 50_000
# Gradient size (deviance units) below which an optimum counts as converged.
_CONVERGED_GRAD = 1e-3


def _start_values(design: Design, start, K: int, p: int) -> np.ndarray:
    theta0 = np.ones(K)
    beta0 = None
    if start is not None:
        if isinstance(start, GlmmResult):
            sd = [start.sd.get(name, 1.0) for name in design.factor_names]
            theta0 = np.array([1.0 if not np.isfinite(s) else max(s, 0.05) for s in sd])
            if len(start.b) == p and np.all(np.isfinite(start.b)):
                beta0 = np.array(start.b, dtype=float)
        elif isinstance(start, Mapping):
            if "theta" in start:
                theta0 = np.maximum(np.asarray(start["theta"], dtype=float).ravel(), 0.05)
            if "beta" in start:
                beta0 = np.asarray(start["beta"], dtype=float).ravel()
        else:
            raise TypeError("start must be a GlmmResult, a mapping with 'theta'/'beta', or None")
        if theta0.size != K or (beta0 is not None and beta0.size != p):
            raise ValueError(f"start has the wrong size: need {K} theta and {p} beta values")
    if beta0 is None:
        beta0 = logistic_start(design.y, design.X)
    return np.concatenate([theta0, beta0])


def _fun_grad(lap: LaplaceDeviance, K: int):
    def fg(z):
        value = lap(z[:K], z[K:])
        return value, lap.gradient()

    return fg


def _gradients_only(steps):
    """Adapt a generator that wants gradients (:func:`hessian_steps`) to ``(value, gradient)`` answers."""
    try:
        x = next(steps)
        while True:
            _, g = yield x
            x = steps.send(g)
    except StopIteration as stop:
        return stop.value


def _vcov_steps(x: np.ndarray, K: int, g0: np.ndarray):
    """lme4's vcov(): beta block of 2 * solve(Hessian of the deviance in (theta, beta)), or None
    when that Hessian is not positive definite (then the caller takes the RX factor's, as lme4).

    lme4 differentiates the deviance twice numerically (``deriv12``, step 1e-4); we take forward
    differences of the analytic gradient with the same step (relative error ~1e-4, i.e. ~1e-5
    on an SE, against lme4's own finite-difference error of the same order). A generator of
    evaluation requests (:func:`judge_transfer_audit.statistics.glmm.optimize.run_steps`); its last one is at ``x``, so
    the evaluator's state (the modes) is left at the optimum.
    """
    H = yield from _gradients_only(hessian_steps(x, g0=g0))
    V = None
    try:
        Vfull = np.linalg.inv(H)
        Vb = (Vfull + Vfull.T)[K:, K:]
        if np.all(np.isfinite(Vb)) and np.linalg.eigvalsh(Vb).min() > 0:
            V = Vb
    except np.linalg.LinAlgError:
        pass
    yield x  # leave the state at the optimum
    return V


#: the note of a fit whose vcov comes from the RX factor
VCOV_RX_NOTE = "finite-difference Hessian not positive definite: vcov from the RX factor (as lme4)"


@dataclasses.dataclass(frozen=True)
class Optimum:
    """What :func:`optimise_steps` found: the optimiser's result, the optimum ``x`` (thetas below
    1e-10 set to 0), the deviance and gradient there, the fixed-effect covariance (None: not
    positive definite) and whether the divergent-variance refit ran."""

    res: object
    x: np.ndarray
    dev: float
    grad: np.ndarray
    V: np.ndarray | None
    divergent: bool


def optimise_steps(design: Design, x0: np.ndarray, K: int, notes: list[str], B0=None, tol=None):
    """The native fit's optimisation as a generator of evaluation requests: each
    ``value, gradient = yield z`` asks for the Laplace deviance and its gradient at ``z`` (theta,
    then beta), leaving the evaluator's modes there. :func:`fit_native` answers from one
    :class:`LaplaceDeviance`; :mod:`judge_transfer_audit.statistics.glmm.batch` answers many cells' requests at once.
    Appends the divergence and boundary notes to ``notes``; returns an :class:`Optimum`."""
    res, x, dev, grad, divergent = yield from optimum_steps(design, x0, K, notes, B0=B0, tol=tol)
    V = yield from _vcov_steps(x, K, grad)
    return Optimum(res=res, x=x, dev=float(dev), grad=grad, V=V, divergent=divergent)


def optimum_steps(design: Design, x0: np.ndarray, K: int, notes: list[str], B0=None, tol=None):
    """:func:`optimise_steps` up to the optimum, without the covariance's evaluations: returns
    ``(optimiser result, x, deviance, gradient, divergent)`` (callers that need only the estimates)."""
    res = yield from minimize_bounded_steps(x0, K, inverse_hessian=B0, decrease_tol=tol)
    divergent = bool(K and np.max(res.x[:K]) > THETA_DIVERGENT)
    if divergent:
        # Report the stationary point that glmer reaches (from the sd = 0 boundary) rather than
        # an estimate drifting towards infinite variance; profile over beta only.
        notes.append(
            f"the Laplace likelihood keeps increasing as a random-effect sd grows (sd > {THETA_DIVERGENT:g} "
            "reached): near-separation; reporting the local optimum from sd = 0 as lme4 does, "
            "profile intervals hold the sds fixed"
        )
        x0 = np.concatenate([np.zeros(K), logistic_start(design.y, design.X)])
        res = yield from minimize_bounded_steps(x0, K, probe=False, decrease_tol=tol)
    notes.extend(_boundary_notes(res, design.factor_names))
    x = res.x.copy()
    x[:K] = np.where(x[:K] < 1e-10, 0.0, x[:K])
    dev, grad = yield x
    return res, x, dev, grad, divergent


def _subsample_start(design: Design, x0: np.ndarray, iterative: bool = False):
    """Start values for a large fit from a fit to a fixed subsample of levels.

    Keeps a fixed pseudo-random subset of the levels of each factor (about 20% of the largest
    factor's levels and at most 300 of each other factor's) and the votes inside it, so the
    subsample fit is cheap whatever the number of readers; the full fit then needs far fewer
    evaluations. Deterministic (seed 0); the estimate does not depend on it beyond the optimiser's
    tolerance. Returns ``(x, inverse Hessian scaled to the full data or None)``; falls back to
    ``(x0, None)`` when the subsample is degenerate.

    For a cell on the iterative path (thousands of readers) 300 readers would leave most kept
    pairs with no or one vote (no information on the pair sd): there the subsample keeps 10% of
    the largest factor's levels with all their votes, and is fitted by the same cost rule.
    """
    rng = np.random.default_rng(0)
    keep = np.ones(design.y.size, dtype=bool)
    sizes = [len(lv) for lv in design.levels]
    largest = int(np.argmax(sizes))
    for k, (codes, m) in enumerate(zip(design.codes, sizes)):
        if iterative:
            n_keep = max(int(0.1 * m), 30) if k == largest else m
        else:
            n_keep = max(int(0.2 * m), 30) if k == largest else min(m, 300)
        chosen = np.zeros(m, dtype=bool)
        chosen[rng.choice(m, min(n_keep, m), replace=False)] = True
        keep &= chosen[codes]
    if keep.sum() < 2_000 or keep.all():
        return x0, None
    sub_codes, sub_levels = [], []
    for codes, levels in zip(design.codes, design.levels):
        uniq, inv = np.unique(codes[keep], return_inverse=True)
        if uniq.size < 2:
            return x0, None
        sub_codes.append(inv)
        sub_levels.append(tuple(levels[i] for i in uniq))
    y, X = design.y[keep], design.X[keep]
    if np.all(y == y[0]) or np.linalg.matrix_rank(X) < X.shape[1]:
        return x0, None
    K = len(sub_codes)
    sub_n = [len(lv) for lv in sub_levels]
    sub_choice = use_iterative(sub_codes, sub_n, "auto") if iterative else None
    lap = IterativeLaplace(y, X, sub_codes, sub_n) if sub_choice else LaplaceDeviance(y, X, sub_codes, sub_n)
    res = minimize_bounded(
        _fun_grad(lap, K), x0, K, decrease_tol=ITERATIVE_DECREASE_TOL if isinstance(lap, IterativeLaplace) else None
    )
    if not np.all(np.isfinite(res.x)) or np.max(res.x[:K]) > THETA_DIVERGENT:
        return x0, None
    B = None if res.inverse_hessian is None else res.inverse_hessian * (keep.sum() / design.y.size)
    return res.x, B


def _rows_in_order(keys: list) -> bool:
    """Whether the rows are non-decreasing in the lexicographic order of ``keys`` (most significant
    first): then ``np.lexsort`` (stable) leaves every row in place. One vectorised pass per key,
    instead of a sort per key; False where a key holds NaN (left to lexsort)."""
    n = len(keys[0]) if keys else 0
    if n < 2:
        return True
    tied = np.ones(n - 1, dtype=bool)  # adjacent rows equal in every key so far
    for k in keys:
        k = np.asarray(k)
        if k.dtype.kind == "f" and np.isnan(k).any():
            return False
        lo, hi = k[:-1], k[1:]
        if np.any(tied & (hi < lo)):
            return False
        tied &= hi == lo
        if not tied.any():
            return True
    return True


def canonical_order(design: Design) -> Design:
    """The same data with its rows in a canonical order (by level codes, response, covariates).

    Every sum over observations then runs in the same order whatever order the votes arrived in,
    so a fit does not depend on row order even at the level of rounding (which, through the
    optimiser's path, used to move estimates by up to the optimiser's tolerance). Rows equal in
    every key are identical, so the result is the same array for any permutation of the input.
    """
    keys = [design.X[:, j] for j in range(design.X.shape[1] - 1, -1, -1)] + [design.y]
    keys += [c for c in reversed(design.codes)]
    if _rows_in_order(keys[::-1]):  # already sorted: the stable sort would return every row in place
        return design
    order = np.lexsort(keys)
    if np.all(order[1:] > order[:-1]):
        return design
    return dataclasses.replace(
        design,
        y=design.y[order],
        X=np.ascontiguousarray(design.X[order]),
        codes=tuple(np.ascontiguousarray(c[order]) for c in design.codes),
    )


def _boundary_notes(res, names: tuple[str, ...]) -> list[str]:
    """Notes on the restarts :func:`minimize_bounded` made after a theta stopped near 0."""
    notes = []

    def show(t):
        return "0" if t < 1e-10 else f"{t:.3g}"

    for ev in res.boundary_log:
        if not ev.improved:
            continue
        at = ", ".join(f"sd({n}) = {show(t)}" for n, t in zip(names, ev.stopped_at))
        now = ", ".join(f"sd({n}) = {show(t)}" for n, t in zip(names, ev.x_after))
        how = "a restart from the interior" if ev.kind == "interior" else "a restart from a boundary probe"
        notes.append(
            f"the optimiser first stopped at a false boundary ({at}, logLik {-ev.fun_before / 2:.4f}); "
            f"{how} found {now}, logLik {-ev.fun_after / 2:.4f} (kept)"
        )
    return notes


@dataclasses.dataclass
class _Setup:
    """What :func:`fit_native` prepares before optimising (internal)."""

    design: Design
    lap: object
    K: int
    p: int
    notes: list
    factorization: str
    separated: bool
    constant_col: int | None  #: every response the same with a constant column: no optimisation


def _native_setup(design: Design) -> _Setup:
    design = canonical_order(design)
    K = len(design.codes)
    p = design.X.shape[1]
    notes = list(design.notes)
    n_levels = [len(lv) for lv in design.levels]
    iterative = use_iterative(design.codes, n_levels, design.factorization)
    if iterative is not None:
        lap = IterativeLaplace(design.y, design.X, design.codes, n_levels)
        lap.path = iterative
    else:
        lap = LaplaceDeviance(design.y, design.X, design.codes, n_levels, factorization=design.factorization)
        iterative = iterative_after_exact_rule(lap.path, design.y.size, design.factorization)
        if iterative is not None:
            lap = IterativeLaplace(design.y, design.X, design.codes, n_levels)
            lap.path = iterative
    factorization = _factorization_note(lap, notes)
    separated = is_separated(design.y, design.X)
    constant_cols = np.flatnonzero((np.ptp(design.X, axis=0) == 0) & (design.X[0] != 0))
    constant = separated and np.all(design.y == design.y[0]) and constant_cols.size
    return _Setup(design, lap, K, p, notes, factorization, separated, int(constant_cols[0]) if constant else None)


def _optimum_request(setup: _Setup, start, steps, inverse_hessian=None):
    """``steps(design, x0, K, notes, B0=, tol=)`` from fit_native's start values (a subsample fit's
    for large cells without a start); ``inverse_hessian`` (of the size of ``x0``) starts the
    quasi-Newton search of a warm start."""
    design, K, lap = setup.design, setup.K, setup.lap
    x0 = _start_values(design, start, K, setup.p)
    B0 = None
    if start is not None and inverse_hessian is not None and np.shape(inverse_hessian) == (x0.size, x0.size):
        B0 = np.array(inverse_hessian, dtype=float)
    if start is None and design.y.size >= _SUBSAMPLE_START_N and K:
        x0, B0 = _subsample_start(design, x0, iterative=isinstance(lap, IterativeLaplace))
    tol = ITERATIVE_DECREASE_TOL if isinstance(lap, IterativeLaplace) else None
    return steps(design, x0, K, setup.notes, B0=B0, tol=tol)


def fit_native(design: Design, *, level: float = 0.95, profile: bool = False, start=None) -> GlmmResult:
    """Fit by the Laplace approximation (see :func:`judge_transfer_audit.statistics.glmm.fit_crossed_glmm`)."""
    setup = _native_setup(design)
    design, lap, K, p, notes = setup.design, setup.lap, setup.K, setup.p, setup.notes
    if setup.constant_col is not None:
        return dataclasses.replace(
            _constant_response_result(design, lap, level, profile, notes, setup.constant_col),
            factorization=setup.factorization,
        )
    opt = run_steps(_optimum_request(setup, start, optimise_steps), _fun_grad(lap, K))
    V = opt.V
    if V is None:
        notes.append(VCOV_RX_NOTE)
        V = lap.vcov_rx()
    if isinstance(lap, IterativeLaplace):
        notes.append(lap.iteration_note())
    plow = np.full(p, np.nan)
    phigh = np.full(p, np.nan)
    if profile:
        from judge_transfer_audit.statistics.glmm.profile import profile_intervals

        se = np.sqrt(np.where(np.diag(V) >= 0, np.diag(V), np.nan))
        plow, phigh = profile_intervals(lap, opt.x, opt.dev, K, level, se, fix_theta=opt.divergent)
        lap(opt.x[:K], opt.x[K:])
    modes = lap.conditional_modes(opt.x[:K]) if K else []
    if isinstance(lap, IterativeLaplace):
        opt = _exact_loglik(lap, opt, notes)
    return native_result(
        design,
        opt,
        V,
        modes,
        notes,
        level=level,
        separated=setup.separated,
        factorization=setup.factorization,
        iterative=isinstance(lap, IterativeLaplace),
        profile_bounds=(plow, phigh),
    )


@dataclasses.dataclass(frozen=True)
class NativeEstimates:
    """:func:`fit_native`'s estimates and flags without its covariance (:func:`native_estimates`)."""

    names: tuple[str, ...]  #: fixed effects
    b: tuple[float, ...]
    sd: dict  #: random-intercept sd per kept factor
    converged: bool
    singular: bool
    separation: bool


def native_estimates(design: Design, *, start=None, inverse_hessian=None) -> NativeEstimates | None:
    """:func:`fit_native`'s fixed effects, sds and ``converged`` / ``singular`` / ``separation`` flags,
    the same to the last bit, without the evaluations of the covariance, the modes or the notes (for
    callers that read only the estimates: leave-one-reader-out's refits). None where every response
    is the same (``fit_native``'s closed-form result).

    ``inverse_hessian`` (with ``start``; :func:`inverse_hessian_at` of the start's fit) starts the
    quasi-Newton search from the start's curvature instead of the identity: refits of data close to
    the start's (bootstrap replicates) then stop after a few evaluations, at the same optimum to the
    optimiser's tolerance though not to the last bit."""
    setup = _native_setup(design)
    if setup.constant_col is not None:
        return None
    K = setup.K
    request = _optimum_request(setup, start, optimum_steps, inverse_hessian=inverse_hessian)
    res, x, _, grad, _ = run_steps(request, _fun_grad(setup.lap, K))
    converged, _ = _converged(res, grad, x, K, isinstance(setup.lap, IterativeLaplace))
    return NativeEstimates(
        names=setup.design.x_names,
        b=tuple(float(v) for v in x[K:]),
        sd={name: float(t) for name, t in zip(setup.design.factor_names, x[:K])},
        converged=converged,
        singular=bool(np.any(x[:K] < SINGULAR_TOL)),
        separation=bool(setup.separated),
    )


def inverse_hessian_at(design: Design, fit: GlmmResult) -> np.ndarray | None:
    """The inverse of the Laplace deviance's Hessian in ``(theta, beta)`` at ``fit``'s estimates on
    ``design`` (forward differences of the analytic gradient, :func:`hessian_steps`: ``1 + K + p``
    evaluations), in the order :func:`native_estimates` searches; None where it is not positive
    definite or the design has a constant response."""
    setup = _native_setup(design)
    if setup.constant_col is not None:
        return None
    K = setup.K
    x = _start_values(setup.design, fit, K, setup.p)
    fun_grad = _fun_grad(setup.lap, K)
    _, g0 = fun_grad(x)
    H = run_steps(_gradients_only(hessian_steps(x, g0=g0)), fun_grad)
    try:
        if not np.all(np.isfinite(H)) or np.linalg.eigvalsh(H).min() <= 0:
            return None
        B = np.linalg.inv(H)
    except np.linalg.LinAlgError:
        return None
    return (B + B.T) / 2.0


def _converged(res, grad, x, K: int, iterative: bool) -> tuple[bool, str]:
    """Whether an optimum counts as converged, and the note when it does not (as :func:`native_result`)."""
    pg = projected_gradient(grad, x, K)
    converged = bool(np.max(np.abs(pg)) < _CONVERGED_GRAD)
    if iterative and not converged:
        converged, remaining = _iterative_converged(res, pg, K)
        if not converged:
            return False, (
                f"optimiser did not converge: {res.message} (the remaining quasi-Newton step is "
                f"{remaining:.2g} standard errors)"
            )
        return True, ""
    if not converged:
        return False, f"optimiser did not converge: {res.message} (max |gradient| {np.max(np.abs(pg)):.2g})"
    return True, ""


def native_result(
    design: Design,
    opt: Optimum,
    V: np.ndarray,
    modes: list,
    notes: list[str],
    *,
    level: float,
    separated: bool,
    factorization: str,
    iterative: bool = False,
    profile_bounds: tuple[np.ndarray, np.ndarray] | None = None,
) -> GlmmResult:
    """The :class:`GlmmResult` of an optimum (shared by :func:`fit_native` and
    :mod:`judge_transfer_audit.statistics.glmm.batch`)."""
    K = len(design.codes)
    p = design.X.shape[1]
    res, x, dev, grad, divergent = opt.res, opt.x, opt.dev, opt.grad, opt.divergent
    converged, note = _converged(res, grad, x, K, iterative)
    if note:
        notes.append(note)
    theta = x[:K]
    beta = x[K:]
    diag = np.diag(V)
    se = np.sqrt(np.where(diag >= 0, diag, np.nan))
    if np.any(diag < 0):
        # a Hessian that is not positive definite at the optimum (flat or boundary likelihood)
        notes.append("the fixed-effect covariance is not positive definite: standard errors set to NaN")
    z = norm.ppf(0.5 + level / 2.0)
    singular = bool(np.any(theta < SINGULAR_TOL))
    if singular:
        zero = [n for n, t in zip(design.factor_names, theta) if t < SINGULAR_TOL]
        notes.append(
            "singular fit: random-intercept sd at 0 for "
            + ", ".join(f"'{n}'" for n in zero)
            + ("" if divergent else " (confirmed: probes and a restart from the interior found no higher likelihood)")
        )
    if separated:
        notes.append("separation: the fixed effects separate the responses; estimates are on the boundary")
    plow, phigh = profile_bounds if profile_bounds is not None else (np.full(p, np.nan), np.full(p, np.nan))
    loglik = -dev / 2.0
    return GlmmResult(
        names=design.x_names,
        b=tuple(float(v) for v in beta),
        se=tuple(float(v) for v in se),
        vcov=tuple(tuple(float(v) for v in row) for row in V),
        wald_low=tuple(float(v) for v in beta - z * se),
        wald_high=tuple(float(v) for v in beta + z * se),
        profile_low=tuple(float(v) for v in plow),
        profile_high=tuple(float(v) for v in phigh),
        level=float(level),
        sd={name: float(t) for name, t in zip(design.factor_names, theta)},
        conditional_modes={
            name: dict(zip(lv, (float(v) for v in m))) for name, lv, m in zip(design.factor_names, design.levels, modes)
        },
        loglik=float(loglik),
        aic=float(dev + 2.0 * (K + p)),
        deviance=float(dev),
        n_obs=int(design.y.size),
        n_levels=dict(design.n_levels),
        converged=converged,
        singular=singular,
        separation=bool(separated),
        iterations=int(res.nfev),
        notes=tuple(notes),
        backend="native",
        dropped_factors=design.dropped,
        factorization=factorization,
    )


# On the iterative path the gradient carries the trace estimators' noise (deviance units that grow
# with the data), so "converged" means: the quasi-Newton step still to take moves no parameter by
# more than this many of its standard errors.
_CONVERGED_STEP_SE = 0.01
# ... and its searches stop when the quasi-Newton model predicts less gain in deviance than
# IterativeLaplace.decrease_tol.
ITERATIVE_DECREASE_TOL = IterativeLaplace.decrease_tol


def _exact_loglik(lap: IterativeLaplace, opt: Optimum, notes: list) -> Optimum:
    """On the iterative path, the optimum's deviance with the exact log det of the reader block
    where its sparse factor is cheap (:meth:`IterativeLaplace.exact_log_det`): the reported logLik
    is then the Laplace one at the estimates, not the SLQ estimate the search used (whose error is
    ~0.1 at 48 probes). The estimates, their covariance and the profile are unchanged."""
    K = lap.K
    dev = lap(opt.x[:K], opt.x[K:])
    exact = lap.exact_log_det()
    if exact is None:
        notes.append("logLik from the stochastic log det (the reader block's exact factor is not cheap)")
        return opt
    notes.append("logLik from the exact log det at the estimates (sparse LU of the reader block)")
    return dataclasses.replace(opt, dev=float(dev - lap.state["logdet"] + exact))


def _iterative_converged(res, pg, K):
    B = res.inverse_hessian
    if B is None or not np.all(np.isfinite(B)):
        return False, float("nan")
    step = B @ pg
    scale = np.sqrt(np.maximum(2.0 * np.diag(B), 1e-300))
    remaining = float(np.max(np.abs(step) / scale))
    return remaining < _CONVERGED_STEP_SE, remaining


def _factorization_note(lap: LaplaceDeviance, notes: list[str]) -> str:
    """Which factorisation ran (and why, when it is not the plain dense one)."""
    if lap.K == 0:
        return "none"
    if lap.path is None:
        return "diagonal"
    choice = lap.path
    if isinstance(lap, IterativeLaplace):
        notes.append(
            f"iterative path: the {choice.m}-level reader block by preconditioned CG, log det by stochastic Lanczos "
            f"quadrature ({lap.n_probes} seeded probes; {choice.reason})"
        )
        return "iterative"
    if choice.path == "sparse":
        notes.append(
            f"sparse path: the {choice.m}-level reader block factorised by CHOLMOD (AMD ordering; {choice.reason})"
        )
    elif choice.nnz_factor is not None or "scikit-sparse" in choice.reason:
        notes.append(f"dense path for the {choice.m}-level reader block: {choice.reason}")
    return choice.path


def _constant_response_result(design, lap, level, profile, notes, icol) -> GlmmResult:
    """Every response is the same: intercept +/-inf, sds not estimable; intercept-only models
    get a one-sided profile interval, other coefficients are not identifiable (NaN)."""
    K = len(design.codes)
    p = design.X.shape[1]
    sign = 1.0 if design.y[0] == 1 else -1.0
    notes.append(
        f"separation: every response is {int(design.y[0])}; the intercept is +/-inf, "
        "random-effect sds are not estimable"
        + (", only a one-sided profile interval exists" if p == 1 else ", other coefficients are not identifiable")
    )
    plow, phigh = np.full(p, math.nan), np.full(p, math.nan)
    if profile and p == 1:
        from judge_transfer_audit.statistics.glmm.profile import constant_response_bound

        bound = constant_response_bound(lap, K, level, sign, design.X[0, 0])
        if not bound.reached:
            notes.append(f"profile bound not found: {bound.note}")
        plow[0], phigh[0] = (bound.value, math.inf) if sign > 0 else (-math.inf, bound.value)
    b = np.full(p, math.nan)
    b[icol] = sign * math.copysign(math.inf, design.X[0, icol])
    se = np.full(p, math.nan)
    se[icol] = math.inf
    vcov = np.full((p, p), math.nan)
    vcov[icol, icol] = math.inf
    wlow, whigh = np.full(p, math.nan), np.full(p, math.nan)
    wlow[icol], whigh[icol] = -math.inf, math.inf
    return GlmmResult(
        names=design.x_names,
        b=tuple(float(v) for v in b),
        se=tuple(float(v) for v in se),
        vcov=tuple(tuple(float(v) for v in row) for row in vcov),
        wald_low=tuple(float(v) for v in wlow),
        wald_high=tuple(float(v) for v in whigh),
        profile_low=tuple(float(v) for v in plow),
        profile_high=tuple(float(v) for v in phigh),
        level=float(level),
        sd={name: math.nan for name in design.factor_names},
        conditional_modes={
            name: {lv: 0.0 for lv in levels} for name, levels in zip(design.factor_names, design.levels)
        },
        loglik=0.0,
        aic=float(2.0 * (K + p)),
        deviance=0.0,
        n_obs=int(design.y.size),
        n_levels=dict(design.n_levels),
        converged=True,
        singular=False,
        separation=True,
        iterations=0,
        notes=tuple(notes),
        backend="native",
        dropped_factors=design.dropped,
    )
