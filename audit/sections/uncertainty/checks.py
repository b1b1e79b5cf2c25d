"""The uncertainty section's check ``uncertainty.loro_max_shift``."""

from __future__ import annotations

import math
from collections.abc import Mapping

from judge_transfer_audit.model.checks import Check, Status, breach_status
from judge_transfer_audit.model.policy import Policy
from judge_transfer_audit.model.section_result import Section


def checks(section: Section, policy: Policy, *, focal: Mapping[str, str] | None = None) -> list[Check]:
    """``uncertainty.loro_max_shift``: no single reader moves a cell's raw rate by more than the policy allows."""
    if not section.computed:
        return []
    loro = section.payload.loro
    if math.isnan(loro.largest_shift):
        return [Check("uncertainty.loro_max_shift", Status.SKIPPED, reason="leave-one-reader-out not computed")]
    value = abs(loro.largest_shift)
    threshold = policy.uncertainty.max_loro_shift
    status = Status.PASS if value <= threshold else breach_status("uncertainty.loro_max_shift")
    return [
        Check(
            "uncertainty.loro_max_shift",
            status,
            value,
            threshold,
            f"dropping reader {loro.largest_shift_reader} moves {loro.largest_shift_cell} by "
            f"{loro.largest_shift:+.1%} (raw rate for {_focal_of(loro.largest_shift_cell, focal or {})})",
        )
    ]


def _focal_of(cell: str, focal: Mapping[str, str]) -> str:
    """The focal system of ``cell`` (``matchup/criterion``), else "the focal system"."""
    return focal.get(cell.rsplit("/", 1)[0], "the focal system")


def section_checks(section: Section, context) -> list[Check]:
    """:func:`checks` with what the table's check step gives every section
    (:class:`judge_transfer_audit.sections.registry.CheckContext`)."""
    return checks(section, context.policy, focal=context.focal)
