"""Shared helpers of the reader analyses: input checks, even-split rates, intervals, statuses."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from audit.checks import Status
from audit.data import ALL_MATCHUPS as _ALL_MATCHUPS
from audit.data import HUMAN_OVERALL, JUDGE_AGGREGATE
from audit.errors import InputError, InputProblem
from audit.tie_rules import TieRule
from audit.tie_rules import tie_rule as resolve_tie_rule

#: label of the column that pools every matchup in the rate tables
ALL_MATCHUPS = _ALL_MATCHUPS


def with_pooled_scopes(frame: pd.DataFrame, pools: Mapping[str, Sequence[str]] | None) -> pd.DataFrame:
    """``frame`` plus, for each pooling scope, a copy of its matchups' rows labelled with the scope.

    ``pools`` maps a label to the matchups it pools (:meth:`audit.data.AuditData.pooling_scopes`:
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
                fix="pass AuditData.votes (from audit.inputs.load_audit_data)",
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
                    fix="pass the normalised votes frame of audit.inputs.load_audit_data (see its docstring)",
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
                fix="recode the vote column or load the file through audit.inputs.load_audit_data",
            )
        )
    out["y"] = y.astype(float)
    return out


def first_seen(values) -> list:
    """Distinct values in order of first appearance (``dict.fromkeys`` over a column, without
    iterating element by element: hash-based, fast on a million rows)."""
    return list(pd.unique(pd.Series(values) if not isinstance(values, pd.Series) else values))


def even_split_credit(y: pd.Series | np.ndarray) -> np.ndarray:
    """Credit of each vote for the focal system: 1, 0, and 0.5 for a tie (NaN)."""
    arr = np.asarray(y, dtype=float)
    return np.where(np.isnan(arr), 0.5, arr)


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
    from scipy.stats import norm

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


def check_judge_credits(judge_credits: pd.DataFrame, tie_rule: str | TieRule = "even-split") -> pd.DataFrame:
    """Validate the judge credit frame (pair_id, matchup, criterion, judge, credit): each
    credit is one ``tie_rule`` can give (:attr:`audit.tie_rules.TieRule.credit_values`) or NaN."""
    rule = resolve_tie_rule(tie_rule)
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
    allowed = sorted(rule.credit_values)
    bad = out["credit"].notna() & ~out["credit"].isin(allowed)
    if bad.any():
        raise InputError(
            InputProblem(
                file="judge",
                column="credit",
                value=str(out.loc[bad, "credit"].iloc[0]),
                message=(
                    f"under the '{rule.name}' tie rule a judge credit is one of "
                    f"{', '.join(f'{c:g}' for c in allowed)} or NaN (invalid output)"
                ),
                fix="compute credits with the pipeline's tie rule (audit.tie_rules.credit_ties)",
            )
        )
    if "matchup" in out.columns:
        out["matchup"] = out["matchup"].astype(str)
    return out


def fmt(x: float, digits: int = 3) -> str:
    """Render a float for __str__ (rendering only; compute code never rounds)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "NA"
    return f"{x:.{digits}f}"
