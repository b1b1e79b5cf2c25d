"""Everything ``audit reliability`` computes on a scalar ratings file, in one result.

Per question (criterion) and per reader group (plus all readers together): the six ICC
forms, Kendall's W (readers ranking the items) and Krippendorff's alpha at the nominal,
ordinal and interval levels. Per item (text): Cronbach's alpha across the questions with
readers as observations (GrAImes' internal consistency per text) and Kendall's W of the
readers ranking the questions. Per reader group: Cronbach's alpha of the whole question
set with item x reader rows as observations. And the groups compared question by question.

Missing ratings, as each method allows: ICC and Kendall's W need complete items x readers
matrices, so items lacking a reader are left out (counted); Krippendorff's alpha uses every
item with at least two ratings; Cronbach's alpha uses pairwise-complete covariances (rows
with no rating at all are dropped, counted).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from judge_transfer_audit.core.errors import InputError, InputProblem
from judge_transfer_audit.core.rng import resolve_rng
from judge_transfer_audit.statistics.agreement import fleiss_kappa
from judge_transfer_audit.statistics.reliability.cronbach import cronbach_alpha
from judge_transfer_audit.statistics.reliability.groups import icc2k_difference
from judge_transfer_audit.statistics.reliability.icc import icc
from judge_transfer_audit.statistics.reliability.items import ITEM_COLUMNS, item_reliability
from judge_transfer_audit.statistics.reliability.kendall import kendall_w
from judge_transfer_audit.statistics.reliability.krippendorff import krippendorff_alpha
from judge_transfer_audit.statistics.reliability.ratings import complete_matrix

ALL_READERS = "all"  #: reader_group label of the rows computed over every reader
ALPHA_LEVELS = ("nominal", "ordinal", "interval")
MISSING_DATA_POLICY = (
    "ICC and Kendall's W: complete items x readers matrices only; items lacking any reader are left out "
    "(n_items_excluded).",
    "Krippendorff's alpha: every item with two or more ratings (n_items_unpairable counts the rest).",
    "Cronbach's alpha: pairwise-complete covariances; rows with no rating at all are dropped "
    "(n_observations_excluded).",
)


@dataclass(frozen=True)
class ReliabilityReport:
    """Reliability of a scalar rating study.

    Attributes
    ----------
    questions : DataFrame
        One row per criterion x reader_group: n_items, n_readers, n_ratings, n_missing,
        mean, sd, ICC1..ICC3k with ci bounds, n_items_excluded (ICC/W), kendall_w,
        kendall_chi2, kendall_p, fleiss_kappa (each rating value a nominal category;
        items with two or more ratings), alpha_nominal / alpha_ordinal / alpha_interval,
        n_items_unpairable, reason (why a statistic is NaN; empty when all computed).
    icc : DataFrame
        Long ICC table: criterion, reader_group, type, icc, f, df1, df2, p, ci_low,
        ci_high, n_items, n_readers, n_items_excluded.
    items : DataFrame
        One row per item x reader_group: Cronbach's alpha across questions (readers as
        observations) with its Feldt interval, and Kendall's W of readers ranking questions.
    question_set : DataFrame
        One row per reader_group: Cronbach's alpha of all questions, item x reader rows as
        observations, with its Feldt interval and a reason when it is NaN.
    groups_compared : DataFrame
        Per criterion and pair of reader groups: items rated by both, mean of each group's
        item means, mean difference (a - b) with paired t-test, Spearman correlation of
        item means, each group's ICC2k and their difference, and a percentile bootstrap
        interval of the ICC2k difference over the items every reader of both groups rated
        (icc2k_difference_ci_low / _ci_high, n_items_complete; see
        :mod:`judge_transfer_audit.statistics.reliability.groups`).
    confidence : float
    missing_data : tuple of str
        How each method treated missing ratings.
    n_boot : int
        Bootstrap replicates of the group comparison.
    seed : int | None
        Seed of the bootstrap (None when a Generator was passed).
    """

    questions: pd.DataFrame
    icc: pd.DataFrame
    items: pd.DataFrame
    question_set: pd.DataFrame
    groups_compared: pd.DataFrame
    confidence: float
    missing_data: tuple[str, ...] = MISSING_DATA_POLICY
    n_boot: int = 0
    seed: int | None = None

    def to_frame(self) -> pd.DataFrame:
        return self.questions

    def tables(self) -> dict[str, pd.DataFrame]:
        return {
            "questions": self.questions,
            "icc": self.icc,
            "items": self.items,
            "question_set": self.question_set,
            "groups_compared": self.groups_compared,
        }

    def __str__(self) -> str:
        fmt = lambda x: f"{x:.3f}"  # noqa: E731
        q = self.questions[
            [
                "criterion",
                "reader_group",
                "n_items",
                "n_items_excluded",
                "n_readers",
                "icc2",
                "icc2k",
                "icc3k",
                "kendall_w",
                "fleiss_kappa",
                "alpha_nominal",
                "alpha_ordinal",
                "alpha_interval",
            ]
        ]
        parts = [
            "Reliability per question (n_items_excluded: items lacking a reader, left out of ICC and W)",
            q.to_string(index=False, float_format=fmt),
        ]
        for r in self.questions.itertuples(index=False):
            if getattr(r, "reason", ""):
                parts.append(f"  {r.criterion} / {r.reader_group}: {r.reason}")
        if not self.items.empty:
            parts += [
                "",
                "Cronbach's alpha per item (questions as variables, readers as observations)",
                self.items[
                    ["item_id", "reader_group", "n_readers", "cronbach_alpha", "ci_low", "ci_high", "kendall_w"]
                ].to_string(index=False, float_format=fmt),
            ]
        if not self.question_set.empty:
            parts += [
                "",
                "Cronbach's alpha of the question set",
                self.question_set.to_string(index=False, float_format=fmt),
            ]
        if not self.groups_compared.empty:
            parts += [
                "",
                f"Reader groups compared (ICC2k difference: {self.confidence:.0%} item bootstrap, "
                f"{self.n_boot} replicates, seed {self.seed})",
                self.groups_compared[
                    [
                        "criterion",
                        "group_a",
                        "group_b",
                        "n_items",
                        "mean_difference",
                        "p",
                        "spearman_item_means",
                        "icc2k_a",
                        "icc2k_b",
                        "icc2k_difference",
                        "icc2k_difference_ci_low",
                        "icc2k_difference_ci_high",
                    ]
                ]
                .rename(columns={"icc2k_difference_ci_low": "ci_low", "icc2k_difference_ci_high": "ci_high"})
                .to_string(index=False, float_format=fmt),
            ]
        parts += ["", "Missing ratings: " + " ".join(self.missing_data)]
        return "\n".join(parts)


def _question_row(sub: pd.DataFrame, criterion: str, group: str, confidence: float) -> tuple[dict, list[dict]]:
    rated = sub.dropna(subset=["rating"])
    row = dict(
        criterion=criterion,
        reader_group=group,
        n_items=int(sub["item_id"].nunique()),
        n_readers=int(sub["reader_id"].nunique()),
        n_ratings=int(len(rated)),
        n_missing=int(sub["rating"].isna().sum()),
        mean=float(rated["rating"].mean()) if len(rated) else math.nan,
        sd=float(rated["rating"].std()) if len(rated) > 1 else math.nan,
    )
    result = icc(rated, confidence=confidence)
    long = []
    for r in result.rows:
        key = r.type.lower()
        row[key], row[f"{key}_ci_low"], row[f"{key}_ci_high"] = r.icc, r.ci_low, r.ci_high
        long.append(
            dict(
                criterion=criterion,
                reader_group=group,
                type=r.type,
                icc=r.icc,
                f=r.f,
                df1=r.df1,
                df2=r.df2,
                p=r.p,
                ci_low=r.ci_low,
                ci_high=r.ci_high,
                n_items=result.n_targets,
                n_readers=result.n_raters,
                n_items_excluded=result.n_targets_excluded,
            )
        )
    row["n_items_excluded"] = result.n_targets_excluded
    matrix, _ = complete_matrix(rated, row="item_id", column="reader_id", value="rating")
    w = kendall_w(matrix)
    row.update(kendall_w=w.w, kendall_chi2=w.chi2, kendall_p=w.p)
    row["fleiss_kappa"] = _fleiss_on_ratings(rated)
    reasons = {"ICC": result.reason, "Kendall's W": w.reason}
    if result.n_targets < 2 and result.n_targets_excluded > 0:  # a sparse design, not a tiny study
        sparse = (
            f"{result.n_targets_excluded} of {result.n_targets + result.n_targets_excluded} items lack a "
            f"rating from at least one of the {result.n_raters} readers, and ICC and W need a complete items "
            "x readers matrix (Krippendorff's alpha uses incomplete data)"
        )
        reasons = {"ICC and Kendall's W": sparse}
    for level in ALPHA_LEVELS:
        a = krippendorff_alpha(rated, level=level)
        row[f"alpha_{level}"] = a.alpha
        reasons.setdefault(f"Krippendorff's alpha ({level})", a.reason)
    row["n_items_unpairable"] = a.n_units_excluded
    # say why a statistic is NaN instead of leaving a bare NaN in the table
    row["reason"] = "; ".join(f"{name}: {why}" for name, why in reasons.items() if why)
    return row, long


def _fleiss_on_ratings(rated: pd.DataFrame) -> float:
    """Fleiss' kappa with each distinct rating value as a nominal category (items with >= 2 ratings)."""
    counts = pd.crosstab(rated["item_id"], rated["rating"]).to_numpy()
    counts = counts[counts.sum(axis=1) >= 2]
    return fleiss_kappa(counts)[0]


