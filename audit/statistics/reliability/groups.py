"""Comparing the reliability of two reader groups: a bootstrap interval for the ICC2k difference.

Experts and enthusiasts (GrAImes) rate the same texts; the question is whether one group
is more *reliable* than the other, not only whether its mean is higher. The two groups'
ICC2k are not independent (same items), so the interval resamples items: each
replicate draws items with replacement and recomputes both groups' ICC2k on the same
draw. Closed-form ICC2k is vectorised over replicates; its point value equals
:func:`judge_transfer_audit.statistics.reliability.icc.icc_from_matrix` (validated against ``psych::ICC``) on the
same matrix, which the tests check.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

#: replicates x items x readers kept in memory at once
_CHUNK_CELLS = 4_000_000


def icc2k_batch(x: np.ndarray) -> np.ndarray:
    """ICC(2,k) of each matrix in a (replicates, items, readers) stack.

    Same formula as :func:`judge_transfer_audit.statistics.reliability.icc.icc_from_matrix`
    (``(MSB - MSE) / (MSB + (MSJ - MSE) / n)``); NaN where it is undefined (no variation).
    """
    x = np.asarray(x, dtype=float)
    _, n, k = x.shape
    grand = x.mean(axis=(1, 2))
    rows = x.mean(axis=2)
    cols = x.mean(axis=1)
    ss_total = np.sum((x - grand[:, None, None]) ** 2, axis=(1, 2))
    ss_between = k * np.sum((rows - grand[:, None]) ** 2, axis=1)
    ss_raters = n * np.sum((cols - grand[:, None]) ** 2, axis=1)
    mse = (ss_total - ss_between - ss_raters) / ((n - 1) * (k - 1))
    msb = ss_between / (n - 1)
    msj = ss_raters / (k - 1)
    denom = msb + (msj - mse) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (msb - mse) / denom
    out[(ss_total == 0) | (mse <= 0) | ~np.isfinite(out)] = np.nan
    return out


@dataclass(frozen=True)
class ICCDifference:
    """Bootstrap comparison of two groups' ICC2k on the items both rated completely.

    Attributes
    ----------
    difference : float
        ICC2k(a) - ICC2k(b) on the common items (equals the difference of the groups'
        reported ICC2k when no item lacks a reader).
    ci_low, ci_high : float
        Percentile bootstrap interval over items at ``confidence``.
    n_items : int
        Items every reader of both groups rated.
    n_boot : int
        Replicates drawn; ``n_boot_undefined`` of them gave an undefined ICC (left out).
    n_boot_undefined : int
    confidence : float
    reason : str
        Why the interval is NaN (fewer than 3 common items, a group with one reader).
    """

    difference: float
    ci_low: float
    ci_high: float
    n_items: int
    n_boot: int
    n_boot_undefined: int
    confidence: float
    reason: str = ""

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([self.__dict__])

    def __str__(self) -> str:
        if self.reason:
            return f"ICC2k difference: not computed ({self.reason})"
        return (
            f"ICC2k difference {self.difference:.3f} [{self.ci_low:.3f}, {self.ci_high:.3f}] "
            f"({self.confidence:.0%} item bootstrap, {self.n_boot} replicates, {self.n_items} items)"
        )


def icc2k_difference(
    a: np.ndarray, b: np.ndarray, *, generator: np.random.Generator, n_boot: int = 2000, confidence: float = 0.95
) -> ICCDifference:
    """ICC2k(a) - ICC2k(b) with a percentile bootstrap interval over items.

    Parameters
    ----------
    a, b : ndarray (n_items, readers_of_group)
        Complete ratings of the same items (rows aligned) by each group's readers.
    generator : numpy Generator
        Draws the item resamples (the caller records its seed).
    n_boot : int
        Replicates.
    confidence : float
        Level of the percentile interval.

    Returns
    -------
    ICCDifference
        NaN interval with a reason when there are fewer than 3 items or a group has one
        reader; replicates where either ICC is undefined are left out and counted.

    Notes
    -----
    The point ICC2k values are the ``psych::ICC``-validated formula; the interval is a
    plain percentile bootstrap of items (readers held fixed), checked for coverage of the
    true difference in a simulation test.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    n = a.shape[0]
    nan = math.nan
    if n < 3 or a.shape[1] < 2 or b.shape[1] < 2:
        return ICCDifference(
            nan,
            nan,
            nan,
            n,
            0,
            0,
            confidence,
            "needs 3 or more items rated by every reader of both groups, 2 or more readers each",
        )
    point = icc2k_batch(a[None]) - icc2k_batch(b[None])
    chunk = max(1, _CHUNK_CELLS // (n * max(a.shape[1], b.shape[1])))
    diffs = []
    for start in range(0, n_boot, chunk):
        idx = generator.integers(0, n, size=(min(chunk, n_boot - start), n))
        diffs.append(icc2k_batch(a[idx]) - icc2k_batch(b[idx]))
    diffs = np.concatenate(diffs)
    ok = np.isfinite(diffs)
    if ok.sum() < 2:
        return ICCDifference(
            float(point[0]),
            nan,
            nan,
            n,
            n_boot,
            int((~ok).sum()),
            confidence,
            "ICC undefined in the bootstrap replicates",
        )
    tail = (1 - confidence) / 2
    low, high = np.quantile(diffs[ok], [tail, 1 - tail])
    return ICCDifference(float(point[0]), float(low), float(high), n, n_boot, int((~ok).sum()), confidence)
