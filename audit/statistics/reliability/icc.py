"""Intraclass correlations: the six Shrout & Fleiss (1979) forms, as ``psych::ICC`` reports them.

Validated against R ``psych::ICC(x, lmer = FALSE)`` (psych 2.2.9, tests/reference/icc):
coefficients, F statistics, degrees of freedom, p-values and confidence bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from judge_transfer_audit.statistics.reliability.ratings import complete_matrix

_DESCRIPTIONS = {
    "ICC1": "single rater, absolute agreement, one-way random",
    "ICC2": "single rater, absolute agreement, two-way random",
    "ICC3": "single rater, consistency, two-way mixed",
    "ICC1k": "mean of k raters, one-way random",
    "ICC2k": "mean of k raters, absolute agreement, two-way random",
    "ICC3k": "mean of k raters, consistency, two-way mixed",
}
ICC_TYPES = tuple(_DESCRIPTIONS)


@dataclass(frozen=True)
class ICCRow:
    """One Shrout-Fleiss form.

    Attributes
    ----------
    type : str
        ``ICC1``, ``ICC2``, ``ICC3``, ``ICC1k``, ``ICC2k`` or ``ICC3k``.
    description : str
    icc : float
    f, df1, df2, p : float
        The F-test of ICC = 0 (one-way F = MSB/MSW for ICC1/ICC1k, two-way F = MSB/MSE for
        the others) and its one-sided p-value.
    ci_low, ci_high : float
        Confidence bounds (Shrout & Fleiss; McGraw & Wong's approximate df for ICC2/ICC2k),
        exactly as psych::ICC computes them.
    """

    type: str
    description: str
    icc: float
    f: float
    df1: float
    df2: float
    p: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class ICCResult:
    """The six ICC forms for one targets x raters matrix (complete cases).

    Attributes
    ----------
    rows : tuple of ICCRow
    n_targets, n_raters : int
        Size of the complete matrix used.
    n_targets_excluded : int
        Targets (items) left out because at least one rater did not rate them: ICC's
        two-way ANOVA needs a complete matrix (psych::ICC also works on complete cases).
    ms_between, ms_within, ms_raters, ms_error : float
        ANOVA mean squares (targets, within targets, raters, residual).
    confidence : float
        Confidence level of the intervals (0.95 by default).
    reason : str
        Why the ICCs are NaN ("" when computed).
    """

    rows: tuple[ICCRow, ...]
    n_targets: int
    n_raters: int
    n_targets_excluded: int
    ms_between: float
    ms_within: float
    ms_raters: float
    ms_error: float
    confidence: float = 0.95
    reason: str = ""

    def get(self, icc_type: str) -> ICCRow:
        for row in self.rows:
            if row.type == icc_type:
                return row
        raise KeyError(icc_type)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([r.__dict__ for r in self.rows], columns=list(ICCRow.__dataclass_fields__))

    def __str__(self) -> str:
        head = (
            f"ICC ({self.n_targets} targets x {self.n_raters} raters; "
            f"{self.n_targets_excluded} incomplete targets left out)"
        )
        if self.reason:
            return f"{head}: not computed ({self.reason})"
        return (
            head
            + "\n"
            + self.to_frame().drop(columns="description").to_string(index=False, float_format=lambda x: f"{x:.4g}")
        )


def _nan_result(n: int, k: int, excluded: int, confidence: float, reason: str) -> ICCResult:
    nan = math.nan
    rows = tuple(ICCRow(t, d, nan, nan, nan, nan, nan, nan, nan) for t, d in _DESCRIPTIONS.items())
    return ICCResult(rows, n, k, excluded, nan, nan, nan, nan, confidence, reason)


def icc_from_matrix(x: np.ndarray, *, confidence: float = 0.95, n_targets_excluded: int = 0) -> ICCResult:
    """The six Shrout-Fleiss ICCs of a complete targets x raters matrix.

    Parameters
    ----------
    x : ndarray (n_targets, n_raters)
        No missing values (use :func:`icc` for a long frame with missing ratings).
    confidence : float
        Level of the confidence intervals.

    Returns
    -------
    ICCResult
        NaN coefficients with a reason when there are fewer than 2 targets or raters or
        no variance at all.

    Notes
    -----
    Formulas, F-tests and bounds follow ``psych::ICC`` with ``lmer = FALSE`` (the
    classical ANOVA). psych's default ``lmer = TRUE`` derives the mean squares from lme4
    variance components; both agree unless a variance component is truncated at zero.
    """
    x = np.asarray(x, dtype=float)
    n, k = x.shape
    if n < 2 or k < 2:
        return _nan_result(n, k, n_targets_excluded, confidence, "needs at least 2 targets and 2 raters")
    grand = x.mean()
    ss_total = float(np.sum((x - grand) ** 2))
    ss_between = float(k * np.sum((x.mean(axis=1) - grand) ** 2))
    ss_raters = float(n * np.sum((x.mean(axis=0) - grand) ** 2))
    ss_error = ss_total - ss_between - ss_raters
    msb = ss_between / (n - 1)
    msj = ss_raters / (k - 1)
    mse = ss_error / ((n - 1) * (k - 1))
    msw = (ss_raters + ss_error) / (n * (k - 1))
    if ss_total == 0 or mse <= 0 or msw <= 0:
        return ICCResult(
            _nan_result(n, k, n_targets_excluded, confidence, "").rows,
            n,
            k,
            n_targets_excluded,
            msb,
            msw,
            msj,
            mse,
            confidence,
            "no within-target variation: ICC undefined",
        )
    a = 1.0 - confidence
    icc1 = (msb - msw) / (msb + (k - 1) * msw)
    icc2 = (msb - mse) / (msb + (k - 1) * mse + k * (msj - mse) / n)
    icc3 = (msb - mse) / (msb + (k - 1) * mse)
    icc1k = (msb - msw) / msb
    icc2k = (msb - mse) / (msb + (msj - mse) / n)
    icc3k = (msb - mse) / msb
    f11, df11n, df11d = msb / msw, n - 1.0, n * (k - 1.0)
    f21, df21n, df21d = msb / mse, n - 1.0, (n - 1.0) * (k - 1.0)
    p11 = float(stats.f.sf(f11, df11n, df11d))
    p21 = float(stats.f.sf(f21, df21n, df21d))
    f1l = f11 / stats.f.ppf(1 - a / 2, df11n, df11d)
    f1u = f11 * stats.f.ppf(1 - a / 2, df11d, df11n)
    f3l = f21 / stats.f.ppf(1 - a / 2, df21n, df21d)
    f3u = f21 * stats.f.ppf(1 - a / 2, df21d, df21n)
    fj = msj / mse
    vn = (k - 1) * (n - 1) * (k * icc2 * fj + n * (1 + (k - 1) * icc2) - k * icc2) ** 2
    vd = (n - 1) * k**2 * icc2**2 * fj**2 + (n * (1 + (k - 1) * icc2) - k * icc2) ** 2
    v = vn / vd
    f2u = stats.f.ppf(1 - a / 2, n - 1, v)
    f2l = stats.f.ppf(1 - a / 2, v, n - 1)
    l2 = n * (msb - f2u * mse) / (f2u * (k * msj + (k * n - k - n) * mse) + n * msb)
    u2 = n * (f2l * msb - mse) / (k * msj + (k * n - k - n) * mse + n * f2l * msb)
    values = {
        "ICC1": (icc1, f11, df11n, df11d, p11, (f1l - 1) / (f1l + k - 1), (f1u - 1) / (f1u + k - 1)),
        "ICC2": (icc2, f21, df21n, df21d, p21, l2, u2),
        "ICC3": (icc3, f21, df21n, df21d, p21, (f3l - 1) / (f3l + k - 1), (f3u - 1) / (f3u + k - 1)),
        "ICC1k": (icc1k, f11, df11n, df11d, p11, 1 - 1 / f1l, 1 - 1 / f1u),
        "ICC2k": (icc2k, f21, df21n, df21d, p21, l2 * k / (1 + l2 * (k - 1)), u2 * k / (1 + u2 * (k - 1))),
        "ICC3k": (icc3k, f21, df21n, df21d, p21, 1 - 1 / f3l, 1 - 1 / f3u),
    }
    rows = tuple(ICCRow(t, _DESCRIPTIONS[t], *(float(v) for v in vals)) for t, vals in values.items())
    return ICCResult(rows, n, k, n_targets_excluded, msb, msw, msj, mse, confidence)


def icc(
    data: pd.DataFrame,
    *,
    target: str = "item_id",
    rater: str = "reader_id",
    rating: str = "rating",
    confidence: float = 0.95,
) -> ICCResult:
    """ICCs from a long frame (one row per target x rater); incomplete targets left out.

    See :func:`icc_from_matrix`. Validated against ``psych::ICC`` (tests/reference/icc).
    """
    matrix, excluded = complete_matrix(data, row=target, column=rater, value=rating)
    return icc_from_matrix(matrix.to_numpy(), confidence=confidence, n_targets_excluded=excluded)