def _compare_groups(
    data: pd.DataFrame, questions: pd.DataFrame, *, confidence: float, n_boot: int, generator: np.random.Generator
) -> list[dict]:
    rows = []
    groups = sorted(g for g in data["reader_group"].unique() if g)
    for criterion, sub in data.groupby("criterion", sort=False):
        means = sub.groupby(["reader_group", "item_id"])["rating"].mean().unstack(0)
        for a, b in itertools.combinations(groups, 2):
            both = means[[a, b]].dropna() if a in means and b in means else pd.DataFrame(columns=[a, b])
            n = len(both)
            diff = both[a] - both[b]
            t = stats.ttest_rel(both[a], both[b]) if n >= 2 and diff.std() > 0 else None
            rho = stats.spearmanr(both[a], both[b]).statistic if n >= 3 else math.nan
            icc_a = questions.loc[(questions.criterion == criterion) & (questions.reader_group == a), "icc2k"]
            icc_b = questions.loc[(questions.criterion == criterion) & (questions.reader_group == b), "icc2k"]
            ia = float(icc_a.iloc[0]) if len(icc_a) else math.nan
            ib = float(icc_b.iloc[0]) if len(icc_b) else math.nan
            rated = sub.dropna(subset=["rating"])
            wide_a, _ = complete_matrix(
                rated[rated.reader_group == a], row="item_id", column="reader_id", value="rating"
            )
            wide_b, _ = complete_matrix(
                rated[rated.reader_group == b], row="item_id", column="reader_id", value="rating"
            )
            common = wide_a.index.intersection(wide_b.index)
            diff_icc = icc2k_difference(
                wide_a.loc[common].to_numpy(),
                wide_b.loc[common].to_numpy(),
                generator=generator,
                n_boot=n_boot,
                confidence=confidence,
            )
            rows.append(
                dict(
                    criterion=criterion,
                    group_a=a,
                    group_b=b,
                    n_items=n,
                    mean_a=float(both[a].mean()) if n else math.nan,
                    mean_b=float(both[b].mean()) if n else math.nan,
                    mean_difference=float(diff.mean()) if n else math.nan,
                    t=float(t.statistic) if t else math.nan,
                    p=float(t.pvalue) if t else math.nan,
                    spearman_item_means=float(rho),
                    icc2k_a=ia,
                    icc2k_b=ib,
                    icc2k_difference=ia - ib,
                    icc2k_difference_ci_low=diff_icc.ci_low,
                    icc2k_difference_ci_high=diff_icc.ci_high,
                    n_items_complete=diff_icc.n_items,
                )
            )
    return rows


