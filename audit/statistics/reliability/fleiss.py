"""Fleiss' kappa from a units x categories count matrix."""

from __future__ import annotations

import math

import numpy as np


def fleiss_kappa(counts: np.ndarray) -> tuple[float, float, float]:
    """Fleiss' kappa from a units x categories count matrix.

    Parameters
    ----------
    counts : ndarray (n_units, n_categories)
        Number of raters putting each unit in each category. Units with fewer than two
        ratings must be removed beforehand.

    Returns
    -------
    (kappa, observed, expected) : tuple of float
        ``kappa = (P-bar - P_e) / (1 - P_e)``; ``observed`` is P-bar (mean per-unit
        agreement), ``expected`` is P_e (sum of squared category shares). kappa is NaN
        when ``P_e = 1`` (one category used) or there are no units.

    Notes
    -----
    With the same number of raters per unit this is Fleiss (1971); validated against
    ``statsmodels.stats.inter_rater.fleiss_kappa`` and the published worked example
    (tests/reference/fleiss). With unequal numbers it is the common generalisation
    (each unit's P_i with its own n_i, category shares over all ratings).
    """
    counts = np.asarray(counts, dtype=float)
    if counts.size == 0 or counts.shape[0] == 0:
        return math.nan, math.nan, math.nan
    n_i = counts.sum(axis=1)
    p_i = (np.sum(counts**2, axis=1) - n_i) / (n_i * (n_i - 1.0))
    observed = float(p_i.mean())
    shares = counts.sum(axis=0) / n_i.sum()
    expected = float(np.sum(shares**2))
    if expected >= 1.0:
        return math.nan, observed, expected
    return (observed - expected) / (1.0 - expected), observed, expected
