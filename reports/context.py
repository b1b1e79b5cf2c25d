"""AuditResult -> the whole template context: the core parts (:mod:`judge_transfer_audit.reports.sections`) and every
optional section, each drawn by the renderer its entry in the section table names
(:mod:`judge_transfer_audit.sections.registry`)."""

from __future__ import annotations

from typing import Any

from judge_transfer_audit.presentation.tables import status_value
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
from judge_transfer_audit.sections.registry import entries

TRANSFER_OPEN = 24  #: transfer-table rows shown open (worst first); the rest fold into <details>
TABLE_OPEN = 24  #: rows of a section's lead table and of the agreement tables shown open; the rest fold into <details>
#: rows of those tables printed on paper (worst first); a print-only line says where the others are
PRINT_ROWS = 12
PRINT_CASES = 3  #: case studies printed on paper (the most divergent pairs); the HTML shows every one
PAGE_ROWS = 200  #: rows of the transfer table, its reasons and the individual checks in the page; the CSVs hold all


def optional_sections(result: Any) -> list[dict]:
    """Every section's part of the report, in the section table's report order
    (:class:`judge_transfer_audit.sections.registry.Report`)."""
    shown = sorted((e for e in entries() if e.report is not None), key=lambda e: e.report.rank)
    for e in shown:
        section = getattr(result, e.name)
        if section.computed and not isinstance(section.payload, e.payload):
            raise TypeError(
                f"section {e.name!r}: no report renderer for a {type(section.payload).__qualname__} payload "
                f"(its renderer draws a {e.payload.__qualname__})"
            )
    return [ctx for e in shown for ctx in e.report.contexts(result)]


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
        "sections": optional_sections(result),
        "provenance": provenance_context(result),
        "focal_label": focal_label(result),
        "transfer_open": TRANSFER_OPEN,
        "table_open": TABLE_OPEN,
        "page_rows": PAGE_ROWS,
        "print_rows": PRINT_ROWS,
        "print_cases": PRINT_CASES,
    }
