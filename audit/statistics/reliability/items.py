"""Per-item (per-text) reliability: Cronbach's alpha across questions and Kendall's W of the
readers ranking the questions, for every item of a ratings frame.

GrAImes reports an alpha per microfiction (readers as observations, questions as
variables). Calling :func:`judge_transfer_audit.statistics.reliability.cronbach.cronbach_alpha` and
:func:`judge_transfer_audit.statistics.reliability.kendall.kendall_w` item by item costs ~2 ms per item in pandas,
so items whose readers x questions matrix is complete are computed together with array
operations (the same formulas); items with a missing cell, or fewer than 2 readers or
questions, go through the validated single-item functions. The tests check that both
paths give the same table.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from judge_transfer_audit.statistics.reliability.cronbach import ZERO_TOTAL_VARIANCE, cronbach_alpha
from judge_transfer_audit.statistics.reliability.kendall import kendall_w

ITEM_COLUMNS = [
    "item_id",
    "reader_group",
    "n_readers",
    "n_questions",
    "cronbach_alpha",
    "ci_low",
    "ci_high",
    "n_missing",
    "kendall_w",
    "kendall_p",
    "reason",
]
#: items x readers x questions cells handled per array pass
_CHUNK_CELLS = 2_000_000


def _single(item: str, group: str, wide: pd.DataFrame, confidence: float) -> dict:
    ca = cronbach_alpha(wide, confidence=confidence)
    w = kendall_w(wide.T)  # objects = questions, judges = readers
    return dict(
        item_id=item,
        reader_group=group,
        n_readers=ca.n_observations,
        n_questions=ca.n_variables,
        cronbach_alpha=ca.alpha,
        ci_low=ca.ci_low,
        ci_high=ca.ci_high,
        n_missing=ca.n_missing,
        kendall_w=w.w,
        kendall_p=w.p,
        reason=ca.reason,
    )


def _batch(items: list[str], group: str, x: np.ndarray, confidence: float) -> list[dict]:
    """Complete (items, readers, questions) stack: alpha, Feldt bounds, tie-corrected W."""
    _, n, p = x.shape
    centred = x - x.mean(axis=1, keepdims=True)
    cov = np.einsum("mni,mnj->mij", centred, centred) / (n - 1)
    total = cov.sum(axis=(1, 2))
    trace = np.trace(cov, axis1=1, axis2=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = np.where(
            (total > ZERO_TOTAL_VARIANCE * np.abs(trace)) & (total != 0), (1.0 - trace / total) * p / (p - 1.0), np.nan
        )
    # Feldt bounds depend on alpha only through (1 - alpha): one pair of F quantiles for all
    a = 1.0 - confidence
    df1, df2 = n - 1.0, (n - 1.0) * (p - 1.0)
    low = 1.0 - (1.0 - alpha) * stats.f.ppf(1 - a / 2, df1, df2)
    high = 1.0 - (1.0 - alpha) * stats.f.ppf(a / 2, df1, df2)
    # Kendall's W: objects = questions ranked by each reader (judge)
    ranks = stats.rankdata(x, axis=2)
    rank_sums = ranks.sum(axis=1)
    s = np.sum((rank_sums - rank_sums.mean(axis=1, keepdims=True)) ** 2, axis=1)
    # sum over tied groups of t^3 - t == sum over questions of (size of its tie group)^2 - 1
    same = (x[:, :, :, None] == x[:, :, None, :]).sum(axis=3)
    ties = np.sum(same.astype(float) ** 2 - 1.0, axis=(1, 2))
    denom = n**2 * (p**3 - p) - n * ties
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(denom > 0, 12.0 * s / denom, np.nan)
    chi2 = n * (p - 1) * w
    pvalue = stats.chi2.sf(chi2, p - 1.0)
    rows = []
    for i, item in enumerate(items):
        ok = bool(np.isfinite(alpha[i]))
        rows.append(
            dict(
                item_id=item,
                reader_group=group,
                n_readers=n,
                n_questions=p,
                cronbach_alpha=float(alpha[i]) if ok else math.nan,
                ci_low=float(low[i]) if ok else math.nan,
                ci_high=float(high[i]) if ok else math.nan,
                n_missing=0,
                kendall_w=float(w[i]),
                kendall_p=float(pvalue[i]) if np.isfinite(w[i]) else math.nan,
                reason="" if ok else "zero or undefined total variance",
            )
        )
    return rows


def item_reliability(data: pd.DataFrame, group: str, confidence: float, *, batch: bool = True) -> list[dict]:
    """One row per item: Cronbach's alpha (readers as observations) and Kendall's W.

    Parameters
    ----------
    data : DataFrame
        Validated ratings of one reader group (item_id, reader_id, criterion, rating).
    group : str
        Label written in ``reader_group``.
    confidence : float
        Level of the Feldt interval.
    batch : bool
        Compute complete items with array operations (the default); False sends every
        item through :func:`cronbach_alpha` / :func:`kendall_w` (the reference path).

    Returns
    -------
    list of dict
        Rows with :data:`ITEM_COLUMNS`, in the order items first appear in ``data``.

    Notes
    -----
    Cronbach's alpha is validated against ``psych::alpha`` and W against ``friedman.test``
    through the single-item functions; the array path is checked to equal them.
    """
    order = list(dict.fromkeys(data["item_id"].astype(str)))
    wide = data.pivot_table(
        index=["item_id", "reader_id"], columns="criterion", values="rating", aggfunc="first", dropna=False
    )
    readers = sorted(data["reader_id"].unique())
    questions = list(wide.columns)
    full = pd.MultiIndex.from_product([order, readers], names=["item_id", "reader_id"])
    wide = wide.reindex(full)
    stack = wide.to_numpy(dtype=float).reshape(len(order), len(readers), len(questions))
    rows: dict[str, dict] = {}
    # rows with no rating at all are readers who did not see the item: drop them per item
    seen = ~np.isnan(stack).all(axis=2)
    complete = seen.all(axis=1) & ~np.isnan(stack).any(axis=(1, 2))
    if not batch or len(readers) < 2 or len(questions) < 2:
        complete[:] = False
    done = np.flatnonzero(complete)
    chunk = max(1, _CHUNK_CELLS // max(1, len(readers) * len(questions) * len(questions)))
    for start in range(0, len(done), chunk):
        idx = done[start : start + chunk]
        for row in _batch([order[i] for i in idx], group, stack[idx], confidence):
            rows[row["item_id"]] = row
    for i in np.flatnonzero(~complete):
        item_wide = pd.DataFrame(
            stack[i][seen[i]], index=[r for r, s in zip(readers, seen[i]) if s], columns=questions
        ).dropna(axis=1, how="all")  # questions this item lacks
        rows[order[i]] = _single(order[i], group, item_wide, confidence)
    return [rows[item] for item in order]


__all__ = ["ITEM_COLUMNS", "item_reliability"]
