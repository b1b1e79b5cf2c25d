"""The development-set section's check ``dev.spearman``."""

from __future__ import annotations

import math

from judge_transfer_audit.model.checks import Check, Status, breach_status
from judge_transfer_audit.model.policy import Policy
from judge_transfer_audit.model.section_result import Section


def checks(section: Section, policy: Policy) -> list[Check]:
    """Gate on the out-of-fold estimate: the in-sample figure is the one the judge was selected on."""
    if not section.computed:
        return []
    dev = section.payload
    value = getattr(dev, "oof_pooled", float("nan"))
    threshold = policy.dev.min_dev_spearman
    if value is None or math.isnan(value):
        return [Check("dev.spearman", Status.SKIPPED, reason="no out-of-fold dev-set correlation could be computed")]
    status = Status.PASS if value >= threshold else breach_status("dev.spearman")
    reason = (
        f"development-set Spearman of the routed judge with mean human ratings, out of fold: {value:.3f} "
        f"(in sample {dev.routed_in_sample_pooled:.3f}, optimism {dev.optimism_pooled:+.3f})"
        + ("; selection and validation share data" if dev.selection_shares_data else "")
    )
    return [Check("dev.spearman", status, value, threshold, reason)]


def section_checks(section: Section, context) -> list[Check]:
    """:func:`checks` with what the table's check step gives every section
    (:class:`judge_transfer_audit.sections.registry.CheckContext`)."""
    return checks(section, context.policy)
