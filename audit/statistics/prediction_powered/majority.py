"""The majority rate's interval: a profile interval over the two quantities the Beta model rests on.

The decision's Beta model gives the majority rate ``M = P(p > 1/2)`` from the vote share
``V = E[p]`` and the between-pair variance ``tau^2 = E[p^2] - V^2``. ``V``'s estimate has a
normal error; ``tau^2``'s does not: it is a variance, skewed, and bounded at 0 where the pairs
barely differ, and ``M`` is flat in ``tau^2`` near 0 (``M = 1`` at ``tau^2 = 0`` when
``V > 1/2``) and steep further out. So the interval is built on pivots that are close to normal
and mapped through the model:

* ``V``: ``(V_hat - V) / se(V)``;
* ``T = tau^2 + within``, the observed variance of the pairs' shares (``within`` the part the
  votes' own noise adds): Wilson and Hilferty's pivot ``((T_hat / T)^(1/3) - 1 + a) / sqrt(a)``,
  ``a = 2 / (9 nu)``, for ``T_hat ~ T chi^2_nu / nu`` with ``nu = 2 T_hat^2 / var(T_hat)`` (at most
  the pairs' degrees of freedom), as the Q-profile intervals of meta-analysis use the chi-square
  law of a between-study variance;
* their correlation from the delta method;
* each pivot studentised with its own quantile: ``V``'s the vote share's (a t with readers
  crossed: the readers' leniency is estimated from few readers), ``T``'s a t on Satterthwaite's
  degrees of freedom for its pair part (pairs - 1) and its reader part (readers - 1); a pivot is
  divided by its quantile over the normal one ``z``.

A candidate ``(V, tau^2)`` is admissible when ``0 <= tau^2 <= V (1 - V)``; ``W`` is the squared
Mahalanobis norm of its two pivots, and the profile region is ``{admissible: W <= min W + z^2}``
(measured from the best admissible fit, which is on the boundary when ``tau^2`` comes out below
0). ``M``'s interval is ``M``'s range over the region. ``M`` is monotone along each slice of fixed
``V`` (in ``tau^2``: decreasing above ``V = 1/2``, increasing below, constant at 1/2), so the range
is reached at the ends of the region's slices, taken on a grid of ``V`` across the region.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

__all__ = ["N_SLICES", "Pivots", "majority_rate_interval", "pivots", "profile_region_slices", "satterthwaite_quantile"]

N_SLICES = 1001  #: slices of fixed V across the profile region


class Pivots(NamedTuple):
    """The two standardised errors the region is built on, and what maps them back."""

    v_hat: float  #: the estimate of V
    sd_v: float  #: its standard error, times V's quantile over the normal one
    total_hat: float  #: the estimate of T = tau^2 + within (the observed variance of the pairs' shares)
    a: float  #: Wilson-Hilferty's 2 / (9 nu), nu = 2 T^2 / var(T) the degrees of freedom of T
    rho: float  #: the correlation of the two errors
    within: float
    t_scale: float = 1.0  #: T's quantile over the normal one (its pivot is divided by it)

    def x_v(self, v: np.ndarray) -> np.ndarray:
        return (self.v_hat - v) / self.sd_v

    def x_total(self, total: np.ndarray) -> np.ndarray:
        """Wilson-Hilferty's normal pivot for ``T_hat ~ T chi^2_nu / nu``; +inf at T = 0."""
        with np.errstate(divide="ignore"):
            ratio = np.cbrt(self.total_hat / np.asarray(total, float))
        return (ratio - (1.0 - self.a)) / (math.sqrt(self.a) * self.t_scale)

    def total(self, x: np.ndarray) -> np.ndarray:
        """The inverse of :meth:`x_total` (inf where the pivot is below its range)."""
        base = 1.0 - self.a + np.asarray(x, float) * self.t_scale * math.sqrt(self.a)
        with np.errstate(divide="ignore"):
            return np.where(base > 0, self.total_hat / np.maximum(base, 1e-300) ** 3, np.inf)


def satterthwaite_quantile(parts: tuple[float, ...], dfs: tuple[float, ...], level: float = 0.95) -> float:
    """The t quantile of a variance that is a sum of ``parts`` estimated on ``dfs`` degrees of
    freedom each (Satterthwaite); the normal quantile when no part has any."""
    from judge_transfer_audit.statistics.distributions import norm, t

    den = sum(p * p / d for p, d in zip(parts, dfs) if d > 0)
    total = sum(parts)
    if not (den > 0 and total > 0):
        return float(norm.ppf(0.5 + level / 2.0))
    return float(t.ppf(0.5 + level / 2.0, total * total / den))


def pivots(
    mean: tuple[float, float],
    cov: np.ndarray,
    within: float,
    n_pairs: int | None = None,
    *,
    scale_v: float = 1.0,
    scale_t: float = 1.0,
) -> Pivots | None:
    """The pivots of ``(V, T = tau^2 + within)`` from the estimates of ``(V, E[p^2])`` and their
    covariance (delta method for ``T = E[p^2] - V^2 + within``; ``V``'s standard error times
    ``scale_v``, ``T``'s pivot divided by ``scale_t``); None when ``T``'s estimate or either
    variance is not positive."""
    m1, m2 = float(mean[0]), float(mean[1])
    cov = np.asarray(cov, float)
    c11, c12, c22 = float(cov[0, 0]), float(cov[0, 1]), float(cov[1, 1])
    total = m2 - m1 * m1 + c11 + within  # m1^2 overestimates V^2 by var(m1)
    var_t = c22 - 4.0 * m1 * c12 + 4.0 * m1 * m1 * c11
    if not (total > 0 and c11 > 0 and var_t > 0):
        return None
    rho = float(np.clip((c12 - 2.0 * m1 * c11) / math.sqrt(c11 * var_t), -0.999, 0.999))
    nu = 2.0 * total * total / var_t
    if n_pairs is not None and n_pairs > 1:
        # at most the pairs' degrees of freedom: var(T) is a fourth-moment estimate, noisy
        # with few pairs and small when T's estimate is small
        nu = min(nu, n_pairs - 1.0)
    return Pivots(m1, math.sqrt(c11) * scale_v, total, 2.0 / (9.0 * nu), rho, float(within), scale_t)


