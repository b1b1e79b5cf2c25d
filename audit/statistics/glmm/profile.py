"""Profile-likelihood intervals for the fixed effects of a Laplace GLMM fit.

For a fixed effect ``b_j`` the profile deviance ``dev_j(c)`` is the Laplace deviance minimised over
every other parameter (the relative sds ``theta >= 0`` and the other fixed effects) with
``b_j = c``. The signed root ``zeta(c) = sign(c - b_j) sqrt(dev_j(c) - dev_min)`` is solved for
``zeta = -/+ z_(1+level)/2`` by Brent's method, each evaluation warm-started from the previous one.
This is the interval ``confint(fit, method = "profile")`` computes in lme4, which interpolates
``zeta`` by splines over a grid instead of solving for the root; the two agree to the spline's
accuracy. A side on which ``zeta`` never reaches the target (separation) is unbounded (+/-inf).
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from judge_transfer_audit.statistics.distributions import norm
from judge_transfer_audit.statistics.glmm.optimize import minimize_bounded
from judge_transfer_audit.statistics.roots import brentq

_MAX_EXPANSIONS = 40
_FAR = 60.0  # logit units: beyond this an interval side is taken as unbounded
#: PIRLS stopping rule of a constant-response profile, relative to the penalised deviance (see
#: :func:`_relative_pirls_tolerance`); the iterative path's rule (judge_transfer_audit.statistics.glmm.iterative)
_CONSTANT_PIRLS_RTOL = 1e-14


class _Profile:
    """Profile deviance of parameter ``idx`` of ``x`` (theta first, then beta)."""

    def __init__(self, lap, x_hat, K, idx, fix_theta=False):
        self.lap = lap
        self.K = K
        self.idx = idx
        first = K if fix_theta else 0
        self.free = np.array([i for i in range(first, x_hat.size) if i != idx], dtype=int)
        self.n_bounded = int(np.sum(self.free < K))
        self.x_hat = x_hat
        self.last = x_hat[self.free].copy()

    def deviance(self, c: float) -> float:
        x = self.x_hat.copy()
        x[self.idx] = c

        def fun(z):
            x[self.free] = z
            value = self.lap(x[: self.K], x[self.K :])
            return value, self.lap.gradient()[self.free]

        if self.free.size == 0:
            return fun(np.zeros(0))[0]
        # the iterative path's objective is accurate to its estimator: stop where the model's gain is below it
        tol = getattr(self.lap, "decrease_tol", None)
        res = minimize_bounded(fun, self.last, self.n_bounded, decrease_tol=tol)
        self.last = res.x.copy()
        return float(res.fun)


def _side(prof: _Profile, b: float, dev_min: float, target: float, step: float) -> float:
    """Solve zeta(c) = target on one side of b; +/-inf when it is never reached.

    First step: the Wald bound; then linear extrapolation in zeta until the target is
    bracketed, then regula falsi (Illinois variant) on zeta(c) - target.
    """
    direction = math.copysign(1.0, target)
    prof.last = prof.x_hat[prof.free].copy()

    def excess(c):
        d = prof.deviance(c) - dev_min
        return math.copysign(math.sqrt(max(d, 0.0)), c - b) - target

    lo, g_lo = b, -target
    c = b + direction * step
    g = excess(c)
    for _ in range(_MAX_EXPANSIONS):
        if g * direction >= 0:
            break
        if abs(c - b) > _FAR:
            return direction * math.inf
        reached = g + target
        ratio = abs(target) / abs(reached) if abs(reached) > 1e-8 else 4.0
        lo, g_lo = c, g
        c = b + (c - b) * min(max(ratio * 1.02, 1.05), 4.0)
        g = excess(c)
    else:
        return direction * math.inf
    hi, g_hi = c, g
    side = 0
    for _ in range(60):
        c = hi - g_hi * (hi - lo) / (g_hi - g_lo)
        g = excess(c)
        if abs(g) < 1e-7 or abs(hi - lo) < 1e-9:
            return c
        if (g > 0) == (g_hi > 0):
            hi, g_hi = c, g
            if side == 1:
                g_lo /= 2.0
            side = 1
        else:
            lo, g_lo = c, g
            if side == -1:
                g_hi /= 2.0
            side = -1
    return c


def profile_intervals(lap, x_hat, dev_min, K, level, se, fix_theta=False):
    """Profile intervals for every fixed effect; returns ``(low, high)`` arrays."""
    z = norm.ppf(0.5 + level / 2.0)
    p = x_hat.size - K
    low = np.full(p, np.nan)
    high = np.full(p, np.nan)
    for j in range(p):
        b = float(x_hat[K + j])
        step = float(se[j]) * z if np.isfinite(se[j]) and se[j] > 0 else 1.0
        prof = _Profile(lap, x_hat, K, K + j, fix_theta)
        low[j] = _side(prof, b, dev_min, -z, step)
        high[j] = _side(prof, b, dev_min, z, step)
    return low, high


@dataclass(frozen=True)
class ConstantBound:
    """The finite end of a constant-response cell's profile interval, or why there is none.

    ``value`` is the bound on the logit scale; when the profile deviance does not reach ``z^2``
    within ``_FAR`` logit units (it can grow only like ``log |c|`` when the sds are profiled out,
    since large sds let the random effects carry the intercept) the bound is reported as
    ``+/-inf`` (probability 0 or 1) with ``reached = False`` and ``note`` saying so.
    """

    value: float
    reached: bool
    note: str = ""


@contextmanager
def _relative_pirls_tolerance(lap):
    """PIRLS on ``lap`` also stops once its Newton decrement is below ``_CONSTANT_PIRLS_RTOL`` times the
    penalised deviance, for the duration of the block.

    When every response is the same the profile is followed out to large intercepts and sds, where
    the penalised deviance is a fraction of a unit and the exact path's absolute rule (decrement
    below 1e-22) asks for more than double precision gives: PIRLS then ran its 60 Newton steps, each
    halved ~25 times, at modes already converged (gradient ~1e-10), on a fifth of the evaluations: a
    unanimous cell's human model took 40 s where the fixture's whole audit takes a few. The rule is
    the one the iterative path uses; other cells never get here.
    """
    base = lap._converged
    own = "_converged" in vars(lap)
    lap._converged = lambda decrement, pdev: (
        base(decrement, pdev) or decrement < _CONSTANT_PIRLS_RTOL * max(1.0, abs(pdev))
    )
    try:
        yield
    finally:
        if own:
            lap._converged = base
        else:
            del lap._converged


def constant_response_bound(lap, K, level, sign, xval) -> ConstantBound:
    """The finite end of the profile interval of the intercept when every response is the same (see
    :func:`_constant_response_bound`), PIRLS under :func:`_relative_pirls_tolerance`."""
    with _relative_pirls_tolerance(lap):
        return _constant_response_bound(lap, K, level, sign, xval)


def _constant_response_bound(lap, K, level, sign, xval) -> ConstantBound:
    """The finite end of the profile interval of the intercept when every response is the same.

    The deviance tends to 0 as the intercept goes to +/-inf on the side of the responses, so the
    bound solves ``dev(c) = z^2`` with the sds profiled out. It never raises: a side that cannot
    be bracketed within ``_FAR`` logit units gives a flagged unbounded result.
    """
    z = norm.ppf(0.5 + level / 2.0)
    direction = sign * math.copysign(1.0, xval)
    x_hat = np.concatenate([np.full(K, 0.5), [0.0]])
    prof = _Profile(lap, x_hat, K, K)

    def excess(c):
        return prof.deviance(c) - z * z

    # a: a point where dev(a) > z^2, searched away from the responses' side
    a = 0.0
    fa = excess(a)
    while fa <= 0 and abs(a) < _FAR:
        a -= direction * 2.0
        fa = excess(a)
    if not fa > 0:
        return ConstantBound(
            -direction * math.inf,
            False,
            f"the profile deviance stays below z^2 = {z * z:.3g} out to {a:+.0f} on the logit scale "
            f"(it reaches {fa + z * z:.3g}; with the sds profiled out it grows only like log |b0|): "
            "the interval is unbounded on that side at working precision",
        )
    # c: a point where dev(c) < z^2, towards the responses' side
    c = a
    fc = fa
    while fc >= 0 and abs(c - a) < 2 * _FAR:
        c += direction * 2.0
        fc = excess(c)
    if not fc < 0:
        return ConstantBound(
            math.nan,
            False,
            f"the profile deviance does not fall below z^2 = {z * z:.3g} within "
            f"{2 * _FAR:.0f} logit units of {a:+.0f}: no profile bound",
        )
    return ConstantBound(float(brentq(excess, min(a, c), max(a, c), xtol=1e-7, rtol=1e-10)), True)
