"""Cronbach's alpha with the Feldt confidence interval, as ``psych::alpha`` reports it.

Validated against R ``psych::alpha(x, check.keys = FALSE)`` (psych 2.2.9,
tests/reference/cronbach): raw alpha, standardised alpha, the Feldt bounds
(``psych::alpha.ci``) and alpha if an item is dropped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats


@dataclass(frozen=True)
class CronbachAlpha:
    """Cronbach's alpha of a set of variables (questions) over observations.

    Attributes
    ----------
    alpha : float
        Raw alpha ``p/(p-1) (1 - tr(C)/sum(C))`` from the covariance matrix ``C``
        (pairwise-complete covariances, psych's default ``use = "pairwise"``).
    std_alpha : float
        Standardised alpha, from the correlation matrix.
    ci_low, ci_high : float
        Feldt (1965) interval: ``1 - (1 - alpha) F`` quantiles with ``n - 1`` and
        ``(n - 1)(p - 1)`` df (psych's ``alpha.ci``; psych also prints Duhachek's
        bounds, which we do not compute).
    confidence : float
    n_observations : int
        Rows used (rows with every value missing are dropped first, counted in
        ``n_observations_excluded``).
    n_variables : int
    n_missing : int
        Missing cells among the rows used (handled by pairwise covariances).
    item_dropped : DataFrame
        variable, alpha_if_dropped (raw alpha of the other variables).
    reason : str
        Why alpha is NaN ("" otherwise).
    """

    alpha: float
    std_alpha: float
    ci_low: float
    ci_high: float
    confidence: float
    n_observations: int
    n_variables: int
    n_missing: int
    n_observations_excluded: int
    item_dropped: pd.DataFrame
    reason: str = ""

    def to_frame(self) -> pd.DataFrame:
        fields = {k: v for k, v in self.__dict__.items() if k != "item_dropped"}
        return pd.DataFrame([fields])

    def __str__(self) -> str:
        if self.reason:
            return f"Cronbach's alpha: not computed ({self.reason})"
        return (
            f"Cronbach's alpha = {self.alpha:.4f} (Feldt {self.confidence:.0%} CI "
            f"{self.ci_low:.4f} to {self.ci_high:.4f}); standardised {self.std_alpha:.4f}; "
            f"{self.n_observations} observations x {self.n_variables} variables, {self.n_missing} missing cells"
        )


#: total-score variance at or below this fraction of the summed item variances counts as zero
#: (a constant total gives ~1e-16 from rounding, and alpha would come out near +-1e15)
ZERO_TOTAL_VARIANCE = 1e-10


def _raw_alpha(cov: np.ndarray) -> float:
    p = cov.shape[0]
    total = float(np.sum(cov))
    if p < 2 or not np.isfinite(total) or total <= ZERO_TOTAL_VARIANCE * abs(float(np.trace(cov))) or total == 0:
        return math.nan
    return (1.0 - float(np.trace(cov)) / total) * p / (p - 1.0)


def feldt_interval(
    alpha: float, n_observations: int, n_variables: int, confidence: float = 0.95
) -> tuple[float, float]:
    """Feldt's interval for alpha, as ``psych::alpha.ci``."""
    a = 1.0 - confidence
    df1, df2 = n_observations - 1.0, (n_observations - 1.0) * (n_variables - 1.0)
    if not np.isfinite(alpha) or df1 < 1 or df2 < 1:
        return math.nan, math.nan
    low = 1.0 - (1.0 - alpha) * stats.f.ppf(1 - a / 2, df1, df2)
    high = 1.0 - (1.0 - alpha) * stats.f.ppf(a / 2, df1, df2)
    return float(low), float(high)


def cronbach_alpha(x: pd.DataFrame | np.ndarray, *, confidence: float = 0.95) -> CronbachAlpha:
    """Cronbach's alpha of the columns of ``x`` (observations x variables, NaN = missing).

    Parameters
    ----------
    x : DataFrame or ndarray
        Rows are observations (e.g. readers answering a questionnaire about one text, or
        item x reader rows), columns are the variables (questions) whose sum is the scale.
    confidence : float

    Returns
    -------
    CronbachAlpha
        NaN with a reason for fewer than 2 variables or 2 observations, or zero total
        variance.

    Notes
    -----
    Missing values: rows with all values missing are dropped (counted); other missing
    cells are handled by pairwise-complete covariances, as psych::alpha does by default.
    Validated against psych::alpha (tests/reference/cronbach).
    """
    frame = pd.DataFrame(x).astype(float)
    empty = frame.isna().all(axis=1)
    frame = frame[~empty]
    n, p = frame.shape
    n_missing = int(frame.isna().sum().sum())
    nan_drop = pd.DataFrame({"variable": [str(c) for c in frame.columns], "alpha_if_dropped": math.nan})
    if p < 2 or n < 2:
        return CronbachAlpha(
            math.nan,
            math.nan,
            math.nan,
            math.nan,
            confidence,
            n,
            p,
            n_missing,
            int(empty.sum()),
            nan_drop,
            "needs at least 2 variables and 2 observations",
        )
    cov = frame.cov().to_numpy()  # pandas: pairwise-complete, ddof = 1 (as R's cov(use = "pairwise"))
    alpha = _raw_alpha(cov)
    if not np.isfinite(alpha):
        return CronbachAlpha(
            math.nan,
            math.nan,
            math.nan,
            math.nan,
            confidence,
            n,
            p,
            n_missing,
            int(empty.sum()),
            nan_drop,
            "zero or undefined total variance",
        )
    sd = np.sqrt(np.diag(cov))
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = cov / np.outer(sd, sd)
    std_alpha = _raw_alpha(corr)
    low, high = feldt_interval(alpha, n, p, confidence)
    dropped = [(_raw_alpha(np.delete(np.delete(cov, j, 0), j, 1)) if p > 2 else math.nan) for j in range(p)]
    item_dropped = pd.DataFrame({"variable": [str(c) for c in frame.columns], "alpha_if_dropped": dropped})
    return CronbachAlpha(alpha, std_alpha, low, high, confidence, n, p, n_missing, int(empty.sum()), item_dropped)
