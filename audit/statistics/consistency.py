"""Judge self-consistency and the other reliability claims of multi-round LLM evaluators.

Input (``audit consistency SCORES``; docs/reliability.md): one row per score, columns

* ``item_id``, ``criterion`` (alias ``dimension``), ``score`` - required;
* ``judge`` (alias ``model``/``evaluator``) - the evaluator; default ``"judge"``;
* ``round`` (alias ``sample``) - integer round or repeated-sample index; default 0;
* ``mode`` - evaluation mode (e.g. content-limit / title-limit); default ``""``;
* ``category`` - the item's category (constant per item), for discrimination.

Each analysis runs when its columns allow it, otherwise it is listed as skipped with the
reason. Analyses other than self-consistency use one score per judge x item x criterion x
mode: the score of the *last* round (the evaluator's final answer), or the mean over rounds
with ``ConsistencySettings(final="mean")`` (repeated, unordered samples).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from judge_transfer_audit.core.errors import InputError, InputProblem
from judge_transfer_audit.statistics.reliability.icc import icc_from_matrix

ALIASES = {
    "dimension": "criterion",
    "question": "criterion",
    "model": "judge",
    "evaluator": "judge",
    "sample": "round",
    "rating": "score",
}
MAX_ROUND = 1_000_000  #: largest |round| accepted
KEYS = ["judge", "item_id", "criterion", "mode"]


@dataclass(frozen=True)
class ConsistencySettings:
    """Thresholds: convergence |last - previous| < ``convergence_threshold`` (SAGE: 0.3);
    judge agreement counts |difference| < ``agreement_threshold``; redundancy flags
    |r| >= ``redundancy_threshold`` (SAGE: 0.7); tests at level ``alpha``. ``final``:
    the one score per judge x item x criterion x mode that the other analyses use,
    ``"last"`` round (an iterative evaluator's final answer) or ``"mean"`` over rounds
    (repeated, unordered samples)."""

    convergence_threshold: float = 0.3
    agreement_threshold: float = 0.3
    redundancy_threshold: float = 0.7
    alpha: float = 0.05
    final: str = "last"


@dataclass(frozen=True)
class ConsistencyReport:
    """Results of every analysis the input allowed (empty frames otherwise).

    Attributes
    ----------
    self_consistency : DataFrame
        Per judge x criterion: n_items (with >= 2 rounds), convergence_rate (share with
        |last - previous| < threshold), mean_sd and max_range of scores across rounds.
    item_spread : DataFrame
        Per judge x item x criterion x mode: n_rounds, sd, range, last_delta, converged.
    judge_agreement : DataFrame
        Per pair of judges x criterion, plus a row ``criterion = "all"`` pooled over
        criteria: n_items, mad (mean absolute difference),
        share_within (|diff| < agreement threshold), mean_offset (a - b) with its t interval
        (mean_offset_ci_low / _high), pearson, spearman, icc_agreement (ICC2, absolute) with
        its psych::ICC interval (icc_agreement_ci_low / _high) and icc_consistency (ICC3).
        Intervals at level 1 - ``settings.alpha``.
    mode_invariance : DataFrame
        Per judge x criterion x pair of modes: n_items, mean_difference (a - b), t, p
        (paired t-test), largest_difference (signed, largest |a - b|) and its item.
    redundancy : DataFrame
        Per judge x mode x pair of criteria: n, pearson, spearman, redundant (|pearson|
        >= threshold).
    discrimination : DataFrame
        Per judge x mode x criterion: n_items, n_categories, anova_f/anova_p (equal variances),
        welch_f/welch_df2/welch_p (Welch's ANOVA).
    discrimination_pairs : DataFrame
        Per judge x mode x criterion x pair of categories: mean_a, mean_b, welch_t, p,
        p_bonferroni (times the number of pairs in that judge x mode x criterion, capped at 1),
        cohens_d (pooled SD).
    skipped : tuple of str
        Analyses not run and why.
    settings : ConsistencySettings
    n_scores, n_missing_scores : int
        Rows read; rows whose score is missing (left out everywhere, counted here).
    """

    self_consistency: pd.DataFrame
    item_spread: pd.DataFrame
    judge_agreement: pd.DataFrame
    mode_invariance: pd.DataFrame
    redundancy: pd.DataFrame
    discrimination: pd.DataFrame
    discrimination_pairs: pd.DataFrame
    skipped: tuple[str, ...]
    settings: ConsistencySettings
    n_scores: int
    n_missing_scores: int

    def tables(self) -> dict[str, pd.DataFrame]:
        names = (
            "self_consistency",
            "item_spread",
            "judge_agreement",
            "mode_invariance",
            "redundancy",
            "discrimination",
            "discrimination_pairs",
        )
        return {n: getattr(self, n) for n in names}

    def to_frame(self) -> pd.DataFrame:
        return self.self_consistency

    def __str__(self) -> str:
        fmt = lambda x: f"{x:.3f}"  # noqa: E731
        titles = {
            "self_consistency": "Self-consistency across rounds",
            "judge_agreement": "Agreement between judges",
            "mode_invariance": "Invariance between modes",
            "redundancy": "Dimension redundancy",
            "discrimination": "Discrimination between categories",
            "discrimination_pairs": "Pairwise category comparisons (Bonferroni)",
        }
        used = "the mean over rounds" if self.settings.final == "mean" else "the last round"
        parts = [
            f"{self.n_scores} scores read, {self.n_missing_scores} missing scores left out; analyses after "
            f"self-consistency use {used} per judge x item x criterion x mode"
        ]
        for name, title in titles.items():
            frame = getattr(self, name)
            if not frame.empty:
                parts += ["", title, frame.to_string(index=False, float_format=fmt)]
        for reason in self.skipped:
            parts.append(f"skipped: {reason}")
        return "\n".join(parts)


# ----------------------------------------------------------------------------- input
def validate_scores(raw: pd.DataFrame, file: str = "scores") -> pd.DataFrame:
    """Normalise a scores frame (see the module docstring); InputError lists every problem."""
    frame = raw.rename(columns={c: str(c).strip() for c in raw.columns})
    frame = frame.rename(columns={a: t for a, t in ALIASES.items() if a in frame.columns and t not in frame.columns})
    missing = [c for c in ("item_id", "criterion", "score") if c not in frame.columns]
    if missing:
        raise InputError(
            InputProblem(
                file=file,
                message=f"missing column(s) {', '.join(missing)}",
                fix="give item_id, criterion (or dimension), score; optional judge, round, "
                f"mode, category; found {', '.join(map(str, frame.columns))}",
            )
        )

    def text_of(col: str, default: str) -> pd.Series | str:
        # missing cells (NaN from JSONL / Parquet) become "" (pandas 3 keeps NaN through astype(str))
        return frame[col].astype(object).where(frame[col].notna(), "").astype(str) if col in frame else default

    out = pd.DataFrame(
        {
            "item_id": text_of("item_id", ""),
            "criterion": text_of("criterion", ""),
            "judge": text_of("judge", "judge"),
            "mode": text_of("mode", ""),
            "category": text_of("category", ""),
            "line": np.arange(len(frame)) + 2,
        }
    )
    problems = []
    for col in ("item_id", "criterion", "judge", "mode", "category"):
        out[col] = out[col].str.strip()
    for col in ("mode", "category"):  # missing in JSONL / Parquet arrives as NaN: no mode / no category
        out[col] = out[col].replace({"nan": "", "None": "", "<NA>": ""})
    for col in ("item_id", "criterion", "judge"):  # an empty id would silently become its own item or judge
        empty = out[col].isin(["", "nan", "None", "<NA>"]) if col in frame else pd.Series(False, index=out.index)
        if empty.any():
            i = int(np.flatnonzero(empty.to_numpy())[0])
            problems.append(
                InputProblem(
                    file=file,
                    line=int(out["line"].iloc[i]),
                    column=col,
                    message=f"{int(empty.sum())} empty {col} value(s)",
                    fix=f"give every row a {col}",
                )
            )
    text = frame["score"].astype(str).str.strip()
    blank = text.isin(["", "nan", "NaN", "NA", "None", "<NA>"])
    out["score"] = pd.to_numeric(text.where(~blank), errors="coerce")
    bad = ~blank & (out["score"].isna() | ~np.isfinite(out["score"].fillna(0.0)))
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        problems.append(
            InputProblem(
                file=file,
                line=int(out["line"].iloc[i]),
                column="score",
                value=text.iloc[i],
                message=f"{int(bad.sum())} non-numeric or infinite score(s)",
                fix="write a number, or leave the cell empty for a missing score",
            )
        )
    if "round" in frame:
        rounds = pd.to_numeric(frame["round"], errors="coerce").astype(float)
        # 1e400 reads as inf and 10**40 overflows an integer column: bound rounds up front
        bad = rounds.isna() | ~np.isfinite(rounds) | (rounds.abs() > MAX_ROUND) | (rounds != rounds.round())
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            problems.append(
                InputProblem(
                    file=file,
                    line=int(out["line"].iloc[i]),
                    column="round",
                    value=str(frame["round"].iloc[i]),
                    message=f"round is not an integer in [-{MAX_ROUND:,}, {MAX_ROUND:,}]",
                    fix="number rounds or samples 0, 1, 2, ...",
                )
            )
        out["round"] = rounds.where(~bad, -1).astype(int)
    else:
        out["round"] = 0
    dup = out.duplicated(KEYS + ["round"])
    if dup.any():
        row = out[dup].iloc[0]
        problems.append(
            InputProblem(
                file=file,
                line=int(row["line"]),
                message=f"{int(dup.sum())} repeated judge x item x criterion x mode x round row(s)",
                fix="give one score per judge, item, criterion, mode and round"
                + (
                    "; rows from several human readers (column 'reader_id') are ratings: use `audit reliability`"
                    if "reader_id" in frame
                    else ""
                ),
            )
        )
    cats = out.groupby("item_id")["category"].nunique()
    if (cats > 1).any():
        problems.append(
            InputProblem(
                file=file,
                column="category",
                value=str(cats[cats > 1].index[0]),
                message="an item has several categories",
                fix="give each item one category",
            )
        )
    if problems:
        raise InputError(problems)
    return out


# ----------------------------------------------------------------------------- analyses
def _self_consistency(data: pd.DataFrame, s: ConsistencySettings) -> tuple[pd.DataFrame, pd.DataFrame]:
    ordered = data.sort_values("round")
    grouped = ordered.groupby(KEYS, sort=False)["score"]
    spread = grouped.agg(n_rounds="size", sd="std", low="min", high="max").reset_index()
    last_two = ordered.groupby(KEYS, sort=False).tail(2)
    delta = last_two.groupby(KEYS, sort=False)["score"].agg(lambda v: v.iloc[-1] - v.iloc[0] if len(v) == 2 else np.nan)
    spread = spread.merge(delta.rename("last_delta").reset_index(), on=KEYS)
    spread["range"] = spread["high"] - spread["low"]
    spread["converged"] = spread["last_delta"].abs() < s.convergence_threshold
    spread = spread[KEYS + ["n_rounds", "sd", "range", "last_delta", "converged"]]
    multi = spread[spread["n_rounds"] >= 2]
    summary = (
        multi.groupby(["judge", "criterion"], sort=True)
        .agg(
            n_items=("converged", "size"),
            convergence_rate=("converged", "mean"),
            mean_sd=("sd", "mean"),
            max_range=("range", "max"),
        )
        .reset_index()
    )
    summary["threshold"] = s.convergence_threshold
    return summary, multi.sort_values(KEYS).reset_index(drop=True)


def _judge_agreement(final: pd.DataFrame, s: ConsistencySettings) -> pd.DataFrame:
    rows = []
    wide = final.pivot_table(index=["item_id", "criterion", "mode"], columns="judge", values="score", aggfunc="first")
    for a, b in itertools.combinations(sorted(final["judge"].unique()), 2):
        shared = wide[[a, b]].dropna()
        groups = list(shared.groupby(level="criterion", sort=True))
        if len(groups) > 1:
            groups.append(("all", shared))  # pooled over criteria (SAGE's overall cross-model r)
        for criterion, sub in groups:
            x, y = sub[a].to_numpy(), sub[b].to_numpy()
            n = len(x)
            diff = x - y
            varied = n >= 3 and np.std(x) > 0 and np.std(y) > 0
            iccs = icc_from_matrix(np.column_stack([x, y]), confidence=1 - s.alpha)
            offset_lo, offset_hi = _mean_interval(diff, 1 - s.alpha)
            rows.append(
                dict(
                    judge_a=a,
                    judge_b=b,
                    criterion=criterion,
                    n_items=n,
                    mad=float(np.mean(np.abs(diff))),
                    share_within=float(np.mean(np.abs(diff) < s.agreement_threshold)),
                    mean_offset=float(np.mean(diff)),
                    mean_offset_ci_low=offset_lo,
                    mean_offset_ci_high=offset_hi,
                    pearson=float(stats.pearsonr(x, y).statistic) if varied else math.nan,
                    spearman=float(stats.spearmanr(x, y).statistic) if varied else math.nan,
                    icc_agreement=iccs.get("ICC2").icc,
                    icc_agreement_ci_low=iccs.get("ICC2").ci_low,
                    icc_agreement_ci_high=iccs.get("ICC2").ci_high,
                    icc_consistency=iccs.get("ICC3").icc,
                )
            )
    return pd.DataFrame(rows)


def _mean_interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    """Student-t interval of a mean (NaN below 2 values; a point when they are all equal)."""
    n = len(values)
    if n < 2:
        return math.nan, math.nan
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1) * np.std(values, ddof=1) / math.sqrt(n))
    return float(np.mean(values)) - half, float(np.mean(values)) + half


def _mode_invariance(final: pd.DataFrame) -> pd.DataFrame:
    rows = []
    wide = final.pivot_table(index=["judge", "criterion", "item_id"], columns="mode", values="score", aggfunc="first")
    for a, b in itertools.combinations(sorted(final["mode"].unique()), 2):
        for (judge, criterion), sub in wide[[a, b]].dropna().groupby(level=["judge", "criterion"], sort=False):
            diff = sub[a] - sub[b]
            test = stats.ttest_rel(sub[a], sub[b]) if len(diff) >= 2 and diff.std() > 0 else None
            at = diff.abs().idxmax()
            rows.append(
                dict(
                    judge=judge,
                    criterion=criterion,
                    mode_a=a,
                    mode_b=b,
                    n_items=len(diff),
                    mean_difference=float(diff.mean()),
                    t=float(test.statistic) if test else math.nan,
                    p=float(test.pvalue) if test else math.nan,
                    largest_difference=float(diff[at]),
                    largest_item=str(at[2]),
                )
            )
    return pd.DataFrame(rows)


def _redundancy(final: pd.DataFrame, s: ConsistencySettings) -> pd.DataFrame:
    rows = []
    for (judge, mode), sub in final.groupby(["judge", "mode"], sort=False):
        wide = sub.pivot_table(index="item_id", columns="criterion", values="score", aggfunc="first")
        for a, b in itertools.combinations(list(wide.columns), 2):
            pair = wide[[a, b]].dropna()
            ok = len(pair) >= 3 and pair[a].std() > 0 and pair[b].std() > 0
            r = float(stats.pearsonr(pair[a], pair[b]).statistic) if ok else math.nan
            rows.append(
                dict(
                    judge=judge,
                    mode=mode,
                    criterion_a=a,
                    criterion_b=b,
                    n=len(pair),
                    pearson=r,
                    spearman=float(stats.spearmanr(pair[a], pair[b]).statistic) if ok else math.nan,
                    redundant=bool(abs(r) >= s.redundancy_threshold) if ok else False,
                    threshold=s.redundancy_threshold,
                )
            )
    return pd.DataFrame(rows)


def cohens_d(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's d with the pooled standard deviation (sum of squares over n_a + n_b - 2).

    Validated against ``psych::cohen.d`` (tests/reference/discrimination), which pools over
    N instead: ours = psych's x sqrt((N - 2) / N).
    """
    na, nb = len(a), len(b)
    if na < 2 or nb < 2:
        return math.nan
    pooled = math.sqrt(((na - 1) * np.var(a, ddof=1) + (nb - 1) * np.var(b, ddof=1)) / (na + nb - 2))
    return (float(np.mean(a)) - float(np.mean(b))) / pooled if pooled > 0 else math.nan


def _discrimination(final: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    from statsmodels.stats.oneway import anova_oneway

    rows, pairs = [], []
    for (judge, mode, criterion), sub in final.groupby(["judge", "mode", "criterion"], sort=True):
        groups = {c: g["score"].to_numpy() for c, g in sub.groupby("category", sort=True)}
        usable = {c: v for c, v in groups.items() if len(v) >= 2}
        row = dict(
            judge=judge,
            mode=mode,
            criterion=criterion,
            n_items=len(sub),
            n_categories=len(groups),
            anova_f=math.nan,
            anova_p=math.nan,
            welch_f=math.nan,
            welch_df2=math.nan,
            welch_p=math.nan,
        )
        if len(usable) >= 2 and any(np.var(v) > 0 for v in usable.values()):
            f = stats.f_oneway(*usable.values())
            row.update(anova_f=float(f.statistic), anova_p=float(f.pvalue))
            if all(np.var(v, ddof=1) > 0 for v in usable.values()):
                welch = anova_oneway(list(usable.values()), use_var="unequal", welch_correction=True)
                row.update(welch_f=float(welch.statistic), welch_df2=float(welch.df[1]), welch_p=float(welch.pvalue))
        rows.append(row)
        combos = list(itertools.combinations(sorted(usable), 2))
        for a, b in combos:
            t = stats.ttest_ind(usable[a], usable[b], equal_var=False)
            p = float(t.pvalue)
            pairs.append(
                dict(
                    judge=judge,
                    mode=mode,
                    criterion=criterion,
                    category_a=a,
                    category_b=b,
                    mean_a=float(np.mean(usable[a])),
                    mean_b=float(np.mean(usable[b])),
                    welch_t=float(t.statistic),
                    p=p,
                    p_bonferroni=min(1.0, p * len(combos)) if not math.isnan(p) else math.nan,
                    cohens_d=cohens_d(usable[a], usable[b]),
                )
            )
    return pd.DataFrame(rows), pd.DataFrame(pairs)


def consistency_report(scores: pd.DataFrame, settings: ConsistencySettings | None = None) -> ConsistencyReport:
    """Run every consistency analysis the columns of ``scores`` allow.

    Parameters
    ----------
    scores : DataFrame
        As returned by :func:`validate_scores`.
    settings : ConsistencySettings, optional

    Returns
    -------
    ConsistencyReport

    Notes
    -----
    Pearson/Spearman/paired and Welch t-tests are scipy's; Welch's ANOVA is statsmodels'
    ``anova_oneway(use_var="unequal")``. The discrimination table (both ANOVAs, pairwise
    Welch t, Bonferroni p, Cohen's d) is validated against R ``oneway.test``, ``t.test``,
    ``pairwise.t.test(pool.sd = FALSE, p.adjust.method = "bonferroni")`` and
    ``psych::cohen.d`` (tests/reference/discrimination); ICCs come from
    :mod:`judge_transfer_audit.statistics.reliability.icc` (validated against psych::ICC).
    """
    s = settings or ConsistencySettings()
    if s.final not in ("last", "mean"):
        raise InputError(
            InputProblem(
                file="arguments",
                message=f"unknown final score {s.final!r}",
                value=s.final,
                fix="use 'last' (final round) or 'mean' (mean of samples)",
            )
        )
    n_missing = int(scores["score"].isna().sum())
    data = scores.dropna(subset=["score"])
    skipped = []
    self_c, spread = _self_consistency(data, s)
    if self_c.empty:
        skipped.append("self-consistency: no judge x item x criterion has two or more rounds (column 'round')")
    if s.final == "mean":
        extra = data.groupby(KEYS, sort=False)[["round", "category", "line"]].agg("last")
        final = data.groupby(KEYS, sort=False)["score"].mean().to_frame().join(extra).reset_index()
    else:
        final = data.sort_values("round").groupby(KEYS, sort=False).tail(1)
    empty = pd.DataFrame()
    agree = _judge_agreement(final, s) if final["judge"].nunique() >= 2 else empty
    if agree.empty:
        skipped.append("judge agreement: needs two or more judges scoring the same items (column 'judge')")
    modes = _mode_invariance(final) if final["mode"].nunique() >= 2 else empty
    if modes.empty:
        skipped.append("mode invariance: needs two or more modes on the same items (column 'mode')")
    redundancy = _redundancy(final, s) if final["criterion"].nunique() >= 2 else empty
    if redundancy.empty:
        skipped.append("dimension redundancy: needs two or more criteria")
    categorised = final[final["category"] != ""]  # items without a category take no part
    has_categories = categorised["category"].nunique() >= 2
    disc, disc_pairs = _discrimination(categorised) if has_categories else (empty, empty)
    if disc.empty:
        skipped.append("discrimination: needs a 'category' column with two or more categories")
    return ConsistencyReport(
        self_consistency=self_c,
        item_spread=spread,
        judge_agreement=agree,
        mode_invariance=modes,
        redundancy=redundancy,
        discrimination=disc,
        discrimination_pairs=disc_pairs,
        skipped=tuple(skipped),
        settings=s,
        n_scores=int(len(scores)),
        n_missing_scores=n_missing,
    )
