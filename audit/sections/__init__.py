"""The optional parts of an audit computed from the data: one module per section.

Each module (:mod:`~judge_transfer_audit.sections.dev`, :mod:`~judge_transfer_audit.sections.uncertainty`,
:mod:`~judge_transfer_audit.sections.readers`, :mod:`~judge_transfer_audit.sections.surface`,
:mod:`~judge_transfer_audit.sections.judge_agreement`, :mod:`~judge_transfer_audit.sections.judge_configurations`,
:mod:`~judge_transfer_audit.sections.leaderboard`, :mod:`~judge_transfer_audit.sections.judge_position`,
:mod:`~judge_transfer_audit.sections.label_budget`) has ``compute(data, spec, ...) -> Section[X]``:
``Computed(X)``, ``Skipped(reason)`` when an input is missing, ``Failed(reason, error)`` when an
:class:`~judge_transfer_audit.core.errors.AuditError` is raised inside it (the rest of the audit goes on); a section
that gates anything also has ``checks(section, policy, ...) -> list[Check]``. The payload types
live in the statistics' leaf modules (audit/sections/types.py lists them). This package's top
level only joins the checks in the order the result lists them; the pipeline calls compute.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from judge_transfer_audit.model.checks import Check, apply_severity
from judge_transfer_audit.model.policy import Policy
from judge_transfer_audit.model.section_result import Section
from judge_transfer_audit.sections import dev as dev_part
from judge_transfer_audit.sections import judge_position as position_part
from judge_transfer_audit.sections import readers as readers_part
from judge_transfer_audit.sections import surface as surface_part
from judge_transfer_audit.sections import uncertainty as uncertainty_part
from judge_transfer_audit.sections._guard import failed_check, not_requested

__all__ = ["judge_credits", "primary_credits", "not_requested", "section_checks"]


def judge_credits(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Every configuration's per-pair credit and outcome (win, loss, tie, invalid: a tie is
    told apart whatever the rule credits it), as the judge criteria name them."""
    return outcomes[["pair_id", "matchup", "criterion", "judge", "credit", "outcome"]].copy()


def primary_credits(choices: pd.DataFrame, pairs: pd.DataFrame, primary: str | None) -> pd.DataFrame:
    """The primary judge's credits keyed by the *human* criterion (``overall`` = aggregate)."""
    frame = choices.merge(pairs[["pair_id", "matchup"]], on="pair_id", how="left")
    return frame.rename(columns={"y_judge": "credit"}).assign(judge=primary or "")[
        ["pair_id", "matchup", "criterion", "judge", "credit"]
    ]


def section_checks(
    policy: Policy,
    *,
    dev: Section,
    uncertainty: Section,
    readers: Section,
    surface: Section,
    primary: str | None = None,
    judge_position: Section | None = None,
    peers: Mapping[str, Section] | None = None,
    focal: Mapping[str, str] | None = None,
) -> list[Check]:
    """Every section's checks: first a ``<section>.computed`` ERROR per Failed section, then the
    dev, uncertainty, reader, surface and judge-position checks, under the policy's ``[severity]``.

    ``peers``: the sections with no checks of their own (judge_agreement, judge_configurations,
    leaderboard), by name; each one that failed gets its ``<name>.computed`` ERROR too. ``focal``:
    each matchup's focal system, named where a reason gives a rate."""
    parts = (
        ("dev", dev),
        ("uncertainty", uncertainty),
        ("readers", readers),
        ("surface", surface),
        *(peers or {}).items(),
    )
    checks: list[Check] = [c for c in (failed_check(name, s) for name, s in parts) if c is not None]
    checks += dev_part.checks(dev, policy)
    checks += uncertainty_part.checks(uncertainty, policy, focal=focal)
    # the reader and surface checks that test something share one family-wise error budget
    # (docs/detectors.md, "Multiplicity"): each gets an equal share
    families = readers_part.families(readers) + surface_part.families(surface)
    checks += readers_part.checks(readers, policy, families=families, primary=primary, focal=focal)
    checks += surface_part.checks(surface, policy, families=families)
    checks = apply_severity(checks, policy.severity)
    if judge_position is not None:
        checks += position_part.checks(judge_position, policy, primary=primary)
    return checks
