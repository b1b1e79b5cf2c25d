"""Reader-level preference rates per matchup x criterion: the heat-map data.

One row per reader, the pooled human rate, the human GLMM estimate and each judge
configuration, for every matchup and for all matchups pooled. Rates follow the run's tie rule
(:mod:`judge_transfer_audit.model.tie_rules`) for readers and judges alike: the mean credit over what the rule counts
(under ``even-split`` (focal wins + 0.5 x ties) / votes; under ``decisive`` wins / decisive
votes); ``n_ties`` counts ties whatever the rule. The humans' ``overall`` is
compared with the judge's ``aggregate`` when the judge has no ``overall`` (a different
target, flagged in ``different_target``).
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
    check_judge_credits,
    first_seen,
    fmt,
    judge_criterion_map,
    vote_credit,
)

RATE_COLUMNS = [
    "row_kind",
    "row_label",
    "matchup",
    "criterion",
    "rate",
    "n",
    "n_ties",
    "lo",
    "hi",
    "judge_criterion",
    "different_target",
]
RANGE_COLUMNS = [
    "judge",
    "matchup",
    "criterion",
    "judge_criterion",
    "different_target",
    "judge_rate",
    "reader_min",
    "reader_max",
    "n_readers",
    "outside",
    "distance",
    "reader_mean",
    "reader_sd",
    "p_value",
]

DEVIATION_COLUMNS = ["judge", "n_cells", "judge_deviation", "reader_mean", "reader_sd", "n_readers", "p_value"]

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
        matchup (``(all matchups)`` pools them; ``(all matchups, focal X)`` pools those with
        focal system X when the orientation is not declared), criterion (the human criterion), rate, n
        (what the rate divides by under the tie rule: votes, or valid judge comparisons; ties left
        out under a rule that does not count them), n_ties (ties, counted or not), lo/hi (GLMM
        interval, else NaN),
        judge_criterion, different_target.
    judge_range : DataFrame
        One row per judge x cell: judge_rate, reader_min, reader_max, n_readers, outside
        (judge rate strictly outside [min, max] of the readers' rates), distance (how far
        outside, 0 inside), reader_mean, reader_sd, p_value (the judge as one more reader:
        :func:`judge_as_reader_p_value`). With 7 exchangeable readers a judge that is one
        more reader falls outside their range in 2 of 8 cells by chance; the check reads
        the p-value, adjusted across cells.
    glmm_source : str
        ``given``, ``fitted`` or ``unavailable: <why>``.
    n_judge_invalid : int
        Judge comparisons with an invalid output, left out of the judge rates.
    judge_deviation : DataFrame
        One row per judge: does it behave like one more reader *over all cells*?
        judge_deviation (the judge's mean absolute distance from the other raters' mean rate
        over its matchup x criterion cells), reader_mean / reader_sd (the same figure of the
        readers), n_readers, n_cells, p_value (one-sided prediction t-test of the judge's log
        figure among the readers': :func:`judge_deviation_test`).
    """

    status: Status
    reason: str = ""
    rates: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=RATE_COLUMNS))
    judge_range: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=RANGE_COLUMNS))
    glmm_source: str = ""
    n_judge_invalid: int = 0
    judge_deviation: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=DEVIATION_COLUMNS))

    def to_frame(self) -> pd.DataFrame:
        return self.rates.copy()

    def heatmap(self, matchup: str = ALL_MATCHUPS) -> pd.DataFrame:
        """Wide matrix for one matchup: rows = readers, humans and judges; columns = criteria."""
        sub = self.rates[self.rates["matchup"] == matchup]
        wide = sub.pivot_table(index="row_label", columns="criterion", values="rate", aggfunc="first", sort=False)
        return wide.reindex(index=first_seen(sub["row_label"]), columns=first_seen(sub["criterion"]))

    def __str__(self) -> str:
        if self.status is not COMPUTED:
            return f"Reader rates: {self.status.value} ({self.reason})"
        scopes = list(dict.fromkeys(self.rates["matchup"]))
        shown = next((m for m in scopes if m.startswith(ALL_MATCHUPS[:-1])), scopes[0] if scopes else ALL_MATCHUPS)
        lines = [f"Preference rates for the focal system ({shown}; GLMM {self.glmm_source})"]
        hm = self.heatmap(shown)
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
            from judge_transfer_audit.core.errors import InputError, InputProblem

            raise InputError(
                InputProblem(
                    file="glmm_estimates",
                    column=missing[0],
                    message="the GLMM estimate frame lacks a column",
                    fix="pass a frame with columns matchup, criterion, estimate (and lo, hi)",
                )
            )
        rows = []
        for rec in glmm_estimates.to_dict("records"):
            rows.append(
                [
                    "human_glmm",
                    HUMANS_GLMM,
                    str(rec["matchup"]),
                    str(rec["criterion"]),
                    float(rec["estimate"]),
                    0,
                    0,
                    float(rec.get("lo", math.nan)),
                    float(rec.get("hi", math.nan)),
                    "",
                    False,
                ]
            )
        return rows, "given"
    if not fit_if_missing:
        return [], "unavailable: not requested"
    try:
        from judge_transfer_audit.statistics.glmm import fit_crossed_glmm
    except ImportError as exc:
        return [], f"unavailable: judge_transfer_audit.statistics.glmm not importable ({exc})"
    rows = []
    failures = 0
    for (matchup, crit), cell in votes.groupby(["matchup", "criterion"], sort=False):
        cell = cell[cell["y"].notna()]
        try:
            res = fit_crossed_glmm(
                cell["y"].to_numpy(float), {"pair": cell["pair_id"].to_numpy(), "reader": cell["reader_id"].to_numpy()}
            )
            est, lo, hi = res.prob_estimate()
        except Exception:  # noqa: BLE001 -- a failed cell is a NaN row, counted in glmm_source
            failures += 1
            est = lo = hi = math.nan
        rows.append(
            ["human_glmm", HUMANS_GLMM, matchup, crit, float(est), len(cell), 0, float(lo), float(hi), "", False]
        )
    return rows, "fitted" if not failures else f"fitted ({failures} cell(s) failed, NaN)"


