"""The report's label-budget section: audit.budget on the rendered result (nothing recomputed
from data; the same figures as `audit budget RESULT.json`)."""

from __future__ import annotations

from typing import Any

from reports.tables import table

_COLUMNS = [
    "matchup",
    "criterion",
    "status",
    "state",
    "target",
    "n_pairs",
    "power_now",
    "pairs",
    "readers",
    "votes",
    "pairs_needed_verdict",
    "min_detectable_distance",
    "reason",
]


def budget_section(result: Any, power: float = 0.8) -> dict:
    from audit.budget import label_budget

    ctx = {
        "id": "label-budget",
        "title": "Label budget: the pairs and readers that would decide each cell",
        "status": "PASS",
        "computed": True,
        "reason": "",
        "figures": [],
        "tables": [],
        "cases": [],
        "facts": [],
        "parts": [],
        "notes": [],
        "lead_tables": [],
        "csv": "",
    }
    cells = tuple(getattr(result, "cells", ()) or ())
    if not cells:
        ctx.update(status="SKIPPED", computed=False, reason="no cells")
        return ctx
    budget = label_budget(result, power=power)
    ctx["facts"] = [
        {"key": "power", "value": f"{budget.power:.0%}"},
        {"key": "PASS test", "value": f"TOST at alpha {budget.alpha:g}"},
        {"key": "FAIL test", "value": f"one-sided at {budget.fail_level:.3g} (Bonferroni over the cells)"},
    ]
    ctx["lead_tables"].append(
        table(
            budget.to_frame(),
            columns=_COLUMNS,
            max_rows=200,
            caption="Per cell, the pairs (and readers, growing in proportion) at which the decision the estimates "
            "point "
            f"to (target) is reached with power {budget.power:.0%}; power_now at the current pairs; "
            f"pairs_needed_verdict: the verdict's figure if the estimates stay put (about 50% power); "
            f"min_detectable_distance: the distance from the human band a FAIL would detect with that power now "
            f"(above 1: none on the scale).",
        )
    )
    ctx["notes"].append(
        "Normal approximation from the recorded intervals, never narrower than the verdict's "
        "bootstrap; variance taken to fall as 1 / pairs (docs/leaderboard.md, 'Label budget')."
    )
    return ctx
