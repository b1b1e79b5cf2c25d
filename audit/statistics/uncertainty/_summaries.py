"""Bootstrap summaries of many cells at once: the arithmetic of :func:`_boot_tasks.summary` on stacked rows.

A block of the cluster bootstrap holds, per replicate kind, one ``cells x n_boot`` matrix of replicate
rates. Summarising it row by row (``numpy.quantile``, ``std``, the BCa constants, a Student-t quantile per
cell) costs ~0.5 ms of Python per row, which at 10k criteria x 3 schemes is most of the section. The
functions here take whole matrices and make **the same floating-point operations on the same values** as
the per-row code, so every number is identical to the last bit (tests/audit/statistics/uncertainty/test_summaries.py
compares them on random and degenerate cells):

- reductions along the contiguous last axis (``sum``, ``mean``, ``var``, ``std``) use numpy's pairwise
  summation per row, as the 1-d calls do;
- quantiles are read from each row sorted, with ``numpy.quantile``'s own formula for its default
  ("linear") method: virtual index ``(n - 1) q``, its floor and the next order statistic, and the
  two-sided ``_lerp`` (``a + (b - a) g``, or ``b - (b - a)(1 - g)`` when ``g >= 0.5``);
- the scalar formulas with a power other than 2 (``den ** 1.5``) stay Python floats, as in the per-row code.

Rows the stacked path does not cover (a replicate without a decisive vote, a jackknife value that is not
finite, a cell with one pair or one reader, an estimate that is not finite) are summarised by the
per-row code, so edge cases keep their exact handling.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr, ndtri

from judge_transfer_audit.statistics.distributions import t as student_t


def sorted_quantiles(sorted_rows: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``numpy.quantile(row, q[g])`` of every row ``g`` of ``sorted_rows`` (each row sorted ascending,
    no NaN), for ``q`` of shape ``(rows, k)``: numpy's linear method, to the last bit."""
    n = sorted_rows.shape[1]
    virtual = (n - 1) * q
    previous = np.floor(virtual)
    following = previous + 1
    above = virtual >= n - 1
    previous[above] = -1
    following[above] = -1
    below = virtual < 0
    previous[below] = 0
    following[below] = 0
    unknown = np.isnan(virtual)
    previous[unknown] = -1
    following[unknown] = -1
    previous = previous.astype(np.intp)
    following = following.astype(np.intp)
    a = np.take_along_axis(sorted_rows, previous % n, axis=1)
    b = np.take_along_axis(sorted_rows, following % n, axis=1)
    gamma = virtual - previous
    diff = b - a
    out = a + diff * gamma
    upper = gamma >= 0.5
    out[upper] = (b - diff * (1 - gamma))[upper]
    return out


def t_calibrated_levels(level: float, df: np.ndarray) -> np.ndarray:
    """:func:`judge_transfer_audit.statistics.uncertainty.two_way.t_calibrated_level` of every ``df``."""
    out = np.full(df.shape, float(level))
    ok = np.isfinite(df) & (df > 0)
    if ok.any():
        q = student_t.ppf(0.5 + level / 2.0, df[ok])
        out[ok] = 1.0 - 2.0 * ndtr(-q)
    return out


def t_calibrated_p_values(p_normal: np.ndarray, df: np.ndarray) -> np.ndarray:
    """:func:`judge_transfer_audit.statistics.uncertainty.two_way.t_calibrated_p_value` of every ``(p, df)``."""
    out = p_normal.copy()
    ok = np.isfinite(p_normal) & np.isfinite(df) & (df > 0)
    if ok.any():
        z = ndtri(1.0 - np.minimum(p_normal[ok], 1.0) / 2.0)
        out[ok] = np.minimum(1.0, 2.0 * student_t.sf(z, df[ok]))
    return out


def accelerations(jackknives: list[np.ndarray]) -> np.ndarray:
    """:func:`judge_transfer_audit.statistics.uncertainty.resampling.acceleration` of every row: ``jackknives`` holds
    one ``(rows, clusters)`` matrix per resampled factor, every value finite."""
    rows = jackknives[0].shape[0]
    num = np.zeros(rows)
    den = np.zeros(rows)
    for theta in jackknives:
        n = theta.shape[1]
        if n < 2:
            continue
        u = (n - 1) * (theta.mean(axis=1)[:, None] - theta)
        num = num + (u**3).sum(axis=1) / n**3
        den = den + (u**2).sum(axis=1) / n**2
    return np.array([float(a) / (6.0 * float(d) ** 1.5) if d > 0 else 0.0 for a, d in zip(num, den)])


def distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(first, inverse)``: the first of each set of bit-identical rows and every row's set, so that
    ``rows[first][inverse]`` is ``rows``. Rows are grouped by a fingerprint (their bits times a fixed
    integer vector, modulo 2**64) and each is checked bit for bit against its group's first row (a row
    that differs from it stands alone), so a shared result is only ever given to identical inputs."""
    bits = np.ascontiguousarray(rows).view(np.uint64)
    # integer arithmetic (wrapping) gives identical rows identical fingerprints whatever the summation order
    mix = np.arange(1, rows.shape[1] + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    fingerprint = (bits * mix).sum(axis=1)
    _, first, inverse = np.unique(fingerprint, return_index=True, return_inverse=True)
    lead = first[inverse]
    same = (bits == bits[lead]).all(axis=1)
    if not same.all():
        lead[~same] = np.flatnonzero(~same)
        first, inverse = np.unique(lead, return_inverse=True)
    return first, inverse


#: below this share of distinct rows, :func:`replicate_summaries` summarises each distinct row once
DISTINCT_SHARE = 0.8


def replicate_summaries(
    reps: np.ndarray,
    estimates: np.ndarray,
    jackknives: list[np.ndarray],
    level: float,
    intervals: tuple[str, ...],
    null: float,
    df: np.ndarray,
    *,
    distinct: bool = True,
) -> dict[str, np.ndarray]:
    """:func:`judge_transfer_audit.statistics.uncertainty._boot_tasks.summary` of every row of ``reps`` (rows x
    replicates, every replicate finite, every estimate finite, every jackknife value finite), as columns: ``se``, the
    percentile and BCa bounds, ``z0``, ``acceleration``, ``p_value`` (t-mapped where ``df`` is finite)."""
    rows, b = reps.shape
    if distinct and rows > 1:
        # cells with the same replicates, estimate, jackknife and df (tiny cells sharing their clusters'
        # weights often do) have the same summary: compute it once per distinct row
        first, inverse = distinct_rows(np.column_stack([reps, estimates, *jackknives, df]))
        if first.size < DISTINCT_SHARE * rows:
            once = replicate_summaries(
                reps[first],
                estimates[first],
                [j[first] for j in jackknives],
                level,
                intervals,
                null,
                df[first],
                distinct=False,
            )
            return {name: values[inverse] for name, values in once.items()}
    nan = np.full(rows, np.nan)
    tail = t_calibrated_levels(level, df)
    out = {
        "se": reps.std(axis=1, ddof=1) if b > 1 else nan.copy(),
        "ci_low_percentile": nan.copy(),
        "ci_high_percentile": nan.copy(),
        "ci_low_bca": nan.copy(),
        "ci_high_bca": nan.copy(),
        "z0": nan.copy(),
        "acceleration": nan.copy(),
    }
    low = (np.count_nonzero(reps <= null, axis=1) + 1) / (b + 1)
    high = (np.count_nonzero(reps >= null, axis=1) + 1) / (b + 1)
    out["p_value"] = t_calibrated_p_values(np.minimum(1.0, 2.0 * np.minimum(low, high)), df)
    if rows == 0 or not ({"percentile", "bca"} & set(intervals)):
        return out
    ordered = np.sort(reps, axis=1)
    alpha = (1.0 - tail) / 2.0
    if "percentile" in intervals:
        q = sorted_quantiles(ordered, np.stack([alpha, 1.0 - alpha], axis=1))
        out["ci_low_percentile"], out["ci_high_percentile"] = q[:, 0], q[:, 1]
    if "bca" in intervals:
        accel = accelerations(jackknives) if jackknives else np.zeros(rows)
        share = (
            np.count_nonzero(reps < estimates[:, None], axis=1) + np.count_nonzero(reps <= estimates[:, None], axis=1)
        ) / (2.0 * b)
        z0 = ndtri(share)
        ok = np.isfinite(z0)
        za = ndtri(np.stack([alpha, 1.0 - alpha], axis=1))
        zz = z0[:, None] + za
        with np.errstate(invalid="ignore"):  # z0 infinite: q NaN, the bounds are not read
            q = ndtr(z0[:, None] + zz / (1.0 - accel[:, None] * zz))
        bounds = np.full((rows, 2), np.nan)
        if ok.any():
            bounds[ok] = sorted_quantiles(ordered[ok], q[ok])
        out["ci_low_bca"], out["ci_high_bca"], out["z0"] = bounds[:, 0], bounds[:, 1], z0
        out["acceleration"] = accel
    return out
