"""Reader-clustering dendrograms (Fig. 2 of the motivating audit).

Side-by-side dendrograms of the readers clustered on two profiles (per-reader logistic
coefficients of overall preference on the criterion votes; within-reader Cohen's kappa
between each criterion and overall). Shared inner sub-clusters on both sides are the
evidence of structured, not random, disagreement.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reports.figures._svg import empty_svg, figure_context, figure_to_svg, new_figure, plain


@dataclass(frozen=True)
class DendrogramPanel:
    """One dendrogram: a SciPy linkage matrix ((n-1) x 4) and its n leaf labels."""

    title: str
    linkage: np.ndarray
    labels: tuple[str, ...]


def dendrogram_svg(panels: list[DendrogramPanel], *, fig_id: str = "fig-dendrogram") -> str:
    """Draw one dendrogram per panel (side by side) and return inline SVG.

    Parameters
    ----------
    panels : list of DendrogramPanel
        Panels whose linkage is not a valid (n-1) x 4 SciPy linkage for n labels are drawn as
        a note instead of raising.
    fig_id : str
        Id prefix of the SVG.
    """
    from scipy.cluster import hierarchy

    if not panels:
        return empty_svg(fig_id, "No reader clustering to draw")
    with figure_context():
        fig = new_figure(4.2 * len(panels), 3.2)
        axes = np.atleast_1d(fig.subplots(1, len(panels), squeeze=False)[0])
        for ax, panel in zip(axes, panels):
            z = np.asarray(panel.linkage, dtype=float)
            ax.set_title(plain(panel.title), loc="left")
            if z.ndim != 2 or z.shape != (len(panel.labels) - 1, 4) or len(panel.labels) < 2:
                ax.text(0.5, 0.5, "clustering data malformed", ha="center", transform=ax.transAxes)
                ax.set_axis_off()
                continue
            hierarchy.dendrogram(
                z,
                labels=[plain(x) for x in panel.labels],
                ax=ax,
                orientation="left",
                color_threshold=0.7 * float(z[:, 2].max()),
                above_threshold_color="#888888",
                leaf_font_size=8,
            )
            ax.set_xlabel("linkage distance")
            ax.spines["left"].set_visible(False)
        return figure_to_svg(fig, fig_id)
