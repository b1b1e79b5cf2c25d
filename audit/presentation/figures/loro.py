"""Leave-one-reader-out shifts (Fig. 8 of the motivating audit).

For each reader left out, the shift (percentage points) of the human preference rate per
criterion; one panel per matchup when the frame has a ``matchup`` column. A wide spread in
one reader's row means that reader moves the results.

Legible at any number of readers: past ``max_readers`` readers only the ``max_readers`` readers
whose removal moves a rate most (largest |shift| over every panel and criterion) get a row, and
a last row gives the range of every other reader's shifts. The criterion legend stands at the
right of the first row of panels. Drawn directly as SVG (:mod:`judge_transfer_audit.presentation.figures._draw`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_transfer_audit.presentation.figures._draw import Canvas, Panel, nice_ticks, text_width, tick_label
from judge_transfer_audit.presentation.figures._svg import colour_for, empty_svg, plain, verify_svg

COLUMNS = ("reader_id", "criterion", "shift")
_MARKERS = ("o", "s", "^", "D", "v")
MAX_COLUMNS = 3  #: panels per row; more matchups wrap onto further rows
MAX_CRITERIA = 8  #: criteria drawn (one colour each); more: those with the largest shifts
MAX_READERS = 20  #: reader rows drawn; the rest are summarised in one range row
_PANEL_W = 190.0
_ROW = 14.0


def loro_shift_svg(
    shifts: pd.DataFrame,
    *,
    fig_id: str = "fig-loro",
    value_label: str = "rate",
    max_readers: int = MAX_READERS,
    limit: float | None = None,
) -> str:
    """Draw leave-one-reader-out shifts and return inline SVG.

    Parameters
    ----------
    shifts : DataFrame
        ``reader_id`` (the reader left out), ``criterion``, ``shift`` (estimate without the
        reader minus the estimate with everyone, probability scale); optional ``matchup``
        (one panel each). ``limit`` (probability scale): the half-width of the shift axis,
        shared by a figure drawn in parts (default: from the shifts drawn).
    fig_id : str
        Id prefix of the SVG.
    value_label : str
        What was re-estimated ("rate" or "GLMM estimate"), for the axis label.
    max_readers : int
        Reader rows drawn; more readers are summarised (see the module doc).
    """
    miss = [c for c in COLUMNS if c not in shifts.columns]
    if miss or len(shifts) == 0:
        return empty_svg(
            fig_id, "No leave-one-reader-out shifts to draw" + (f" (missing {', '.join(miss)})" if miss else "")
        )
    shifts = shifts.assign(reader_id=shifts["reader_id"].astype(str), shift=shifts["shift"].astype(float))
    values = shifts["shift"].to_numpy()
    if not np.isfinite(values).any():
        return empty_svg(fig_id, "No shift computable (a single reader, or too few votes)")
    panels = list(dict.fromkeys(shifts["matchup"].tolist())) if "matchup" in shifts.columns else [None]
    readers = list(dict.fromkeys(shifts["reader_id"].tolist()))
    rest: list[str] = []
    if len(readers) > max_readers:
        size = shifts["shift"].abs().groupby(shifts["reader_id"]).max().reindex(readers).fillna(0.0)
        keep = list(size.sort_values(ascending=False, kind="stable").index[:max_readers])
        rest = [r for r in readers if r not in set(keep)]
        readers = keep
    criteria = list(dict.fromkeys(shifts["criterion"].tolist()))
    n_criteria = len(criteria)
    if n_criteria > MAX_CRITERIA:  # the criteria whose shifts are largest, one colour each
        size = shifts["shift"].abs().groupby(shifts["criterion"]).max().reindex(criteria).fillna(0.0)
        criteria = list(size.sort_values(ascending=False, kind="stable").index[:MAX_CRITERIA])
    largest = float(np.nanmax(np.abs(values[np.isfinite(values)]))) if limit is None else float(limit)
    lim = max(0.02, largest * 100 * 1.15)
    labels = [plain(f"without {r}") for r in readers] + ([f"{len(rest):,} other readers (range)"] if rest else [])
    label_w = max(text_width(s, 7.0) for s in labels) + 10
    ncol = min(len(panels), MAX_COLUMNS)
    panel_h = _ROW * len(labels)
    row_h = panel_h + 56
    ticks = [t for t in nice_ticks(-lim, lim, 4)]
    keys = ["criterion"] if panels == [None] else ["matchup", "criterion"]
    # each panel x criterion's rows, in their order: one grouping, not one filter per panel and criterion,
    # of the criteria drawn only (8 of 1,000 criteria: the others' groups would never be read)
    drawn = shifts[shifts["criterion"].isin(criteria)] if n_criteria > len(criteria) else shifts
    parts = {
        (key if len(keys) == 2 else (None, key[0])): part for key, part in drawn.groupby(keys, sort=False, dropna=False)
    }
    empty = shifts.iloc[:0]
    c = Canvas()
    c.text(2, 10, plain(f"shift in {value_label} (points) when one reader is left out", 100), size=7.5)
    if n_criteria > len(criteria):
        c.text(2, 20, f"the {len(criteria)} of {n_criteria:,} criteria with the largest shifts", size=7.0)
    for idx, panel in enumerate(panels):
        row, col = divmod(idx, ncol)
        x = label_w + col * (_PANEL_W + 16)
        y = 36 + row * row_h
        p = Panel(c, x, y, _PANEL_W, panel_h, (-lim, lim), (0.0, panel_h))
        p.frame(left=col == 0)
        p.vline(0.0)
        p.xticks(ticks, [tick_label(t) for t in ticks])
        p.xlabel("points", offset=22)
        if panel is not None:
            p.title(plain(panel, 40))
        if col == 0:
            for i, lab in enumerate(labels):
                c.text(x - 5, y + (i + 0.5) * _ROW + 2.4, lab, size=7.0, anchor="end")
        for k, crit in enumerate(criteria):
            part = parts.get((panel, crit), empty)
            offset = (k - (len(criteria) - 1) / 2) * min(2.0, 10.0 / max(len(criteria), 1))
            by_reader = dict(zip(part["reader_id"], part["shift"]))
            for i, r in enumerate(readers):
                v = by_reader.get(r)
                if v is not None and np.isfinite(v):
                    c.marker(
                        _MARKERS[k % len(_MARKERS)],
                        p.sx(100 * v),
                        y + (i + 0.5) * _ROW + offset,
                        size=4.2,
                        fill=colour_for(k),
                    )
            if rest:
                others = part.loc[part["reader_id"].isin(rest), "shift"].to_numpy(dtype=float)
                others = others[np.isfinite(others)]
                if others.size:
                    yy = y + (len(readers) + 0.5) * _ROW + offset
                    c.polyline(
                        [p.sx(100 * others.min()), p.sx(100 * others.max())], [yy, yy], colour=colour_for(k), width=1.6
                    )
        if idx == ncol - 1 or idx == len(panels) - 1 and row == 0:
            c.legend(
                x + _PANEL_W + 12,
                y - 4,
                [(_MARKERS[k % len(_MARKERS)], colour_for(k), plain(cr, 30)) for k, cr in enumerate(criteria)],
                title="criterion",
            )
    svg = c.svg(fig_id)
    verify_svg(svg)
    return svg
