"""Judge position bias in the report and the terminal summary."""

from __future__ import annotations

from typing import Any

from judge_transfer_audit.core.terminal_text import printable
from judge_transfer_audit.presentation.renderers import payload_of, render_section
from judge_transfer_audit.presentation.tables import table
from judge_transfer_audit.statistics.judge.position import JudgePosition

ID, TITLE = "judge-position", "Judge position bias: does the judge favour the output shown first"


def render(result: Any, position: JudgePosition, ctx: dict) -> None:
    ctx["lead_tables"].append(
        table(
            position.to_frame(),
            max_rows=100,
            caption=(
                "Share of decisive verdicts choosing the output shown first (exact Clopper-Pearson "
                f"{position.level:.0%} "
                "interval; 0.5 = no position bias) and, for pairs judged in both orders, the share with the same "
                "verdict "
                "in both (pairs bootstrap)."
            ),
        )
    )


def report(result: Any) -> list[dict]:
    """The section's context in the report."""
    return [render_section(ID, TITLE, result, result.judge_position, render)]


def terminal_lines(result: Any) -> list[str]:
    """The audited configuration's first-shown rate (and swap consistency)."""
    lines = []
    position = payload_of(result, "judge_position")
    primary = getattr(getattr(result, "provenance", None), "primary_judge", "")
    if position is not None:
        rows = [r for r in position.rows if r.judge == primary] or list(position.rows[:1])
        for r in rows:
            swap = f"; swap consistency {r.swap_consistency}" if r.n_swapped_units else ""
            lines.append(f"Judge position ({printable(r.judge)}): chose the output shown first {r.first_rate}{swap}")
    return lines
