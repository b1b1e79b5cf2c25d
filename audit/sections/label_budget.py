"""The label-budget section: per cell, the pairs (and readers per pair) that would decide it at
80% power (:func:`audit.budget.budget_of_cells`). No checks of its own."""

from __future__ import annotations

from audit.section_result import Section, Skipped
from audit.sections._guard import guarded

NAME = "label_budget"
POWER = 0.8  #: the power of the budget stored in result.json (`audit budget --power` recomputes)


def compute(cells, spec) -> Section:
    """``Section[LabelBudget]`` from the cells' decisions and the policy; Skipped without cells."""
    if not cells:
        return Skipped("no cells")
    from audit.budget import budget_of_cells

    transfer = spec.policy.transfer
    return guarded(
        lambda: budget_of_cells(
            cells, alpha=transfer.alpha, adjust=transfer.adjust, margin=transfer.margin, power=POWER
        ),
        "label budget",
    )
