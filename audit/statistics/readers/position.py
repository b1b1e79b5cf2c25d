"""Position bias from ``shown_first``: how often a reader chose the story shown first.

Only decisive votes count (a tie chooses neither story); votes whose ``shown_first`` is
empty or names neither system of the pair are left out and counted. Without position bias
the rate is 0.5.

Intervals: the Wilson interval treats votes as independent, which they are not (one
reader casts several criterion votes on the same pair, and one reader's votes share a
habit), so a cluster-robust Wald interval is given too: pairs are the clusters within a
reader, readers are the clusters for the pooled rate. The cluster-robust interval is the
headline one (``lo``/``hi``); ``wilson_lo``/``wilson_hi`` are for reference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.statistics.readers._common import COMPUTED, fmt, has_values, wilson_interval

POSITION_COLUMNS = [
    "scope",
    "label",
    "n_votes",
    "n_first",
    "rate_first",
    "lo",
    "hi",
    "wilson_lo",
    "wilson_hi",
    "n_clusters",
]


def cluster_robust_interval(k: np.ndarray, n: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Wald interval for a pooled proportion with clustered binary data.

    ``var = G/(G-1) * sum_g (k_g - p n_g)^2 / N^2`` (the CR1 sandwich of an intercept-only
    linear model) with the t quantile on G - 1 degrees of freedom (with a handful of
    clusters, e.g. 7 readers, the normal quantile over-rejects: Cameron & Miller 2015,
    J. Human Resources 50(2)), clipped to [0, 1]. NaN with fewer than 2 clusters.
    """
    from judge_transfer_audit.statistics.distributions import t as t_dist

    k = np.asarray(k, float)
    n = np.asarray(n, float)
    g = len(k)
    total = n.sum()
    if g < 2 or total == 0:
        return math.nan, math.nan
    p = k.sum() / total
    var = g / (g - 1) * np.sum((k - p * n) ** 2) / total**2
    half = float(t_dist.ppf(0.5 + level / 2, g - 1)) * math.sqrt(var)
    return max(0.0, p - half), min(1.0, p + half)


def cluster_robust_p_value(k: np.ndarray, n: np.ndarray, null: float = 0.5) -> float:
    """Two-sided p-value of the pooled proportion against ``null`` with the CR1 variance and
    the t(G - 1) reference of :func:`cluster_robust_interval` (the test the interval inverts,
    without the clipping). NaN with fewer than 2 clusters; 0 or 1 when the variance is 0."""
    from judge_transfer_audit.statistics.distributions import t as t_dist

    k = np.asarray(k, float)
    n = np.asarray(n, float)
    g = len(k)
    total = n.sum()
    if g < 2 or total == 0:
        return math.nan
    p = k.sum() / total
    var = g / (g - 1) * np.sum((k - p * n) ** 2) / total**2
    if var <= 0:
        return 1.0 if p == null else 0.0
    return float(2 * t_dist.sf(abs(p - null) / math.sqrt(var), g - 1))


@dataclass(frozen=True, eq=False)
class PositionBias:
    """Rate of choosing the first-shown story, per reader, per criterion and pooled.

    Attributes
    ----------
    status : Status
        SKIPPED when ``shown_first`` is absent.
    reason : str
    table : DataFrame
        scope (``reader``, ``criterion``, ``pooled``), label, n_votes, n_first, rate_first,
        lo/hi (cluster-robust 95%), wilson_lo/wilson_hi, n_clusters.
    pooled_rate, pooled_lo, pooled_hi : float
    pooled_p_value : float
        Two-sided Wald p-value of the pooled rate against 0.5 (the test the pooled interval
        inverts: :func:`cluster_robust_p_value`).
    n_ties : int
        Tied votes (no position chosen), left out.
    n_unusable : int
        Votes whose ``shown_first`` is empty or not a system of the pair, left out.
    """

    status: Status
    reason: str = ""
    table: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=POSITION_COLUMNS))
    pooled_rate: float = math.nan
    pooled_lo: float = math.nan
    pooled_hi: float = math.nan
    pooled_p_value: float = math.nan
    n_ties: int = 0
    n_unusable: int = 0

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def __str__(self) -> str:
        if self.status is not COMPUTED:
            return f"Position bias: {self.status.value} ({self.reason})"
        lines = [
            f"Position bias: first-shown chosen {fmt(self.pooled_rate)} [{fmt(self.pooled_lo)}, "
            f"{fmt(self.pooled_hi)}] pooled ({self.n_ties} ties, {self.n_unusable} unusable left out)"
        ]
        for r in self.table[self.table["scope"] == "reader"].itertuples(index=False):
            lines.append(f"  {r.label}: {fmt(r.rate_first)} [{fmt(r.lo)}, {fmt(r.hi)}] n={r.n_votes}")
        return "\n".join(lines)


