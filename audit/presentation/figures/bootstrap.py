"""Interval comparison per cell: GLMM Wald interval beside the cluster bootstraps.

A forest plot: one block per matchup x criterion, one interval per method (GLMM, pairs,
readers, two-way), chance dashed. Intervals that exclude 50 % are drawn solid, the others
faded, which shows the significance tally of the motivating audit at a glance. The method
legend stands at the right of every row of panels. Drawn directly as SVG
(:mod:`judge_transfer_audit.presentation.figures._draw`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_transfer_audit.presentation.figures._draw import Canvas, Panel, text_width
from judge_transfer_audit.presentation.figures._svg import colour_for, empty_svg, plain, verify_svg

COLUMNS = ("matchup", "criterion", "method", "estimate", "ci_low", "ci_high")
MAX_COLUMNS = 3  #: panels per row; more matchups wrap onto further rows
MAX_CRITERIA = 30  #: criteria per panel; more: the first ones, and the figure says so
_PANEL_W = 190.0
_STEP = 6.5  #: points between two methods' intervals
DEGENERATE_INK = "#999999"


def bootstrap_comparison_svg(intervals: pd.DataFrame, *, fig_id: str = "fig-bootstrap") -> str:
    """Draw the interval comparison and return inline SVG.

    Parameters
    ----------
    intervals : DataFrame
        ``matchup, criterion, method, estimate, ci_low, ci_high`` (probability scale), one row
        per cell x method. Method order = first appearance. Optional ``degenerate`` (True for
        a GLMM interval the result flags degenerate: drawn grey and dashed, counted in a note).
    fig_id : str
        Id prefix of the SVG.
    """
    miss = [c for c in COLUMNS if c not in intervals.columns]
    if miss or len(intervals) == 0:
        return empty_svg(fig_id, "No bootstrap intervals to draw" + (f" (missing {', '.join(miss)})" if miss else ""))
    methods = list(dict.fromkeys(intervals["method"].tolist()))
    matchups = list(dict.fromkeys(intervals["matchup"].tolist()))
    crits = list(dict.fromkeys(intervals["criterion"].tolist()))
    n_crits = len(crits)
    crits = crits[:MAX_CRITERIA]
    intervals = intervals[intervals["criterion"].isin(crits)]
    ncol = min(len(matchups), MAX_COLUMNS)
    crit_labels = [plain(c) for c in crits]
    label_w = max(text_width(s, 7.0) for s in crit_labels) + 10
    block = _STEP * (len(methods) + 1)
    panel_h = block * len(crits)
    row_h = panel_h + 50
    c = Canvas()
    legend = [("-", colour_for(k), plain(m)) for k, m in enumerate(methods)]
    if len(crits) < n_crits:
        c.text(2, 8, f"first {len(crits)} of {n_crits:,} criteria drawn; every interval in uncertainty.csv", size=7.5)
    n_degenerate = 0
    for idx, m in enumerate(matchups):
        row, col = divmod(idx, ncol)
        x = label_w + col * (_PANEL_W + 30)
        y = 30 + row * row_h
        p = Panel(c, x, y, _PANEL_W, panel_h, (0.0, 1.0), (0.0, panel_h))
        p.frame(left=col == 0)
        p.vline(0.5, dash="4 3")
        p.xticks([0, 0.5, 1.0], ["0%", "50%", "100%"])
        p.title(plain(m, 40))
        if col == 0:
            for j, lab in enumerate(crit_labels):
                c.text(x - 5, y + j * block + block / 2 + 2.4, lab, size=7.0, anchor="end")
        sub = intervals[intervals["matchup"] == m]
        for r in sub.itertuples(index=False):
            k = methods.index(r.method)
            yy = y + crits.index(r.criterion) * block + (k + 1) * _STEP
            lo, hi, est = float(r.ci_low), float(r.ci_high), float(r.estimate)
            if bool(getattr(r, "degenerate", False)):  # a boundary fit: grey, dashed, open
                c.polyline([p.sx(lo), p.sx(hi)], [yy, yy], colour=DEGENERATE_INK, width=1.2, dash="2 2")
                if np.isfinite(est):
                    c.marker("o", p.sx(est), yy, size=3.5, fill="#ffffff", stroke=DEGENERATE_INK)
                n_degenerate += 1
                continue
            excludes = np.isfinite(lo) and np.isfinite(hi) and (lo > 0.5 or hi < 0.5)
            alpha = 1.0 if excludes else 0.45
            if np.isfinite(lo) and np.isfinite(hi):
                c.polyline([p.sx(lo), p.sx(hi)], [yy, yy], colour=colour_for(k), width=1.8, opacity=alpha)
            if np.isfinite(est):
                c.marker("o", p.sx(est), yy, size=3.5, fill=colour_for(k), opacity=alpha)
        if col == ncol - 1 or idx == len(matchups) - 1:
            c.legend(x + _PANEL_W + 14, y - 4, legend, title="interval")
    if n_degenerate:
        bottom = 30 + ((len(matchups) - 1) // ncol) * row_h + panel_h + 40
        c.polyline([2, 22], [bottom - 3, bottom - 3], colour=DEGENERATE_INK, width=1.2, dash="2 2")
        c.text(26, bottom, f"grey, dashed: degenerate GLMM fit ({n_degenerate}), not the humans' preference", size=7.5)
    svg = c.svg(fig_id)
    verify_svg(svg)
    return svg
