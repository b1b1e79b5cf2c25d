"""The agreement decision in the report (a compact table) and in the terminal summary (one line)."""

from __future__ import annotations

from typing import Any

from judge_transfer_audit.core.terminal_text import printable
from judge_transfer_audit.presentation.renderers import render_section
from judge_transfer_audit.presentation.tables import table
from judge_transfer_audit.verdict.agreement_decision import AgreementDecision

ID, TITLE = "agreement-decision", "Agreement decision: the judge against a reader, pair by pair"
_ORDER = ("FAIL", "PASS", "INCONCLUSIVE", "INSUFFICIENT")


def render(result: Any, payload: AgreementDecision, ctx: dict) -> None:
    frame = payload.to_frame()
    ctx["facts"] = [
        {"key": "margin", "value": f"{payload.margin:g} (a reader's agreement minus this)"},
        {"key": "ties", "value": "their own category" if payload.ties == "category" else "left out (tie rule)"},
        {"key": "multiplicity", "value": payload.multiplicity},
        {"key": "replicates", "value": str(payload.n_boot)},
    ]
    borderline = [r.scope for r in payload.rows if r.monte_carlo_borderline]
    if borderline:
        ctx["facts"].append(
            {
                "key": "Monte Carlo borderline",
                "value": f"{', '.join(borderline)}: still within the bootstrap's Monte Carlo error of a status change "
                "after 16x the replicates; read as undecided",
            }
        )
    ctx["lead_tables"].append(
        table(
            frame,
            columns=[
                "scope",
                "status",
                "basis",
                "n_pairs",
                "n_readers",
                "judge_agreement",
                "reader_agreement",
                "chance",
                "advantage",
                "advantage_ci_low",
                "advantage_ci_high",
                "p_fail_adjusted",
                "winning_rate",
            ],
            max_rows=200,
            caption=(
                "Is the judge at least as good as a reader at reproducing the other readers, pair by pair? "
                "Advantage = the judge's agreement with the other readers' votes minus a reader's, with its "
                f"{1 - 2 * payload.alpha:.0%} pairs x readers interval; PASS when it is above -{payload.margin:g}, "
                f"FAIL when below (study, then matchups, then cells). winning_rate: the alternative annotator "
                "test's (Calderon et al. 2025), descriptive."
            ),
        )
    )


def report(result: Any) -> list[dict]:
    """The section's context in the report."""
    return [render_section(ID, TITLE, result, getattr(result, "agreement_decision", None), render)]


def summary_line(result: Any) -> str | None:
    """``Agreement (margin 5 points): study FAIL; matchups 1 FAIL, 2 INCONCLUSIVE; cells ...``."""
    section = getattr(result, "agreement_decision", None)
    if section is None or not section.computed:
        return None if section is None else f"Agreement decision: {section.status.value} ({section.reason})"
    p = section.payload
    parts = []
    for level, label in (("study", "study"), ("matchup", "matchups"), ("cell", "cells")):
        rows = p.level(level)
        if level == "study" and rows:
            parts.append(f"study {rows[0].status}")
            continue
        counts = {s: sum(r.status == s for r in rows) for s in _ORDER}
        parts.append(f"{label} " + ", ".join(f"{n} {s}" for s, n in counts.items() if n))
    borderline = sum(r.monte_carlo_borderline for r in p.rows)
    if borderline:
        parts.append(f"{borderline} Monte Carlo borderline (read as undecided)")
    return f"Agreement (judge vs a reader, pair by pair; margin {100 * p.margin:g} points): " + "; ".join(parts)


def terminal_lines(result: Any) -> list[str]:
    """The summary line, its names made inert on a terminal."""
    line = summary_line(result)
    return [printable(line)] if line else []
