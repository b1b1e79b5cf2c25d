"""The surface-feature section's checks (:func:`judge_transfer_audit.statistics.surface.surface_checks`)."""

from __future__ import annotations

import dataclasses

from judge_transfer_audit.model.checks import Check, Status
from judge_transfer_audit.model.policy import Policy
from judge_transfer_audit.model.section_result import Section


def families(section: Section) -> int:
    """The check families this section tests (its share of the run's family-wise error budget)."""
    if not section.computed:
        return 0
    from judge_transfer_audit.statistics.surface.checks import surface_check_families

    return surface_check_families(section.payload)


def checks(section: Section, policy: Policy, *, families: int) -> list[Check]:
    """The surface checks (an equal share of ``families`` each), and ``surface.detector`` ERROR for
    a detector that ran and failed: missing evidence the user asked for (one that could not run,
    nothing configured, is SKIPPED)."""
    if not section.computed:
        return []
    from judge_transfer_audit.statistics.surface import surface_checks

    out = surface_checks(
        section.payload, dataclasses.asdict(policy.surface), severity=policy.severity, families=families
    )
    out.extend(
        Check("surface.detector", Status.ERROR, reason=f"detector {d.name} failed: {d.reason}", scope=d.name)
        for d in getattr(section.payload, "feature_detectors", ())
        if d.status is Status.ERROR
    )
    return out


def section_checks(section: Section, context) -> list[Check]:
    """:func:`checks` with what the table's check step gives every section
    (:class:`judge_transfer_audit.sections.registry.CheckContext`)."""
    return checks(section, context.policy, families=context.families)
