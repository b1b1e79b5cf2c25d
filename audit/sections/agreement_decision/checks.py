"""The agreement-decision section's check ``agreement.decision``, and the gate's check that the
votes can support it."""

from __future__ import annotations

import pandas as pd

from judge_transfer_audit.model.checks import Check, Status, apply_severity
from judge_transfer_audit.model.section_result import Section


def checks(section: Section, policy) -> list[Check]:
    """``agreement.decision``: one per study, matchup and cell, its status the scope's decision."""
    if section.status is Status.ERROR:
        return [Check("agreement.decision", Status.ERROR, reason=section.reason)]
    if not section.computed:
        return []
    out = []
    for r in section.payload.rows:
        out.append(
            Check(
                "agreement.decision",
                Status(r.status),
                r.advantage.estimate,
                -section.payload.margin,
                r.reason,
                scope=r.scope,
            )
        )
    return apply_severity(out, policy.severity)


def check_gate_support(policy, votes: pd.DataFrame, source: str) -> None:
    """An input error (exit 2) when the policy gates on the agreement decision explicitly
    (``[gate] decisions`` = "both" or "agreement") and no pair has two votes on one criterion:
    a reader's agreement with the other readers cannot be estimated from such data."""
    from judge_transfer_audit.core.errors import InputError, InputProblem
    from judge_transfer_audit.verdict.agreement_decision import data_supports_agreement

    if policy.gate.decisions not in ("both", "agreement") or data_supports_agreement(votes):
        return
    raise InputError(
        InputProblem(
            source,
            f'[gate] decisions = "{policy.gate.decisions}" gates on the agreement decision, but every pair has '
            "one reader vote per criterion: a reader's agreement with the other readers cannot be estimated",
            'set [gate] decisions = "rate" (or "auto": the agreement decision is then reported from the votes '
            "and the chance baseline, never PASS), or have some pairs read by two or more readers",
            column="gate.decisions",
            value=policy.gate.decisions,
        )
    )


def section_checks(section: Section, context) -> list[Check]:
    """:func:`checks` with what the table's check step gives every section
    (:class:`judge_transfer_audit.sections.registry.CheckContext`)."""
    return checks(section, context.policy)
