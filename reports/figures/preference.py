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

from reports.figures._svg import (
    JUDGE_COLOUR,
    PALETTE,
    colour_for,
    empty_svg,
    figure_context,
    figure_to_svg,
    new_figure,
    plain,
)

HUMAN_COLUMNS = ("matchup", "criterion", "estimate", "ci_low", "ci_high")
JUDGE_COLUMNS = ("matchup", "criterion", "wins", "losses", "ties", "n_pairs")


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
) -> str:
    """Draw Fig. 1a/1b and return inline SVG.

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
    criteria = list(dict.fromkeys(human["criterion"]))
    matchups = list(dict.fromkeys(human["matchup"]))
    # As in the paper: criteria in blocks, matchups coloured. With more matchups than colours,
    # swap: matchups in blocks, criteria coloured (colours must stay unambiguous).
    by_criterion = len(matchups) <= len(PALETTE) or len(criteria) > len(PALETTE)
    blocks, coloured = (criteria, matchups) if by_criterion else (matchups, criteria)
    colour = {k: colour_for(i) for i, k in enumerate(coloured)}

    def key(matchup: str, criterion: str) -> tuple[str, str]:
        return (criterion, matchup) if by_criterion else (matchup, criterion)  # (block, coloured)

    positions, y, centres = {}, 0.0, {}
    for block in blocks:
        start = y
        for k in coloured:
            positions[(block, k)] = y
            y += 1.0
        centres[block] = (start + y - 1.0) / 2.0
        y += 0.7
    height = 1.4 + 0.24 * y
    jmap = {}
    if has_judge:
        for row in judge.itertuples(index=False):
            jmap[(row.matchup, row.criterion)] = row
    labels = {}
    if has_judge and "label" in judge.columns:
        for row in judge.itertuples(index=False):
            labels[row.criterion] = row.label
    with figure_context():
        fig = new_figure(10.0 if has_judge else 6.5, height)
        if has_judge:
            ax, axj = fig.subplots(1, 2, sharey=True, gridspec_kw={"width_ratios": [1.15, 1.0]})
        else:
            ax, axj = fig.subplots(1, 1), None
        ax.axvline(0.5, color="#888888", linestyle="--", linewidth=0.9, zorder=1)
        for row in human.itertuples(index=False):
            block, k = key(row.matchup, row.criterion)
            yy = positions[(block, k)]
            c = colour[k]
            est, lo, hi = float(row.estimate), float(row.ci_low), float(row.ci_high)
            if np.isfinite(lo) and np.isfinite(hi):
                ax.plot([lo, hi], [yy, yy], color=c, linewidth=2.0, solid_capstyle="butt", zorder=2)
            if np.isfinite(est):
                ax.plot([est], [yy], "o", color=c, markersize=5, zorder=3, clip_on=False)
            j = jmap.get((row.matchup, row.criterion))
            if j is not None and _valid(j) > 0:
                rate = (j.wins + 0.5 * j.ties) / _valid(j)
                ax.plot(
                    [rate],
                    [yy],
                    "D",
                    markerfacecolor="white",
                    markeredgecolor=JUDGE_COLOUR,
                    markersize=5,
                    markeredgewidth=1.2,
                    zorder=4,
                    clip_on=False,
                )
        ax.set_xlim(0.0, 1.0)
        ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0], ["0%", "25%", "50%", "75%", "100%"])
        ax.set_yticks([centres[b] for b in blocks], [plain(labels.get(b, b) if by_criterion else b) for b in blocks])
        ax.set_ylim(y - 0.4, -0.8)
        ax.set_xlabel(plain(f"human preference for {focal_label} (GLMM, 95% CI)", 90))
        ax.set_title("(a) humans", loc="left")
        handles = [
            ax.plot([], [], "o-", color=colour[k], label=plain(k if by_criterion else labels.get(k, k)))[0]
            for k in coloured
        ]
        if has_judge:
            handles.append(
                ax.plot(
                    [],
                    [],
                    "D",
                    markerfacecolor="white",
                    markeredgecolor=JUDGE_COLOUR,
                    label=plain(f"{judge_label} (even-split)"),
                )[0]
            )
        longest = max(len(h.get_label()) for h in handles)
        fig.legend(
            handles=handles,
            loc="outside lower center",
            fontsize=8,
            ncol=len(handles) if longest < 24 else (2 if longest < 40 else 1),
        )
        if axj is not None:
            axj.axvline(0.5, color="#888888", linestyle="--", linewidth=0.9, zorder=1)
            for (block, k), yy in positions.items():
                m, crit = (k, block) if by_criterion else (block, k)
                j = jmap.get((m, crit))
                if j is None or _valid(j) <= 0:
                    axj.text(
                        0.01,
                        yy,
                        "no judge verdicts" if j is None else "no valid judge verdicts (all invalid)",
                        va="center",
                        fontsize=7,
                        color="#888888",
                    )
                    continue
                # the even-split rate is over the valid pairs: unparsable outputs are not losses
                win = j.wins / _valid(j)
                tie = 0.5 * j.ties / _valid(j)
                axj.barh(yy, win, height=0.8, color=colour[k], edgecolor=colour[k], zorder=2)
                if tie > 0:
                    axj.barh(
                        yy,
                        tie,
                        left=win,
                        height=0.8,
                        color="white",
                        edgecolor=colour[k],
                        hatch="////",
                        linewidth=0.6,
                        zorder=2,
                    )
                inv = getattr(j, "invalid", 0)
                invalid = int(inv) if pd.notna(inv) else 0
                axj.text(
                    win + tie + 0.015,
                    yy,
                    f"{100 * (win + tie):.1f}% ({j.ties})" + (f" +{invalid} invalid" if invalid else ""),
                    va="center",
                    fontsize=7.5,
                    zorder=3,
                )
            axj.set_xlim(0.0, 1.16)  # room for the labels of bars near 100%
            axj.spines["bottom"].set_bounds(0.0, 1.0)
            axj.set_xticks([0, 0.25, 0.5, 0.75, 1.0], ["0%", "25%", "50%", "75%", "100%"])
            axj.set_xlabel(plain(f"{judge_label}: wins for {focal_label}; hatched = ties x 0.5", 90))
            axj.set_title("(b) judge", loc="left")
            axj.tick_params(axis="y", left=False)
        return figure_to_svg(fig, fig_id)


def _valid(j) -> int:
    """Pairs with a usable verdict (wins + losses + ties; invalid outputs excluded)."""
    return int(j.wins) + int(j.losses) + int(j.ties)
