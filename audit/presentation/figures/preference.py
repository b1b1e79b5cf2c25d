"""Figure 1 of the motivating audit: human preference beside the judge's even-split rate.

Left panel (Fig. 1a): the humans' preference for the focal system per matchup x criterion,
the crossed pair + reader GLMM estimate with its pointwise 95 % interval, chance dashed, and
the judge's rate overlaid as an open diamond so "inside / outside the interval" is visible.
Right panel (Fig. 1b): the judge's even-split composition per matchup x criterion: solid bar
= focal wins / pairs, hatched segment = ties credited 0.5 each / pairs, labelled with the
resulting even-split rate and the raw tie count in parentheses.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_transfer_audit.presentation.figures._draw import Canvas, Panel, text_width
from judge_transfer_audit.presentation.figures._svg import (
    JUDGE_COLOUR,
    PALETTE,
    colour_for,
    empty_svg,
    plain,
    verify_svg,
)

HUMAN_COLUMNS = ("matchup", "criterion", "estimate", "ci_low", "ci_high")
JUDGE_COLUMNS = ("matchup", "criterion", "wins", "losses", "ties", "n_pairs")
MAX_ROWS = 160  #: interval rows drawn (blocks x colours); more cells: the first blocks, and the figure says so


def _missing(frame: pd.DataFrame | None, columns: tuple[str, ...]) -> list[str]:
    if frame is None:
        return list(columns)
    return [c for c in columns if c not in frame.columns]


def preference_svg(
    human: pd.DataFrame,
    judge: pd.DataFrame | None = None,
    *,
    focal_label: str = "focal system",
    judge_label: str = "judge",
    fig_id: str = "fig-preference",
    tie_rule: str | None = None,
) -> str:
    """Draw Fig. 1a/1b and return inline SVG (``tie_rule``: named on panel (a)'s axis, which says how its ties count).

    Parameters
    ----------
    human : DataFrame
        One row per matchup x criterion with ``matchup, criterion, estimate, ci_low, ci_high``
        (probability scale). Row order sets the drawing order (criteria grouped, matchups
        coloured in order of first appearance).
    judge : DataFrame, optional
        ``matchup, criterion, wins, losses, ties, n_pairs`` for the same cells (``n_pairs``
        counts valid verdicts: wins + losses + ties); optional ``label`` column replaces the
        criterion label (e.g. ``"overall / aggregate"``). None: only the human panel.
    focal_label, judge_label : str
        Axis wording ("preference for <focal_label>").
    fig_id : str
        Id prefix of the SVG.
    """
    miss = _missing(human, HUMAN_COLUMNS)
    if miss or len(human) == 0:
        return empty_svg(
            fig_id, "No human preference estimates to draw" + (f" (missing {', '.join(miss)})" if miss else "")
        )
    has_judge = judge is not None and not _missing(judge, JUDGE_COLUMNS) and len(judge) > 0
    criteria = list(dict.fromkeys(human["criterion"].tolist()))
    matchups = list(dict.fromkeys(human["matchup"].tolist()))
    # As in the paper: criteria in blocks, matchups coloured. With more matchups than colours,
    # swap: matchups in blocks, criteria coloured (colours must stay unambiguous).
    by_criterion = len(matchups) <= len(PALETTE) or len(criteria) > len(PALETTE)
    blocks, coloured = (criteria, matchups) if by_criterion else (matchups, criteria)
    colour = {k: colour_for(i) for i, k in enumerate(coloured)}
    n_blocks = len(blocks)
    blocks = blocks[: max(1, MAX_ROWS // max(len(coloured), 1))]
    more = (
        f"first {len(blocks)} of {n_blocks} {'criteria' if by_criterion else 'matchups'} drawn; every cell in cells.csv"
        if len(blocks) < n_blocks
        else ""
    )

    def key(matchup: str, criterion: str) -> tuple[str, str]:
        return (criterion, matchup) if by_criterion else (matchup, criterion)  # (block, coloured)

    shown = set(blocks)
    human = human[[key(m, k)[0] in shown for m, k in zip(human["matchup"], human["criterion"])]]

    positions, y, centres = {}, 0.0, {}
    for block in blocks:
        start = y
        for k in coloured:
            positions[(block, k)] = y
            y += 1.0
        centres[block] = (start + y - 1.0) / 2.0
        y += 0.7
    jmap = {}
    if has_judge:
        for row in judge.itertuples(index=False):
            jmap[(row.matchup, row.criterion)] = row
    labels = {}
    if has_judge and "label" in judge.columns:
        for row in judge.itertuples(index=False):
            labels[row.criterion] = row.label
    row_h = 9.0
    block_labels = [plain(labels.get(b, b) if by_criterion else b) for b in blocks]
    label_w = max(text_width(t, 7.5) for t in block_labels) + 12
    top = 40.0
    plot_h = row_h * (y + 0.4)
    wa, wb = 250.0, 215.0
    c = Canvas()
    if more:
        c.text(2, 10, more, size=7.5, colour="#555555")
    pa = Panel(c, label_w, top, wa, plot_h, (0.0, 1.0), (-0.8, y - 0.4))
    pa.title("(a) humans", size=9)
    pa.frame()
    pa.vline(0.5, dash="4 3")
    ticks = [0, 0.25, 0.5, 0.75, 1.0]
    pct = ["0%", "25%", "50%", "75%", "100%"]
    pa.xticks(ticks, pct)
    ties = f"ties: {tie_rule}, " if tie_rule else ""
    pa.xlabel(plain(f"human vote share for {focal_label} ({ties}95% CI)", 70), offset=24)
    for b, lab in zip(blocks, block_labels):
        c.text(label_w - 6, pa.sy(centres[b]) + 2.6, lab, size=7.5, anchor="end")
    for row in human.itertuples(index=False):
        block, k = key(row.matchup, row.criterion)
        yy = pa.sy(positions[(block, k)])
        col = colour[k]
        est, lo, hi = float(row.estimate), float(row.ci_low), float(row.ci_high)
        if np.isfinite(lo) and np.isfinite(hi):
            c.polyline([pa.sx(lo), pa.sx(hi)], [yy, yy], colour=col, width=2.0)
        if np.isfinite(est):
            c.marker("o", pa.sx(est), yy, size=5, fill=col)
        j = jmap.get((row.matchup, row.criterion))
        if j is not None and _valid(j) > 0:
            rate = (j.wins + 0.5 * j.ties) / _valid(j)
            c.marker("D", pa.sx(rate), yy, size=5, fill="#ffffff", stroke=JUDGE_COLOUR, stroke_width=1.2)
    right = label_w + wa
    if has_judge:
        pb = Panel(c, right + 24, top, wb, plot_h, (0.0, 1.16), pa.ylim)
        pb.title("(b) judge", size=9)
        pb.frame(left=False)
        c.line(pb.x, pb.y + pb.h, pb.sx(1.0), pb.y + pb.h, colour="#444444", width=0.8)
        pb.vline(0.5, dash="4 3")
        pb.xticks(ticks, pct)
        c.text(
            pb.x + pb.w / 2,
            pb.y + pb.h + 24,
            plain(f"{judge_label}: wins for {focal_label}", 60),
            size=7.5,
            anchor="middle",
        )
        c.text(pb.x + pb.w / 2, pb.y + pb.h + 34, "hatched = ties x 0.5", size=7.5, anchor="middle")
        defs = []
        for n, k in enumerate(coloured):
            defs.append(
                f'<pattern id="{fig_id}-h{n}" patternUnits="userSpaceOnUse" width="4" height="4">'
                f'<rect width="4" height="4" fill="#ffffff"/><path d="M-1,1 L1,-1 M0,4 L4,0 M3,5 L5,3" '
                f'stroke="{colour[k]}" stroke-width="0.8"/></pattern>'
            )
        c.raw("<defs>" + "".join(defs) + "</defs>")
        hatch = {k: f"url(#{fig_id}-h{n})" for n, k in enumerate(coloured)}
        for (block, k), pos in positions.items():
            m, crit = (k, block) if by_criterion else (block, k)
            j = jmap.get((m, crit))
            yy = pb.sy(pos)
            if j is None or _valid(j) <= 0:
                c.text(
                    pb.sx(0.01),
                    yy + 2.4,
                    "no judge verdicts" if j is None else "no valid judge verdicts (all invalid)",
                    size=7,
                    colour="#888888",
                )
                continue
            # the even-split rate is over the valid pairs: unparsable outputs are not losses
            win = j.wins / _valid(j)
            tie = 0.5 * j.ties / _valid(j)
            bar_h = row_h * 0.8
            c.rect(pb.sx(0), yy - bar_h / 2, pb.sx(win) - pb.sx(0), bar_h, colour[k])
            if tie > 0:
                c.rect(pb.sx(win), yy - bar_h / 2, pb.sx(win + tie) - pb.sx(win), bar_h, hatch[k], stroke=colour[k])
            inv = getattr(j, "invalid", 0)
            invalid = int(inv) if pd.notna(inv) else 0
            c.text(
                pb.sx(win + tie) + 3,
                yy + 2.5,
                f"{100 * (win + tie):.1f}% ({j.ties})" + (f" +{invalid} invalid" if invalid else ""),
                size=7,
            )
        right = pb.x + pb.w
    items = [("o", colour[k], plain(k if by_criterion else labels.get(k, k), 36)) for k in coloured]
    c.legend(right + 14, top - 8, items, title="matchup" if by_criterion else "criterion")
    if has_judge:
        ly = top + (len(items) + 2) * 12.5
        c.marker("D", right + 20, ly, size=5, fill="#ffffff", stroke=JUDGE_COLOUR, stroke_width=1.2)
        c.text(right + 30, ly + 2.6, plain(f"{judge_label} (even-split)", 36), size=7.5)
    svg = c.svg(fig_id)
    verify_svg(svg)
    return svg


def _valid(j) -> int:
    """Pairs with a usable verdict (wins + losses + ties; invalid outputs excluded)."""
    return int(j.wins) + int(j.losses) + int(j.ties)
