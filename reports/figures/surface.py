"""Surface-feature small multiples (Appendix C of the motivating audit).

One panel per feature: each pair's feature difference (focal minus other) against the judge's
score difference, with the fitted slope drawn through the points and, in the panel's title,
the judge's r beside the humans' r for the same feature (both computed upstream by
:mod:`audit.surface`; figures never compute statistics). A judge that tracks a feature the
readers ignore shows a steep line and a large judge r beside a small human r. Points are one
colour: matchups are not told apart by colour (30 recycled colours would not be legible);
the per-matchup numbers are in the section's tables.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from reports.figures._svg import PALETTE, empty_svg, figure_context, figure_to_svg, new_figure, plain

COLUMNS = ("feature", "x", "y")
NCOL = 4


def _fmt_r(x) -> str:
    return "–" if x is None or not np.isfinite(float(x)) else f"{float(x):+.2f}"


def feature_scatter_svg(
    points: pd.DataFrame,
    *,
    panels: pd.DataFrame | None = None,
    y_label: str = "judge score difference (focal - other)",
    fig_id: str = "fig-surface",
    max_panels: int = 12,
) -> str:
    """Draw one scatter panel per feature and return inline SVG.

    Parameters
    ----------
    points : DataFrame
        ``feature`` (panel), ``x`` (feature difference), ``y`` (judge score difference).
    panels : DataFrame, optional
        One row per feature: ``feature``, ``r`` (the judge's r of the differences), ``slope``
        (score points per feature unit; drawn through the points' mean), ``r_human`` (the
        humans' r: the pair's focal vote share against the feature difference). Panels are
        ordered by ``|r|``, largest first; without ``panels``, in first-appearance order.
    y_label : str
        Outcome wording (printed once, on the left of the grid).
    fig_id : str
        Id prefix of the SVG.
    max_panels : int
        At most this many features are drawn.
    """
    miss = [c for c in COLUMNS if c not in points.columns]
    if miss or len(points) == 0:
        return empty_svg(
            fig_id, "No surface-feature points to draw" + (f" (missing {', '.join(miss)})" if miss else "")
        )
    features = list(dict.fromkeys(points["feature"]))
    info = {}
    if panels is not None and len(panels):
        info = {str(r.feature): r for r in panels.itertuples(index=False)}
        features.sort(
            key=lambda f: (
                -abs(float(getattr(info.get(f), "r", 0.0) or 0.0))
                if f in info and np.isfinite(float(info[f].r))
                else 0.0
            )
        )
    features = features[:max_panels]
    ncol = min(NCOL, len(features))
    nrow = int(np.ceil(len(features) / ncol))
    with figure_context():
        fig = new_figure(2.75 * ncol + 0.6, 2.35 * nrow + 0.5)
        axes = fig.subplots(nrow, ncol, squeeze=False).ravel()
        for ax, feat in zip(axes, features):
            sub = points[points["feature"] == feat]
            x, y = sub["x"].astype(float).to_numpy(), sub["y"].astype(float).to_numpy()
            ax.plot(x, y, "o", markersize=2.6, alpha=0.55, color=PALETTE[0])
            ax.axhline(0, color="#bbbbbb", linewidth=0.7)
            ax.axvline(0, color="#bbbbbb", linewidth=0.7)
            row = info.get(feat)
            title = plain(feat, 30)
            if row is not None:
                slope = float(getattr(row, "slope", np.nan))
                ok = np.isfinite(x) & np.isfinite(y)
                if np.isfinite(slope) and ok.any():
                    x0, y0 = float(np.mean(x[ok])), float(np.mean(y[ok]))
                    xs = np.array([np.min(x[ok]), np.max(x[ok])])
                    ax.plot(xs, y0 + slope * (xs - x0), color="#C00000", linewidth=1.4)
                title += f"\njudge r {_fmt_r(row.r)} · humans r {_fmt_r(getattr(row, 'r_human', np.nan))}"
            ax.set_title(title, loc="left", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.locator_params(axis="both", nbins=4)
            ax.set_xlabel("difference, focal - other", fontsize=7)
        for ax in axes[len(features) :]:
            ax.set_axis_off()
        fig.supylabel(plain(y_label, 70), fontsize=8)
        return figure_to_svg(fig, fig_id)