def profile_region_slices(
    piv: Pivots, level: float = 0.95, n_slices: int = N_SLICES
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """The profile region's slices of fixed V.

    Parameters
    ----------
    piv : Pivots
        From :func:`pivots`.
    level : float
        The interval's level: the region's radius is the square of its normal quantile.
    n_slices : int
        Slices across the region.

    Returns
    -------
    v : array
        The slices' V (only those that meet the region).
    low, high : arrays
        Each slice's lowest and highest ``tau^2`` in the region.
    w_min : float
        ``min_P W``: 0 when the estimate is admissible, else the distance of the nearest
        admissible point (the region's radius is measured from it).
    """
    from judge_transfer_audit.statistics.distributions import norm

    z2 = float(norm.ppf(0.5 + level / 2.0)) ** 2
    rho, one_minus = piv.rho, 1.0 - piv.rho**2

    def slices(v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        x1 = piv.x_v(v)
        # admissible: 0 <= tau^2 <= V (1 - V); x_total decreases in T
        lo = piv.x_total(np.maximum(v * (1.0 - v), 0.0) + piv.within)
        hi = piv.x_total(np.full(v.shape, piv.within))
        nearest = np.clip(rho * x1, lo, hi)
        return x1, lo, hi, x1 * x1 + (nearest - rho * x1) ** 2 / one_minus

    v_hat = min(max(piv.v_hat, 1e-12), 1.0 - 1e-12)
    w_bound = float(slices(np.array([v_hat]))[3][0])
    reach = math.sqrt(w_bound + z2) * piv.sd_v
    v = np.linspace(max(piv.v_hat - reach, 0.0), min(piv.v_hat + reach, 1.0), n_slices)
    x1, lo, hi, w = slices(v)
    w_min = float(np.min(w))
    room = w_min + z2 - x1 * x1
    half = np.sqrt(np.maximum(room, 0.0) * one_minus)
    x_low = np.maximum(rho * x1 - half, lo)
    x_high = np.minimum(rho * x1 + half, hi)
    keep = (room >= 0.0) & (x_low <= x_high)
    v, x_low, x_high = v[keep], x_low[keep], x_high[keep]
    tau2_max = v * (1.0 - v)
    # the highest pivot is the smallest T
    t_small = np.clip(piv.total(x_high) - piv.within, 0.0, tau2_max)
    t_large = np.clip(piv.total(x_low) - piv.within, 0.0, tau2_max)
    return v, t_small, t_large, w_min


def majority_rate_interval(
    mean: tuple[float, float],
    cov: np.ndarray,
    within: float,
    *,
    level: float = 0.95,
    quantile_v: float | None = None,
    quantile_t: float | None = None,
    n_pairs: int | None = None,
    n_slices: int = N_SLICES,
) -> tuple[float, float] | None:
    """The profile interval of the majority rate ``M = P(p > 1/2)`` (module docstring).

    Parameters
    ----------
    mean : (float, float)
        The estimates of ``V`` and ``E[p^2]`` (prediction-powered or human-only).
    cov : array (2, 2)
        Their joint covariance.
    within : float
        The voted pairs' mean within-pair variance of their share, ``mean(s_i^2 / k_i)``
        (``tau^2 + within`` is the observed variance of the pairs' shares).
    level : float
        The interval's level.
    quantile_v, quantile_t : float, optional
        The quantiles ``V``'s and ``T``'s pivots are studentised with (None: the normal one):
        with readers crossed, the vote share's t and :func:`satterthwaite_quantile` of ``T``'s
        pair and reader parts.
    n_pairs : int, optional
        The pairs with two or more votes (``T``'s degrees of freedom are at most ``n_pairs - 1``).

    Returns
    -------
    (low, high), or None when ``V`` has no spread or the pairs' shares do not vary (the
    caller then needs another interval).

    Notes
    -----
    Validated by simulation (benchmarks/prediction_powered.py ``--majority``; the coverage is
    in docs/prediction-powered.md) and, piece by piece, against a brute-force profile over a
    dense grid of ``(V, tau^2)`` (tests/audit/statistics/prediction_powered/test_majority.py).
    """
    from judge_transfer_audit.statistics.distributions import norm
    from judge_transfer_audit.statistics.estimands import beta_upper_tail

    if not (np.all(np.isfinite(cov)) and np.all(np.isfinite(mean)) and math.isfinite(within) and within >= 0):
        return None
    z = float(norm.ppf(0.5 + level / 2.0))
    piv = pivots(
        mean,
        cov,
        within,
        n_pairs,
        scale_v=(quantile_v or z) / z,
        scale_t=(quantile_t or z) / z,
    )
    if piv is None:
        return None
    v, low, high, _ = profile_region_slices(piv, level, n_slices)
    if not len(v):
        return None
    ends = beta_upper_tail(np.concatenate([v, v]), np.concatenate([low, high]))
    return float(np.min(ends)), float(np.max(ends))
