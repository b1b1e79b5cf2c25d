"""Figure 2 of the motivating audit: each reader profile as a heat map beside its dendrogram.

For the readers' logistic weights (overall on the criterion votes) and their criterion-overall
kappas: the dendrogram on the left, and the profile it clustered (reader x criterion) on the
right, rows in the dendrogram's leaf order, each cell printed with its value. Readers that share
a sub-cluster in both trees then show the same stripes in both heat maps.

Legible at any number of readers: past ``max_leaves`` readers the tree is cut to its last
``max_leaves`` clusters (SciPy's ``truncate_mode="lastp"``), each row is a cluster labelled with
its size and shows the mean profile of its readers.

Drawn directly as SVG (:mod:`judge_transfer_audit.presentation.figures._draw`): rectangles, tree paths and text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from judge_transfer_audit.presentation.figures._draw import Canvas, diverging, text_width
from judge_transfer_audit.presentation.figures._svg import empty_svg, plain, verify_svg
from judge_transfer_audit.presentation.figures._tree import tree_layout

MAX_CRITERIA = 30  #: profile columns drawn (the first ones)
MAX_LEAVES = 30  #: rows per panel; larger trees are cut to this many clusters
_ROW_H = 13.0
_CELL_W = 34.0
_DEND_W = 80.0
_FONT = 7.0


@dataclass(frozen=True)
class ClusterPanel:
    """One profile: its title, SciPy linkage ((n-1) x 4), leaf labels and the clustered profile
    (``label`` column + one column per criterion, one row per label)."""

    title: str
    linkage: np.ndarray
    labels: tuple[str, ...]
    profile: pd.DataFrame
    value_label: str = "value"


def _members(z: np.ndarray, n: int, node: int) -> list[int]:
    """Original observations under ``node`` of linkage ``z`` (n observations)."""
    out, stack = [], [node]
    while stack:
        k = stack.pop()
        if k < n:
            out.append(k)
        else:
            row = z[k - n]
            stack += [int(row[1]), int(row[0])]
    return out


def _layout(panel: ClusterPanel, max_leaves: int):
    """Tree segments, row labels and row values (mean profile per leaf cluster), in leaf order."""
    z = np.asarray(panel.linkage, dtype=float)
    n = len(panel.labels)
    truncated = n > max_leaves
    tree = tree_layout(z, list(panel.labels), lastp=max_leaves if truncated else None)
    prof = panel.profile.set_index("label")
    prof = prof[list(prof.columns)[:MAX_CRITERIA]]
    prof.index = prof.index.astype(str)
    criteria = [str(c) for c in prof.columns]
    labels, values = [], []
    for node in tree.leaves:
        names = [str(panel.labels[k]) for k in _members(z, n, int(node))]
        block = prof.reindex(names).to_numpy(dtype=float)
        with np.errstate(all="ignore"):
            values.append(
                np.array([np.nanmean(col) if np.isfinite(col).any() else np.nan for col in block.T])
                if len(block)
                else np.full(len(criteria), np.nan)
            )
        labels.append(plain(names[0], 24) if len(names) == 1 else f"{len(names):,} readers")
    return tree.icoord, tree.dcoord, labels, np.vstack(values), criteria, truncated


def cluster_heatmap_svg(
    panels: list[ClusterPanel], *, fig_id: str = "fig-clusters", max_leaves: int = MAX_LEAVES
) -> str:
    """Dendrogram + profile heat map per panel, side by side; returns inline SVG."""
    panels = [
        p
        for p in panels
        if len(p.labels) >= 2 and np.asarray(p.linkage).shape == (len(p.labels) - 1, 4) and "label" in p.profile.columns
    ]
    if not panels:
        return empty_svg(fig_id, "No reader profiles to draw")
    laid = [_layout(p, max_leaves) for p in panels]
    n_rows = max(len(lab) for _, _, lab, _, _, _ in laid)
    header_h = max(text_width(plain(c, 22), _FONT) for *_, crit, _ in laid for c in crit) + 8
    c = Canvas()
    x0 = 4.0
    title_y = 14.0
    grid_top = title_y + 30 + header_h
    for panel, (icoord, dcoord, labels, values, criteria, truncated) in zip(panels, laid):
        finite = values[np.isfinite(values)]
        span = float(np.max(np.abs(finite))) if finite.size else 1.0
        span = span if span > 0 else 1.0
        c.text(x0, title_y, plain(panel.title, 70), size=7.5, bold=True)
        c.text(x0, title_y + 11, plain(panel.value_label, 50) + " (red high, blue low)", size=7.0)
        if truncated:
            c.text(
                x0,
                title_y + 21,
                f"{len(panel.labels):,} readers cut to {len(labels)} clusters (mean profile per cluster)",
                size=7.0,
                colour="#555555",
            )
        # the tree: root at the left, leaves beside their rows
        dmax = max((max(d) for d in dcoord), default=1.0) or 1.0
        segments = []
        for xs, ys in zip(dcoord, icoord):
            pts = [(x0 + _DEND_W * (1 - d / dmax), grid_top + (i / 10.0) * _ROW_H) for d, i in zip(xs, ys)]
            segments.append("M" + " L".join(f"{px:.1f} {py:.1f}" for px, py in pts))
        c.path(" ".join(segments), colour="#555555", width=1.0)
        c.text(x0, grid_top + n_rows * _ROW_H + 12, f"distance (0 to {dmax:.2g}, right to left)", size=6.5)
        hx = x0 + _DEND_W + 4
        for j, crit in enumerate(criteria):
            c.text(hx + (j + 0.5) * _CELL_W + 2.4, grid_top - 4, plain(crit, 22), size=_FONT, rotate=True)
        for i, label in enumerate(labels):
            y = grid_top + i * _ROW_H
            for j, v in enumerate(values[i]):
                colour = diverging(0.5 + v / (2 * span)) if np.isfinite(v) else diverging(np.nan)
                c.rect(hx + j * _CELL_W, y, _CELL_W, _ROW_H, colour)
                if np.isfinite(v):
                    c.text(
                        hx + (j + 0.5) * _CELL_W,
                        y + _ROW_H / 2 + 2.4,
                        f"{v:.2f}",
                        size=6.5,
                        anchor="middle",
                        colour="#ffffff" if abs(v) > 0.6 * span else "#222222",
                    )
            c.text(hx + len(criteria) * _CELL_W + 4, y + _ROW_H / 2 + 2.5, label, size=_FONT)
        label_w = max(text_width(s, _FONT) for s in labels)
        width = max(
            _DEND_W + 4 + len(criteria) * _CELL_W + 4 + label_w,
            text_width(plain(panel.title, 70), 7.5, bold=True),
        )
        x0 += width + 24
    svg = c.svg(fig_id)
    verify_svg(svg)
    return svg
