"""Surface-feature scatter plots (Appendix C of the motivating audit).

One small panel per feature: the within-pair feature difference (focal minus other) against
the judge's score difference or the humans' preference, coloured by matchup. A judge that
tracks a feature the readers ignore shows a slope on the judge panels and none on the human
ones.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from reports.figures._svg import colour_for, empty_svg, figure_context, figure_to_svg, new_figure, plain

COLUMNS = ("feature", "x", "y")


def feature_scatter_svg(
    points: pd.DataFrame,
    *,
    y_label: str = "judge score difference (focal - other)",
    fig_id: str = "fig-surface",
    max_panels: int = 8,
) -> str:
    """Draw one scatter panel per feature and return inline SVG.

    Parameters
    ----------
    points : DataFrame
        ``feature`` (panel), ``x`` (feature difference), ``y`` (outcome); optional ``group``
        (colour, e.g. matchup) and ``r`` (a correlation computed upstream, shown in the
        panel title; figures never compute statistics).
    y_label : str
        Outcome wording.
    fig_id : str
        Id prefix of the SVG.
    max_panels : int
        At most this many features (in first-appearance order) are drawn.
    """
    miss = [c for c in COLUMNS if c not in points.columns]
    if miss or len(points) == 0:
        return empty_svg(fig_id, "No surface-feature points to draw" + (f" (missing {', '.join(miss)})" if miss else ""))
    features = list(dict.fromkeys(points["feature"]))[:max_panels]
    groups = list(dict.fromkeys(points["group"])) if "group" in points.columns else [None]
    ncol = min(5, len(features))
    nrow = int(np.ceil(len(features) / ncol))
    with figure_context():
        fig = new_figure(2.3 * ncol + 1.6, 2.2 * nrow + 0.5)
        axes = fig.subplots(nrow, ncol, squeeze=False).ravel()
        for ax, feat in zip(axes, features):
            sub = points[points["feature"] == feat]
            for k, g in enumerate(groups):
                part = sub if g is None else sub[sub["group"] == g]
                ax.plot(part["x"].astype(float), part["y"].astype(float), "o", markersize=3.2, alpha=0.8,
                        color=colour_for(k), label=None if g is None else plain(g))
            ax.axhline(0, color="#bbbbbb", linewidth=0.7)
            ax.axvline(0, color="#bbbbbb", linewidth=0.7)
            title = plain(feat)
            if "r" in sub.columns and len(sub) and np.isfinite(float(sub["r"].iloc[0])):
                title += f"  (r = {float(sub['r'].iloc[0]):.2f})"
            ax.set_title(title, loc="left", fontsize=8.5)
            ax.set_xlabel("feature difference", fontsize=7.5)
        for ax in axes[len(features):]:
            ax.set_axis_off()
        for row in range(nrow):
            axes[row * ncol].set_ylabel(plain(y_label, 60), fontsize=7)
        if groups != [None]:
            axes[len(features) - 1].legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
        return figure_to_svg(fig, fig_id)
