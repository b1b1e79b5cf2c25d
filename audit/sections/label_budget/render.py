"""The report's label-budget section: the budget stored in the result by `audit run` (schema
2.2), or for an older result judge_transfer_audit.statistics.budget.compute on the rendered result (nothing recomputed
from data; the same figures as `audit budget RESULT.json`)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from judge_transfer_audit.core.terminal_text import printable
from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.presentation.renderers import render_section
from judge_transfer_audit.presentation.tables import table
from judge_transfer_audit.statistics.budget.result import LabelBudget

_COLUMNS = [
    "matchup",
    "criterion",
    "status",
    "state",
    "target",
    "n_pairs",
    "readers_per_pair",
    "power_now",
    "pairs",
    "readers",
    "votes",
    "pairs_needed_verdict",
    "min_detectable_distance",
    "vote_variance_share",
    "reason",
]

ID, TITLE = "label-budget", "Label budget: the pairs and readers that would decide each cell"


def render(result: Any, budget: LabelBudget, ctx: dict) -> None:
    from judge_transfer_audit.statistics.budget.compute import budget_source

    ctx["facts"] = [
        {"key": "power", "value": f"{budget.power:.0%}"},
        {"key": "PASS test", "value": f"TOST at alpha {budget.alpha:g}"},
        {"key": "FAIL test", "value": f"one-sided at {budget.fail_level:.3g} (Bonferroni over the cells)"},
        {"key": "figures", "value": budget_source(result)},
    ]
    ctx["lead_tables"].append(
        table(
            budget.to_frame(),
            columns=_COLUMNS,
            max_rows=200,
            sort_by=(("pairs", True),),
            sort_label="nearest to a decision first (fewest pairs needed)",
            print_omit=("reason",),  # a sentence per row: it reads the columns before it
            caption=f"Per cell, the pairs (and readers, growing in proportion) at which the decision the estimates "
            f"point to (target) is reached with power {budget.power:.0%}; power_now at the current pairs; "
            f"pairs_needed_verdict: the verdict's pairs_needed (the same search at 80% power from schema 2.3); "
            f"min_detectable_distance: the distance from the human band a FAIL would detect with that power now "
            f"(above 1: none on the scale); vote_variance_share: the share of the variance that more readers per "
            f"pair would reduce.",
        )
    )
    designs = _tradeoff_frame(budget)
    if designs is not None:
        ctx["tables"].append(
            table(
                designs,
                max_rows=200,
                caption="Pairs versus readers: per undecided cell, the pairs needed for the target with "
                f"{budget.power:.0%} power at each number of readers per pair (now: today's readers per pair; "
                "out of reach: beyond 10 million pairs); the reader pool grows at today's votes per reader.",
            )
        )
    ctx["notes"].append(
        "Normal approximation from the recorded intervals, never narrower than the verdict's bootstrap; the "
        "variance splits into the votes' own part (from the GLMM's pair and reader SDs), which more readers per "
        "pair reduce, and the pairs' part, which only more pairs reduce (docs/leaderboard.md, 'Label budget')."
    )


def _tradeoff_frame(budget: LabelBudget) -> pd.DataFrame | None:
    """Undecided cells x readers per pair -> pairs, wide (one column per readers per pair)."""
    cells = [c for c in budget.cells if c.state in ("budgeted", "out of reach") and c.designs]
    if not cells:
        return None
    rows = []
    for c in cells:
        row = {"matchup": c.matchup, "criterion": c.criterion, "target": c.target}
        for d in sorted(c.designs, key=lambda d: d.readers_per_pair):
            label = f"{d.readers_per_pair:.3g} readers/pair" + (" (now)" if d.current else "")
            row[label] = "out of reach" if d.pairs is None else f"{d.pairs:,}"
        rows.append(row)
    return pd.DataFrame(rows).fillna("")


def section_context(result: Any) -> dict:
    """The stored budget's section, or (a result without one) the budget computed from the result."""
    from judge_transfer_audit.model.section_result import Computed, Skipped
    from judge_transfer_audit.statistics.budget.compute import label_budget as compute

    section = getattr(result, "label_budget", None)
    if section is None or section.payload is None:
        if not tuple(getattr(result, "cells", ()) or ()):
            section = Skipped("no cells")
        elif section is not None and section.status is Status.ERROR:
            pass
        else:
            section = Computed(compute(result))
    return render_section(ID, TITLE, result, section, render)


def report(result: Any) -> list[dict]:
    """The section's context in the report (:func:`section_context`)."""
    return [section_context(result)]


def terminal_lines(result: Any) -> list[str]:
    """The cheapest undecided cell's budget at 80% power and its pairs-versus-readers trade-off."""
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
        f"{printable(cheapest.matchup)} / {printable(cheapest.criterion)}, "
        f"{cheapest.target} at ~{cheapest.pairs:,} pairs"
        f"{tradeoff} (`audit budget result.json` for every cell)"
    ]
