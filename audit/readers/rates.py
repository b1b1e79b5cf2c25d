"""Reader-level preference rates per matchup x criterion: the heat-map data.

One row per reader, the pooled human rate, the human GLMM estimate and each judge
configuration, for every matchup and for all matchups pooled. Rates are even-split rates:
(focal wins + 0.5 x ties) / votes, for readers and judges alike. The humans' ``overall`` is
compared with the judge's ``aggregate`` when the judge has no ``overall`` (a different
target, flagged in ``different_target``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from audit.checks import Status
from audit.readers._common import ALL_MATCHUPS, COMPUTED, even_split_credit, first_seen, fmt, judge_criterion_map

RATE_COLUMNS = ["row_kind", "row_label", "matchup", "criterion", "rate", "n", "n_ties", "lo", "hi",
                "judge_criterion", "different_target"]
RANGE_COLUMNS = ["judge", "matchup", "criterion", "judge_criterion", "different_target", "judge_rate",
                 "reader_min", "reader_max", "n_readers", "outside", "distance"]

HUMANS_POOLED = "humans (pooled)"
HUMANS_GLMM = "humans (GLMM)"


@dataclass(frozen=True, eq=False)
class ReaderRates:
    """Heat-map data and the judge-outside-reader-range comparison.

    Attributes
    ----------
    status : Status
    reason : str
    rates : DataFrame
        row_kind (``reader``, ``human_pooled``, ``human_glmm``, ``judge``), row_label,
        matchup (``(all matchups)`` pools them), criterion (the human criterion), rate, n
        (votes, or valid judge comparisons), n_ties, lo/hi (GLMM interval, else NaN),
        judge_criterion, different_target.
    judge_range : DataFrame
        One row per judge x cell: judge_rate, reader_min, reader_max, n_readers, outside
        (judge rate strictly outside [min, max] of the readers' rates), distance (how far
        outside, 0 inside).
    glmm_source : str
        ``given``, ``fitted`` or ``unavailable: <why>``.
    n_judge_invalid : int
        Judge comparisons with NaN credit (invalid output), left out of the judge rates.
    """

    status: Status
    reason: str = ""
    rates: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=RATE_COLUMNS))
    judge_range: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=RANGE_COLUMNS))
    glmm_source: str = ""
    n_judge_invalid: int = 0

    def to_frame(self) -> pd.DataFrame:
        return self.rates.copy()

    def heatmap(self, matchup: str = ALL_MATCHUPS) -> pd.DataFrame:
        """Wide matrix for one matchup: rows = readers, humans and judges; columns = criteria."""
        sub = self.rates[self.rates["matchup"] == matchup]
        wide = sub.pivot_table(index="row_label", columns="criterion", values="rate", aggfunc="first", sort=False)
        return wide.reindex(index=first_seen(sub["row_label"]),
                            columns=first_seen(sub["criterion"]))

    def __str__(self) -> str:
        if self.status is not COMPUTED:
            return f"Reader rates: {self.status.value} ({self.reason})"
        lines = [f"Preference rates for the focal system ({ALL_MATCHUPS}; GLMM {self.glmm_source})"]
        hm = self.heatmap()
        lines.append("  " + " | ".join(["row", *hm.columns]))
        for label, row in hm.iterrows():
            lines.append("  " + " | ".join([str(label), *(fmt(v, 2) for v in row)]))
        out = self.judge_range[self.judge_range["outside"].astype(bool)] if len(self.judge_range) else self.judge_range
        lines.append(f"  judge outside the readers' range in {len(out)} of {len(self.judge_range)} judge x cell(s)")
        return "\n".join(lines)


def _glmm_rows(votes: pd.DataFrame, glmm_estimates: pd.DataFrame | None, fit_if_missing: bool) -> tuple[list, str]:
    if glmm_estimates is not None:
        missing = [c for c in ("matchup", "criterion", "estimate") if c not in glmm_estimates.columns]
        if missing:
            from audit.errors import InputError, InputProblem

            raise InputError(InputProblem(file="glmm_estimates", column=missing[0],
                                          message="the GLMM estimate frame lacks a column",
                                          fix="pass a frame with columns matchup, criterion, estimate (and lo, hi)"))
        rows = []
        for rec in glmm_estimates.to_dict("records"):
            rows.append(["human_glmm", HUMANS_GLMM, str(rec["matchup"]), str(rec["criterion"]), float(rec["estimate"]),
                         0, 0, float(rec.get("lo", math.nan)), float(rec.get("hi", math.nan)), "", False])
        return rows, "given"
    if not fit_if_missing:
        return [], "unavailable: not requested"
    try:
        from audit.glmm import fit_crossed_glmm
    except ImportError as exc:
        return [], f"unavailable: audit.glmm not importable ({exc})"
    rows = []
    failures = 0
    for (matchup, crit), cell in votes.groupby(["matchup", "criterion"], sort=False):
        cell = cell[cell["y"].notna()]
        try:
            res = fit_crossed_glmm(cell["y"].to_numpy(float), {"pair": cell["pair_id"].to_numpy(),
                                                              "reader": cell["reader_id"].to_numpy()})
            est, lo, hi = res.prob_estimate()
        except Exception:  # noqa: BLE001 -- a failed cell is a NaN row, counted in glmm_source
            failures += 1
            est = lo = hi = math.nan
        rows.append(["human_glmm", HUMANS_GLMM, matchup, crit, float(est), len(cell), 0, float(lo), float(hi), "", False])
    return rows, "fitted" if not failures else f"fitted ({failures} cell(s) failed, NaN)"


def _rate_rows(frame: pd.DataFrame, kind: str, label_col: str | None, label: str | None, value: str) -> list:
    """One row per (label x) matchup x criterion, in first-appearance order: the mean credit
    (even split for votes), the number of values and of ties (one aggregation, no loop)."""
    keys = ([label_col] if label_col else []) + ["matchup", "criterion"]
    vals = frame[value].to_numpy(float)
    ties = np.isnan(vals) if value == "y" else (vals == 0.5)
    credit = even_split_credit(vals) if value == "y" else vals
    grouped = pd.DataFrame({**{k: frame[k].to_numpy() for k in keys}, "_credit": credit, "_tie": ties}).groupby(
        keys, sort=False)
    agg = grouped.agg(rate=("_credit", "mean"), n=("_credit", "size"), n_ties=("_tie", "sum")).reset_index()
    labels = agg[label_col].astype(str) if label_col else pd.Series(str(label), index=agg.index)
    return [[kind, lab, m, c, float(r), int(n), int(t), math.nan, math.nan, "", False]
            for lab, m, c, r, n, t in zip(labels, agg["matchup"], agg["criterion"], agg["rate"], agg["n"], agg["n_ties"])]


def reader_rates(votes: pd.DataFrame, judge_credits: pd.DataFrame | None = None, *,
                 glmm_estimates: pd.DataFrame | None = None, fit_glmm_if_missing: bool = True) -> ReaderRates:
    """Even-split preference rates of every reader, the humans and each judge, per cell.

    Parameters
    ----------
    votes : DataFrame
        Normalised votes (needs ``matchup``).
    judge_credits : DataFrame, optional
        pair_id, matchup, criterion, judge, credit (1 / 0.5 / 0 / NaN invalid).
    glmm_estimates : DataFrame, optional
        Precomputed human GLMM estimates: matchup, criterion, estimate (+ lo, hi). When
        absent and ``fit_glmm_if_missing``, each matchup x criterion is fitted with
        :func:`audit.glmm.fit_crossed_glmm` (ties left out).

    Returns
    -------
    ReaderRates

    Notes
    -----
    The reader and judge rates are plain means, checked in the tests against counts
    computed by hand.
    """
    if "matchup" not in votes.columns:
        return ReaderRates(status=Status.SKIPPED, reason="needs a 'matchup' column in the votes")
    pooled = votes.assign(matchup=ALL_MATCHUPS)
    both = pd.concat([votes, pooled], ignore_index=True)
    rows = _rate_rows(both, "reader", "reader_id", None, "y")
    rows += _rate_rows(both, "human_pooled", None, HUMANS_POOLED, "y")
    glmm_rows, glmm_source = _glmm_rows(votes, glmm_estimates, fit_glmm_if_missing)
    rows += glmm_rows
    n_invalid = 0
    mapping: dict[str, str] = {}
    if judge_credits is not None and len(judge_credits):
        mapping = judge_criterion_map(first_seen(votes["criterion"]), first_seen(judge_credits["criterion"]))
        jc = judge_credits
        if "matchup" not in jc.columns:
            jc = jc.merge(votes[["pair_id", "matchup"]].drop_duplicates("pair_id"), on="pair_id", how="left")
        inverse = {j: h for h, j in mapping.items()}
        jc = jc[jc["criterion"].isin(inverse)].assign(criterion=lambda d: d["criterion"].map(inverse))
        n_invalid = int(jc["credit"].isna().sum())
        jc = jc[jc["credit"].notna()]
        jboth = pd.concat([jc, jc.assign(matchup=ALL_MATCHUPS)], ignore_index=True)
        jrows = _rate_rows(jboth, "judge", "judge", None, "credit")
        for r in jrows:
            r[9] = mapping[r[3]]
            r[10] = mapping[r[3]] != r[3]
        rows += jrows
    rates = pd.DataFrame(rows, columns=RATE_COLUMNS)
    return ReaderRates(status=COMPUTED, rates=rates, judge_range=_judge_range(rates), glmm_source=glmm_source,
                       n_judge_invalid=n_invalid)


def _judge_range(rates: pd.DataFrame) -> pd.DataFrame:
    readers = rates[rates["row_kind"] == "reader"]
    bounds = readers.groupby(["matchup", "criterion"], sort=False)["rate"].agg(["min", "max", "count"]).reset_index()
    judges = rates[rates["row_kind"] == "judge"].merge(bounds, on=["matchup", "criterion"], how="inner", sort=False)
    if judges.empty:
        return pd.DataFrame(columns=RANGE_COLUMNS)
    rate, lo, hi = (judges[c].to_numpy(float) for c in ("rate", "min", "max"))
    out = pd.DataFrame({
        RANGE_COLUMNS[0]: judges["row_label"].to_numpy(), RANGE_COLUMNS[1]: judges["matchup"].to_numpy(),
        RANGE_COLUMNS[2]: judges["criterion"].to_numpy(), RANGE_COLUMNS[3]: judges["judge_criterion"].to_numpy(),
        RANGE_COLUMNS[4]: judges["different_target"].astype(bool).to_numpy(), RANGE_COLUMNS[5]: rate,
        RANGE_COLUMNS[6]: lo, RANGE_COLUMNS[7]: hi, RANGE_COLUMNS[8]: judges["count"].astype(int).to_numpy(),
        RANGE_COLUMNS[9]: (rate < lo) | (rate > hi), RANGE_COLUMNS[10]: np.maximum.reduce([lo - rate, rate - hi,
                                                                                         np.zeros_like(rate)]),
    })
    return out
