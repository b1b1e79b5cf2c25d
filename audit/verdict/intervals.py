"""Intervals and one-sided p-values read from bootstrap replicates, consistently.

The replicates of a statistic are smoothed with a Gaussian kernel (bandwidth by Silverman's
rule, the replicates first shrunk towards their mean so that the smoothed distribution keeps
their variance: Silverman 1986, sec. 6.4.1, the "shrunk" smoothed bootstrap). The smoothed
distribution function ``F`` is continuous and strictly increasing, so the percentile interval
at level ``L`` is ``[F^-1(a), F^-1(1 - a)]``.

**p-values: the smoothed percentile where the replicates are dense, a Gaussian tail beyond.**
The one-sided p-value of ``statistic <= null`` is ``F(null)`` as long as that is at least
``p_anchor = min(0.05, ANCHOR_COUNT / (B + 1))`` (20 replicates beyond the null with the
default 999 replicates): there the interval excludes ``null`` exactly when the p-value is
below the interval's tail. Further out ``F`` is a kernel sum over the few most extreme
replicates and its value swings by orders of magnitude with the Monte Carlo stream (one
replicate out of 999 moved a fixture cell's p from 3e-8 to 4e-3: docs/audit.md 4.2); there
the tail is continued from the anchor quantile ``x_a = F^-1(p_anchor)`` as a Gaussian with the
replicates' standard deviation ``s``: ``p = Phi(Phi^-1(p_anchor) - (x_a - null) / s)``. Both
ingredients are stable (the Monte Carlo error of ``x_a`` is that of a 2% quantile, about 0.09
``s`` at 999 replicates; of ``s`` about ``s / sqrt(2 B)``), the p-value is continuous and
monotone in ``null``, and it is never 0 (floored at ``P_MIN``). :meth:`p_mc_se` is the
delta-method Monte Carlo standard error of each p-value (what a different seed would change).

When the replicates do not vary (no kernel: ``F`` is their step function) the p-value is a
count, floored at ``1 / (B + 1)`` (Phipson and Smyth 2010); ``count_floor`` is that number.

Student-t calibration: with finite degrees of freedom ``df`` every tail probability ``a``
is read at ``Phi(-t_df^-1(1 - a))`` (the tails are as wide as a t interval's), and a
p-value with normal score ``z`` (``Phi(z)`` above) is ``T_df(z)``;
:mod:`judge_transfer_audit.statistics.uncertainty.two_way`
does the same for the uncertainty section's two-way intervals. When ``df`` is itself estimated
from the replicates (the paired bootstrap's Satterthwaite df) it has a Monte Carlo error
``df_se`` of its own, and ``T_df(z)`` moves with it at fixed ``z``: :meth:`p_mc_se` adds
``|dT_df(z) / d df| df_se`` in quadrature (with few readers the df is about 3 and its error
about 10%, which on a HANNA cell was most of the p-value's seed-to-seed spread: docs/audit.md 4.2).
"""

from __future__ import annotations

import numpy as np


# SciPy is imported on first use, not with the module: the result types and the report import
# this module and must stay free of SciPy (tests/reports/test_report_imports.py).
def ndtr(x):
    """The standard normal CDF (:func:`scipy.special.ndtr`)."""
    from scipy.special import ndtr as _ndtr

    return _ndtr(x)


def ndtri(p):
    """The standard normal quantile (:func:`scipy.special.ndtri`)."""
    from scipy.special import ndtri as _ndtri

    return _ndtri(p)


def _student_t():
    from judge_transfer_audit.statistics.distributions import t

    return t


P_MIN = float(np.finfo(float).tiny)  #: the smallest p-value returned (a smoothed tail that underflowed)
ANCHOR_COUNT = 20  #: replicates beyond the anchor quantile where the Gaussian tail takes over
ANCHOR_MAX = 0.05  #: the anchor's tail probability is never above this
_SQRT_2PI = float(np.sqrt(2.0 * np.pi))


