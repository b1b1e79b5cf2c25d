"""Per-cell transfer assessment: does the judge reproduce the humans in this cell?

Directions: the humans are decisive for a system when the GLMM interval excludes 0.5; the
judge is decisive when the Wilson interval of its credited rate over its valid pairs
excludes 0.5 (level ``policy.transfer.decisive_level``); otherwise "chance". A *direction
conflict* is a judge decisive one way where the humans are decisive the other way or at
chance.
"""

from __future__ import annotations

import math

from audit.checks import Status
from audit.human_side import wilson_interval
from audit.policy import TransferPolicy
from audit.result import HumanSide, JudgeSide, Transfer


def _direction(low: float, high: float) -> str:
    if math.isnan(low) or math.isnan(high):
        return "unknown"
    if low > 0.5:
        return "focal"
    if high < 0.5:
        return "other"
    return "chance"


def judge_direction(judge: JudgeSide, level: float) -> str:
    n = judge.wins + judge.losses + (judge.ties if judge.tie_rule != "decisive" else 0)
    if n == 0 or math.isnan(judge.rate):
        return "unknown"
    low, high = wilson_interval(judge.rate * n, n, level)
    return _direction(low, high)


def assess_transfer(
    human: HumanSide,
    judge: JudgeSide | None,
    *,
    judge_vs_majority: float | None,
    reader_baseline: float | None,
    policy: TransferPolicy,
) -> Transfer:
    g = human.glmm
    human_dir = _direction(g.ci_low, g.ci_high)
    if judge is None:
        return Transfer(None, None, human_dir, "unknown", judge_vs_majority, reader_baseline, None,
                        Status.SKIPPED, "the judge has no scores for this criterion")
    j_dir = judge_direction(judge, policy.decisive_level)
    if g.status in (Status.ERROR, Status.SKIPPED) or math.isnan(g.ci_low) or math.isnan(judge.rate):
        unfitted = g.status in (Status.ERROR, Status.SKIPPED)
        reason = g.reason if unfitted else "the judge has no valid pairs in this cell"
        return Transfer(None, None, human_dir, j_dir, judge_vs_majority, reader_baseline, None,
                        Status.SKIPPED, reason)
    inside = bool(g.ci_low <= judge.rate <= g.ci_high)
    conflict = j_dir in ("focal", "other") and human_dir != j_dir
    below = None
    if judge_vs_majority is not None and reader_baseline is not None and not (
        math.isnan(judge_vs_majority) or math.isnan(reader_baseline)
    ):
        below = bool(judge_vs_majority < reader_baseline - policy.max_baseline_gap)
    problems = []
    if not inside:
        problems.append(f"judge rate {judge.rate:.1%} outside the human interval [{g.ci_low:.1%}, {g.ci_high:.1%}]")
    if conflict:
        problems.append(f"judge decisive for {judge_direction_label(j_dir)} while humans are "
                        f"{'at chance' if human_dir == 'chance' else 'decisive for ' + judge_direction_label(human_dir)}")
    if below:
        problems.append("judge agrees with the reader majority less than readers agree with each other")
    if not inside and conflict:
        verdict = Status.FAIL
    elif problems:
        verdict = Status.WARN
    else:
        verdict = Status.PASS
    reason = "; ".join(problems) if problems else "judge rate inside the human interval, no direction conflict"
    return Transfer(inside, conflict, human_dir, j_dir, judge_vs_majority, reader_baseline, below, verdict, reason)


def judge_direction_label(direction: str) -> str:
    return {"focal": "the focal system", "other": "the other system"}.get(direction, direction)
