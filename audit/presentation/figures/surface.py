"""Surface-feature small multiples (Appendix C of the motivating audit): judge and humans side by side.

Two panels per feature: on the left each pair's feature difference (focal minus other) against
the judge's score difference, on the right the same difference against the pair's share of
human votes for the focal story (ties left out). Each panel carries its fitted line and, in its
title, its r: the judge's r beside the humans' r (the paper's -0.70 beside -0.59). Slopes and r
are computed upstream by :mod:`judge_transfer_audit.statistics.surface`; the figure computes nothing but where to draw.
Points are one colour: matchups are not told apart by colour (30 recycled colours would not be
legible); the per-matchup numbers are in the section's tables. At most ``max_points`` points
per panel are drawn (every k-th pair, deterministic), and the figure says how many.

Drawn directly as SVG (:mod:`judge_transfer_audit.presentation.figures._draw`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_transfer_audit.presentation.figures._draw import Canvas, Panel, nice_ticks, tick_label
from judge_transfer_audit.presentation.figures._svg import PALETTE, empty_svg, plain, verify_svg

COLUMNS = ("feature", "x", "y")
PAIRS_PER_ROW = 2  #: features per row (each a judge panel and a humans panel)


def features_per_row(has_humans: bool) -> int:
    """Features drawn side by side: two (a judge and a humans panel each), or four judge panels."""
    return PAIRS_PER_ROW if has_humans else 2 * PAIRS_PER_ROW


MAX_POINTS = 400  #: points drawn per panel
_W, _H = 128.0, 92.0
_HUMAN = "#E69F00"


def _fmt_r(x) -> str:
    return "–" if x is None or not np.isfinite(float(x)) else f"{float(x):+.2f}"


def _limits(values: np.ndarray) -> tuple[float, float]:
    v = values[np.isfinite(values)]
    if not v.size:
        return (-1.0, 1.0)
    lo, hi = float(v.min()), float(v.max())
    if hi - lo < 1e-12:
        lo, hi = lo - 1.0, hi + 1.0
    pad = 0.06 * (hi - lo)
    return lo - pad, hi + pad


def _thin(n: int, limit: int) -> np.ndarray:
    return np.arange(n) if n <= limit else np.unique(np.linspace(0, n - 1, limit).round().astype(int))


def _scatter(c: Canvas, p: Panel, x, y, colour: str, slope: float) -> None:
    ok = np.isfinite(x) & np.isfinite(y)
    for a, b in zip(x[ok], y[ok]):
        c.marker("o", p.sx(a), p.sy(b), size=3.0, fill=colour, opacity=0.55)
    if np.isfinite(slope) and ok.any():
        x0, y0 = float(np.mean(x[ok])), float(np.mean(y[ok]))
        xs = np.array([np.min(x[ok]), np.max(x[ok])])
        ys = np.clip(y0 + slope * (xs - x0), min(p.ylim), max(p.ylim))
        xs = np.where(slope != 0, x0 + (ys - y0) / (slope or 1.0), xs)
        c.polyline([p.sx(v) for v in xs], [p.sy(v) for v in ys], colour="#C00000", width=1.4)


def _axes(p: Panel, ylim, ylabels) -> None:
    p.frame()
    p.hline(0.0 if ylabels is None else 0.5)
    p.vline(0.0, colour="#bbbbbb", width=0.7)
    xt = [t for t in nice_ticks(*p.xlim, 3) if p.xlim[0] <= t <= p.xlim[1]]
    p.xticks(xt, [tick_label(t) for t in xt], size=6.5)
    if ylabels is None:
        yt = [t for t in nice_ticks(ylim[1], ylim[0], 3) if ylim[1] <= t <= ylim[0]]
        p.yticks(yt, [tick_label(t) for t in yt], size=6.5)
    else:
        p.yticks([0.0, 0.5, 1.0], ylabels, size=6.5)


def feature_scatter_svg(
    points: pd.DataFrame,
    *,
    panels: pd.DataFrame | None = None,
    y_label: str = "judge score difference (focal - other)",
    fig_id: str = "fig-surface",
    max_panels: int = 12,
    max_points: int = MAX_POINTS,
    start: int = 0,
) -> str:
    """Draw a judge panel and (with ``h``) a humans panel per feature and return inline SVG.

    Parameters
    ----------
    points : DataFrame
        ``feature`` (panel), ``x`` (feature difference), ``y`` (judge score difference);
        optional ``h`` (the pair's share of human votes for the focal story, 0-1).
    panels : DataFrame, optional
        One row per feature: ``feature``, ``r`` (the judge's r of the differences), ``slope``
        (score points per feature unit; drawn through the points' mean), ``r_human`` (the
        humans' r), ``slope_human`` (vote share per feature unit). Panels are ordered by
        ``|r|``, largest first; without ``panels``, in first-appearance order.
    y_label : str
        The judge's outcome wording (above the grid).
    fig_id : str
        Id prefix of the SVG.
    max_panels : int
        At most this many features are drawn.
    max_points : int
        At most this many points per panel.
    start : int
        Draw the ordered features from this one on (a tall figure printed in parts, each part
        one call): ``features[start : start + max_panels]``.
    """
    miss = [c for c in COLUMNS if c not in points.columns]
    if miss or len(points) == 0:
        return empty_svg(
            fig_id, "No surface-feature points to draw" + (f" (missing {', '.join(miss)})" if miss else "")
        )
    features = list(dict.fromkeys(points["feature"].tolist()))
    info = {}
    if panels is not None and len(panels):
        info = {str(r.feature): r for r in panels.itertuples(index=False)}

        def order(f):
            r = float(getattr(info.get(f), "r", np.nan)) if f in info else np.nan
            return -abs(r) if np.isfinite(r) else 0.0

        features.sort(key=order)
    features = features[start : start + max_panels]
    has_h = "h" in points.columns and pd.to_numeric(points["h"], errors="coerce").notna().any()
    per_row = features_per_row(has_h)
    block_w = (2 * _W + 50) if has_h else _W + 40
    c = Canvas()
    head = plain(y_label, 80) + (
        " (left, blue) | humans' share of votes for the focal story, ties left out (right, orange)" if has_h else ""
    )
    c.text(4, 12, head, size=7.5)
    note_y = 12.0
    sizes = points["feature"].value_counts()
    thinned = any(int(sizes.get(f, 0)) > max_points for f in features)
    top = 44 + (14 if thinned else 0)  # the thinning note gets its own line above the first panel labels
    for idx, feat in enumerate(features):
        row, col = divmod(idx, per_row)
        x0 = 40 + col * (block_w + 20)
        y0 = top + row * (_H + 64)
        sub = points[points["feature"] == feat]
        sub = sub.iloc[_thin(len(sub), max_points)]
        x = sub["x"].astype(float).to_numpy()
        y = sub["y"].astype(float).to_numpy()
        meta = info.get(feat)
        c.text(x0 - 36, y0 - 20, plain(feat, 40), size=8.0, bold=True)
        xlim = _limits(x)
        ylim_j = _limits(y)[::-1]
        pj = Panel(c, x0, y0, _W, _H, xlim, ylim_j)
        _axes(pj, ylim_j, None)
        _scatter(c, pj, x, y, PALETTE[0], float(getattr(meta, "slope", np.nan)) if meta is not None else np.nan)
        pj.title(f"judge r {_fmt_r(getattr(meta, 'r', np.nan))}", size=7.5)
        pj.xlabel("difference, focal - other", size=6.5, offset=20)
        if has_h:
            h = pd.to_numeric(sub["h"], errors="coerce").to_numpy(dtype=float)
            ph = Panel(c, x0 + _W + 44, y0, _W, _H, xlim, (1.0, 0.0))
            _axes(ph, (1.0, 0.0), ["0%", "50%", "100%"])
            slope_h = float(getattr(meta, "slope_human", np.nan)) if meta is not None else np.nan
            _scatter(c, ph, x, h, _HUMAN, slope_h)
            ph.title(f"humans r {_fmt_r(getattr(meta, 'r_human', np.nan))}", size=7.5)
            ph.xlabel("difference, focal - other", size=6.5, offset=20)
    if thinned:
        c.text(
            4,
            note_y + 11,
            f"at most {max_points:,} pairs drawn per panel (every k-th pair); r and lines use all",
            size=7.0,
            colour="#555555",
        )
    svg = c.svg(fig_id)
    verify_svg(svg)
    return svg