def reliability_report(
    ratings: pd.DataFrame, *, confidence: float = 0.95, n_boot: int = 2000, rng: int | np.random.Generator | None = None
) -> ReliabilityReport:
    """Compute every reliability statistic of a validated ratings frame.

    Parameters
    ----------
    ratings : DataFrame
        As returned by :func:`judge_transfer_audit.statistics.reliability.ratings.validate_ratings` (item_id,
        reader_id, criterion, reader_group, rating).
    confidence : float
        Level of the ICC and Cronbach intervals and of the group-comparison bootstrap.
    n_boot : int
        Bootstrap replicates of the ICC2k difference between reader groups.
    rng : int, numpy Generator or None
        For that bootstrap; the seed is recorded.

    Returns
    -------
    ReliabilityReport
        Each statistic is validated against its independent implementation (see the
        modules of :mod:`judge_transfer_audit.statistics.reliability`); undefined values are NaN, never errors.
    """
    if not 0 < confidence < 1:
        raise InputError(
            InputProblem(
                file="arguments", message="confidence must be between 0 and 1", value=str(confidence), fix="e.g. 0.95"
            )
        )
    if not isinstance(n_boot, (int, np.integer)) or isinstance(n_boot, bool) or n_boot < 100:
        raise InputError(
            InputProblem(
                file="arguments",
                message="n_boot must be an integer of at least 100",
                value=str(n_boot),
                fix="e.g. 2000",
            )
        )
    generator, seed = resolve_rng(rng)
    if ratings["rating"].notna().sum() == 0:
        raise InputError(InputProblem(file="ratings", message="no numeric rating", fix="give numeric ratings"))
    groups = [ALL_READERS] + sorted(g for g in ratings["reader_group"].unique() if g)
    if len(groups) == 2 and (ratings["reader_group"] != "").all():  # one group, every reader in it: = "all"
        groups = [ALL_READERS]
    by_group = {g: ratings if g == ALL_READERS else ratings[ratings["reader_group"] == g] for g in groups}
    q_rows, icc_rows, item_rows, set_rows = [], [], [], []
    for criterion in dict.fromkeys(ratings["criterion"]):
        for g in groups:
            sub = by_group[g][by_group[g]["criterion"] == criterion]
            row, long = _question_row(sub, criterion, g, confidence)
            q_rows.append(row)
            icc_rows += long
    n_questions = ratings["criterion"].nunique()
    for g in groups:
        data = by_group[g]
        if n_questions >= 2:
            item_rows += item_reliability(data, g, confidence)
            wide = data.pivot_table(
                index=["item_id", "reader_id"], columns="criterion", values="rating", aggfunc="first", dropna=False
            )
            ca = cronbach_alpha(wide, confidence=confidence)
            set_rows.append(
                dict(
                    reader_group=g,
                    n_observations=ca.n_observations,
                    n_questions=ca.n_variables,
                    cronbach_alpha=ca.alpha,
                    ci_low=ca.ci_low,
                    ci_high=ca.ci_high,
                    std_alpha=ca.std_alpha,
                    n_missing=ca.n_missing,
                    n_observations_excluded=ca.n_observations_excluded,
                    reason=ca.reason,
                )
            )
    questions = pd.DataFrame(q_rows)
    icc_long = pd.DataFrame(icc_rows)
    compared = pd.DataFrame(
        _compare_groups(ratings, questions, confidence=confidence, n_boot=n_boot, generator=generator),
        columns=[
            "criterion",
            "group_a",
            "group_b",
            "n_items",
            "mean_a",
            "mean_b",
            "mean_difference",
            "t",
            "p",
            "spearman_item_means",
            "icc2k_a",
            "icc2k_b",
            "icc2k_difference",
            "icc2k_difference_ci_low",
            "icc2k_difference_ci_high",
            "n_items_complete",
        ],
    )
    items = pd.DataFrame(item_rows, columns=ITEM_COLUMNS)
    question_set = pd.DataFrame(
        set_rows,
        columns=[
            "reader_group",
            "n_observations",
            "n_questions",
            "cronbach_alpha",
            "ci_low",
            "ci_high",
            "std_alpha",
            "n_missing",
            "n_observations_excluded",
            "reason",
        ],
    )
    return ReliabilityReport(
        questions=questions,
        icc=icc_long,
        items=items,
        question_set=question_set,
        groups_compared=compared,
        confidence=confidence,
        n_boot=int(n_boot),
        seed=seed,
    )
