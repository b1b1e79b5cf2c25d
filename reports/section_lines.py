"""Terminal summary lines for the peer sections (one line each when computed)."""

from __future__ import annotations

from typing import Any

from judge_transfer_audit.core.terminal_text import printable


def _safe(text: object) -> str:
    """A name from an input, inert on a terminal: control characters and direction overrides escaped."""
    return printable(text)


def _payload(result: Any, name: str):
    section = getattr(result, name, None)
    return getattr(section, "payload", None)


def section_summary_lines(result: Any) -> list[str]:
    lines = []
    agreement = _payload(result, "judge_agreement")
    if agreement is not None and agreement.rows:
        row = agreement.rows[-1]
        lines.append(
            f"Judge agreement ({_safe(row.scope)}): kappa vs reader majority {row.kappa_majority}; "
            f"alpha judge-human minus human-human {row.alpha_difference}"
        )
    configs = _payload(result, "judge_configurations")
    if configs is not None and len(configs.rows) > 1:
        how = " (--judge auto: selected on the same data)" if configs.auto else ""
        panel = (
            f"; effective number of judges {configs.effective.nyholt:.2f} of {len(configs.rows)}"
            if configs.effective is not None and configs.effective.nyholt == configs.effective.nyholt
            else ""
        )
        lines.append(
            f"Judge configurations: closest to the humans {_safe(configs.selected)}, kappa "
            f"{configs.rows[0].kappa_majority}{how}{panel}"
        )
    position = _payload(result, "judge_position")
    primary = getattr(getattr(result, "provenance", None), "primary_judge", "")
    if position is not None:
        rows = [r for r in position.rows if r.judge == primary] or list(position.rows[:1])
        for r in rows:
            swap = f"; swap consistency {r.swap_consistency}" if r.n_swapped_units else ""
            lines.append(f"Judge position ({_safe(r.judge)}): chose the output shown first {r.first_rate}{swap}")
    board = _payload(result, "leaderboard")
    if board is not None:
        if not board.connected:
            groups = " | ".join(", ".join(_safe(s) for s in c) for c in board.components)
            lines.append(f"Leaderboard: cannot rank across {groups} (no comparison links them)")
        else:
            misplaced = ", ".join(_safe(s) for s in board.misplaced) or "none"
            lines.append(
                f"Leaderboard ({len(board.systems)} systems): Kendall tau judge vs humans "
                f"{board.kendall_tau}; misplaced by the judge: {misplaced}"
            )
    lines.extend(_budget_lines(result))
    return lines


def _budget_lines(result: Any) -> list[str]:
    from judge_transfer_audit.statistics.budget.compute import label_budget

    cells = tuple(getattr(result, "cells", ()) or ())
    if not cells:
        return []
    budget = label_budget(result)
    open_cells = [c for c in budget.cells if c.state == "budgeted"]
    if not open_cells:
        return []
    cheapest = min(open_cells, key=lambda c: c.pairs)
    designs = sorted((d for d in cheapest.designs if d.pairs is not None), key=lambda d: d.readers_per_pair)
    tradeoff = (
        f"; with {designs[0].readers_per_pair:g} / {designs[-1].readers_per_pair:g} readers per pair "
        f"~{designs[0].pairs:,} / ~{designs[-1].pairs:,} pairs"
        if len(designs) > 1
        else ""
    )
    return [
        f"Label budget ({budget.power:.0%} power): {len(open_cells)} undecided cell(s) budgeted; the cheapest, "
        f"{_safe(cheapest.matchup)} / {_safe(cheapest.criterion)}, {cheapest.target} at ~{cheapest.pairs:,} pairs"
        f"{tradeoff} (`audit budget result.json` for every cell)"
    ]