class ReplicateDistribution:
    """The smoothed bootstrap distribution of one statistic (internal)."""

    def __init__(
        self,
        estimate: float,
        replicates: np.ndarray,
        df: float = float("inf"),
        bounds: tuple[float, float] = (-np.inf, np.inf),
        df_se: float = 0.0,
    ):
        self.bounds = (float(bounds[0]), float(bounds[1]))
        reps = np.asarray(replicates, float)
        reps = reps[np.isfinite(reps)]
        self.estimate = float(estimate)
        self.df = float(df) if np.isfinite(df) and df > 0 else float("inf")
        #: the Monte Carlo SE of ``df`` when it was estimated from the replicates (0: ``df`` is known)
        self.df_se = float(df_se) if np.isfinite(self.df) and np.isfinite(df_se) and df_se > 0 else 0.0
        self.n = int(reps.size)
        self._anchors: dict[str, tuple[float, float]] = {}
        self._quantiles: dict[float, float] = {}
        self._tails: dict[float, float] = {}  #: tail(a) per a (a Student-t quantile each: worth keeping)
        self._ps: dict[tuple[float, bool], tuple[float, float]] = {}  #: _p per (null, tail): decide reads each twice
        if self.n < 2 or not np.isfinite(self.estimate):
            self._reps, self._h, self.sd, self._kurtosis = reps, 0.0, float("nan"), float("nan")
            return
        sd = float(reps.std(ddof=1))
        self.sd = sd
        centred = reps - reps.mean()
        m2 = float(np.mean(centred**2))
        self._kurtosis = float(np.mean(centred**4) / m2**2) if m2 > 0 else float("nan")
        q75, q25 = np.quantile(reps, [0.75, 0.25])
        spread = min(sd, (q75 - q25) / 1.349) if q75 > q25 else sd
        h = 0.9 * spread * self.n ** (-0.2)
        if sd > 0 and h > 0:
            mean = reps.mean()
            reps = mean + (reps - mean) / np.sqrt(1.0 + (h / sd) ** 2)
        self._reps, self._h = np.sort(reps), float(h)

    @property
    def count_floor(self) -> float:
        """``1 / (B + 1)``: the smallest p-value a count of the ``B`` replicates can give."""
        return 1.0 / (self.n + 1.0)

    @property
    def p_anchor(self) -> float:
        """The tail probability below which a p-value is the Gaussian continuation (module doc)."""
        return float(min(ANCHOR_MAX, ANCHOR_COUNT / (self.n + 1.0)))

    @property
    def defined(self) -> bool:
        return self.n >= 2 and np.isfinite(self.estimate)

    def cdf(self, x: float) -> float:
        """Smoothed ``P*(statistic <= x)`` (a step when the replicates do not vary)."""
        if not self.defined:
            return float("nan")
        if self._h <= 0:
            return float(np.mean(self._reps <= x))
        return float(np.mean(ndtr((x - self._reps) / self._h)))

    def density(self, x: float) -> float:
        """The smoothed density at ``x`` (0 when the replicates do not vary)."""
        if not self.defined or self._h <= 0:
            return 0.0
        z = np.clip((x - self._reps) / self._h, -40.0, 40.0)
        return float(np.mean(np.exp(-0.5 * z * z)) / (self._h * _SQRT_2PI))

    def quantile(self, prob: float) -> float:
        """``F^-1(prob)``: Newton steps from the replicates' own quantile, safeguarded by bisection.

        The same root as a 60-step bisection on ``[min - 40 h, max + 40 h]`` (to 1e-9, tested),
        in a handful of evaluations of ``F`` rather than 60; cached per ``prob`` (the decision
        reads the same bounds more than once).
        """
        if not self.defined:
            return float("nan")
        if self._h <= 0:
            return float(np.quantile(self._reps, prob))
        cached = self._quantiles.get(prob)
        if cached is None:
            cached = self._quantiles[prob] = self._root(float(prob))
        return cached

    def _root(self, prob: float) -> float:
        reps, h = self._reps, self._h
        lo, hi = float(reps[0] - 40 * h), float(reps[-1] + 40 * h)
        x = float(np.clip(np.quantile(reps, min(max(prob, 0.0), 1.0)), lo, hi))
        tol_f = 1e-13 * max(min(prob, 1.0 - prob), 1e-300)  # relative to the tail probability
        for _ in range(200):
            z = (x - reps) / h
            f = float(np.mean(ndtr(z))) - prob
            if abs(f) <= tol_f:
                return x
            if f < 0:
                lo = x
            else:
                hi = x
            zc = np.clip(z, -40.0, 40.0)  # beyond 40 bandwidths the kernel is 0 (and z * z may overflow)
            dens = float(np.mean(np.exp(-0.5 * zc * zc))) / (h * _SQRT_2PI)
            new = x - f / dens if dens > 0 else np.nan
            if not (lo < new < hi):
                new = 0.5 * (lo + hi)
            if abs(new - x) <= 1e-15 * max(1.0, abs(x)) or hi - lo <= 1e-15 * max(1.0, abs(x)):
                return float(new)
            x = float(new)
        return float(x)

    def tail(self, a: float) -> float:
        """The tail probability at which a one-sided level-``a`` bound is read (t-calibrated)."""
        if not np.isfinite(self.df):
            return float(a)
        cached = self._tails.get(a)
        if cached is None:
            cached = self._tails[a] = float(ndtr(-_student_t().ppf(1.0 - a, self.df)))
        return cached

    def lower(self, a: float) -> float:
        """One-sided lower bound at level ``1 - a`` (clipped to ``bounds``)."""
        return float(np.clip(self.quantile(self.tail(a)), *self.bounds))

    def upper(self, a: float) -> float:
        """One-sided upper bound at level ``1 - a`` (clipped to ``bounds``)."""
        return float(np.clip(self.quantile(1.0 - self.tail(a)), *self.bounds))

    def interval(self, level: float) -> tuple[float, float]:
        """Two-sided ``level`` interval, clipped to the statistic's range (``bounds``)."""
        a = (1.0 - level) / 2.0
        lo, hi = self.bounds
        return float(np.clip(self.lower(a), lo, hi)), float(np.clip(self.upper(a), lo, hi))

    def p_greater(self, null: float) -> float:
        """One-sided p of ``statistic <= null`` against ``> null`` (small when the statistic is above)."""
        return self._p(null, lower_tail=True)[0]

    def p_less(self, null: float) -> float:
        """One-sided p of ``statistic >= null`` against ``< null``."""
        return self._p(null, lower_tail=False)[0]

    def p_mc_se(self, null: float, *, greater: bool) -> float:
        """The Monte Carlo standard error of :meth:`p_greater` (``greater``) or :meth:`p_less`.

        Delta method: in the dense region the smoothed proportion's binomial error
        ``sqrt(F (1 - F) / B)``; in the Gaussian continuation the errors of the anchor quantile
        (``sqrt(p_a (1 - p_a) / B) / f(x_a)``) and of the SD (``s sqrt((kurtosis - 1) / (4 B))``)
        carried through ``z = Phi^-1(p_a) - |x_a - null| / s``, then through the t calibration,
        plus the error of an estimated ``df`` (``|dT_df(z) / d df| df_se``, in quadrature). 0 for a count
        (the replicates do not vary); NaN when undefined.
        """
        return self._p(null, lower_tail=greater)[1]

    def _anchor(self, lower_tail: bool) -> tuple[float, float]:
        """``(x_a, f(x_a))``: the anchor quantile of one tail and the density there (cached)."""
        key = "lower" if lower_tail else "upper"
        if key not in self._anchors:
            pa = self.p_anchor
            x = self.quantile(pa if lower_tail else 1.0 - pa)
            self._anchors[key] = (x, self.density(x))
        return self._anchors[key]

    def _p(self, null: float, *, lower_tail: bool) -> tuple[float, float]:
        """``(p, Monte Carlo SE)`` of the one-sided p-value in one tail (module doc; cached per null and tail)."""
        key = (float(null), bool(lower_tail))
        cached = self._ps.get(key)
        if cached is None:
            cached = self._ps[key] = self._p_uncached(null, lower_tail=lower_tail)
        return cached

    def _p_uncached(self, null: float, *, lower_tail: bool) -> tuple[float, float]:
        if not self.defined or not np.isfinite(null):
            return float("nan"), float("nan")
        if self._h <= 0:  # a count of replicates: never below 1 / (B + 1)
            c = self.cdf(null)
            raw = c if lower_tail else 1.0 - c
            return float(min(max(raw, self.count_floor), 1.0)), 0.0
        n, pa = float(self.n), self.p_anchor
        c = self.cdf(null)
        raw = min(max(c if lower_tail else 1.0 - c, P_MIN), 1.0)
        z, dz = _score(raw, n)
        if raw < pa:  # beyond the anchor: the Gaussian continuation, unless the replicates there say more
            x_a, f_a = self._anchor(lower_tail)
            beyond = max((x_a - null) if lower_tail else (null - x_a), 0.0)  # the null lies beyond the anchor
            s = self.sd
            z_tail = float(ndtri(pa)) - beyond / s
            if z_tail > z:
                se_x = float(np.sqrt(pa * (1.0 - pa) / n)) / f_a if f_a > 0 else float("inf")
                kurt = self._kurtosis if np.isfinite(self._kurtosis) else 3.0
                se_s = s * float(np.sqrt(max(kurt - 1.0, 0.0) / (4.0 * n)))
                z, dz = z_tail, float(np.hypot(se_x / s, beyond * se_s / (s * s)))
        finite = np.isfinite(self.df)
        p = float(_student_t().cdf(z, self.df)) if finite else float(ndtr(z))
        dens = float(_student_t().pdf(z, self.df)) if finite else float(ndtr_pdf(z))
        slope = self._df_slope(z) if finite and self.df_se > 0 else 0.0
        return float(min(max(p, P_MIN), 1.0)), float(np.hypot(dens * dz, slope * self.df_se))

    def _df_slope(self, z: float) -> float:
        """``d T_df(z) / d df`` at this distribution's ``df`` (a central difference, 1% of ``df``)."""
        t, step = _student_t(), 0.01 * self.df
        return float(t.cdf(z, self.df + step) - t.cdf(z, self.df - step)) / (2.0 * step)

    def mirrored(self, about: float) -> "MirroredDistribution":
        """The distribution of ``about - statistic``, read exactly from this one (no re-smoothing)."""
        return MirroredDistribution(self, about)


