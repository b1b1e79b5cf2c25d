"""Annotation diagnostics from ``seconds``: speed, capped times, fatigue, fast readers and
the leave-one-reader-out impact.

Time per (reader, pair): the usual export repeats the time a reader spent on a pair on each
criterion row, so when every row of a reader x pair carries the same value that value is the
pair's time; when the rows differ they are taken as per-judgment times and summed.

Capping: a timer left running (a reader who walks away) makes raw times meaningless above
some ceiling. Times above ``seconds_cap`` (default 600 s, the 10-minute cap of the
motivating study) are counted as capped and replaced by the cap for the mean and the
fatigue slope; the median uses the raw times (it is robust to them anyway).

Fatigue: per reader, an ordinary least-squares slope of the capped time on the
chronological position of the pair (0, 1, 2, ... by the earliest ``timestamp`` of the
reader's rows for that pair when such a column is present, else by the smallest ``order``,
the source row order). ``end_to_start`` is the fitted time at the
last pair divided by the fitted time at the first: well below 1 means the reader sped up.

Fast reader: a reader whose median time is below ``fast_reader_factor`` (default 0.5) x the
median of the other readers' medians.

Leave-one-reader-out: the pooled rate (under the run's tie rule) per criterion (all matchups, or each pooling
scope of consistently oriented matchups) without the reader, minus the rate with everyone;
reported for every reader so a fast reader's impact can be compared with the others'.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.model.tie_rules import EVEN_SPLIT, TieRule
from judge_transfer_audit.statistics.readers._common import (
    ALL_MATCHUPS,
    COMPUTED,
    first_seen,
    fmt,
    has_values,
    vote_credit,
)

DEFAULT_SECONDS_CAP = 600.0
DEFAULT_FAST_READER_FACTOR = 0.5
MIN_PAIRS_FOR_SLOPE = 3

READER_COLUMNS = [
    "reader_id",
    "n_pairs",
    "median_seconds",
    "mean_seconds_capped",
    "mean_seconds_raw",
    "n_capped",
    "fatigue_slope",
    "fatigue_slope_se",
    "fatigue_p_value",
    "end_to_start",
    "fast_reader",
    "loo_max_abs_shift",
]
LOO_COLUMNS = ["reader_id", "criterion", "rate_all", "rate_without", "shift", "scope"]
#: the distribution of each reader's seconds per pair (raw, uncapped): Fig 6 of the motivating audit
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
QUANTILE_COLUMNS = ["reader_id", "n_pairs", "q05", "q25", "q50", "q75", "q95"]


@dataclass(frozen=True, eq=False)
class AnnotationTiming:
    """Per-reader annotation times, fatigue slopes, fast-reader flags and LOO impact.

    Attributes
    ----------
    status : Status
        SKIPPED when ``seconds`` is absent.
    reason : str
    seconds_cap : float
    fast_reader_factor : float
    readers : DataFrame
        reader_id, n_pairs, median_seconds, mean_seconds_capped, mean_seconds_raw, n_capped,
        fatigue_slope (seconds per pair), fatigue_slope_se, fatigue_p_value, end_to_start,
        fast_reader, loo_max_abs_shift (largest |shift| over criteria when the reader is left out).
    leave_one_out : DataFrame
        reader_id, criterion, rate_all, rate_without, shift.
    fatigue_status : Status
        PASS, or SKIPPED when there is no usable ``order`` column.
    fatigue_reason : str
    overall_median_seconds : float
    fast_readers : tuple[str, ...]
    n_pairs_without_seconds : int
        Reader x pair cells with no time, left out.
    quantiles : DataFrame
        reader_id, n_pairs, q05, q25, q50, q75, q95: quantiles of the reader's raw seconds per
        pair (``numpy.quantile``, linear interpolation), the distribution the report draws.
    """

    status: Status
    reason: str = ""
    seconds_cap: float = DEFAULT_SECONDS_CAP
    fast_reader_factor: float = DEFAULT_FAST_READER_FACTOR
    readers: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=READER_COLUMNS))
    leave_one_out: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=LOO_COLUMNS))
    fatigue_status: Status = Status.SKIPPED
    fatigue_reason: str = ""
    overall_median_seconds: float = math.nan
    fast_readers: tuple[str, ...] = ()
    n_pairs_without_seconds: int = 0
    quantiles: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=QUANTILE_COLUMNS))

    def to_frame(self) -> pd.DataFrame:
        return self.readers.copy()

    def __str__(self) -> str:
        if self.status is not COMPUTED:
            return f"Annotation timing: {self.status.value} ({self.reason})"
        lines = [
            f"Annotation timing (cap {fmt(self.seconds_cap, 0)} s; overall median "
            f"{fmt(self.overall_median_seconds, 0)} s; fast = median < {fmt(self.fast_reader_factor, 2)} x others')"
        ]
        for r in self.readers.itertuples(index=False):
            flag = " FAST" if r.fast_reader else ""
            lines.append(
                f"  {r.reader_id}: median {fmt(r.median_seconds, 0)} s, mean {fmt(r.mean_seconds_capped, 0)} s, "
                f"{r.n_capped} capped, slope {fmt(r.fatigue_slope, 2)} s/pair, "
                f"LOO shift {fmt(r.loo_max_abs_shift, 3)}{flag}"
            )
        if self.fatigue_status is not COMPUTED:
            lines.append(f"  fatigue: {self.fatigue_status.value} ({self.fatigue_reason})")
        return "\n".join(lines)


def pair_times(votes: pd.DataFrame) -> pd.DataFrame:
    """One row per reader x pair: reader_id, pair_id, seconds, position (NaN without order)."""
    sec = votes[["reader_id", "pair_id", "seconds"]].copy()
    sec["seconds"] = pd.to_numeric(sec["seconds"], errors="coerce")
    sec["order"] = chronology(votes)
    g = sec.groupby(["reader_id", "pair_id"], sort=False)
    out = g.agg(
        smin=("seconds", "min"),
        smax=("seconds", "max"),
        ssum=("seconds", "sum"),
        n_sec=("seconds", "count"),
        first_order=("order", "min"),
    ).reset_index()
    out["seconds"] = np.where(out["smin"] == out["smax"], out["smin"], out["ssum"])
    out.loc[out["n_sec"] == 0, "seconds"] = math.nan
    return out[["reader_id", "pair_id", "seconds", "first_order"]]


def chronology(votes: pd.DataFrame) -> pd.Series:
    """Sort key of each vote in time: a parseable ``timestamp`` column when present, else
    ``order`` (the source row order), else NaN."""
    if "timestamp" in votes.columns:
        stamp = pd.to_datetime(votes["timestamp"], errors="coerce", utc=True)
        if stamp.notna().any():
            return pd.Series((stamp - pd.Timestamp(0, tz="UTC")).dt.total_seconds(), index=votes.index)
    if "order" in votes.columns:
        return pd.to_numeric(votes["order"], errors="coerce")
    return pd.Series(math.nan, index=votes.index)


def _ols_slope(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float, float]:
    """Slope, its standard error, two-sided p-value and the end/start fitted ratio."""
    from judge_transfer_audit.statistics.distributions import linregress

    if len(x) < MIN_PAIRS_FOR_SLOPE or np.ptp(x) == 0:
        return math.nan, math.nan, math.nan, math.nan
    res = linregress(x, y)
    start = res.intercept + res.slope * x.min()
    end = res.intercept + res.slope * x.max()
    ratio = end / start if start > 0 else math.nan
    return float(res.slope), float(res.stderr), float(res.pvalue), float(ratio)


def leave_one_reader_out(
    votes: pd.DataFrame, pools: Mapping[str, Sequence[str]] | None = None, tie_rule: TieRule = EVEN_SPLIT
) -> pd.DataFrame:
    """Shift of the pooled rate per criterion (votes credited under ``tie_rule``) when each reader is left out.

    The rate pools the matchups of each pooling scope (``pools``, label -> matchups: only
    matchups whose focal system means one thing, :meth:`judge_transfer_audit.model.data.AuditData.pooling_scopes`);
    a matchup in no scope is its own. Default (``None``): every matchup, scope ``(all matchups)``.
    """
    credit = votes.assign(credit=vote_credit(votes, tie_rule))
    if pools is None or "matchup" not in credit.columns:
        scoped = credit.assign(scope=ALL_MATCHUPS)
    else:
        pooled = {m for ms in pools.values() for m in ms}
        parts = [credit[credit["matchup"].isin(list(ms))].assign(scope=label) for label, ms in pools.items()]
        parts.append(credit[~credit["matchup"].isin(pooled)].assign(scope=lambda d: d["matchup"]))
        scoped = pd.concat(parts, ignore_index=True)
    rate_all = scoped.groupby(["scope", "criterion"], sort=False)["credit"].mean()
    # every reader's (sum, count) per (scope, criterion) once, then subtract: readers x cells, not x votes
    readers = first_seen(votes["reader_id"])
    cells = rate_all.index
    total = scoped.groupby(["scope", "criterion"], sort=False)["credit"].agg(["sum", "count"]).reindex(cells)
    own = scoped.groupby(["reader_id", "scope", "criterion"], sort=False)["credit"].agg(["sum", "count"])
    grid = pd.MultiIndex.from_tuples(
        [(r, sc, c) for r in readers for sc, c in cells], names=["reader_id", "scope", "criterion"]
    )
    own = own.reindex(grid, fill_value=0)
    left_n = np.tile(total["count"].to_numpy(float), len(readers)) - own["count"].to_numpy(float)
    left_sum = np.tile(total["sum"].to_numpy(float), len(readers)) - own["sum"].to_numpy(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        r_wo = np.where(left_n > 0, left_sum / np.where(left_n > 0, left_n, 1.0), math.nan)
    r_all = np.tile(rate_all.to_numpy(float), len(readers))
    return pd.DataFrame(
        {
            "reader_id": np.repeat(np.asarray(readers, dtype=object), len(cells)),
            "criterion": np.tile(np.asarray([c for _, c in cells], dtype=object), len(readers)),
            "rate_all": r_all,
            "rate_without": r_wo,
            "shift": r_wo - r_all,
            "scope": np.tile(np.asarray([sc for sc, _ in cells], dtype=object), len(readers)),
        },
        columns=LOO_COLUMNS,
    )


def annotation_timing(
    votes: pd.DataFrame,
    *,
    seconds_cap: float = DEFAULT_SECONDS_CAP,
    fast_reader_factor: float = DEFAULT_FAST_READER_FACTOR,
    pools: Mapping[str, Sequence[str]] | None = None,
    tie_rule: TieRule = EVEN_SPLIT,
) -> AnnotationTiming:
    """Annotation diagnostics from the ``seconds`` column (see the module docstring).

    Parameters
    ----------
    votes : DataFrame
        Normalised votes; uses ``seconds`` and, for fatigue, ``order``.
    seconds_cap : float
        Times above it are counted as capped and replaced by it in means and slopes.
    fast_reader_factor : float
        A reader is fast when their median < factor x the median of the other readers' medians.
    pools : mapping of label to matchups, optional
        The scopes of the leave-one-reader-out rates (:func:`leave_one_reader_out`).
    tie_rule : TieRule
        How a tied vote is credited in the leave-one-reader-out rates (:mod:`judge_transfer_audit.model.tie_rules`).

    Returns
    -------
    AnnotationTiming

    Notes
    -----
    Slopes by ``scipy.stats.linregress``; medians and means are plain numpy. Validated in
    tests/audit/statistics/readers/test_timing.py against values computed by hand (medians, capped
    and raw means, capped counts, the fast-reader rule, leave-one-reader-out shifts) and
    against ``linregress`` on the capped series (slope and end-to-start ratio).
    """
    base = dict(seconds_cap=float(seconds_cap), fast_reader_factor=float(fast_reader_factor))
    if not has_values(votes, "seconds"):
        return AnnotationTiming(status=Status.SKIPPED, reason="needs a 'seconds' column", **base)
    if not seconds_cap > 0 or not fast_reader_factor > 0:
        from judge_transfer_audit.core.errors import InputError, InputProblem

        raise InputError(
            InputProblem(
                file="options",
                message="seconds_cap and fast_reader_factor must be positive",
                value=f"{seconds_cap}, {fast_reader_factor}",
                fix="pass positive numbers",
            )
        )
    times = pair_times(votes)
    n_missing = int(times["seconds"].isna().sum())
    times = times[times["seconds"].notna()]
    has_order = bool(times["first_order"].notna().any())
    fatigue_status = COMPUTED if has_order else Status.SKIPPED
    fatigue_reason = "" if has_order else "needs an 'order' or 'timestamp' column (chronology)"
    loo = (
        leave_one_reader_out(votes, pools, tie_rule)
        if votes["reader_id"].nunique() >= 2
        else pd.DataFrame(columns=LOO_COLUMNS)
    )
    medians = times.groupby("reader_id", sort=False)["seconds"].median()
    rows, fast, quantiles = [], [], []
    for reader, grp in times.groupby("reader_id", sort=False):
        raw = grp["seconds"].to_numpy(float)
        quantiles.append([reader, len(raw), *np.quantile(raw, QUANTILES).tolist()])
        capped = np.minimum(raw, seconds_cap)
        others = medians.drop(reader)
        is_fast = bool(len(others) > 0 and medians[reader] < fast_reader_factor * float(np.median(others)))
        if is_fast:
            fast.append(reader)
        if has_order:
            pos = grp["first_order"].rank(method="first").to_numpy(float) - 1
            slope, se, p, ratio = _ols_slope(pos, capped)
        else:
            slope = se = p = ratio = math.nan
        shifts = loo.loc[loo["reader_id"] == reader, "shift"].abs()
        rows.append(
            [
                reader,
                len(raw),
                float(np.median(raw)),
                float(np.mean(capped)),
                float(np.mean(raw)),
                int(np.sum(raw > seconds_cap)),
                slope,
                se,
                p,
                ratio,
                is_fast,
                float(shifts.max()) if len(shifts) else math.nan,
            ]
        )
    return AnnotationTiming(
        status=COMPUTED,
        readers=pd.DataFrame(rows, columns=READER_COLUMNS),
        leave_one_out=loo,
        fatigue_status=fatigue_status,
        fatigue_reason=fatigue_reason,
        overall_median_seconds=float(np.median(times["seconds"])),
        fast_readers=tuple(fast),
        n_pairs_without_seconds=n_missing,
        quantiles=pd.DataFrame(quantiles, columns=QUANTILE_COLUMNS),
        **base,
    )
