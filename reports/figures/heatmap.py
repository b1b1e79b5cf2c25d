"""Reader x criterion heat maps per matchup (Figs. 10-13 of the motivating audit).

One heat map per matchup: a row per reader (their raw preference rate for the focal system),
then the human GLMM estimate and the judge's rate, separated by a rule; columns are the
criteria. Diverging colours centred on 50 %: red = prefers the focal system, blue = the other.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.colors import TwoSlopeNorm

from reports.figures._svg import empty_svg, figure_context, figure_to_svg, new_figure, plain

COLUMNS = ("row", "kind", "criterion", "rate")
#: kinds in drawing order; readers first
KIND_ORDER = ("reader", "human", "glmm", "judge")


def reader_heatmap_svg(
    rates: pd.DataFrame,
    *,
    title: str = "",
    focal_label: str = "focal system",
    fig_id: str = "fig-heatmap",
) -> str:
    """Draw one matchup's reader x criterion heat map and return inline SVG.

    Parameters
    ----------
    rates : DataFrame
        Long: ``row`` (label: reader id, "human GLMM", judge name), ``kind`` ("reader",
        "glmm" or "judge"), ``criterion``, ``rate`` (probability of choosing the focal system;
        NaN = no votes, drawn grey). Optional ``n`` (votes behind a reader's rate).
        Criterion order = first appearance; rows: readers in first-appearance order, then
        GLMM, then judge.
    title : str
        Usually the matchup label.
    focal_label : str
        Colour-bar wording.
    fig_id : str
        Id prefix of the SVG.
    """
    miss = [c for c in COLUMNS if c not in rates.columns]
    if miss or len(rates) == 0:
        return empty_svg(fig_id, "No reader rates to draw" + (f" (missing {', '.join(miss)})" if miss else ""))
    criteria = list(dict.fromkeys(rates["criterion"]))
    rows: list[tuple[str, str]] = []
    for kind in KIND_ORDER:
        sub = rates[rates["kind"] == kind]
        rows += [(kind, r) for r in dict.fromkeys(sub["row"])]
    index = {key: i for i, key in enumerate(rows)}
    grid = np.full((len(rows), len(criteria)), np.nan)
    for r in rates.itertuples(index=False):
        key = (r.kind, r.row)
        if key in index:
            grid[index[key], criteria.index(r.criterion)] = float(r.rate)
    n_readers = sum(1 for k, _ in rows if k == "reader")
    with figure_context():
        fig = new_figure(1.6 + 1.05 * len(criteria), 1.0 + 0.32 * len(rows))
        ax = fig.add_subplot()
        cmap = _cmap()
        mesh = ax.pcolormesh(
            np.ma.masked_invalid(grid), cmap=cmap, norm=TwoSlopeNorm(0.5, 0.0, 1.0), edgecolors="white", linewidth=1.0
        )
        for i in range(grid.shape[0]):
            for j in range(grid.shape[1]):
                v = grid[i, j]
                txt = "n/a" if not np.isfinite(v) else f"{100 * v:.0f}%"
                dark = np.isfinite(v) and abs(v - 0.5) > 0.3
                ax.text(
                    j + 0.5,
                    i + 0.5,
                    txt,
                    ha="center",
                    va="center",
                    fontsize=7.5,
                    color="white" if dark else "#222222",
                    fontweight="bold" if rows[i][0] != "reader" else "normal",
                )
        if 0 < n_readers < len(rows):
            ax.axhline(n_readers, color="#222222", linewidth=1.6)
        ax.set_xticks(np.arange(len(criteria)) + 0.5, [plain(c) for c in criteria], rotation=90, ha="center")
        ax.set_yticks(np.arange(len(rows)) + 0.5, [plain(r) for _, r in rows])
        ax.set_ylim(len(rows), 0)
        ax.tick_params(length=0)
        for side in ("left", "bottom"):
            ax.spines[side].set_visible(False)
        if title:
            ax.set_title(plain(title), loc="left")
        bar = fig.colorbar(mesh, ax=ax, shrink=0.8, pad=0.02, ticks=[0, 0.25, 0.5, 0.75, 1.0])
        bar.ax.set_yticklabels(["0%", "25%", "50%", "75%", "100%"])
        bar.set_label(plain(f"preference for {focal_label}"), fontsize=8)
        return figure_to_svg(fig, fig_id)


def _cmap():
    from matplotlib import colormaps

    return colormaps["RdBu_r"].with_extremes(bad="#dddddd")
