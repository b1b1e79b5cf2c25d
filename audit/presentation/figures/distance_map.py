"""The matchup x criterion map of the judge's distance from the human band, with each cell's decision.

One row per matchup, one column per criterion (the audit paper's figure 2 at a glance): the fill
is the judge's rate minus the human band, in points (0 inside the band; red: the judge above it,
blue: below it, on a fixed scale saturating at +-50 points so two reports read alike); each cell
prints the distance and its decision (FAIL cells framed in red, PASS in green). A cell with no
distance (INSUFFICIENT, ERROR) is grey. Drawn directly as SVG (:mod:`judge_transfer_audit.presentation.figures._draw`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_transfer_audit.presentation.figures._draw import Canvas, diverging, ink_for, text_width
from judge_transfer_audit.presentation.figures._svg import empty_svg, plain, verify_svg

COLUMNS = ("matchup", "criterion", "distance", "status")
MAX_ROWS = 40  #: matchups drawn; more: the first ones (worst first), and the map says so
MAX_CRITERIA = 30  #: criteria drawn; more: the first ones, and the map says so
SATURATION = 0.5  #: the distance (probability scale) at which the colour saturates
#: each decision's word in the cell and the frame it gets (None: the white cell edge)
DECISION = {
    "FAIL": ("FAIL", "#c62828"),
    "PASS": ("pass", "#1a7f37"),
    "INCONCLUSIVE": ("undecided", None),
    "INSUFFICIENT": ("too few", None),
    "ERROR": ("error", None),
}

_CELL_W = 62.0
_CELL_H = 28.0
_FONT = 7.5


def _fill(distance: float) -> str:
    """Diverging colour of a distance (fraction): white at 0, red above the band, blue below."""
    if distance != distance:
        return diverging(float("nan"))
    return diverging(0.5 + 0.5 * max(-1.0, min(1.0, distance / SATURATION)))


def distance_map_svg(cells: pd.DataFrame, *, fig_id: str = "fig-distance-map", margin: float | None = None) -> str:
    """Draw the map and return inline SVG.

    Parameters
    ----------
    cells : DataFrame
        ``matchup``, ``criterion``, ``distance`` (the judge's rate minus the human band, signed,
        probability scale; NaN when the cell was not compared), ``status`` (the cell decision).
        Row order = first appearance of the matchups, column order = first appearance of the
        criteria.
    fig_id : str
        Id prefix of the SVG.
    margin : float, optional
        The policy margin, named in the legend.
    """
    miss = [c for c in COLUMNS if c not in cells.columns]
    if miss or len(cells) == 0:
        return empty_svg(fig_id, "No cells to draw" + (f" (missing {', '.join(miss)})" if miss else ""))
    matchups = list(dict.fromkeys(cells["matchup"].astype(str).tolist()))
    criteria = list(dict.fromkeys(cells["criterion"].astype(str).tolist()))
    notes = []
    if len(matchups) > MAX_ROWS:
        notes.append(f"first {MAX_ROWS} of {len(matchups):,} matchups")
        matchups = matchups[:MAX_ROWS]
    if len(criteria) > MAX_CRITERIA:
        notes.append(f"first {MAX_CRITERIA} of {len(criteria):,} criteria")
        criteria = criteria[:MAX_CRITERIA]
    at = {
        (str(m), str(k)): (float(d), str(s))
        for m, k, d, s in zip(cells["matchup"], cells["criterion"], cells["distance"], cells["status"])
    }
    row_labels = [plain(m) for m in matchups]
    col_labels = [plain(k, 40) for k in criteria]
    label_w = max(text_width(s, _FONT) for s in row_labels) + 10
    rotated = max(text_width(s, _FONT) for s in col_labels) > _CELL_W - 4
    header_h = (max(text_width(s, _FONT) for s in col_labels) + 8) if rotated else 14.0

    c = Canvas()
    y = 10.0
    words = "judge minus the human band, points: red above, blue below, white inside"
    if margin is not None and margin == margin:
        words += f" (margin {100 * margin:.0f})"
    c.text(2, y, words, size=7.5, colour="#444444")
    y += 6
    for k, value in enumerate((-0.5, -0.25, 0.0, 0.25, 0.5)):  # the colour key: five swatches
        x = 2 + k * 40
        c.rect(x, y, 38, 9, _fill(value), stroke="#bbbbbb")
        label = f"{100 * value:+.0f}" if value else "0"
        c.text(x + 19, y + 7, label, size=6.5, anchor="middle", colour=ink_for(0.5 + value))
    c.text(2 + 5 * 40 + 6, y + 7, "FAIL framed red, pass framed green; grey: not compared", size=7, colour="#444444")
    y += 12
    if notes:
        y += 9
        c.text(2, y, plain("; ".join(notes) + "; every cell in cells.csv", 140), size=7.5, colour="#555555")
    y += header_h + 4
    for j, lab in enumerate(col_labels):
        x = label_w + (j + 0.5) * _CELL_W
        if rotated:
            c.text(x + 2.6, y - 4, lab, size=_FONT, rotate=True)
        else:
            c.text(x, y - 4, lab, size=_FONT, anchor="middle")
    for i, m in enumerate(matchups):
        top = y + i * _CELL_H
        c.text(label_w - 6, top + _CELL_H / 2 + 2.6, row_labels[i], size=_FONT, anchor="end")
        for j, k in enumerate(criteria):
            x = label_w + j * _CELL_W
            if (m, k) not in at:
                c.rect(x, top, _CELL_W, _CELL_H, "#ffffff", stroke="#eeeeee")
                continue
            d, status = at[(m, k)]
            word, frame = DECISION.get(status, (status.lower(), None))
            fill = _fill(d)
            c.rect(x, top, _CELL_W, _CELL_H, fill, stroke="#ffffff")
            if frame is not None:
                c.rect(x + 1.5, top + 1.5, _CELL_W - 3, _CELL_H - 3, "none", stroke=frame)
                c.rect(x + 2.5, top + 2.5, _CELL_W - 5, _CELL_H - 5, "none", stroke=frame)
            shade = 0.5 + 0.5 * max(-1.0, min(1.0, d / SATURATION)) if np.isfinite(d) else float("nan")
            ink = ink_for(shade)
            distance = f"{100 * d:+.1f}" if np.isfinite(d) else "–"
            c.text(x + _CELL_W / 2, top + 12, distance, size=8.0, anchor="middle", colour=ink, bold=status == "FAIL")
            c.text(x + _CELL_W / 2, top + 22, word, size=6.8, anchor="middle", colour=ink)
    svg = c.svg(fig_id)
    verify_svg(svg)
    return svg