def _scoped_rows(frame: pd.DataFrame, pools: Mapping[str, Sequence[str]] | None) -> tuple[np.ndarray, np.ndarray, list]:
    """The rows of ``frame`` and of its pooled copies, as integers (no copy of the frame).

    Returns ``(rows, matchup, names)``: the index of each row of :func:`with_pooled_scopes`'s
    frame in ``frame``, its matchup as a code, and the matchup name of each code (a pool's label
    is one more name; a label equal to a matchup's name shares its code, as equal strings group).
    """
    codes, uniques = pd.factorize(frame["matchup"], sort=False)
    names = [str(u) for u in uniques]
    if pools is None:
        pools = {ALL_MATCHUPS: tuple(names)}
    rows, matchup = [np.arange(len(frame))], [codes]
    known = {n: i for i, n in enumerate(names)}
    for label, ms in pools.items():
        keep = np.flatnonzero(frame["matchup"].isin(list(ms)).to_numpy(bool))
        if label not in known:
            known[label] = len(names)
            names.append(str(label))
        rows.append(keep)
        matchup.append(np.full(len(keep), known[label], dtype=codes.dtype))
    return np.concatenate(rows), np.concatenate(matchup), names


def _rate_rows(
    frame: pd.DataFrame,
    scoped: tuple[np.ndarray, np.ndarray, list],
    kind: str,
    label_col: str | None,
    label: str | None,
    credit: np.ndarray,
    ties: np.ndarray,
) -> list:
    """One row per (label x) matchup x criterion, in first-appearance order: the mean credit
    over the counted outcomes (NaN credit: a tie the rule leaves out), how many were counted
    and how many were ties (one aggregation on integer codes, no loop over votes); as a mapping
    of ``RATE_COLUMNS`` to their values.

    ``scoped`` is :func:`_scoped_rows` of ``frame`` (the rows of its pooled scopes); ``credit``
    and ``ties`` are per row of ``frame``. The same groups, in the same order and with the same
    sums, as a pandas group-by on the strings of :func:`with_pooled_scopes`'s frame.
    """
    rows, matchup, matchup_names = scoped
    keys, names = {}, {}
    for col in [label_col] if label_col else []:
        c, u = pd.factorize(frame[col], sort=False)
        keys[col], names[col] = c[rows], u
    c, u = pd.factorize(frame["criterion"], sort=False)
    keys["matchup"], names["matchup"] = matchup, np.asarray(matchup_names, dtype=object)
    keys["criterion"], names["criterion"] = c[rows], u
    valid = np.logical_and.reduce([k >= 0 for k in keys.values()])  # a missing key is left out, as dropna does
    table = pd.DataFrame(
        {**{k: v[valid] for k, v in keys.items()}, "_credit": credit[rows][valid], "_tie": ties[rows][valid]}
    )
    agg = (
        table.groupby(list(keys), sort=False)
        .agg(rate=("_credit", "mean"), n=("_credit", "count"), n_ties=("_tie", "sum"))
        .reset_index()
    )
    value = {k: np.asarray(names[k], dtype=object)[agg[k].to_numpy()] for k in keys}
    labels = [str(v) for v in value[label_col]] if label_col else [str(label)] * len(agg)
    n = len(agg)
    return {
        "row_kind": [kind] * n,
        "row_label": labels,
        "matchup": value["matchup"].tolist(),
        "criterion": value["criterion"].tolist(),
        "rate": agg["rate"].to_numpy(float).tolist(),
        "n": agg["n"].to_numpy(np.int64).tolist(),
        "n_ties": agg["n_ties"].to_numpy(np.int64).tolist(),
        "lo": [math.nan] * n,
        "hi": [math.nan] * n,
        "judge_criterion": [""] * n,
        "different_target": [False] * n,
    }


