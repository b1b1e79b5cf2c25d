"""The judge side: rates per judge configuration, and whether the skew survives every one.

The motivating audit (Appendix B) showed the judge's preference for the reasoning model was
not an artefact of routing dimensions to configurations: all five individual configurations
favoured the reasoning model, with pooled even-split rates from 77.5% to 96.3%.
:func:`judge_configuration_rates` is that check for any number of configurations.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from judge_transfer_audit.model.data import HUMAN_OVERALL, JUDGE_AGGREGATE
from judge_transfer_audit.statistics.uncertainty._cells import validate_judge_credits


@dataclass(frozen=True)
class JudgeConfigRates:
    """Judge preference rates per configuration.

    Attributes
    ----------
    cells : DataFrame
        One row per judge x cell: ``judge``, the ``by`` columns, ``cell``, ``n_pairs`` (rows),
        ``wins``, ``losses``, ``ties``, ``invalid`` (NaN credit, excluded), ``rate`` (mean credit
        over valid pairs: the even-split rate when ties credit 0.5), ``decisive_rate``
        (wins / (wins + losses)).
    pooled : DataFrame
        One row per judge, pooled over the included criteria (every one except ``aggregate`` and
        ``overall``, which are different targets): same counts, ``rate``, ``decisive_rate``,
        ``direction`` ("focal", "other", "none") and ``same_side`` (same side of ``null`` as the
        skew).
    by_matchup : DataFrame
        Same, per judge x matchup (empty when ``matchup`` is not a ``by`` column).
    skew_direction : str
        Side of ``null`` of the rate pooled over every configuration: "focal", "other" or "none".
    skew_survives_all : bool
        Every configuration's pooled rate is strictly on the skew's side of ``null``.
    skew_survives_all_matchups : bool
        The same holds for every configuration within every matchup.
    min_rate, max_rate : float
        Range of the configurations' pooled rates.
    n_configurations, n_invalid : int
    excluded_criteria : tuple of str
        Criteria left out of the pooled rates.
    null : float
    """

    cells: pd.DataFrame
    pooled: pd.DataFrame
    by_matchup: pd.DataFrame
    skew_direction: str
    skew_survives_all: bool
    skew_survives_all_matchups: bool
    min_rate: float
    max_rate: float
    n_configurations: int
    n_invalid: int
    excluded_criteria: tuple[str, ...]
    null: float

    def to_frame(self) -> pd.DataFrame:
        return self.cells.copy()

    def __str__(self) -> str:
        verdict = "survives" if self.skew_survives_all else "does NOT survive"
        lines = [
            f"Judge skew toward '{self.skew_direction}' {verdict} all {self.n_configurations} "
            f"configuration(s); pooled rates {self.min_rate:.1%} to {self.max_rate:.1%}"
        ]
        for _, r in self.pooled.iterrows():
            lines.append(
                f"  {r['judge']:<20} rate {r['rate']:.3f}  decisive {r['decisive_rate']:.3f}  "
                f"(n={r['n_pairs']}, ties={r['ties']}, invalid={r['invalid']})"
            )
        return "\n".join(lines)


def _counts(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Counts and rates per group of ``keys`` (sorted), by one aggregation (no per-group call)."""
    columns = [*keys, "n_pairs", "wins", "losses", "ties", "invalid", "rate", "decisive_rate"]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    c = frame["credit"].to_numpy(float)
    o = frame["_outcome"].to_numpy(object)
    parts = pd.DataFrame(
        {
            **{k: frame[k].to_numpy() for k in keys},
            "_n": 1,
            "_win": o == "win",
            "_loss": o == "loss",
            "_tie": o == "tie",
            "_invalid": np.isnan(c),
            "_credit": c,
        }
    )
    g = parts.groupby(keys, sort=True)
    out = g.agg(
        n_pairs=("_n", "size"),
        wins=("_win", "sum"),
        losses=("_loss", "sum"),
        ties=("_tie", "sum"),
        invalid=("_invalid", "sum"),
        rate=("_credit", "mean"),
    ).reset_index()
    for col in ("n_pairs", "wins", "losses", "ties", "invalid"):
        out[col] = out[col].astype("int64")
    decisive = (out["wins"] + out["losses"]).to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        out["decisive_rate"] = np.where(
            decisive > 0, out["wins"].to_numpy() / np.where(decisive > 0, decisive, 1), np.nan
        )
    return out[columns]