def _row(scope: str, label: str, sub: pd.DataFrame, cluster_col: str) -> list:
    k = int(sub["first"].sum())
    n = len(sub)
    by = sub.groupby(cluster_col)["first"].agg(["sum", "size"])
    lo, hi = cluster_robust_interval(by["sum"].to_numpy(), by["size"].to_numpy())
    wlo, whi = wilson_interval(k, n)
    return [scope, label, n, k, k / n if n else math.nan, lo, hi, wlo, whi, len(by)]


def position_bias(votes: pd.DataFrame) -> PositionBias:
    """Rate of choosing the first-shown story (see the module docstring).

    Parameters
    ----------
    votes : DataFrame
        Normalised votes with ``shown_first``, ``focal``, ``other`` and ``y``.

    Returns
    -------
    PositionBias

    Notes
    -----
    Wilson interval validated against statsmodels ``proportion_confint(method="wilson")``;
    the cluster-robust variance against statsmodels OLS with ``cov_type="cluster"``
    (intercept-only, CR1).
    """
    if not has_values(votes, "shown_first"):
        return PositionBias(status=Status.SKIPPED, reason="needs a 'shown_first' column")
    if not {"focal", "other"} <= set(votes.columns):
        return PositionBias(status=Status.SKIPPED, reason="needs 'focal' and 'other' columns to read 'shown_first'")
    shown = votes["shown_first"].fillna("").astype(str).str.strip()
    focal_first = shown == votes["focal"].astype(str)
    other_first = shown == votes["other"].astype(str)
    usable = focal_first | other_first
    tie = votes["y"].isna()
    n_unusable = int((~usable).sum())
    keep = usable & ~tie
    n_ties = int((usable & tie).sum())
    data = votes.loc[keep, ["reader_id", "pair_id", "criterion"]].copy()
    data["first"] = np.where(focal_first[keep], votes.loc[keep, "y"] == 1, votes.loc[keep, "y"] == 0).astype(int)
    if data.empty:
        return PositionBias(
            status=Status.SKIPPED,
            reason="no decisive vote has a usable 'shown_first'",
            n_ties=n_ties,
            n_unusable=n_unusable,
        )
    rows = [_row("reader", r, g, "pair_id") for r, g in data.groupby("reader_id", sort=False)]
    rows += [_row("criterion", c, g, "reader_id") for c, g in data.groupby("criterion", sort=False)]
    pooled = _row("pooled", "all", data, "reader_id")
    rows.append(pooled)
    table = pd.DataFrame(rows, columns=POSITION_COLUMNS)
    by = data.groupby("reader_id")["first"].agg(["sum", "size"])
    return PositionBias(
        status=COMPUTED,
        table=table,
        pooled_rate=float(pooled[4]),
        pooled_lo=float(pooled[5]),
        pooled_hi=float(pooled[6]),
        pooled_p_value=cluster_robust_p_value(by["sum"].to_numpy(), by["size"].to_numpy()),
        n_ties=n_ties,
        n_unusable=n_unusable,
    )
