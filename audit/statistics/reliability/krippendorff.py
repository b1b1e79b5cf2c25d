"""Krippendorff's alpha through the coincidence matrix, vectorised.

Our own implementation (no loop over units), validated against the ``krippendorff`` package
(tests/reference/krippendorff/) and benchmarked against it in benchmarks/agreement.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judge_transfer_audit.core.errors import InputError, InputProblem

LEVELS = ("nominal", "ordinal", "interval", "ratio")


@dataclass(frozen=True)
class KrippendorffAlpha:
    """Krippendorff's alpha at one level of measurement.

    Attributes
    ----------
    alpha : float
        ``1 - D_o / D_e``; NaN when undefined (no pairable values, or a single value
        observed so that ``D_e = 0``).
    level : str
        ``"nominal"``, ``"ordinal"``, ``"interval"`` or ``"ratio"``.
    observed_disagreement, expected_disagreement : float
        ``D_o`` and ``D_e`` (same scale as the metric).
    n_units : int
        Units with at least two values (pairable units).
    n_values : int
        Values in pairable units (``n`` of the coincidence matrix).
    n_units_excluded : int
        Units with fewer than two values: they carry no information about agreement and
        are left out, as Krippendorff prescribes.
    n_categories : int
        Distinct values among the pairable values.
    reason : str
        Why alpha is NaN, "" otherwise.
    """

    alpha: float
    level: str
    observed_disagreement: float
    expected_disagreement: float
    n_units: int
    n_values: int
    n_units_excluded: int
    n_categories: int
    reason: str = ""

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([self.__dict__])

    def __str__(self) -> str:
        return (
            f"Krippendorff alpha ({self.level}) = {self.alpha:.4f} "
            f"[{self.n_units} units, {self.n_values} values, {self.n_units_excluded} units "
            f"with < 2 values left out]" + (f" ({self.reason})" if self.reason else "")
        )


def _delta2(categories: np.ndarray, marginals: np.ndarray, level: str) -> np.ndarray:
    """Squared distance between every pair of (sorted) categories for ``level``."""
    k = len(categories)
    if level == "nominal":
        return 1.0 - np.eye(k)
    if level == "ordinal":
        cum = np.concatenate(([0.0], np.cumsum(marginals)))
        lo = np.minimum.outer(np.arange(k), np.arange(k))
        hi = np.maximum.outer(np.arange(k), np.arange(k))
        between = cum[hi + 1] - cum[lo]
        d = between - (marginals[:, None] + marginals[None, :]) / 2.0
        return d**2
    values = categories.astype(float)
    if level == "interval":
        return np.subtract.outer(values, values) ** 2
    if level == "ratio":
        total = np.add.outer(values, values)
        with np.errstate(invalid="ignore", divide="ignore"):
            d = np.where(total == 0, 0.0, np.subtract.outer(values, values) / total)
        return d**2
    raise InputError(
        InputProblem(
            file="arguments",
            message=f"unknown level of measurement '{level}'",
            fix=f"use one of {', '.join(LEVELS)}",
            value=level,
        )
    )


def _codes(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values and each element's index among them.

    Integer-valued arrays with a moderate range use counting instead of sorting (the hot
    path for unit codes and Likert ratings); anything else goes through ``np.unique``.
    """
    if len(a) and a.dtype.kind in "iuf":
        lo, hi = a.min(), a.max()
        if np.isfinite(lo) and np.isfinite(hi) and hi - lo <= 4 * len(a) + 1024:
            shifted = a - lo
            idx = shifted.astype(np.int64)
            if a.dtype.kind in "iu" or np.array_equal(idx, shifted):
                present = np.bincount(idx) > 0
                return np.flatnonzero(present) + lo, (np.cumsum(present) - 1)[idx]
    return np.unique(a, return_inverse=True)