def _side(rate: float, null: float) -> str:
    if not np.isfinite(rate) or rate == null:
        return "none"
    return "focal" if rate > null else "other"


def judge_configuration_rates(
    judge_credits: pd.DataFrame,
    *,
    by: tuple[str, ...] = ("matchup", "criterion"),
    exclude_from_pooled: tuple[str, ...] = (JUDGE_AGGREGATE, HUMAN_OVERALL),
    null: float = 0.5,
) -> JudgeConfigRates:
    """Per-configuration judge rates and whether the skew survives every configuration.

    Parameters
    ----------
    judge_credits : DataFrame
        ``pair_id``, ``matchup``, ``criterion``, ``judge`` (configuration), ``credit`` in
        {1, 0.5, 0, NaN} (as from ``judge_transfer_audit.verdict.judge_side.judge_pair_outcomes``). If an ``outcome``
        column (win/loss/tie/invalid) is present it gives the counts; otherwise credit 1 is a
        win, 0 a loss, anything in between a tie.
    by : tuple of str
        Cell columns.
    exclude_from_pooled : tuple of str
        Criteria left out of the pooled rates (the judge's aggregate is a different target).
    null : float
        No-preference rate.

    Returns
    -------
    JudgeConfigRates

    Notes
    -----
    Validated by direct recomputation in tests (and, for the even-split rate, against the
    definition (wins + 0.5 ties) / valid pairs of the motivating study's Table 7).
    """
    by = tuple(by)
    validate_judge_credits(judge_credits, by)
    f = judge_credits.copy()
    f["credit"] = pd.to_numeric(f["credit"], errors="coerce").astype(float)
    for col in ("judge", *by):
        f[col] = f[col].astype(str)
    if "outcome" in f.columns:
        f["_outcome"] = f["outcome"].astype(str)
    else:
        c = f["credit"].to_numpy(float)
        f["_outcome"] = np.where(np.isnan(c), "invalid", np.where(c == 1.0, "win", np.where(c == 0.0, "loss", "tie")))
    cells = _counts(f, ["judge", *by])
    labels = (
        ["/".join(parts) for parts in zip(*(cells[c].astype(str).tolist() for c in by))] if by else [""] * len(cells)
    )
    cells.insert(1 + len(by), "cell", labels)
    crit_col = "criterion" if "criterion" in f.columns else None
    inc = f[~f[crit_col].isin(exclude_from_pooled)] if crit_col else f
    excluded = tuple(sorted(set(f[crit_col]) & set(exclude_from_pooled))) if crit_col else ()
    pooled = _counts(inc, ["judge"])
    by_matchup = _counts(inc, ["judge", "matchup"]) if "matchup" in by else _counts(inc.iloc[0:0], ["judge", "matchup"])

    valid = inc["credit"].dropna()
    skew = _side(float(valid.mean()) if len(valid) else float("nan"), null)
    pooled["direction"] = [_side(r, null) for r in pooled["rate"]]
    pooled["same_side"] = (pooled["direction"] == skew) & (skew != "none")
    by_matchup["direction"] = [_side(r, null) for r in by_matchup["rate"]]
    by_matchup["same_side"] = (by_matchup["direction"] == skew) & (skew != "none")
    rates = pooled["rate"].to_numpy(float)
    return JudgeConfigRates(
        cells=cells,
        pooled=pooled,
        by_matchup=by_matchup,
        skew_direction=skew,
        skew_survives_all=bool(len(pooled) and pooled["same_side"].all()),
        skew_survives_all_matchups=bool(len(by_matchup) and by_matchup["same_side"].all()),
        min_rate=float(np.nanmin(rates)) if np.isfinite(rates).any() else float("nan"),
        max_rate=float(np.nanmax(rates)) if np.isfinite(rates).any() else float("nan"),
        n_configurations=int(f["judge"].nunique()),
        n_invalid=int(f["credit"].isna().sum()),
        excluded_criteria=excluded,
        null=float(null),
    )
