"""Checks, cell counts and the one-sentence verdict, derived from the decided cells.

One vocabulary: every cell's transfer decision is one check ``transfer.decision`` whose
status *is* the cell's status (PASS, FAIL, INCONCLUSIVE, INSUFFICIENT, ERROR), so the gate
counts exactly what the transfer table shows. ``[severity]`` may demote it
(``"transfer.decision" = "WARN"``: a FAIL cell is reported as WARN and does not fail the
gate, and the reason says so) or remove it (``OFF``). The other per-cell check,
``transfer.judge_vs_reader_baseline``, is WARN by default. Summary checks (scope
``overall``): ``transfer.assessed`` (ERROR when no cell could be compared: the gate must not
pass when nothing was compared), agreement, invalid judge outputs, singular GLMMs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import pandas as pd

from audit.checks import CELL_STATUSES, Check, Status
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


def _add(
    checks: list[Check],
    policy: Policy,
    name: str,
    breached: bool | None,
    default: str,
    *,
    value: float | None,
    threshold: float | None,
    reason: str,
    scope: str = "overall",
) -> None:
    if breached is None:
        if policy.breach(name, default) != "OFF":
            checks.append(Check(name, Status.SKIPPED, value, threshold, reason, scope))
        return
    status = _status(policy, name, breached, default)
    if status is not None:
        checks.append(Check(name, status, value, threshold, reason, scope))


def cell_counts(cells: Sequence[Cell]) -> dict[str, int]:
    """Cells per transfer status, every status present (0 when none)."""
    counts = {s.value: 0 for s in CELL_STATUSES}
    for c in cells:
        counts[c.transfer.status.value] = counts.get(c.transfer.status.value, 0) + 1
    return counts


def _decision_check(c: Cell, policy: Policy) -> Check | None:
    t = c.transfer
    level = policy.breach("transfer.decision", "FAIL")
    if level == "OFF":
        return None
    status, reason = t.status, t.reason
    if status is Status.FAIL and level == "WARN":
        status, reason = Status.WARN, reason + " (reported as WARN: [severity] transfer.decision = WARN)"
    value = t.difference.estimate if math.isfinite(t.difference.estimate) else None
    return Check(
        "transfer.decision",
        status,
        value,
        t.margin if math.isfinite(t.margin) else None,
        reason,
        f"{c.matchup}/{c.criterion}",
    )


def cell_checks(cells: Sequence[Cell], policy: Policy) -> list[Check]:
    checks: list[Check] = []
    for c in cells:
        scope = f"{c.matchup}/{c.criterion}"
        t, g = c.transfer, c.human.glmm
        decision = _decision_check(c, policy)
        if decision is not None:
            checks.append(decision)
        if t.below_reader_baseline is None:
            _add(
                checks,
                policy,
                "transfer.judge_vs_reader_baseline",
                None,
                "WARN",
                value=None,
                threshold=None,
                scope=scope,
                reason="no reader-majority baseline for this cell",
            )
        else:
            gap = t.judge_vs_majority - t.reader_baseline
            _add(
                checks,
                policy,
                "transfer.judge_vs_reader_baseline",
                t.below_reader_baseline,
                "WARN",
                value=gap,
                threshold=-policy.transfer.max_baseline_gap,
                scope=scope,
                reason=(
                    f"judge agrees with the reader majority on {t.judge_vs_majority:.1%} of pairs; "
                    f"readers agree with the others' majority on {t.reader_baseline:.1%}"
                ),
            )
        if g.status is Status.ERROR:
            checks.append(Check("glmm.fit", Status.ERROR, None, None, g.reason, scope))
    return checks


def _nothing_assessed_reason(cells: Sequence[Cell]) -> str:
    if not cells:
        return "no cell has human votes"
    if all(c.judge is None for c in cells):
        return (
            "no cell could be compared: the judge has no outputs for any of the humans' criteria "
            "(check that the criterion names match)"
        )
    if all(c.human.n_focal + c.human.n_other == 0 for c in cells):
        return "no cell could be compared: every human vote is a tie (the readers expressed no preference)"
    counts = cell_counts(cells)
    return (
        f"no cell could be compared: {counts['INSUFFICIENT']} INSUFFICIENT and {counts['ERROR']} ERROR "
        "(see each cell's reason)"
    )


def summary_checks(
    cells: Sequence[Cell], agreement: pd.DataFrame, policy: Policy, judge_pairs: pd.DataFrame
) -> list[Check]:
    checks: list[Check] = []
    counts = cell_counts(cells)
    n_assessed = counts["PASS"] + counts["FAIL"] + counts["INCONCLUSIVE"]
    if policy.breach("transfer.assessed", "ERROR") != "OFF":
        if n_assessed:
            checks.append(
                Check(
                    "transfer.assessed",
                    Status.PASS,
                    float(n_assessed),
                    None,
                    f"{n_assessed} of {len(cells)} cells compared ({counts['INSUFFICIENT']} "
                    f"INSUFFICIENT, {counts['ERROR']} ERROR)",
                )
            )
        else:
            checks.append(Check("transfer.assessed", Status.ERROR, 0.0, None, _nothing_assessed_reason(cells)))
    alpha = _pooled_alpha(agreement)
    thr = policy.agreement.min_human_alpha
    _add(
        checks,
        policy,
        "agreement.human_alpha",
        None if alpha is None else alpha < thr,
        "WARN",
        value=alpha,
        threshold=thr,
        reason=(
            "readers' Krippendorff alpha over all cells: the human target is "
            + (
                "weakly reliable; report the judge against a distribution, not a consensus"
                if alpha is not None and alpha < thr
                else "reliable enough to compare against"
            )
        )
        if alpha is not None
        else "agreement could not be computed",
    )
    # The derived aggregate would count an invalid criterion score a second time.
    own = judge_pairs[judge_pairs["criterion"] != JUDGE_AGGREGATE] if "criterion" in judge_pairs else judge_pairs
    if own.empty:
        own = judge_pairs
    if len(own):
        n_invalid = int((own["outcome"] == "invalid").sum())
        invalid = n_invalid / len(own)
        thr = policy.judge.max_invalid_fraction
        _add(
            checks,
            policy,
            "judge.invalid_fraction",
            invalid > thr,
            "FAIL",
            value=invalid,
            threshold=thr,
            reason=f"{n_invalid} of {len(own)} judge pair comparisons have an unparsable score on either side",
        )
    fitted = [c for c in cells if c.human.glmm.status not in (Status.ERROR, Status.SKIPPED)]
    if fitted:
        singular = sum(c.human.glmm.singular for c in fitted) / len(fitted)
        thr = policy.glmm.max_fraction_singular
        _add(
            checks,
            policy,
            "glmm.fraction_singular",
            singular > thr,
            "WARN",
            value=singular,
            threshold=thr,
            reason=f"{sum(c.human.glmm.singular for c in fitted)} of {len(fitted)} GLMM fits are singular "
            "(a variance component at zero)",
        )
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
    """ERROR > FAIL > INCONCLUSIVE > WARN > PASS; INSUFFICIENT and SKIPPED do not count."""
    statuses = {c.status for c in checks}
    for s in (Status.ERROR, Status.FAIL, Status.INCONCLUSIVE, Status.WARN):
        if s in statuses:
            return s
    return Status.PASS


def _counts_text(counts: dict[str, int]) -> str:
    parts = [f"{counts['FAIL']} FAIL", f"{counts['PASS']} PASS", f"{counts['INCONCLUSIVE']} INCONCLUSIVE"]
    text = ", ".join(parts)
    extra = [f"{counts[s]} {s}" for s in ("INSUFFICIENT", "ERROR") if counts[s]]
    return text + (f" ({', '.join(extra)}, counted apart)" if extra else "")


def verdict_sentence(
    cells: Sequence[Cell],
    status: Status,
    checks: Sequence[Check] = (),
    margin: float | None = None,
    adjust: str = "holm",
) -> str:
    """One sentence whose every number is a count of cells or a policy value."""
    counts = cell_counts(cells)
    n_assessed = counts["PASS"] + counts["FAIL"] + counts["INCONCLUSIVE"]
    if n_assessed == 0:
        return "Nothing was compared: " + _nothing_assessed_reason(cells) + "."
    margin_text = f"{100 * margin:.0f}-point margin" if margin is not None else "margin"
    cells_text = f"of {n_assessed} compared cells: {_counts_text(counts)}"
    other = sorted(
        {
            c.name
            for c in checks
            if c.status in (Status.FAIL, Status.ERROR) and c.name not in ("transfer.decision", "transfer.assessed")
        }
    )
    tail = f"; other failing checks: {', '.join(other)}" if other else ""
    if counts["FAIL"]:
        return (
            f"The judge does not transfer to this data: {counts['FAIL']} {cells_text} (FAIL: outside the human "
            f"band by more than the {margin_text}, or a direction conflict, {adjust}-adjusted){tail}."
        )
    if counts["ERROR"]:
        return f"The audit could not decide every cell: {cells_text}{tail}."
    if counts["INCONCLUSIVE"]:
        return (
            f"Not decided yet: {counts['INCONCLUSIVE']} {cells_text}; no cell is outside the {margin_text}, "
            f"and the inconclusive cells need more pairs (see pairs_needed){tail}."
        )
    insufficient = f" ({counts['INSUFFICIENT']} INSUFFICIENT, counted apart)" if counts["INSUFFICIENT"] else ""
    return (
        f"The judge transfers to this data: all {n_assessed} compared cells PASS (within the {margin_text} of the "
        f"human band){insufficient}{tail}."
    )


__all__ = ["cell_checks", "cell_counts", "overall_status", "summary_checks", "verdict_sentence"]