class MirroredDistribution:
    """``about - X`` for a :class:`ReplicateDistribution` ``X``: every reading is the mirrored reading of ``X``.

    A cell whose focal system is the other one is computed in the canonical orientation and
    read through this (internal): its p-values are *the same numbers*, its bounds mirrored.
    """

    def __init__(self, base: ReplicateDistribution, about: float):
        self.base, self.about = base, float(about)
        lo, hi = base.bounds
        self.bounds = (self.about - hi, self.about - lo)

    estimate = property(lambda self: self.about - self.base.estimate)
    sd = property(lambda self: self.base.sd)
    df = property(lambda self: self.base.df)
    df_se = property(lambda self: self.base.df_se)
    n = property(lambda self: self.base.n)
    defined = property(lambda self: self.base.defined)
    count_floor = property(lambda self: self.base.count_floor)

    def quantile(self, prob: float) -> float:
        return self.about - self.base.quantile(1.0 - prob)

    def tail(self, a: float) -> float:
        return self.base.tail(a)

    def lower(self, a: float) -> float:
        return self.about - self.base.upper(a)

    def upper(self, a: float) -> float:
        return self.about - self.base.lower(a)

    def interval(self, level: float) -> tuple[float, float]:
        lo, hi = self.base.interval(level)
        return self.about - hi, self.about - lo

    def p_greater(self, null: float) -> float:
        return self.base.p_less(self.about - null)

    def p_less(self, null: float) -> float:
        return self.base.p_greater(self.about - null)

    def p_mc_se(self, null: float, *, greater: bool) -> float:
        return self.base.p_mc_se(self.about - null, greater=not greater)

    def mirrored(self, about: float) -> ReplicateDistribution | "MirroredDistribution":
        return self.base if about == self.about else MirroredDistribution(self, about)


def _score(p: float, n: float) -> tuple[float, float]:
    """The normal score of a smoothed proportion ``p`` of ``n`` replicates and its Monte Carlo SE (binomial)."""
    z = float(-ndtri(1.0 - p)) if p > 0.5 else float(ndtri(p))
    se = float(np.sqrt(p * (1.0 - p) / n))
    return z, se / max(ndtr_pdf(z), 1e-300)


def ndtr_pdf(z: float) -> float:
    """The standard normal density (0 beyond 40 SD)."""
    z = min(max(float(z), -40.0), 40.0)
    return float(np.exp(-0.5 * z * z) / _SQRT_2PI)


__all__ = ["ANCHOR_COUNT", "P_MIN", "MirroredDistribution", "ReplicateDistribution"]
