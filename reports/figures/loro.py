"""Leave-one-reader-out shifts (Fig. 8 of the motivating audit).

For each reader left out, the shift (percentage points) of the human preference rate per
criterion; one panel per matchup when the frame has a ``matchup`` column. A wide spread in
one reader's row means that reader moves the results.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from reports.figures._svg import colour_for, empty_svg, figure_context, figure_to_svg, new_figure, plain

COLUMNS = ("reader_id", "criterion", "shift")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
MAX_COLUMNS = 3  #: panels per row; more matchups wrap onto further rows


def loro_shift_svg(shifts: pd.DataFrame, *, fig_id: str = "fig-loro", value_label: str = "rate") -> str:
    """Draw leave-one-reader-out shifts and return inline SVG.

    Parameters
    ----------
    shifts : DataFrame
        ``reader_id`` (the reader left out), ``criterion``, ``shift`` (estimate without the
        reader minus the estimate with everyone, probability scale); optional ``matchup``
        (one panel each).
    fig_id : str
        Id prefix of the SVG.
    value_label : str
        What was re-estimated ("rate" or "GLMM estimate"), for the axis label.
    """
    miss = [c for c in COLUMNS if c not in shifts.columns]
    if miss or len(shifts) == 0:
        return empty_svg(
            fig_id, "No leave-one-reader-out shifts to draw" + (f" (missing {', '.join(miss)})" if miss else "")
        )
    panels = list(dict.fromkeys(shifts["matchup"])) if "matchup" in shifts.columns else [None]
    readers = list(dict.fromkeys(shifts["reader_id"]))
    criteria = list(dict.fromkeys(shifts["criterion"]))
    values = shifts["shift"].astype(float).to_numpy()
    if not np.isfinite(values).any():
        return empty_svg(fig_id, "No shift computable (a single reader, or too few votes)")
    lim = max(0.02, float(np.nanmax(np.abs(values[np.isfinite(values)]))) * 100 * 1.15)
    ncol = min(len(panels), MAX_COLUMNS)
    nrow = int(np.ceil(len(panels) / ncol))
    with figure_context():
        fig = new_figure(3.2 * ncol + 1.8, nrow * (1.0 + 0.3 * len(readers)) + 0.3)
        grid = fig.subplots(nrow, ncol, sharey=True, sharex=True, squeeze=False)
        axes = grid.ravel()
        for ax in axes[len(panels) :]:
            ax.set_axis_off()
        for ax, panel in zip(axes, panels):
            sub = shifts if panel is None else shifts[shifts["matchup"] == panel]
            ax.axvline(0, color="#888888", linewidth=0.9)
            for k, crit in enumerate(criteria):
                part = sub[sub["criterion"] == crit]
                ys = [readers.index(r) + (k - (len(criteria) - 1) / 2) * 0.1 for r in part["reader_id"]]
                ax.plot(
                    100 * part["shift"].astype(float).to_numpy(),
                    ys,
                    _MARKERS[k % len(_MARKERS)],
                    color=colour_for(k),
                    markersize=4.5,
                    linestyle="none",
                    label=plain(crit),
                )
            ax.set_xlim(-lim, lim)
            ax.set_xlabel(plain(f"shift in {value_label} (points)", 90))
            if panel is not None:
                ax.set_title(plain(panel), loc="left")
        axes[0].set_yticks(range(len(readers)), [plain(f"without {r}") for r in readers])
        axes[0].set_ylim(len(readers) - 0.5, -0.5)
        axes[ncol - 1].legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7.5)
        return figure_to_svg(fig, fig_id)
