"""The uncertainty section in the report: bootstrap intervals and leave-one-reader-out shifts."""

from __future__ import annotations

from typing import Any

import pandas as pd

from judge_transfer_audit.presentation.figures import (
    bootstrap_comparison_svg,
    loro_shift_svg,
)
from judge_transfer_audit.presentation.format import cell_value
from judge_transfer_audit.presentation.renderers import print_parts as _print_parts
from judge_transfer_audit.presentation.renderers import render_section
from judge_transfer_audit.presentation.tables import folded_tables
from judge_transfer_audit.statistics.uncertainty.section import UncertaintySection

ID, TITLE = "uncertainty", "How sure are we: bootstraps and leave-one-reader-out"
BOOTSTRAP_PART_HEIGHT = 620.0  #: points of the interval figure in one part (about a printed page)


def render(result: Any, payload: UncertaintySection, ctx: dict) -> None:
    ctx["csv"] = "uncertainty.csv"  # its table, written beside result.json
    boot, loro = payload.bootstrap, payload.loro
    ctx["facts"] = [
        {"key": "bootstrap replicates", "value": f"{boot.n_boot:,}"},
        {"key": "schemes", "value": ", ".join(boot.schemes)},
        {"key": "seed", "value": cell_value(boot.seed)},
        {
            "key": "largest leave-one-reader-out shift",
            "value": f"{100 * loro.largest_shift:+.1f} points ({loro.largest_shift_reader}, {loro.largest_shift_cell})",
        },
    ]
    cells = boot.cells
    kind = "bca" if len(cells) and cells["ci_low_bca"].notna().all() else "percentile"
    # the GLMM's interval per cell, then every bootstrap row, built by column (3,000 cells: 12,000 rows)
    glmm = [c.human.glmm for c in result.cells]
    n_boot_rows = len(cells)
    columns = {
        "matchup": [c.matchup for c in result.cells] + (cells["matchup"].tolist() if n_boot_rows else []),
        "criterion": [c.criterion for c in result.cells] + (cells["criterion"].tolist() if n_boot_rows else []),
        "method": ["GLMM (Wald)"] * len(glmm)
        + ([f"bootstrap: {s}" for s in cells["scheme"].tolist()] if n_boot_rows else []),
        "estimate": [g.estimate for g in glmm] + (cells["rate"].tolist() if n_boot_rows else []),
        "ci_low": [g.ci_low for g in glmm] + (cells[f"ci_low_{kind}"].tolist() if n_boot_rows else []),
        "ci_high": [g.ci_high for g in glmm] + (cells[f"ci_high_{kind}"].tolist() if n_boot_rows else []),
        "degenerate": [bool(g.degenerate) for g in glmm] + [False] * n_boot_rows,
    }
    intervals = pd.DataFrame(columns) if columns["matchup"] else pd.DataFrame([])
    caption = (
        f"Pointwise {boot.level:.0%} intervals per cell ({kind} bootstrap intervals, {boot.n_boot:,} replicates); "
        "solid intervals exclude 50%, faded ones include it. Bootstrap rates are vote-weighted with tied votes left "
        "out (as the GLMM)."
    )
    # in parts of whole rows of panels, each at most about a printed page tall
    matchups = list(dict.fromkeys(intervals["matchup"].tolist())) if len(intervals) else []
    n_methods = intervals["method"].nunique() if len(intervals) else 1
    n_crits = min(intervals["criterion"].nunique(), 30) if len(intervals) else 1
    row_h = 6.5 * (n_methods + 1) * n_crits + 50
    size = 3 * max(1, int(BOOTSTRAP_PART_HEIGHT // row_h))
    groups = [matchups[i : i + size] for i in range(0, len(matchups), size)] or [[]]
    for k, group in enumerate(groups):
        fig_id = "fig-bootstrap" if k == 0 else f"fig-bootstrap-{k + 1}"
        part = intervals[intervals["matchup"].isin(group)] if group else intervals
        ctx["figures"].append(
            {
                "id": fig_id,
                "title": "Intervals compared: GLMM and cluster bootstraps"
                + ("" if k == 0 else f" (continued: matchups {k * size + 1}-{k * size + len(group)})"),
                "caption": caption if k == 0 else "",
                "svg": bootstrap_comparison_svg(part, fig_id=fig_id),
                **_print_parts(k, len(groups), "uncertainty.csv"),
            }
        )
    shifts = loro.shifts.rename(columns={"reader": "reader_id"})
    if len(shifts):
        # in parts of whole rows of panels (each about a printed page), on one shared axis
        matchups = list(dict.fromkeys(shifts["matchup"].tolist()))
        n_rows = min(shifts["reader_id"].nunique(), 21)
        size = 3 * max(1, int(BOOTSTRAP_PART_HEIGHT // (14.0 * n_rows + 56)))
        groups = [matchups[i : i + size] for i in range(0, len(matchups), size)]
        finite = pd.to_numeric(shifts["shift"], errors="coerce").abs()
        limit = float(finite.max()) if finite.notna().any() else None
        for k, group in enumerate(groups):
            fig_id = "fig-loro" if k == 0 else f"fig-loro-{k + 1}"
            part = shifts[shifts["matchup"].isin(group)]
            ctx["figures"].append(
                {
                    "id": fig_id,
                    "title": "Leave-one-reader-out shifts"
                    + ("" if k == 0 else f" (continued: matchups {k * size + 1}-{k * size + len(group)})"),
                    "caption": "Change of each cell's raw human rate (focal votes / decisive votes: ties left out) "
                    "when one reader is removed (rate without the reader minus the rate with everyone)."
                    if k == 0
                    else "",
                    "svg": loro_shift_svg(
                        part[["reader_id", "criterion", "shift", "matchup"]], fig_id=fig_id, limit=limit
                    ),
                    **_print_parts(k, len(groups), "uncertainty.csv"),
                }
            )
    ctx["notes"].extend([payload.tally.statement, *boot.notes, *loro.notes])
    folded_tables(ctx, payload)


def report(result: Any) -> list[dict]:
    """The section's context in the report."""
    return [render_section(ID, TITLE, result, result.uncertainty, render)]
