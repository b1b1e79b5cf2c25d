"""The reader section's checks (:func:`judge_transfer_audit.statistics.readers.reader_checks`)."""

from __future__ import annotations

from collections.abc import Mapping

from judge_transfer_audit.model.checks import Check
from judge_transfer_audit.model.policy import Policy
from judge_transfer_audit.model.section_result import Section


def families(section: Section) -> int:
    """The check families this section tests (its share of the run's family-wise error budget)."""
    if not section.computed:
        return 0
    from judge_transfer_audit.statistics.readers.policy import reader_check_families

    return reader_check_families(section.payload)


def checks(
    section: Section,
    policy: Policy,
    *,
    families: int,
    primary: str | None = None,
    focal: Mapping[str, str] | None = None,
) -> list[Check]:
    """The reader checks, each with an equal share of ``families`` (the reader and surface check
    families together); those scoped ``cell [judge]`` kept for the ``primary`` judge only.
    ``focal``: each matchup's focal system (the reasons name what a rate is of)."""
    if not section.computed:
        return []
    from judge_transfer_audit.statistics.readers import reader_checks

    return _primary_judge_only(reader_checks(section.payload, policy.readers, families=families, focal=focal), primary)


def _primary_judge_only(checks: list[Check], primary: str | None) -> list[Check]:
    """Reader checks scoped ``cell [judge]`` are kept for the primary judge only; the other
    configurations stay visible in the heat maps and tables without multiplying the gate."""
    if not primary:
        return checks
    return [c for c in checks if not c.scope.endswith("]") or c.scope.endswith(f"[{primary}]")]


def section_checks(section: Section, context) -> list[Check]:
    """:func:`checks` with what the table's check step gives every section
    (:class:`judge_transfer_audit.sections.registry.CheckContext`)."""
    return checks(section, context.policy, families=context.families, primary=context.primary, focal=context.focal)
