"""Shared helpers of the reader analyses: input checks, tie-rule credits, intervals, statuses."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from judge_transfer_audit.core.errors import InputError, InputProblem
from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.model.data import ALL_MATCHUPS as _ALL_MATCHUPS
from judge_transfer_audit.model.data import HUMAN_OVERALL, JUDGE_AGGREGATE
from judge_transfer_audit.model.tie_rules import EVEN_SPLIT, TieRule, credit_votes

#: label of the column that pools every matchup in the rate tables
ALL_MATCHUPS = _ALL_MATCHUPS


def with_pooled_scopes(frame: pd.DataFrame, pools: Mapping[str, Sequence[str]] | None) -> pd.DataFrame:
    """``frame`` plus, for each pooling scope, a copy of its matchups' rows labelled with the scope.

    ``pools`` maps a label to the matchups it pools (:meth:`judge_transfer_audit.model.data.AuditData.pooling_scopes`:
    only matchups whose focal system means one thing). ``None`` pools every matchup under
    ``(all matchups)``; ``{}`` pools nothing.
    """
    if pools is None:
        pools = {ALL_MATCHUPS: tuple(dict.fromkeys(frame["matchup"]))}
    parts = [frame] + [frame[frame["matchup"].isin(list(ms))].assign(matchup=label) for label, ms in pools.items()]
    return pd.concat(parts, ignore_index=True)


REQUIRED_VOTE_COLUMNS = ("pair_id", "reader_id", "criterion", "y")

COMPUTED = Status.PASS  #: a sub-result that was computed carries PASS; SKIPPED/ERROR say why not


def check_votes(votes: pd.DataFrame, *, need: Iterable[str] = ()) -> pd.DataFrame:
    """Validate the normalised votes frame and return a copy with string ids.

    Raises
    ------
    InputError
        One problem per missing required column, or when ``y`` holds values other than
        0, 1 or NaN.
    """
    if not isinstance(votes, pd.DataFrame):
        raise InputError(
            InputProblem(
                file="humans",
                message=f"votes must be a pandas DataFrame, got {type(votes).__name__}",
                fix="pass AuditData.votes (from judge_transfer_audit.inputs.load_audit_data)",
            )
        )
    problems = []
    for col in (*REQUIRED_VOTE_COLUMNS, *need):
        if col not in votes.columns:
            problems.append(
                InputProblem(
                    file="humans",
                    column=col,
                    message=f"the votes frame has no '{col}' column",
                    fix=(
                        "pass the normalised votes frame of judge_transfer_audit.inputs.load_audit_data"
                        " (see its docstring)"
                    ),
                )
            )
    if problems:
        raise InputError(problems)
    out = votes.copy()
    for col in ("pair_id", "reader_id", "criterion"):
        out[col] = out[col].astype(str)
    if "matchup" in out.columns:
        out["matchup"] = out["matchup"].astype(str)
    y = pd.to_numeric(out["y"], errors="coerce")
    bad = out.loc[(y.isna() & out["y"].notna()) | (y.notna() & ~y.isin([0.0, 1.0])), "y"]
    if len(bad):
        value = str(bad.iloc[0])
        raise InputError(
            InputProblem(
                file="humans",
                column="y",
                value=value,
                message="y must be 1 (focal chosen), 0 (other chosen) or NaN (tie)",
                fix="recode the vote column or load the file through judge_transfer_audit.inputs.load_audit_data",
            )
        )
    out["y"] = y.astype(float)
    return out


def first_seen(values) -> list:
    """Distinct values in order of first appearance (``dict.fromkeys`` over a column, without
    iterating element by element: hash-based, fast on a million rows)."""
    return list(pd.unique(pd.Series(values) if not isinstance(values, pd.Series) else values))


#: the column :func:`credited_votes` adds: each vote's credit under the run's tie rule
VOTE_CREDIT = "_tie_rule_credit"


def credited_votes(votes: pd.DataFrame, tie_rule: TieRule, rng: np.random.Generator) -> pd.DataFrame:
    """``votes`` with each vote's credit for the focal system under ``tie_rule``
    (:func:`judge_transfer_audit.model.tie_rules.credit_votes`: 1, 0, a tie's credit, NaN for a tie the rule does
    not count), drawn once so that every reader analysis sees the same credits."""
    return votes.assign(**{VOTE_CREDIT: credit_votes(votes["y"].to_numpy(float), tie_rule, rng)})


def vote_credit(votes: pd.DataFrame, tie_rule: TieRule = EVEN_SPLIT) -> np.ndarray:
    """Each vote's credit: the column :func:`credited_votes` added, else computed under
    ``tie_rule`` (a rule that draws, such as ``random``, then draws from a generator seeded 0)."""
    if VOTE_CREDIT in votes.columns:
        return votes[VOTE_CREDIT].to_numpy(float)
    return credit_votes(votes["y"].to_numpy(float), tie_rule, np.random.default_rng(0))


def has_values(votes: pd.DataFrame, column: str) -> bool:
    """True when an optional column exists and carries at least one non-empty value."""
    if column not in votes.columns:
        return False
    col = votes[column]
    if pd.api.types.is_numeric_dtype(col):
        return bool(col.notna().any())
    return bool(col.fillna("").astype(str).str.strip().ne("").any())


def wilson_interval(k: float, n: float, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (validated against statsmodels
    ``proportion_confint(method="wilson")``). NaN bounds when ``n == 0``."""
    if n <= 0:
        return math.nan, math.nan
    from judge_transfer_audit.statistics.distributions import norm

    z = float(norm.ppf(0.5 + level / 2))
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def judge_criterion_map(human_criteria: Iterable[str], judge_criteria: Iterable[str]) -> dict[str, str]:
    """Map each human criterion to the judge criterion it is compared with.

    Same name when the judge has it; the humans' ``overall`` falls back on the judge's
    ``aggregate`` (a different target, flagged by the callers).
    """
    judge_set = set(judge_criteria)
    mapping = {}
    for crit in human_criteria:
        if crit in judge_set:
            mapping[crit] = crit
        elif crit == HUMAN_OVERALL and JUDGE_AGGREGATE in judge_set:
            mapping[crit] = JUDGE_AGGREGATE
    return mapping