def alpha_from_codes(unit: np.ndarray, value: np.ndarray, level: str = "nominal") -> KrippendorffAlpha:
    """Krippendorff's alpha from parallel arrays of unit codes and values (one per rating).

    Parameters
    ----------
    unit : array of int-like or hashable
        The unit (item) each rating belongs to.
    value : array
        The rating; NaN = missing (dropped before anything else). For ``nominal`` any
        hashable values; for the other levels numbers.
    level : {"nominal", "ordinal", "interval", "ratio"}

    Returns
    -------
    KrippendorffAlpha

    Notes
    -----
    The caller guarantees one value per coder and unit. The coincidence matrix is
    ``o = Nᵀ diag(1/(m_u-1)) N - diag(Σ_u n_uc/(m_u-1))`` with ``N`` the units x values
    count matrix over pairable units; ``D_o = Σ o δ² / n`` and
    ``D_e = Σ n_c n_k δ² / (n (n-1))``. Validated against ``krippendorff.alpha`` 0.9.0.
    """
    unit = np.asarray(unit)
    value = np.asarray(value)
    if level not in LEVELS:
        _delta2(np.array([]), np.array([]), level)  # raises the InputError
    if value.dtype.kind in "fc":
        keep = ~np.isnan(value)
    elif value.dtype.kind == "O":
        keep = ~pd.isna(value)
    else:
        keep = np.ones(len(value), dtype=bool)
    unit, value = unit[keep], value[keep]
    if level != "nominal" and value.dtype.kind not in "iufb":
        try:
            value = value.astype(float)
        except (TypeError, ValueError):
            raise InputError(
                InputProblem(
                    file="ratings",
                    message=f"{level} alpha needs numeric ratings",
                    fix="use level 'nominal' or give numbers",
                )
            ) from None
    _, unit_index = _codes(unit)
    m_u = np.bincount(unit_index) if len(unit) else np.array([], dtype=int)
    pairable_unit = m_u >= 2
    n_excluded = int((m_u == 1).sum())  # every code present has >= 1 value
    keep = pairable_unit[unit_index] if len(unit) else np.array([], dtype=bool)
    unit_index, value = unit_index[keep], value[keep]
    n_values = int(len(value))
    n_units = int(pairable_unit.sum())
    if n_values == 0:
        return KrippendorffAlpha(
            math.nan, level, math.nan, math.nan, 0, 0, n_excluded, 0, "no unit has two or more values"
        )
    unit_index = (np.cumsum(pairable_unit) - 1)[unit_index]
    categories, value_index = _codes(value)
    k = len(categories)
    m = np.bincount(unit_index).astype(float)
    weight = 1.0 / (m - 1.0)
    if level == "interval" and k > 64:
        # O(n) form of the interval metric: no k x k matrix for near-continuous ratings.
        x = value.astype(float)
        s1 = np.bincount(unit_index, weights=x)
        s2 = np.bincount(unit_index, weights=x * x)
        d_o_sum = float(np.sum(2.0 * (m * s2 - s1 * s1) * weight))
        d_e_sum = 2.0 * (n_values * float(np.sum(x * x)) - float(np.sum(x)) ** 2)
    else:
        counts = np.bincount(unit_index * k + value_index, minlength=n_units * k).reshape(n_units, k).astype(float)
        coincidence = (counts * weight[:, None]).T @ counts
        coincidence -= np.diag((counts * weight[:, None]).sum(axis=0))
        marginals = coincidence.sum(axis=1)
        delta2 = _delta2(categories, marginals, level)
        d_o_sum = float(np.sum(coincidence * delta2))
        d_e_sum = float(marginals @ delta2 @ marginals)
    d_o = d_o_sum / n_values
    d_e = d_e_sum / (n_values * (n_values - 1.0))
    if d_e == 0:
        return KrippendorffAlpha(
            math.nan,
            level,
            d_o,
            d_e,
            n_units,
            n_values,
            n_excluded,
            k,
            "only one value observed: expected disagreement is zero",
        )
    return KrippendorffAlpha(1.0 - d_o / d_e, level, d_o, d_e, n_units, n_values, n_excluded, k)


def krippendorff_alpha(
    data: pd.DataFrame,
    *,
    unit: str = "item_id",
    coder: str = "reader_id",
    value: str = "rating",
    level: str = "nominal",
) -> KrippendorffAlpha:
    """Krippendorff's alpha from a long frame (one row per coder x unit rating).

    Missing ratings (NaN) are allowed anywhere: alpha uses every unit with two or more
    values. A coder rating the same unit twice is an InputError (alpha has no place for it).
    Validated against the ``krippendorff`` package 0.9.0 (tests/reference/krippendorff).
    """
    dup = data.duplicated([unit, coder])
    if dup.any():
        first = data[dup].iloc[0]
        raise InputError(
            InputProblem(
                file="ratings",
                message=f"{int(dup.sum())} repeated {coder} x {unit} ratings "
                f"(e.g. {coder} {first[coder]!r} on {unit} {first[unit]!r})",
                fix="keep one rating per reader and item (average repeated ratings beforehand)",
            )
        )
    return alpha_from_codes(data[unit].to_numpy(), data[value].to_numpy(), level)


def krippendorff_alpha_matrix(reliability_data: np.ndarray, level: str = "nominal") -> KrippendorffAlpha:
    """Alpha from a coders x units matrix with NaN for missing (the ``krippendorff`` layout)."""
    data = np.asarray(reliability_data, dtype=float)
    units = np.broadcast_to(np.arange(data.shape[1]), data.shape).ravel()
    return alpha_from_codes(units, data.ravel(), level)
