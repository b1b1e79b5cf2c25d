"""AuditResult -> the whole template context: the core parts (:mod:`judge_transfer_audit.reports.sections`) and every
optional section rendered from its payload's type (:mod:`judge_transfer_audit.reports.registry`)."""

from __future__ import annotations

from typing import Any

import judge_transfer_audit.reports.optional_sections  # noqa: F401  (registers the uncertainty, readers, surface renderers)
from judge_transfer_audit.reports.judges import judge_sections
from judge_transfer_audit.reports.prediction_powered import prediction_powered_sections
from judge_transfer_audit.reports.registry import render_section
from judge_transfer_audit.reports.sections import (
    agreement_context,
    checks_context,
    configurations_table,
    focal_label,
    headline,
    preference_figure,
    provenance_context,
    transfer_rows,
)
from judge_transfer_audit.reports.tables import status_value

TRANSFER_OPEN = 24  #: transfer-table rows shown open (worst first); the rest fold into <details>
TABLE_OPEN = 24  #: rows of a section's lead table and of the agreement tables shown open; the rest fold into <details>
#: rows of those tables printed on paper (worst first); a print-only line says where the others are
PRINT_ROWS = 12
PRINT_CASES = 3  #: case studies printed on paper (the most divergent pairs); the HTML shows every one
PAGE_ROWS = 200  #: rows of the transfer table, its reasons and the individual checks in the page; the CSVs hold all


def optional_sections(result: Any) -> list[dict]:
    """The uncertainty, readers and surface sections, in report order."""
    return [
        render_section(
            "uncertainty", "How sure are we: bootstraps and leave-one-reader-out", result, result.uncertainty
        ),
        render_section(
            "readers", "Who are the readers: heat maps, clusters, time, case studies", result, result.readers
        ),
        render_section("surface", "Surface features: is the judge scoring style?", result, result.surface),
    ]


def build_context(result: Any) -> dict:
    """Everything the template needs, from an :class:`judge_transfer_audit.results.result.AuditResult`."""
    return {
        "status": status_value(result.status),
        "verdict": result.verdict,
        "headline": headline(result),
        "checks": checks_context(tuple(result.checks)),
        "transfer": transfer_rows(result),
        "preference": preference_figure(result),
        "configurations": configurations_table(result),
        "agreement": agreement_context(result),
        "sections": prediction_powered_sections(result) + optional_sections(result) + judge_sections(result),
        "provenance": provenance_context(result),
        "focal_label": focal_label(result),
        "transfer_open": TRANSFER_OPEN,
        "table_open": TABLE_OPEN,
        "page_rows": PAGE_ROWS,
        "print_rows": PRINT_ROWS,
        "print_cases": PRINT_CASES,
    }
