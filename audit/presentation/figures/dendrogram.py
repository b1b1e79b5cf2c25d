"""Reader-clustering dendrograms (Fig. 2 of the motivating audit).

Side-by-side dendrograms of the readers clustered on two profiles (per-reader logistic
coefficients of overall preference on the criterion votes; within-reader Cohen's kappa
between each criterion and overall). Shared inner sub-clusters on both sides are the
evidence of structured, not random, disagreement.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from judge_transfer_audit.presentation.figures._draw import Canvas, nice_ticks, text_width, tick_label
from judge_transfer_audit.presentation.figures._svg import empty_svg, plain, verify_svg
from judge_transfer_audit.presentation.figures._tree import tree_layout

MAX_LEAVES = 40  #: leaves drawn; larger trees are cut to this many clusters (labelled with their size)
_ROW = 13.0
_W = 200.0


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
    if not panels:
        return empty_svg(fig_id, "No reader clustering to draw")
    c = Canvas()
    x0 = 4.0
    for panel in panels:
        z = np.asarray(panel.linkage, dtype=float)
        c.text(x0, 12, plain(panel.title), size=8.5)
        if z.ndim != 2 or z.shape != (len(panel.labels) - 1, 4) or len(panel.labels) < 2:
            c.text(x0, 36, "clustering data malformed", size=8, colour="#666666")
            x0 += _W + 40
            continue
        n = len(panel.labels)
        cut = n > MAX_LEAVES
        tree = tree_layout(z, [plain(x) for x in panel.labels], lastp=MAX_LEAVES if cut else None)
        leaves = [f"{lab.strip('()')} leaves" if cut and lab.startswith("(") else lab for lab in tree.labels]
        top = 24.0
        dmax = float(z[:, 2].max()) or 1.0
        segs = []
        for xs, ys in zip(tree.dcoord, tree.icoord):
            pts = [(x0 + _W * (1 - d / dmax), top + (len(leaves) - i / 10.0) * _ROW) for d, i in zip(xs, ys)]
            segs.append("M" + " L".join(f"{px:.1f} {py:.1f}" for px, py in pts))
        c.path(" ".join(segs), colour="#555555", width=1.0)
        for i, lab in enumerate(leaves):  # SciPy's leaf i sits at 10 i + 5, counted bottom to top
            c.text(x0 + _W + 4, top + (len(leaves) - (i + 0.5)) * _ROW + 2.5, lab, size=7.5)
        base = top + len(leaves) * _ROW
        c.line(x0, base + 2, x0 + _W, base + 2, colour="#444444", width=0.8)
        for t in nice_ticks(0.0, dmax, 3):
            if t <= dmax:
                px = x0 + _W * (1 - t / dmax)
                c.line(px, base + 2, px, base + 5, colour="#444444", width=0.8)
                c.text(px, base + 13, tick_label(t), size=6.5, anchor="middle")
        c.text(x0 + _W / 2, base + 25, "linkage distance", size=7.5, anchor="middle")
        x0 += _W + 12 + max(text_width(s, 7.5) for s in leaves) + 30
    svg = c.svg(fig_id)
    verify_svg(svg)
    return svg
