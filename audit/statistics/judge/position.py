"""Judge position bias: does the judge favour the output it was shown first?

Reads the pairwise judge verdicts (``judge_verdicts`` of :mod:`judge_transfer_audit.model.data`) with the order
the judge saw (``shown_first``: the system shown first / on the left; "" = unknown). Per
judge configuration, pooled over criteria:

* ``first_rate``: among decisive verdicts (a system chosen; ties and invalid outputs left
  out, counted) with a known order, the share choosing the system shown first, with the
  exact Clopper-Pearson interval (``scipy.stats.binomtest(...).proportion_ci("exact")``).
  No position bias means 0.5. With each pair judged once this is the only evidence; it
  mixes position with quality unless the orders were randomised.
* ``swap_consistency``: among pair x criterion x sample units judged in *both* orders, the
  share where the verdict (system or tie) is the same in both; the interval resamples
  pairs (a pair's criteria stay together; percentile, seeded).

The check ``judge.position_bias`` is breached when the first-shown rate's interval
excludes 0.5 for the audited configuration (WARN by default; a policy ``[severity]``
entry changes it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judge_transfer_audit.core.rng import resolve_rng
from judge_transfer_audit.model.estimate import Estimate

TIE, INVALID = "tie", "invalid"


@dataclass(frozen=True)
class PositionRow:
    """One configuration (``judge``) pooled over criteria.

    ``n_ordered`` verdicts with a known order, ``n_decisive`` of them choosing a system
    (``n_first`` the one shown first); ``n_swapped_units`` units seen in both orders,
    ``n_consistent`` of them with the same verdict.
    """

    judge: str
    n_ordered: int
    n_decisive: int
    n_first: int
    first_rate: Estimate
    n_swapped_units: int
    n_consistent: int
    swap_consistency: Estimate


@dataclass(frozen=True)
class JudgePosition:
    """Position bias of every judge configuration (see :func:`judge_position_bias`)."""

    rows: tuple[PositionRow, ...]
    level: float
    n_boot: int
    seed: int | None

    def to_frame(self) -> pd.DataFrame:
        out = []
        for r in self.rows:
            out.append(
                dict(
                    judge=r.judge,
                    n_ordered=r.n_ordered,
                    n_decisive=r.n_decisive,
                    n_first=r.n_first,
                    first_rate=r.first_rate.estimate,
                    first_rate_ci_low=r.first_rate.ci_low,
                    first_rate_ci_high=r.first_rate.ci_high,
                    n_swapped_units=r.n_swapped_units,
                    n_consistent=r.n_consistent,
                    swap_consistency=r.swap_consistency.estimate,
                    swap_consistency_ci_low=r.swap_consistency.ci_low,
                    swap_consistency_ci_high=r.swap_consistency.ci_high,
                )
            )
        return pd.DataFrame(out)

    def row(self, judge: str) -> PositionRow:
        for r in self.rows:
            if r.judge == judge:
                return r
        raise KeyError(judge)

    def __str__(self) -> str:
        lines = [f"Judge position bias ({self.level:.0%} intervals: exact for the first-shown rate)"]
        for r in self.rows:
            lines.append(
                f"  {r.judge}: chose the first shown {r.first_rate} of {r.n_decisive} decisive verdicts; "
                f"swap consistency {r.swap_consistency} over {r.n_swapped_units} units"
            )
        return "\n".join(lines)


def clopper_pearson(k: int, n: int, level: float) -> Estimate:
    """``k / n`` with the exact binomial interval (NaN when ``n`` is 0)."""
    from judge_transfer_audit.statistics.distributions import clopper_pearson as exact_interval

    if n == 0:
        return Estimate(math.nan)
    low, high = exact_interval(int(k), int(n), level)
    return Estimate(k / n, low, high)


def _swap_units(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per pair x criterion x sample seen in two different orders: consistent or not."""
    known = frame[frame["shown_first"] != ""]
    keys = ["pair_id", "criterion", "sample"]
    orders = known.groupby(keys, sort=False)["shown_first"].nunique()
    both = orders[orders == 2].index
    if len(both) == 0:
        return pd.DataFrame(columns=keys + ["consistent"])
    sub = known.set_index(keys).loc[both].reset_index()
    verdicts = sub.groupby(keys + ["shown_first"], sort=False)["choice"].first().unstack("shown_first")
    consistent = verdicts.nunique(axis=1, dropna=True) == 1
    return consistent.rename("consistent").reset_index()


def _pair_bootstrap(units: pd.DataFrame, rng: np.random.Generator, n_boot: int, level: float) -> tuple[float, float]:
    pairs, code = np.unique(units["pair_id"].to_numpy(), return_inverse=True)
    if len(pairs) < 2 or n_boot <= 0:
        return math.nan, math.nan
    hits = np.bincount(code, weights=units["consistent"].to_numpy(float), minlength=len(pairs))
    sizes = np.bincount(code, minlength=len(pairs)).astype(float)
    idx = rng.integers(0, len(pairs), (n_boot, len(pairs)))
    reps = hits[idx].sum(axis=1) / sizes[idx].sum(axis=1)
    tail = (1.0 - level) / 2.0
    lo, hi = np.quantile(reps, [tail, 1.0 - tail])
    return float(lo), float(hi)


def judge_position_bias(
    verdicts: pd.DataFrame, *, level: float = 0.95, n_boot: int = 2000, rng: int | np.random.Generator | None = None
) -> JudgePosition:
    """First-shown rate (exact interval) and swap consistency (pair bootstrap) per configuration.

    Parameters
    ----------
    verdicts : DataFrame
        ``judge_verdicts``: pair_id, criterion, judge, sample, choice (system, tie, invalid),
        shown_first (system or "").
    level, n_boot, rng
        Interval level; replicates and seed of the swap-consistency bootstrap (recorded).

    Returns
    -------
    JudgePosition
        One row per configuration with at least one verdict of known order.

    Notes
    -----
    The Clopper-Pearson interval is scipy's ``binomtest(...).proportion_ci(method="exact")``,
    checked against R's ``binom.test`` in tests/audit/statistics/judge/test_judge_position.py.
    """
    rng, seed = resolve_rng(rng)
    rows = []
    for judge, frame in verdicts.groupby("judge", sort=False):
        ordered = frame[frame["shown_first"] != ""]
        if ordered.empty:
            continue
        decisive = ordered[~ordered["choice"].isin([TIE, INVALID])]
        n_first = int((decisive["choice"] == decisive["shown_first"]).sum())
        units = _swap_units(frame[frame["choice"] != INVALID])
        n_units = len(units)
        n_consistent = int(units["consistent"].sum()) if n_units else 0
        swap = (
            Estimate(n_consistent / n_units, *_pair_bootstrap(units, rng, n_boot, level))
            if n_units
            else Estimate(math.nan)
        )
        rows.append(
            PositionRow(
                judge=str(judge),
                n_ordered=len(ordered),
                n_decisive=len(decisive),
                n_first=n_first,
                first_rate=clopper_pearson(n_first, len(decisive), level),
                n_swapped_units=n_units,
                n_consistent=n_consistent,
                swap_consistency=swap,
            )
        )
    return JudgePosition(rows=tuple(rows), level=float(level), n_boot=int(n_boot), seed=seed)
