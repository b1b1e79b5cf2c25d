"""The majority rate's interval: a profile interval over the two means the Beta model rests on.

The decision's Beta model gives the majority rate ``M = P(p > 1/2)`` from the vote share
``V = E[p]`` and the between-pair variance ``tau^2 = E[p^2] - V^2``. The two means
``theta = (V, E[p^2])`` are estimated (prediction-powered or human-only) with an approximately
normal joint error of covariance ``C``; ``tau^2`` is not: it is a difference that sits at its
boundary 0 whenever the pairs barely differ, and ``M`` is flat in ``tau^2`` near 0 (``M = 1`` at
``tau^2 = 0`` when ``V > 1/2``) and steep further out. So the interval is built where the
normal approximation holds, on ``theta``, and mapped through the model:

``M``'s interval is the range of ``M(theta)`` over the profile region
``{theta in P : W(theta) <= min_P W + z^2}``, ``W(theta) = (m - theta)' C^-1 (m - theta)`` the
Wald distance from the estimate ``m``, ``P = {V^2 <= E[p^2] <= V}`` the means a distribution on
[0, 1] can have (``0 <= tau^2 <= V (1 - V)``), ``z`` the normal quantile. This is the profile
(likelihood-ratio) interval of ``M`` under the normal approximation of ``theta``: a candidate
``M0`` is in it when some ``theta`` with ``M(theta) = M0`` is within ``z^2`` of the best fit.
The boundary ``tau^2 = 0`` is part of ``P`` (a candidate is not excluded because it needs
``tau^2`` near 0) and so is the estimate's side of it when ``E[p^2]`` comes out below ``V^2``
(the best fit is then on the boundary, and the region is measured from there, as the Q-profile
intervals of meta-analysis treat a between-study variance estimated at or below 0).

``M`` is monotone along each slice of fixed ``V`` (in ``tau^2``: decreasing above ``V = 1/2``,
increasing below, constant at 1/2), so its range over the region is reached at the ends of
the region's slices; the slices are taken on a grid of ``V`` across the region.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["N_SLICES", "majority_rate_interval", "profile_region_slices"]

N_SLICES = 1001  #: slices of fixed V across the profile region


def _conditional(mean: np.ndarray, cov: np.ndarray) -> tuple[float, float, float]:
    """(c11, the regression slope of E[p^2] on V, the conditional variance of E[p^2] given V)."""
    c11, c12, c22 = float(cov[0, 0]), float(cov[0, 1]), float(cov[1, 1])
    slope = c12 / c11
    return c11, slope, max(c22 - c12 * slope, 0.0)


def profile_region_slices(
    mean: tuple[float, float], cov: np.ndarray, level: float = 0.95, n_slices: int = N_SLICES
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """The profile region's slices of fixed V.

    Parameters
    ----------
    mean : (float, float)
        The estimates of ``V`` and ``E[p^2]``.
    cov : array (2, 2)
        Their joint covariance; ``cov[0, 0]`` and the conditional variance of ``E[p^2]`` given
        ``V`` must be positive.
    level : float
        The interval's level (the region's radius is the normal quantile squared).
    n_slices : int
        Slices across the region.

    Returns
    -------
    v : array
        The slices' V (only those that meet the region).
    low, high : arrays
        Each slice's lowest and highest ``E[p^2]`` in the region.
    w_min : float
        ``min_P W``: 0 when the estimate is in ``P``, else the Wald distance of the nearest
        admissible means (the region's radius is measured from it).
    """
    from judge_transfer_audit.statistics.distributions import norm

    m1, m2 = float(mean[0]), float(mean[1])
    c11, slope, s = _conditional(np.asarray(mean), np.asarray(cov, float))
    z2 = float(norm.ppf(0.5 + level / 2.0)) ** 2

    def slices(v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        a = (v - m1) ** 2 / c11
        centre = m2 + slope * (v - m1)
        lo_p, hi_p = v * v, v  # the admissible E[p^2] at this V
        nearest = np.clip(centre, lo_p, hi_p)
        return a, centre, nearest, a + (nearest - centre) ** 2 / s

    # the best admissible fit is at most as far as the estimate's own slice clipped into P
    w_bound = float(slices(np.array([min(max(m1, 0.0), 1.0)]))[3][0])
    reach = math.sqrt((w_bound + z2) * c11)
    v = np.linspace(max(m1 - reach, 0.0), min(m1 + reach, 1.0), n_slices)
    a, centre, _, w = slices(v)
    w_min = float(w.min())
    room = w_min + z2 - a
    half = np.sqrt(np.maximum(room, 0.0) * s)
    low = np.maximum(centre - half, v * v)
    high = np.minimum(centre + half, v)
    keep = (room >= 0.0) & (low <= high)
    return v[keep], low[keep], high[keep], w_min


def majority_rate_interval(
    mean: tuple[float, float], cov: np.ndarray, level: float = 0.95, n_slices: int = N_SLICES
) -> tuple[float, float] | None:
    """The profile interval of the majority rate ``M = P(p > 1/2)`` (module docstring).

    Parameters
    ----------
    mean : (float, float)
        The estimates of ``V`` and ``E[p^2]`` (prediction-powered or human-only).
    cov : array (2, 2)
        Their joint covariance.
    level : float
        The interval's level.

    Returns
    -------
    (low, high), or None when the covariance is degenerate (no spread in ``V``, or ``E[p^2]``
    fully determined by ``V``): the caller then needs another interval.

    Notes
    -----
    Validated by simulation (benchmarks/prediction_powered.py ``--majority``; the coverage is
    in docs/prediction-powered.md) and, piece by piece, against a brute-force profile over a
    dense grid of ``(V, tau^2)`` (tests/audit/statistics/prediction_powered/test_majority.py).
    """
    from judge_transfer_audit.statistics.estimands import beta_upper_tail

    cov = np.asarray(cov, float)
    if not (np.all(np.isfinite(cov)) and np.all(np.isfinite(mean))):
        return None
    c11 = float(cov[0, 0])
    if not c11 > 0 or not _conditional(np.asarray(mean), cov)[2] > 0:
        return None
    v, low, high, _ = profile_region_slices(mean, cov, level, n_slices)
    if not len(v):
        return None
    ends = beta_upper_tail(np.concatenate([v, v]), np.concatenate([low - v * v, high - v * v]))
    return float(np.min(ends)), float(np.max(ends))
