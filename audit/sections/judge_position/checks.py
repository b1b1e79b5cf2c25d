"""The judge-position section's check ``judge.position_bias``."""

from __future__ import annotations

from judge_transfer_audit.model.checks import Check, Status, apply_severity, breach_status
from judge_transfer_audit.model.section_result import Section


def checks(section: Section, policy, *, primary: str | None) -> list[Check]:
    """``judge.position_bias``: the audited configuration's first-shown rate interval excludes 0.5
    (the policy's ``[severity]`` applied by :func:`judge_transfer_audit.model.checks.apply_severity`)."""
    return apply_severity(_position_checks(section, primary), policy.severity)


def _position_checks(position: Section, primary: str | None) -> list[Check]:
    if position.status is Status.ERROR:
        return [Check("judge.position_bias", Status.ERROR, reason=position.reason)]
    if not position.computed or not primary:
        return []
    try:
        row = position.payload.row(primary)
    except KeyError:
        return [Check("judge.position_bias", Status.SKIPPED, reason=f"no verdict of {primary} has a known order")]
    e = row.first_rate
    if e.estimate != e.estimate:
        return [Check("judge.position_bias", Status.SKIPPED, reason="no decisive verdict with a known order")]
    biased = not (e.ci_low <= 0.5 <= e.ci_high)
    status = breach_status("judge.position_bias") if biased else Status.PASS
    swap = (
        f"; swap consistency {row.swap_consistency} over {row.n_swapped_units} pairs x criteria seen in both orders"
        if row.n_swapped_units
        else ""
    )
    return [
        Check(
            "judge.position_bias",
            status,
            e.estimate,
            0.5,
            f"{primary} chose the output shown first in {e.estimate:.1%} [{e.ci_low:.1%}, {e.ci_high:.1%}] of "
            f"{row.n_decisive} decisive verdicts (exact interval; 50% = no position bias){swap}",
            scope=primary,
        )
    ]


def section_checks(section: Section, context) -> list[Check]:
    """:func:`checks` with what the table's check step gives every section
    (:class:`judge_transfer_audit.sections.registry.CheckContext`)."""
    return checks(section, context.policy, primary=context.primary)
