"""Checks and the one-sentence verdict, derived from the computed cells and sections.

Per-cell checks (scope ``matchup/criterion``) report what happened in each cell; by default
a breach there is a WARN. The summary checks (scope ``overall``) decide the gate; by default
a breach there is a FAIL. ``[severity]`` in the policy file overrides either (FAIL/WARN/OFF).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import pandas as pd

from audit.checks import Check, Status
from audit.data import JUDGE_AGGREGATE
from audit.policy import Policy
from audit.result import Cell


def _status(policy: Policy, name: str, breached: bool, default: str) -> Status | None:
    level = policy.breach(name, default)
    if level == "OFF":
        return None
    if not breached:
        return Status.PASS
    return Status(level)


def _add(checks: list[Check], policy: Policy, name: str, breached: bool | None, default: str, *,
         value: float | None, threshold: float | None, reason: str, scope: str = "overall") -> None:
    if breached is None:
        if policy.breach(name, default) != "OFF":
            checks.append(Check(name, Status.SKIPPED, value, threshold, reason, scope))
        return
    status = _status(policy, name, breached, default)
    if status is not None:
        checks.append(Check(name, status, value, threshold, reason, scope))


def cell_checks(cells: Sequence[Cell], policy: Policy) -> list[Check]:
    checks: list[Check] = []
    for c in cells:
        scope = f"{c.matchup}/{c.criterion}"
        t, g = c.transfer, c.human.glmm
        judge_rate = c.judge.rate if c.judge else None
        if t.judge_in_human_ci is None:
            _add(checks, policy, "transfer.judge_in_human_ci", None, "WARN", value=judge_rate, threshold=None,
                 reason=t.reason, scope=scope)
        else:
            _add(checks, policy, "transfer.judge_in_human_ci", not t.judge_in_human_ci, "WARN", value=judge_rate,
                 threshold=None, scope=scope,
                 reason=f"judge {judge_rate:.1%} vs human 95% interval [{g.ci_low:.1%}, {g.ci_high:.1%}]")
        _add(checks, policy, "transfer.direction_conflict", t.direction_conflict, "WARN", value=judge_rate,
             threshold=None, scope=scope,
             reason=f"judge direction: {t.judge_direction}; human direction: {t.human_direction}")
        if t.below_reader_baseline is None:
            _add(checks, policy, "transfer.judge_vs_reader_baseline", None, "WARN", value=None,
                 threshold=None, scope=scope, reason="no reader-majority baseline for this cell")
        else:
            gap = t.judge_vs_majority - t.reader_baseline
            _add(checks, policy, "transfer.judge_vs_reader_baseline", t.below_reader_baseline, "WARN",
                 value=gap, threshold=-policy.transfer.max_baseline_gap, scope=scope,
                 reason=(f"judge agrees with the reader majority on {t.judge_vs_majority:.1%} of pairs; "
                         f"readers agree with the others' majority on {t.reader_baseline:.1%}"))
        if g.status is Status.ERROR:
            checks.append(Check("glmm.fit", Status.ERROR, None, None, g.reason, scope))
    return checks


def summary_checks(cells: Sequence[Cell], agreement: pd.DataFrame, policy: Policy,
                   judge_pairs: pd.DataFrame) -> list[Check]:
    checks: list[Check] = []
    assessed = [c for c in cells if c.transfer.judge_in_human_ci is not None]
    if assessed:
        outside = sum(not c.transfer.judge_in_human_ci for c in assessed) / len(assessed)
        thr = policy.transfer.max_fraction_outside_ci
        _add(checks, policy, "transfer.fraction_outside_ci", outside > thr, "FAIL", value=outside, threshold=thr,
             reason=f"judge rate outside the human interval in {sum(not c.transfer.judge_in_human_ci for c in assessed)}"
                    f" of {len(assessed)} cells")
        conflict = sum(bool(c.transfer.direction_conflict) for c in assessed) / len(assessed)
        thr = policy.transfer.max_fraction_direction_conflict
        _add(checks, policy, "transfer.fraction_direction_conflict", conflict > thr, "FAIL", value=conflict,
             threshold=thr,
             reason=f"judge decisive against the humans' direction in "
                    f"{sum(bool(c.transfer.direction_conflict) for c in assessed)} of {len(assessed)} cells")
    else:
        _add(checks, policy, "transfer.fraction_outside_ci", None, "FAIL", value=None, threshold=None,
             reason="no cell could be assessed (no judge scores matching the human criteria)")
    alpha = _pooled_alpha(agreement)
    thr = policy.agreement.min_human_alpha
    _add(checks, policy, "agreement.human_alpha", None if alpha is None else alpha < thr, "WARN", value=alpha,
         threshold=thr,
         reason=("readers' Krippendorff alpha over all cells: the human target is "
                 + ("weakly reliable; report the judge against a distribution, not a consensus"
                    if alpha is not None and alpha < thr else "reliable enough to compare against"))
         if alpha is not None else "agreement could not be computed")
    # The derived aggregate would count an invalid criterion score a second time.
    own = judge_pairs[judge_pairs["criterion"] != JUDGE_AGGREGATE] if "criterion" in judge_pairs else judge_pairs
    if own.empty:
        own = judge_pairs
    if len(own):
        n_invalid = int((own["outcome"] == "invalid").sum())
        invalid = n_invalid / len(own)
        thr = policy.judge.max_invalid_fraction
        _add(checks, policy, "judge.invalid_fraction", invalid > thr, "FAIL", value=invalid, threshold=thr,
             reason=f"{n_invalid} of {len(own)} judge pair comparisons have an unparsable score on either side")
    fitted = [c for c in cells if c.human.glmm.status is not Status.ERROR]
    if fitted:
        singular = sum(c.human.glmm.singular for c in fitted) / len(fitted)
        thr = policy.glmm.max_fraction_singular
        _add(checks, policy, "glmm.fraction_singular", singular > thr, "WARN", value=singular, threshold=thr,
             reason=f"{sum(c.human.glmm.singular for c in fitted)} of {len(fitted)} GLMM fits are singular "
                    "(a variance component at zero)")
    return checks


def _pooled_alpha(agreement: pd.DataFrame) -> float | None:
    """Krippendorff's alpha over every vote (the agreement table's ``level == "all"`` row)."""
    if agreement is None or agreement.empty or "krippendorff_alpha" not in agreement:
        return None
    pooled = agreement[agreement["level"] == "all"] if "level" in agreement else agreement.iloc[0:0]
    if pooled.empty:
        return None
    value = float(pooled["krippendorff_alpha"].iloc[0])
    return None if math.isnan(value) else value


def overall_status(checks: Iterable[Check]) -> Status:
    statuses = {c.status for c in checks}
    for s in (Status.ERROR, Status.FAIL, Status.WARN):
        if s in statuses:
            return Status.FAIL if s is Status.ERROR else s
    return Status.PASS


def verdict_sentence(cells: Sequence[Cell], status: Status) -> str:
    assessed = [c for c in cells if c.transfer.judge_in_human_ci is not None]
    if not assessed:
        return "No cell could be assessed: the judge has no scores for the humans' criteria."
    outside = sum(not c.transfer.judge_in_human_ci for c in assessed)
    conflict = sum(bool(c.transfer.direction_conflict) for c in assessed)
    n = len(assessed)
    detail = (f"its rate lies outside the human 95% interval in {outside} of {n} cells and it is decisive "
              f"against the readers' direction in {conflict}")
    if status is Status.FAIL:
        return f"The judge does not transfer to this data: {detail}."
    if status is Status.WARN:
        return f"The judge transfers with reservations: {detail}."
    return f"The judge transfers to this data: {detail}."
