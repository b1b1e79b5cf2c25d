"""Reader x criterion heat maps per matchup (Figs. 10-13 of the motivating audit).

One heat map per matchup: a row per reader (their raw preference rate for the focal system),
then the humans' pooled rate, the GLMM estimate and the judge's rate, separated by a rule;
columns are the criteria. Diverging colours centred on 50 %: red = prefers the focal system,
blue = the other; the colour scale sits above the grid, beside the data it explains.

Legible at any number of readers: past ``max_readers`` readers the map shows the readers'
distribution per criterion (10th, 50th and 90th percentile of the reader rates) and the
``max_readers`` most influential readers (votes x distance from the pooled human rate, summed
over the criteria), and says so in the figure; every reader's rate stays in result.json.

Drawn directly as SVG (:mod:`judge_transfer_audit.presentation.figures._draw`), not through matplotlib: a heat map is
rectangles and text, and matplotlib's layout cost about a second per map.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_transfer_audit.presentation.figures._draw import Canvas, diverging, ink_for, text_width
from judge_transfer_audit.presentation.figures._svg import empty_svg, plain, verify_svg

COLUMNS = ("row", "kind", "criterion", "rate")
DEGENERATE_FILL = "#e4e4e4"
DEGENERATE_NOTE = "degenerate GLMM fit (an estimate on the boundary), not the humans' preference"
#: kinds in drawing order; readers first
KIND_ORDER = ("reader", "human", "glmm", "judge")
MAX_CRITERIA = 30  #: columns drawn; more criteria: the first ones, and the map says so
MAX_READERS = 20  #: reader rows drawn before the map switches to distribution + most influential
QUANTILES = ((0.1, "readers' 10th percentile"), (0.5, "readers' median"), (0.9, "readers' 90th percentile"))

_ROW_H = 15.0
_CELL_W = 44.0
_FONT = 7.5


def _influence(rates: pd.DataFrame, readers: list[str]) -> pd.Series:
    """Per reader: sum over criteria of votes x |reader rate - pooled human rate| (no ``n``: 1 vote)."""
    sub = rates[rates["kind"] == "reader"]
    pooled = rates[rates["kind"] == "human"].groupby("criterion")["rate"].first()
    ref = sub["criterion"].map(pooled)
    ref = ref.fillna(sub.groupby("criterion")["rate"].transform("median"))
    n = sub["n"].astype(float) if "n" in sub.columns else pd.Series(1.0, index=sub.index)
    score = (n * (sub["rate"].astype(float) - ref).abs()).fillna(0.0)
    return score.groupby(sub["row"]).sum().reindex(readers).fillna(0.0)


def reader_heatmap_svg(
    rates: pd.DataFrame,
    *,
    title: str = "",
    focal_label: str = "focal system",
    fig_id: str = "fig-heatmap",
    max_readers: int = MAX_READERS,
) -> str:
    """Draw one matchup's reader x criterion heat map and return inline SVG.

    Parameters
    ----------
    rates : DataFrame
        Long: ``row`` (label: reader id, "human GLMM", judge name), ``kind`` ("reader",
        "human", "glmm" or "judge"), ``criterion``, ``rate`` (probability of choosing the focal
        system; NaN = no votes, drawn grey and printed n/a). Optional ``n`` (votes behind a
        reader's rate, weighs influence) and ``degenerate`` (True for a GLMM value the result
        flags degenerate: drawn grey, struck and starred, with a note under the map). Criterion
        order = first appearance; rows: readers in first-appearance order, then pooled humans,
        GLMM, judge.
    title : str
        Usually the matchup label.
    focal_label : str
        Colour-scale wording.
    fig_id : str
        Id prefix of the SVG.
    max_readers : int
        Reader rows drawn in full; more readers are summarised (see the module doc).
    """
    miss = [c for c in COLUMNS if c not in rates.columns]
    if miss or len(rates) == 0:
        return empty_svg(fig_id, "No reader rates to draw" + (f" (missing {', '.join(miss)})" if miss else ""))
    rates = rates.assign(row=rates["row"].astype(str), rate=pd.to_numeric(rates["rate"], errors="coerce"))
    # degenerate GLMM fits (a boundary estimate, not a human preference): drawn grey and starred
    flagged = rates.loc[rates["degenerate"].fillna(False).astype(bool)] if "degenerate" in rates.columns else rates[:0]
    degenerate = set(zip(flagged["kind"], flagged["row"], flagged["criterion"]))
    criteria = list(dict.fromkeys(rates["criterion"].tolist()))
    n_criteria = len(criteria)
    criteria = criteria[:MAX_CRITERIA]
    rates = rates[rates["criterion"].isin(criteria)]
    readers = list(dict.fromkeys(rates.loc[rates["kind"] == "reader", "row"].tolist()))
    wide = rates.drop_duplicates(["kind", "row", "criterion"]).set_index(["kind", "row", "criterion"])["rate"]
    wide = wide.unstack("criterion").reindex(columns=criteria)
    grid = wide.to_numpy(dtype=float)
    at = {key: i for i, key in enumerate(wide.index)}  # (kind, row) -> its row of ``grid``

    def row_values(kind: str, label: str) -> np.ndarray:
        return grid[at[(kind, label)]]

    rows: list[tuple[str, str, np.ndarray]] = []  # (kind, label, values per criterion)
    note = ""
    if len(readers) > max_readers:
        reader_values = wide.loc["reader"].reindex(readers).to_numpy(dtype=float)
        with np.errstate(all="ignore"):
            for q, label in QUANTILES:
                col = [
                    float(np.nanquantile(reader_values[:, j], q)) if np.isfinite(reader_values[:, j]).any() else np.nan
                    for j in range(len(criteria))
                ]
                rows.append(("dist", label, np.asarray(col)))
        top = _influence(rates, readers).sort_values(ascending=False, kind="stable").index[:max_readers]
        rows += [("reader", r, row_values("reader", r)) for r in top]
        note = (
            f"{len(readers):,} readers: their distribution, then the {len(top)} most influential "
            "(votes x distance from the pooled rate); every reader in result.json"
        )
    else:
        rows += [("reader", r, row_values("reader", r)) for r in readers]
    for kind in KIND_ORDER[1:]:
        labels = list(dict.fromkeys(rates.loc[rates["kind"] == kind, "row"].tolist()))
        rows += [(kind, r, row_values(kind, r)) for r in labels]

    labels = [plain(label) for _, label, _ in rows]
    col_labels = [plain(c) for c in criteria]
    label_w = max(text_width(s, _FONT, bold=row[0] != "reader") for s, row in zip(labels, rows)) + 12
    header_rotated = max(text_width(s, _FONT) for s in col_labels) > _CELL_W - 4
    header_h = (max(text_width(s, _FONT) for s in col_labels) + 6) if header_rotated else 12.0

    c = Canvas()
    y = 4.0
    if title:
        y += 10
        c.text(2, y, plain(title), size=10)
        y += 6
    if n_criteria > len(criteria):
        note = (note + "; " if note else "") + f"first {len(criteria)} of {n_criteria:,} criteria"
    if note:
        y += 9
        c.text(2, y, plain(note, 140), size=7.5, colour="#555555")
        y += 4
    y = c.gradient_bar(fig_id, label_w, y + 4, 120, 7, plain(f"preference for {focal_label}"))
    y += header_h
    for j, lab in enumerate(col_labels):
        x = label_w + (j + 0.5) * _CELL_W
        if header_rotated:
            c.text(x + 2.6, y - 4, lab, size=_FONT, rotate=True)
        else:
            c.text(x, y - 4, lab, size=_FONT, anchor="middle")
    n_before_rule = sum(1 for kind, _, _ in rows if kind in ("dist", "reader"))
    for i, (kind, _label, values) in enumerate(rows):
        top_y = y + i * _ROW_H + (4 if i >= n_before_rule and n_before_rule else 0)
        c.text(label_w - 6, top_y + _ROW_H / 2 + 2.6, labels[i], size=_FONT, anchor="end", bold=kind not in ("reader",))
        for j, v in enumerate(values):
            x = label_w + j * _CELL_W
            if (kind, _label, criteria[j]) in degenerate:
                c.rect(x, top_y, _CELL_W, _ROW_H, DEGENERATE_FILL, stroke="#ffffff", title=DEGENERATE_NOTE)
                c.line(x + 2, top_y + _ROW_H - 2, x + _CELL_W - 2, top_y + 2, colour="#aaaaaa", width=0.6)
                shown = "n/a" if not np.isfinite(v) else f"({100 * v:.0f}%)*"
                c.text(x + _CELL_W / 2, top_y + _ROW_H / 2 + 2.6, shown, size=_FONT, anchor="middle", colour="#555555")
                continue
            c.rect(x, top_y, _CELL_W, _ROW_H, diverging(v), stroke="#ffffff")
            c.text(
                x + _CELL_W / 2,
                top_y + _ROW_H / 2 + 2.6,
                "n/a" if not np.isfinite(v) else f"{100 * v:.0f}%",
                size=_FONT,
                anchor="middle",
                colour=ink_for(v),
                bold=kind != "reader",
            )
    if 0 < n_before_rule < len(rows):
        rule_y = y + n_before_rule * _ROW_H + 2
        c.line(label_w, rule_y, label_w + len(criteria) * _CELL_W, rule_y, width=1.6)
    drawn = {(kind, label, crit) for kind, label, _ in rows for crit in criteria}
    if degenerate & drawn:
        bottom = y + len(rows) * _ROW_H + (4 if 0 < n_before_rule < len(rows) else 0)
        c.text(2, bottom + 12, f"(…)* grey: {DEGENERATE_NOTE}", size=7.5, colour="#555555")
    svg = c.svg(fig_id)
    verify_svg(svg)
    return svg
