"""Intervals and one-sided p-values read from bootstrap replicates, consistently.

The replicates of a statistic are smoothed with a Gaussian kernel (bandwidth by Silverman's
rule, the replicates first shrunk towards their mean so that the smoothed distribution keeps
their variance: Silverman 1986, sec. 6.4.1, the "shrunk" smoothed bootstrap). The smoothed
distribution function ``F`` is continuous and strictly increasing, so

* the percentile interval at level ``L`` is ``[F^-1(a), F^-1(1 - a)]``, and
* the one-sided p-value of ``statistic <= null`` is ``F(null)``

and the interval excludes ``null`` exactly when the p-value is below ``a``. Unlike a count of
replicates, ``F`` gives the small p-values a multiplicity adjustment over many cells needs
(a count cannot go below ``1 / (B + 1)``); far beyond every replicate it decays like the
kernel's Gaussian tail: a smooth extrapolation, labelled as such in docs/audit.md.

**A p-value is never 0.** When the replicates do not vary (no kernel: ``F`` is their step
function) the p-value is a count, floored at ``1 / (B + 1)`` (the replicates cannot tell a
smaller one; Phipson and Smyth 2010); a smoothed p-value is floored at ``P_MIN`` (the
extrapolated Gaussian tail underflows to 0 some 38 bandwidths beyond every replicate).
``count_floor`` is ``1 / (B + 1)``: what the terminal prints as ``< 1/(B+1)``, the number
beyond which a p-value is an extrapolation (docs/audit.md 4.2).

Student-t calibration: with finite degrees of freedom ``df`` every tail probability ``a``
is read at ``Phi(-t_df^-1(1 - a))`` (the tails are as wide as a t interval's), and a
p-value ``F(null)`` is mapped to ``T_df(Phi^-1(F(null)))``; :mod:`audit.uncertainty.two_way`
does the same for the uncertainty section's two-way intervals.
"""

from __future__ import annotations

import numpy as np

P_MIN = float(np.finfo(float).tiny)  #: the smallest p-value returned (a smoothed tail that underflowed)


class ReplicateDistribution:
    """The smoothed bootstrap distribution of one statistic (internal)."""

    def __init__(
        self,
        estimate: float,
        replicates: np.ndarray,
        df: float = float("inf"),
        bounds: tuple[float, float] = (-np.inf, np.inf),
    ):
        self.bounds = (float(bounds[0]), float(bounds[1]))
        reps = np.asarray(replicates, float)
        reps = reps[np.isfinite(reps)]
        self.estimate = float(estimate)
        self.df = float(df) if np.isfinite(df) and df > 0 else float("inf")
        self.n = int(reps.size)
        if self.n < 2 or not np.isfinite(self.estimate):
            self._reps, self._h, self.sd = reps, 0.0, float("nan")
            return
        sd = float(reps.std(ddof=1))
        self.sd = sd
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
    def defined(self) -> bool:
        return self.n >= 2 and np.isfinite(self.estimate)

    def cdf(self, x: float) -> float:
        """Smoothed ``P*(statistic <= x)`` (a step when the replicates do not vary)."""
        from scipy.special import ndtr

        if not self.defined:
            return float("nan")
        if self._h <= 0:
            return float(np.mean(self._reps <= x))
        return float(np.mean(ndtr((x - self._reps) / self._h)))

    def quantile(self, prob: float) -> float:
        """``F^-1(prob)`` by bisection."""
        if not self.defined:
            return float("nan")
        if self._h <= 0:
            return float(np.quantile(self._reps, prob))
        lo, hi = self._reps[0] - 40 * self._h, self._reps[-1] + 40 * self._h
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if self.cdf(mid) < prob:
                lo = mid
            else:
                hi = mid
        return 0.5 * (lo + hi)

    def tail(self, a: float) -> float:
        """The tail probability at which a one-sided level-``a`` bound is read (t-calibrated)."""
        from scipy.special import ndtr
        from scipy.stats import t as student_t

        if not np.isfinite(self.df):
            return float(a)
        return float(ndtr(-student_t.ppf(1.0 - a, self.df)))

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
        return self._calibrate(self.cdf(null))

    def p_less(self, null: float) -> float:
        """One-sided p of ``statistic >= null`` against ``< null``."""
        c = self.cdf(null)
        return self._calibrate(1.0 - c if np.isfinite(c) else c)

    def _calibrate(self, p: float) -> float:
        from scipy.special import ndtri
        from scipy.stats import t as student_t

        if not np.isfinite(p):
            return float(p)
        if self._h <= 0:  # a count of replicates: never below 1 / (B + 1)
            return float(min(max(p, self.count_floor), 1.0))
        if np.isfinite(self.df):
            # -ndtri(p), not ndtri(1 - p): 1 - p rounds to 1 below 1e-16 and the p would be 0
            p = float(student_t.sf(-ndtri(min(max(p, 1e-300), 1.0)), self.df))
        return float(min(max(p, P_MIN), 1.0))


__all__ = ["P_MIN", "ReplicateDistribution"]