JUDGE_OUTCOMES = ("win", "loss", "tie", "invalid")


def _judge_outcome(out: pd.DataFrame, rule: TieRule) -> np.ndarray | None:
    """The outcome of each judge credit (win, loss, tie, invalid): the ``outcome`` column when
    given, else read off the credit when ``rule`` makes that unambiguous; None when it does not
    (a tie credit of 0 or 1 reads as a loss or a win, an uncounted tie as an invalid output)."""
    if "outcome" in out.columns:
        return out["outcome"].astype(str).to_numpy(dtype=object)
    if not rule.counts_ties or set(rule.tie_credits) & {0.0, 1.0}:
        return None
    credit = out["credit"].to_numpy(float)
    return np.where(
        np.isnan(credit), "invalid", np.where(credit == 1.0, "win", np.where(credit == 0.0, "loss", "tie"))
    ).astype(object)


def check_judge_credits(judge_credits: pd.DataFrame, tie_rule: TieRule = EVEN_SPLIT) -> pd.DataFrame:
    """Validate the judge credit frame (pair_id, matchup, criterion, judge, credit[, outcome])
    and return it with an ``outcome`` column: each credit is one ``tie_rule`` can give
    (:attr:`judge_transfer_audit.model.tie_rules.TieRule.credit_values`) or NaN, each outcome one of win, loss,
    tie, invalid. ``outcome`` may be left out only when the credits tell a tie apart under
    ``tie_rule`` (a tie's credit is neither 0 nor 1 and ties are counted)."""
    if not isinstance(judge_credits, pd.DataFrame):
        raise InputError(
            InputProblem(
                file="judge",
                message="judge_credits must be a DataFrame",
                fix="pass the credit frame the pipeline computes under the tie rule",
            )
        )
    missing = [c for c in ("pair_id", "criterion", "judge", "credit") if c not in judge_credits.columns]
    if missing:
        raise InputError(
            [
                InputProblem(
                    file="judge",
                    column=c,
                    message=f"the judge credit frame has no '{c}' column",
                    fix="columns must be pair_id, matchup, criterion, judge, credit",
                )
                for c in missing
            ]
        )
    out = judge_credits.copy()
    for col in ("pair_id", "criterion", "judge"):
        out[col] = out[col].astype(str)
    out["credit"] = pd.to_numeric(out["credit"], errors="coerce").astype(float)
    allowed = sorted(tie_rule.credit_values)
    bad = out["credit"].notna() & ~out["credit"].isin(allowed)
    if bad.any():
        raise InputError(
            InputProblem(
                file="judge",
                column="credit",
                value=str(out.loc[bad, "credit"].iloc[0]),
                message=(
                    f"under the '{tie_rule.name}' tie rule a judge credit is one of "
                    f"{', '.join(f'{c:g}' for c in allowed)} or NaN (invalid output)"
                ),
                fix="compute credits with the pipeline's tie rule (judge_transfer_audit.model.tie_rules.credit_ties)",
            )
        )
    outcome = _judge_outcome(out, tie_rule)
    if outcome is None:
        raise InputError(
            InputProblem(
                file="judge",
                column="outcome",
                message=(
                    f"under the '{tie_rule.name}' tie rule a judge credit does not tell a tie from a win, a loss or "
                    "an invalid output"
                ),
                fix=(
                    "add the outcome column (win, loss, tie, invalid) of"
                    " judge_transfer_audit.verdict.judge_side.judge_pair_outcomes"
                ),
            )
        )
    unknown = ~np.isin(outcome, JUDGE_OUTCOMES)
    if unknown.any():
        raise InputError(
            InputProblem(
                file="judge",
                column="outcome",
                value=str(outcome[unknown][0]),
                message="a judge outcome is one of win, loss, tie, invalid",
                fix="pass the outcome column of judge_transfer_audit.verdict.judge_side.judge_pair_outcomes",
            )
        )
    out["outcome"] = outcome
    if "matchup" in out.columns:
        out["matchup"] = out["matchup"].astype(str)
    return out


def fmt(x: float, digits: int = 3) -> str:
    """Render a float for __str__ (rendering only; compute code never rounds)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "NA"
    return f"{x:.{digits}f}"
