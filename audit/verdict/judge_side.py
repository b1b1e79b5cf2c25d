"""The judge's side of each cell: per-pair outcomes and rates for the focal system.

Scalar judges: a story's score per criterion is the mean over the judge's samples (when the
file has several samples); the pair outcome is a win for the focal system when its score is
higher, a loss when lower, a tie when equal; a missing score on either side makes the pair
*invalid* (counted, never imputed). The ``aggregate`` criterion is the mean of a story's
criterion scores (all criteria must be valid); it is what the judge says about the humans'
``overall`` question, a different target.

Pairwise judges: each sample's choice credits 1 (focal), 0 (other) or 0.5 (tie); samples are
averaged and the pair outcome is a win above 0.5, a loss below, a tie at 0.5.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_transfer_audit.model.cells import JUDGE_PAIR_COLUMNS
from judge_transfer_audit.model.data import HUMAN_OVERALL, JUDGE_AGGREGATE, AuditData
from judge_transfer_audit.model.tie_rules import TieRule, credit_ties

PAIR_COLUMNS = list(
    JUDGE_PAIR_COLUMNS
)  #: the judge-pairs table's columns (one list: judge_transfer_audit.results.tables)


def _mean_if_all_valid(frame: pd.DataFrame, keys: list[str], column: str) -> pd.DataFrame:
    """Group mean of ``column``, NaN for a group with any missing value (never imputed)."""
    grouped = frame.groupby(keys, sort=False)[column]
    out = grouped.agg(["mean", "count", "size"])
    out[column] = out["mean"].where(out["count"] == out["size"])
    return out[[column]].reset_index()


def _outcomes_from_scores(scores: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    story = _mean_if_all_valid(scores, ["judge", "pair_id", "system", "criterion"], "score")
    # aggregate = mean of the judge's criteria per story; NaN if any criterion is invalid
    agg = _mean_if_all_valid(story, ["judge", "pair_id", "system"], "score").assign(criterion=JUDGE_AGGREGATE)
    if not (story["criterion"] == JUDGE_AGGREGATE).any():
        story = pd.concat([story, agg[story.columns]], ignore_index=True)
    meta = pairs[["pair_id", "matchup", "focal", "other"]]
    story = story.merge(meta, on="pair_id", how="inner")
    focal = story[story["system"] == story["focal"]].set_index(["judge", "pair_id", "criterion"])["score"]
    other = story[story["system"] == story["other"]].set_index(["judge", "pair_id", "criterion"])["score"]
    frame = pd.concat({"focal_score": focal, "other_score": other}, axis=1).reset_index()
    frame = frame.merge(meta, on="pair_id", how="left")
    fs, os_ = frame["focal_score"].to_numpy(float), frame["other_score"].to_numpy(float)
    outcome = np.where(
        np.isnan(fs) | np.isnan(os_), "invalid", np.where(fs > os_, "win", np.where(fs < os_, "loss", "tie"))
    )
    frame["outcome"] = outcome
    return frame


def _outcomes_from_verdicts(verdicts: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    meta = pairs[["pair_id", "matchup", "focal", "other"]]
    v = verdicts.merge(meta, on="pair_id", how="inner")
    credit = np.where(
        v["choice"] == v["focal"],
        1.0,
        np.where(v["choice"] == v["other"], 0.0, np.where(v["choice"] == "tie", 0.5, np.nan)),
    )
    v = v.assign(sample_credit=credit)
    frame = _mean_if_all_valid(v, ["judge", "pair_id", "criterion"], "sample_credit").rename(
        columns={"sample_credit": "mean_credit"}
    )
    frame = frame.merge(meta, on="pair_id", how="left")
    m = frame["mean_credit"].to_numpy(float)
    frame["outcome"] = np.where(np.isnan(m), "invalid", np.where(m > 0.5, "win", np.where(m < 0.5, "loss", "tie")))
    frame["focal_score"] = np.nan
    frame["other_score"] = np.nan
    return frame.drop(columns="mean_credit")


def judge_pair_outcomes(data: AuditData, tie_rule: TieRule, rng: np.random.Generator) -> pd.DataFrame:
    """One row per judge configuration x pair x judge criterion.

    Returns
    -------
    DataFrame with columns pair_id, matchup, focal, other, criterion, judge, focal_score,
    other_score (NaN for pairwise judges), outcome (win/loss/tie/invalid) and credit (the
    focal system's credit under ``tie_rule``; NaN for invalid pairs and, under a rule that
    does not count ties (``decisive``), for ties). Rows are sorted by judge, matchup, criterion, pair so that a
    seeded ``random`` rule is reproducible.
    """
    if data.judge_scores is not None:
        frame = _outcomes_from_scores(data.judge_scores, data.pairs)
    elif data.judge_verdicts is not None:
        frame = _outcomes_from_verdicts(data.judge_verdicts, data.pairs)
    else:
        return pd.DataFrame(columns=PAIR_COLUMNS)
    frame = frame.sort_values(["judge", "matchup", "criterion", "pair_id"], kind="stable").reset_index(drop=True)
    frame["credit"] = credit_ties(frame["outcome"].to_numpy(), tie_rule, rng)
    return frame[PAIR_COLUMNS]


def summarise_outcomes(outcomes: pd.DataFrame, rule: TieRule) -> dict[str, float | int]:
    """Wins, losses, ties, invalid, valid pairs, the credited pairs and the rate of one group of
    pairs under ``rule``: the credit summed over what the rule counts (its denominator)."""
    counts = outcomes["outcome"].value_counts()
    wins, losses, ties = (int(counts.get(k, 0)) for k in ("win", "loss", "tie"))
    credit = outcomes["credit"].to_numpy(float)
    n_credited = rule.denominator(wins, losses, ties)
    if int(np.isfinite(credit).sum()) != n_credited:
        raise ValueError(
            f"credits were not computed under the '{rule.name}' tie rule: {int(np.isfinite(credit).sum())} "
            f"credited outcomes, the rule counts {n_credited}"
        )
    return {
        "wins": wins,
        "losses": losses,
        "ties": ties,
        "invalid": int(counts.get("invalid", 0)),
        "n_pairs": int(len(outcomes)),
        "n_credited": n_credited,
        "rate": float(np.nansum(credit) / n_credited) if n_credited else float("nan"),
    }


def judge_criterion_for(human_criterion: str, judge_criteria: set[str]) -> tuple[str | None, bool]:
    """The judge criterion compared with a human criterion, and whether it is a different target."""
    if human_criterion in judge_criteria:
        return human_criterion, False
    if human_criterion == HUMAN_OVERALL and JUDGE_AGGREGATE in judge_criteria:
        return JUDGE_AGGREGATE, True
    return None, False


#: a judge outcome as a verdict (an invalid output has none)
_VERDICT = {"win": 1.0, "loss": 0.0, "tie": 0.5, "invalid": float("nan")}


def judge_choices(outcomes: pd.DataFrame, primary: str | None, criteria: tuple[str, ...]) -> pd.DataFrame:
    """The primary judge's per-pair verdict, keyed by the *human* criterion it is compared with.

    ``y_judge`` is what the judge chose (1 focal, 0 other, 0.5 tie, NaN invalid), whatever the
    tie rule: agreement and the leaderboard compare choices; the rule only credits rates.
    """
    columns = ["pair_id", "criterion", "y_judge"]
    if primary is None or outcomes.empty:
        return pd.DataFrame(columns=columns)
    mine = outcomes[outcomes["judge"] == primary]
    # rows of each judge criterion once (stable: the outcomes' order), then gathered per human
    # criterion by index: no scan or sub-frame per criterion (10k criteria)
    codes, uniques = pd.factorize(mine["criterion"], sort=False)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(uniques) + 1))
    code_of = {c: i for i, c in enumerate(uniques)}
    judge_criteria = set(code_of)
    take, labels = [], []
    for crit in criteria:
        jc, _ = judge_criterion_for(crit, judge_criteria)
        if jc is None:
            continue
        rows = order[bounds[code_of[jc]] : bounds[code_of[jc] + 1]]
        take.append(rows)
        labels.append(np.full(len(rows), crit, dtype=object))
    if not take:
        return pd.DataFrame(columns=columns)
    idx = np.concatenate(take)
    return pd.DataFrame(
        {
            "pair_id": mine["pair_id"].take(idx).reset_index(drop=True),
            "criterion": np.concatenate(labels),
            "y_judge": mine["outcome"].take(idx).map(_VERDICT).astype(float).reset_index(drop=True),
        },
        columns=columns,
    )
