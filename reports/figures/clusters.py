"""Figure 2 of the motivating audit: each reader profile as a heat map beside its dendrogram.

For the readers' logistic weights (overall on the criterion votes) and their criterion-overall
kappas: the dendrogram on the left, and the profile it clustered (reader x criterion) on the
right, rows in the dendrogram's leaf order, each cell printed with its value. Readers that share
a sub-cluster in both trees then show the same stripes in both heat maps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from reports.figures._svg import empty_svg, figure_context, figure_to_svg, new_figure, plain


@dataclass(frozen=True)
class ClusterPanel:
    """One profile: its title, SciPy linkage ((n-1) x 4), leaf labels and the clustered profile
    (``label`` column + one column per criterion, one row per label)."""

    title: str
    linkage: np.ndarray
    labels: tuple[str, ...]
    profile: pd.DataFrame
    value_label: str = "value"


def cluster_heatmap_svg(panels: list[ClusterPanel], *, fig_id: str = "fig-clusters") -> str:
    """Dendrogram + profile heat map per panel, side by side; returns inline SVG."""
    from matplotlib import colormaps
    from matplotlib.colors import TwoSlopeNorm
    from scipy.cluster import hierarchy

    panels = [
        p
        for p in panels
        if len(p.labels) >= 2 and np.asarray(p.linkage).shape == (len(p.labels) - 1, 4) and "label" in p.profile.columns
    ]
    if not panels:
        return empty_svg(fig_id, "No reader profiles to draw")
    n = max(len(p.labels) for p in panels)
    n_crit = max(len(p.profile.columns) - 1 for p in panels)
    with figure_context():
        fig = new_figure(max(5.0, 1.6 + 0.62 * n_crit) * len(panels) + 0.4, 1.6 + 0.3 * n)
        grid = fig.add_gridspec(1, 2 * len(panels), width_ratios=[1.0, max(1.6, 0.5 * n_crit)] * len(panels))
        cmap = colormaps["RdBu_r"].with_extremes(bad="#dddddd")
        for k, panel in enumerate(panels):
            axd, axh = fig.add_subplot(grid[0, 2 * k]), fig.add_subplot(grid[0, 2 * k + 1])
            z = np.asarray(panel.linkage, dtype=float)
            tree = hierarchy.dendrogram(z, no_plot=True, orientation="left", labels=list(panel.labels))
            for xs, ys in zip(tree["dcoord"], tree["icoord"]):
                axd.plot(xs, ys, color="#555555", linewidth=1.0, clip_on=False)
            leaves = tree["ivl"]  # bottom to top
            axd.set_ylim(0, 10 * len(leaves))
            axd.invert_xaxis()
            axd.set_yticks([])
            axd.set_xlabel("distance", fontsize=7)
            axd.tick_params(labelsize=6.5)
            for side in ("top", "right", "left"):
                axd.spines[side].set_visible(False)
            prof = panel.profile.set_index("label").reindex(leaves)
            values = prof.to_numpy(dtype=float)
            finite = values[np.isfinite(values)]
            span = float(np.max(np.abs(finite))) if finite.size else 1.0
            span = span if span > 0 else 1.0
            # clip_on=False: the mesh fills the axes exactly, and a clip path's id would hash the laid-out
            # box, which is not byte-stable between renders in one process
            axh.pcolormesh(np.ma.masked_invalid(values), cmap=cmap, norm=TwoSlopeNorm(0.0, -span, span), clip_on=False)
            for i in range(values.shape[0]):
                for j in range(values.shape[1]):
                    v = values[i, j]
                    if np.isfinite(v):
                        axh.text(
                            j + 0.5,
                            i + 0.5,
                            f"{v:.2f}",
                            ha="center",
                            va="center",
                            fontsize=6.5,
                            color="#ffffff" if abs(v) > 0.6 * span else "#222222",
                        )
            axh.set_yticks(np.arange(len(leaves)) + 0.5, [plain(x, 24) for x in leaves], fontsize=7)
            axh.yaxis.tick_right()
            axh.set_xticks(
                np.arange(values.shape[1]) + 0.5, [plain(c, 22) for c in prof.columns], rotation=90, fontsize=7
            )
            axh.set_ylim(0, len(leaves))
            axh.set_title(
                plain(panel.title, 60) + "\n" + plain(panel.value_label, 50) + " (red high, blue low)",
                loc="right",
                fontsize=7.5,
            )
        return figure_to_svg(fig, fig_id)
