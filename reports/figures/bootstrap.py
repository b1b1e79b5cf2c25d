"""Interval comparison per cell: GLMM Wald interval beside the cluster bootstraps.

A forest plot: one block per matchup x criterion, one interval per method (GLMM, pairs,
readers, two-way), chance dashed. Intervals that exclude 50 % are drawn solid, the others
faded, which shows the significance tally of the motivating audit at a glance.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from reports.figures._svg import colour_for, empty_svg, figure_context, figure_to_svg, new_figure, plain

COLUMNS = ("matchup", "criterion", "method", "estimate", "ci_low", "ci_high")
MAX_COLUMNS = 3  #: panels per row; more matchups wrap onto further rows


def bootstrap_comparison_svg(intervals: pd.DataFrame, *, fig_id: str = "fig-bootstrap") -> str:
    """Draw the interval comparison and return inline SVG.

    Parameters
    ----------
    intervals : DataFrame
        ``matchup, criterion, method, estimate, ci_low, ci_high`` (probability scale), one row
        per cell x method. Method order = first appearance.
    fig_id : str
        Id prefix of the SVG.
    """
    miss = [c for c in COLUMNS if c not in intervals.columns]
    if miss or len(intervals) == 0:
        return empty_svg(fig_id, "No bootstrap intervals to draw" + (f" (missing {', '.join(miss)})" if miss else ""))
    methods = list(dict.fromkeys(intervals["method"]))
    matchups = list(dict.fromkeys(intervals["matchup"]))
    step = 1.0 / (len(methods) + 1)
    crits = list(dict.fromkeys(intervals["criterion"]))
    ncol = min(len(matchups), MAX_COLUMNS)
    nrow = int(np.ceil(len(matchups) / ncol))
    with figure_context():
        panel_height = 0.5 + 0.16 * len(crits) * (len(methods) + 1)
        fig = new_figure(3.3 * ncol + 1.8, nrow * panel_height + 0.4)
        grid = fig.subplots(nrow, ncol, sharey=True, squeeze=False)
        axes = grid.ravel()
        for ax in axes[len(matchups) :]:
            ax.set_axis_off()
        for ax, m in zip(axes, matchups):
            ax.axvline(0.5, color="#888888", linestyle="--", linewidth=0.9)
            sub = intervals[intervals["matchup"] == m]
            for r in sub.itertuples(index=False):
                k = methods.index(r.method)
                y = crits.index(r.criterion) + (k + 1) * step - 0.5
                lo, hi, est = float(r.ci_low), float(r.ci_high), float(r.estimate)
                excludes = np.isfinite(lo) and np.isfinite(hi) and (lo > 0.5 or hi < 0.5)
                alpha = 1.0 if excludes else 0.45
                ax.plot([lo, hi], [y, y], color=colour_for(k), linewidth=1.8, alpha=alpha, solid_capstyle="butt")
                ax.plot([est], [y], "o", color=colour_for(k), markersize=3.5, alpha=alpha)
            ax.set_xlim(0, 1)
            ax.set_xticks([0, 0.5, 1.0], ["0%", "50%", "100%"])
            ax.set_title(plain(m), loc="left")
        for row in range(nrow):
            axes[row * ncol].set_yticks(range(len(crits)), [plain(c) for c in crits])
        axes[0].set_ylim(len(crits) - 0.5, -0.5)
        for k, meth in enumerate(methods):
            axes[ncol - 1].plot([], [], "o-", color=colour_for(k), label=plain(meth))
        axes[ncol - 1].legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7.5, title="interval")
        return figure_to_svg(fig, fig_id)