def _rate_frame(parts: list[dict[str, list]]) -> pd.DataFrame:
    """One frame of the rate rows of ``parts`` (each a column -> values mapping, in ``RATE_COLUMNS``), in
    order: each column's values joined, then typed once (the types a frame of the rows would have)."""
    columns = {c: [v for part in parts for v in part[c]] for c in RATE_COLUMNS}
    if not columns[RATE_COLUMNS[0]]:  # no rows: untyped columns, as a frame of no rows has
        return pd.DataFrame([], columns=RATE_COLUMNS)
    return pd.DataFrame(columns, columns=RATE_COLUMNS)


def _columns(rows: list[list]) -> dict[str, list]:
    """Rows in ``RATE_COLUMNS`` order as a column -> values mapping."""
    return {c: [row[j] for row in rows] for j, c in enumerate(RATE_COLUMNS)}


def reader_rates(
    votes: pd.DataFrame,
    judge_credits: pd.DataFrame | None = None,
    *,
    glmm_estimates: pd.DataFrame | None = None,
    fit_glmm_if_missing: bool = True,
    pools: Mapping[str, Sequence[str]] | None = None,
    tie_rule: TieRule = EVEN_SPLIT,
) -> ReaderRates:
    """Preference rates of every reader, the humans and each judge, per cell, under ``tie_rule``.

    Parameters
    ----------
    votes : DataFrame
        Normalised votes (needs ``matchup``).
    judge_credits : DataFrame, optional
        pair_id, matchup, criterion, judge, credit under ``tie_rule`` (1 / 0 / a tie's credit /
        NaN), and ``outcome`` (win, loss, tie, invalid) unless the credits tell ties apart.
    glmm_estimates : DataFrame, optional
        Precomputed human GLMM estimates: matchup, criterion, estimate (+ lo, hi). When
        absent and ``fit_glmm_if_missing``, each matchup x criterion is fitted with
        :func:`judge_transfer_audit.statistics.glmm.fit_crossed_glmm` (ties left out).
    pools : mapping of label to matchups, optional
        The pooled rows: a rate for "the focal system" pools only matchups whose focal
        system means one thing (:meth:`judge_transfer_audit.model.data.AuditData.pooling_scopes`). Default: every
        matchup under ``(all matchups)``.
    tie_rule : TieRule
        How a tied vote or judge output is credited and whether it is counted
        (:mod:`judge_transfer_audit.model.tie_rules`); the votes' credits are the column
        :func:`judge_transfer_audit.statistics.readers._common.credited_votes` added when present.

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
    scoped = _scoped_rows(votes, pools)
    credit, ties = vote_credit(votes, tie_rule), votes["y"].isna().to_numpy()
    parts = [
        _rate_rows(votes, scoped, "reader", "reader_id", None, credit, ties),
        _rate_rows(votes, scoped, "human_pooled", None, HUMANS_POOLED, credit, ties),
    ]
    glmm_rows, glmm_source = _glmm_rows(votes, glmm_estimates, fit_glmm_if_missing)
    parts.append(_columns(glmm_rows))
    n_invalid = 0
    mapping: dict[str, str] = {}
    if judge_credits is not None and len(judge_credits):
        mapping = judge_criterion_map(first_seen(votes["criterion"]), first_seen(judge_credits["criterion"]))
        jc = judge_credits if "outcome" in judge_credits.columns else check_judge_credits(judge_credits, tie_rule)
        if "matchup" not in jc.columns:
            jc = jc.merge(votes[["pair_id", "matchup"]].drop_duplicates("pair_id"), on="pair_id", how="left")
        inverse = {j: h for h, j in mapping.items()}
        jc = jc[jc["criterion"].isin(inverse)].assign(criterion=lambda d: d["criterion"].map(inverse))
        n_invalid = int((jc["outcome"] == "invalid").sum())
        jc = jc[jc["outcome"] != "invalid"]
        jc = jc.reset_index(drop=True)
        jrows = _rate_rows(
            jc,
            _scoped_rows(jc, pools),
            "judge",
            "judge",
            None,
            jc["credit"].to_numpy(float),
            (jc["outcome"] == "tie").to_numpy(bool),
        )
        jrows["judge_criterion"] = [mapping[c] for c in jrows["criterion"]]
        jrows["different_target"] = [mapping[c] != c for c in jrows["criterion"]]
        parts.append(jrows)
    rates = _rate_frame(parts)
    distinct = votes[["matchup", "criterion"]].drop_duplicates()
    cells = set(zip(distinct["matchup"], distinct["criterion"]))
    return ReaderRates(
        status=COMPUTED,
        rates=rates,
        judge_range=_judge_range(rates),
        glmm_source=glmm_source,
        n_judge_invalid=n_invalid,
        judge_deviation=judge_deviation_test(rates, cells),
    )


def judge_as_reader_p_value(judge_rate: float, reader_rates: np.ndarray) -> float:
    """Two-sided p-value of the judge's rate as one more draw from the readers' rates.

    The prediction t statistic ``(judge - mean) / (sd * sqrt(1 + 1/n))`` on ``n - 1``
    degrees of freedom (n readers): under the null that the judge behaves like another
    reader, it is t-distributed when reader rates are roughly normal. With identical
    reader rates (sd 0) the p-value is 1 when the judge equals them and 0 otherwise; NaN
    with fewer than 2 readers.
    """
    from judge_transfer_audit.statistics.distributions import t as t_dist

    r = np.asarray(reader_rates, float)
    r = r[np.isfinite(r)]
    if len(r) < 2 or not np.isfinite(judge_rate):
        return math.nan
    sd = float(np.std(r, ddof=1))
    gap = float(judge_rate - r.mean())
    if sd == 0:
        return 1.0 if abs(gap) < 1e-12 else 0.0
    t = gap / (sd * math.sqrt(1 + 1 / len(r)))
    return float(2 * t_dist.sf(abs(t), len(r) - 1))


def judge_deviation_test(rates: pd.DataFrame, cells: set[tuple[str, str]] | None = None) -> pd.DataFrame:
    """Is each judge further from the readers, over all cells, than a reader is from the others?

    Over the judge's matchup x criterion cells (pooled scopes left out: they repeat the
    cells; so are cells where the judge answers a different target, its ``aggregate`` against
    the readers' ``overall``, a mean of criteria being less noisy than one vote), every rater
    (each reader, and the judge) gets D = its mean absolute distance from the mean rate of
    the *other* raters in the cell. The judge's log D is compared with the n readers' log D
    by the one-sided prediction t-test ``(x_judge - mean x) / (sd x * sqrt(1 + 1/n))`` on
    n - 1 degrees of freedom. Raters, not cells, are the units, so the dependence between
    cells (the same pairs under every criterion, a rater's lean across criteria) is in the
    readers' own spread; treating every rater alike keeps the D values exchangeable under
    "the judge is one more reader" (then the statistic is scaled right even though the D
    values are correlated), and the log removes most of their skew. Calibration on 200
    simulated studies of 7 readers (``judge_transfer_audit.sections.diagnostics_simulation``, aligned judge): p < 0.05
    in 5.0%, p < 0.0083 in 1.5%. A judge outside the readers in most cells gets a small p even
    with 7 readers, where no single cell can show it (docs/readers.md). NaN with fewer than 3
    readers.
    """
    from judge_transfer_audit.statistics.distributions import t as t_dist

    readers = rates[rates["row_kind"] == "reader"]
    judges = rates[(rates["row_kind"] == "judge") & ~rates["different_target"].astype(bool)]
    if cells is not None:
        keep = list(cells)
        readers = readers[pd.MultiIndex.from_arrays([readers["matchup"], readers["criterion"]]).isin(keep)]
        judges = judges[pd.MultiIndex.from_arrays([judges["matchup"], judges["criterion"]]).isin(keep)]
    rows = []
    if readers.empty or judges.empty:
        return pd.DataFrame(rows, columns=DEVIATION_COLUMNS)
    wide = readers.pivot_table(index=["matchup", "criterion"], columns="row_label", values="rate", aggfunc="first")
    for judge, jr in judges.groupby("row_label", sort=False):
        jr = jr[
            [(m, c) in wide.index and np.isfinite(r) for m, c, r in zip(jr["matchup"], jr["criterion"], jr["rate"])]
        ]
        raters = np.column_stack(
            [wide.loc[list(zip(jr["matchup"], jr["criterion"]))].to_numpy(float), jr["rate"].to_numpy(float)]
        )  # cells x (readers..., judge)
        present = np.isfinite(raters)
        total, count = np.nansum(raters, axis=1, keepdims=True), present.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            others = (total - np.where(present, raters, 0.0)) / (count - present)
            dist = np.where(present & (count - present > 0), np.abs(raters - others), np.nan)
            d_all = np.nanmean(dist, axis=0)
        d_readers, dj = d_all[:-1][np.isfinite(d_all[:-1])], float(d_all[-1])
        n = len(d_readers)
        if n >= 3 and np.isfinite(dj):
            x, xj = np.log(np.maximum(d_readers, 1e-12)), math.log(max(dj, 1e-12))
            sd = float(np.std(x, ddof=1))
            gap = xj - float(np.mean(x))
            p = float(t_dist.sf(gap / (sd * math.sqrt(1 + 1 / n)), n - 1)) if sd > 0 else (0.0 if gap > 1e-12 else 1.0)
        else:
            p = math.nan
        rows.append(
            [
                str(judge),
                len(jr),
                dj,
                float(np.mean(d_readers)) if n else math.nan,
                float(np.std(d_readers, ddof=1)) if n > 1 else math.nan,
                n,
                p,
            ]
        )
    return pd.DataFrame(rows, columns=DEVIATION_COLUMNS)


def _judge_range(rates: pd.DataFrame) -> pd.DataFrame:
    """Each judge row against the readers' rates of its cell (the range, mean, sd and
    :func:`judge_as_reader_p_value`), on whole columns: the cells with as many readers computed as
    one array, each row the same reduction as on its own (the per-cell loop's numbers)."""
    readers = rates[rates["row_kind"] == "reader"]
    judges = rates[rates["row_kind"] == "judge"]
    cell_codes, cells = pd.MultiIndex.from_arrays([readers["matchup"], readers["criterion"]]).factorize()
    where = cells.get_indexer(pd.MultiIndex.from_arrays([judges["matchup"], judges["criterion"]]))
    judges, where = judges[where >= 0], where[where >= 0]
    if judges.empty:
        return pd.DataFrame([], columns=RANGE_COLUMNS)
    values = readers["rate"].to_numpy(float)[np.argsort(cell_codes, kind="stable")]  # cell by cell, in order
    size = np.bincount(cell_codes, minlength=len(cells))
    start = np.cumsum(size) - size
    rate = judges["rate"].to_numpy(float)
    n = size[where]
    lo, hi, mean, sd, p = (np.full(len(judges), math.nan) for _ in range(5))
    for k in np.unique(n).tolist():
        rows = np.flatnonzero(n == k)
        block = values[start[where[rows]][:, None] + np.arange(k)]  # (rows, k): each cell's rates in order
        lo[rows], hi[rows], mean[rows] = block.min(axis=1), block.max(axis=1), np.mean(block, axis=1)
        if k > 1:
            sd[rows] = np.std(block, axis=1, ddof=1)
        p[rows] = _p_values(rate[rows], block)
    distance = lo - rate  # max(lo - rate, rate - hi, 0.0) as Python's max keeps the first of equals
    distance = np.where(rate - hi > distance, rate - hi, distance)
    distance = np.where(0.0 > distance, 0.0, distance)
    columns = [
        judges["row_label"].tolist(),
        judges["matchup"].tolist(),
        judges["criterion"].tolist(),
        judges["judge_criterion"].tolist(),
        [bool(v) for v in judges["different_target"].tolist()],
        rate.tolist(),
        lo.tolist(),
        hi.tolist(),
        n.tolist(),
        ((rate < lo) | (rate > hi)).tolist(),
        distance.tolist(),
        mean.tolist(),
        sd.tolist(),
        p.tolist(),
    ]
    return pd.DataFrame([list(row) for row in zip(*columns)], columns=RANGE_COLUMNS)


def _p_values(judge_rate: np.ndarray, block: np.ndarray) -> np.ndarray:
    """:func:`judge_as_reader_p_value` of every row (``judge_rate[i]``, the readers' rates ``block[i]``):
    rows without a missing rate at once (the same arithmetic), the others one by one."""
    from scipy.special import stdtr

    n = block.shape[1]
    whole = np.isfinite(block).all(axis=1)
    out = np.array([judge_as_reader_p_value(j, r) if not w else math.nan for j, r, w in zip(judge_rate, block, whole)])
    rows = np.flatnonzero(whole & np.isfinite(judge_rate))
    if n < 2 or not rows.size:
        return out
    r = block[rows]
    sd = np.std(r, axis=1, ddof=1)
    gap = judge_rate[rows] - r.mean(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = gap / (sd * math.sqrt(1 + 1 / n))
    # t.sf(|t|, n - 1) is stdtr(n - 1, -|t|)
    out[rows] = np.where(sd == 0, np.where(np.abs(gap) < 1e-12, 1.0, 0.0), 2 * stdtr(n - 1, -np.abs(t)))
    return out
