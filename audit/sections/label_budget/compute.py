"""The label-budget section: per cell, the pairs (and readers per pair) that would decide it at
80% power (:func:`judge_transfer_audit.statistics.budget.compute.budget_of_cells`). No checks of its own."""

from __future__ import annotations

from judge_transfer_audit.model.section_result import Section, Skipped
from judge_transfer_audit.sections._guard import guarded

NAME = "label_budget"
POWER = 0.8  #: the power of the budget stored in result.json (`audit budget --power` recomputes)


def compute(data, spec, *, cells) -> Section:
    """``Section[LabelBudget]`` from the decided ``cells`` and the policy; Skipped without cells (``data`` is
    not read: the cells hold what the budget needs)."""
    if not cells:
        return Skipped("no cells")
    from judge_transfer_audit.statistics.budget.compute import budget_of_cells

    transfer = spec.policy.transfer
    return guarded(
        lambda: budget_of_cells(
            cells, alpha=transfer.alpha, adjust=transfer.adjust, margin=transfer.margin, power=POWER
        ),
        "label budget",
    )
