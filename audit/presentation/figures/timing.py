"""Annotation-time diagnostics (Figs. 6-7 of the motivating audit).

Per-reader summaries (what the report draws): each reader's distribution of seconds per pair
(box 25-75 %, line 5-95 %, red median, mean diamond; drawn capped) and, beside it, the fatigue
slope with its 95 % interval, on the same rows. Per-pair times (``timing_svg`` with a
``seconds`` column): each pair's time as a dot per reader, the median marked, and the pace
along the reader's sequence.

Legible at any number of readers: past ``max_readers`` readers the first row is the
distribution of every reader's median (5-95 %, 25-75 %, median), then the fast-flagged readers
and the readers with the most extreme medians fill the ``max_readers`` rows; the figure says
so. Drawn directly as SVG (:mod:`judge_transfer_audit.presentation.figures._draw`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_transfer_audit.presentation.figures._draw import Canvas, Panel, nice_ticks, text_width, tick_label
from judge_transfer_audit.presentation.figures._svg import colour_for, empty_svg, plain, verify_svg

COLUMNS = ("reader_id", "seconds")
MAX_READERS = 20
_ROW = 14.0
_W = 230.0


def _rows_label_width(labels: list[str]) -> float:
    return max(text_width(s, 7.0) for s in labels) + 10


def timing_svg(times: pd.DataFrame, *, cap: float = 600.0, fig_id: str = "fig-timing") -> str:
    """Draw per-reader annotation times and return inline SVG.

    Parameters
    ----------
    times : DataFrame
        One row per reader x pair: ``reader_id``, ``seconds``; optional ``order`` (the
        reader's chronological position) adds the pace panel. Without ``seconds`` but with
        ``median_seconds``: per-reader summaries (:func:`timing_summary_svg`).
    cap : float
        Times above ``cap`` seconds are drawn at the cap (the count is shown per reader).
    fig_id : str
        Id prefix of the SVG.
    """
    if "seconds" not in times.columns and {"reader_id", "median_seconds"} <= set(times.columns):
        return timing_summary_svg(times, cap=cap, fig_id=fig_id)
    miss = [c for c in COLUMNS if c not in times.columns]
    data = times.dropna(subset=["seconds"]) if not miss else times
    if miss or len(data) == 0:
        return empty_svg(fig_id, "No annotation times to draw" + (f" (missing {', '.join(miss)})" if miss else ""))
    data = data.assign(reader_id=data["reader_id"].astype(str), seconds=data["seconds"].astype(float))
    readers = list(dict.fromkeys(data["reader_id"].tolist()))[:MAX_READERS]
    labels = []
    for r in readers:
        secs = data.loc[data["reader_id"] == r, "seconds"].to_numpy()
        capped = int((secs > cap).sum())
        labels.append(plain(f"{r} (median {np.median(secs):.0f} s" + (f", {capped} capped)" if capped else ")")))
    label_w = _rows_label_width(labels)
    c = Canvas()
    h = _ROW * len(readers)
    p = Panel(c, label_w, 24, _W, h, (0.0, cap * 1.03), (0.0, h))
    p.title("time per pair (red: median)")
    p.frame()
    ticks = [t for t in nice_ticks(0, cap, 4) if t <= cap]
    p.xticks(ticks, [tick_label(t) for t in ticks])
    p.xlabel(f"seconds per pair (capped at {cap:.0f})")
    for i, r in enumerate(readers):
        secs = data.loc[data["reader_id"] == r, "seconds"].to_numpy()
        yy = 24 + (i + 0.5) * _ROW
        c.text(label_w - 5, yy + 2.4, labels[i], size=7.0, anchor="end")
        for n, s in enumerate(np.minimum(secs, cap)):
            c.marker("o", p.sx(s), yy + (n % 7 - 3) * 1.0, size=3, fill=colour_for(i), opacity=0.45)
        med = min(float(np.median(secs)), cap)
        c.line(p.sx(med), yy - 5, p.sx(med), yy + 5, colour="#C00000", width=1.6)
    if "order" in data.columns and data["order"].notna().any():
        x0 = label_w + _W + 50
        order = data["order"].astype(float)
        pt = Panel(c, x0, 24, _W, max(h, 80.0), (float(order.min()), float(order.max()) or 1.0), (cap * 1.03, 0.0))
        pt.title("pace over the session")
        pt.frame()
        xt = nice_ticks(*pt.xlim, 4)
        pt.xticks(xt, [tick_label(t) for t in xt])
        pt.yticks(ticks, [tick_label(t) for t in ticks])
        pt.xlabel("position in the reader's sequence")
        for i, r in enumerate(readers):
            part = data[data["reader_id"] == r].sort_values("order")
            xs = [pt.sx(v) for v in part["order"].astype(float)]
            ys = [pt.sy(v) for v in np.minimum(part["seconds"], cap)]
            c.polyline(xs, ys, colour=colour_for(i), width=0.9, opacity=0.8)
        c.legend(x0 + _W + 12, 20, [("-", colour_for(i), plain(r, 30)) for i, r in enumerate(readers)])
    svg = c.svg(fig_id)
    verify_svg(svg)
    return svg


def _pick_rows(summary: pd.DataFrame, max_readers: int) -> tuple[pd.DataFrame, bool]:
    """All readers, or the fast-flagged and most extreme medians (alternating low / high)."""
    if len(summary) <= max_readers:
        return summary, False
    med = summary["median_seconds"].astype(float)
    fast = summary["fast_reader"].astype(bool) if "fast_reader" in summary.columns else pd.Series(False, summary.index)
    chosen = list(summary.index[fast.to_numpy()][: max_readers // 2])
    ranked = list(med.sort_values(kind="stable").index)
    lo, hi = 0, len(ranked) - 1
    while len(chosen) < max_readers and lo <= hi:
        for idx in (ranked[lo], ranked[hi]):
            if idx not in chosen and len(chosen) < max_readers:
                chosen.append(idx)
        lo, hi = lo + 1, hi - 1
    return summary.loc[sorted(chosen, key=lambda i: float(med[i]))], True


def timing_summary_svg(
    summary: pd.DataFrame, *, cap: float = 600.0, fig_id: str = "fig-timing", max_readers: int = MAX_READERS
) -> str:
    """Per-reader summaries when per-pair times are not in the result.

    Parameters
    ----------
    summary : DataFrame
        ``reader_id``, ``median_seconds``; optional ``q05, q25, q50, q75, q95`` (the reader's
        distribution), ``mean_seconds_capped``, ``n_capped``, ``fast_reader`` (bool),
        ``fatigue_slope`` and ``fatigue_slope_se`` (seconds per pair along the reader's
        sequence; adds the pace panel).
    max_readers : int
        Reader rows drawn; more readers are summarised (see the module doc).
    """
    if len(summary) == 0:
        return empty_svg(fig_id, "No annotation times to draw")
    summary = summary.reset_index(drop=True)
    n_all = len(summary)
    all_medians = np.minimum(summary["median_seconds"].astype(float).to_numpy(), cap)
    rows, capped_rows = _pick_rows(summary, max_readers)
    quant = {"q05", "q25", "q50", "q75", "q95"} <= set(rows.columns)
    labels, boxes = [], []
    if capped_rows:
        finite = all_medians[np.isfinite(all_medians)]
        qs = np.quantile(finite, [0.05, 0.25, 0.5, 0.75, 0.95]) if finite.size else np.full(5, np.nan)
        labels.append(f"all {n_all:,} readers' medians")
        boxes.append((qs, np.nan, "#555555", True))
    for i, row in enumerate(rows.itertuples(index=False)):
        extra = []
        if "n_capped" in rows.columns and int(row.n_capped or 0):
            extra.append(f"{int(row.n_capped)} capped")
        if "fast_reader" in rows.columns and bool(row.fast_reader):
            extra.append("fast")
        labels.append(plain(str(row.reader_id)) + (f" ({', '.join(extra)})" if extra else ""))
        if quant:
            qs = np.minimum([float(getattr(row, k)) for k in ("q05", "q25", "q50", "q75", "q95")], cap)
        else:
            m = min(float(row.median_seconds), cap)
            qs = np.array([np.nan, np.nan, m, np.nan, np.nan])
        mean = float(row.mean_seconds_capped) if "mean_seconds_capped" in rows.columns else np.nan
        boxes.append((qs, mean, colour_for(i), False))
    label_w = _rows_label_width(labels)
    c = Canvas()
    top = 24.0 + (12 if capped_rows else 0)
    if capped_rows:
        c.text(
            2,
            12,
            f"{n_all:,} readers: the distribution of their medians, then the fast-flagged and the most extreme "
            f"{len(rows)} (every reader in readers.timing, result.json)",
            size=7.0,
            colour="#555555",
        )
    h = _ROW * len(labels)
    p = Panel(c, label_w, top, _W, h, (0.0, cap * 1.03), (0.0, h))
    p.title("time per pair: distribution per reader" if quant else "time per pair")
    p.frame()
    ticks = [t for t in nice_ticks(0, cap, 4) if t <= cap]
    p.xticks(ticks, [tick_label(t) for t in ticks])
    p.xlabel(f"seconds per pair (drawn capped at {cap:.0f})")
    for i, (qs, mean, colour, is_all) in enumerate(boxes):
        yy = top + (i + 0.5) * _ROW
        c.text(label_w - 5, yy + 2.4, labels[i], size=7.0, anchor="end", bold=is_all)
        if np.isfinite(qs[0]) and np.isfinite(qs[4]):
            c.line(p.sx(qs[0]), yy, p.sx(qs[4]), yy, colour=colour, width=1.2)
        if np.isfinite(qs[1]) and np.isfinite(qs[3]):
            c.rect(p.sx(qs[1]), yy - 4, max(p.sx(qs[3]) - p.sx(qs[1]), 0.5), 8, colour)
        elif np.isfinite(qs[2]):
            c.rect(p.sx(0), yy - 4, p.sx(qs[2]) - p.sx(0), 8, colour)
        if np.isfinite(qs[2]):
            c.line(p.sx(qs[2]), yy - 5, p.sx(qs[2]), yy + 5, colour="#C00000", width=1.8)
        if np.isfinite(mean):
            c.marker("D", p.sx(min(mean, cap)), yy, size=4, fill="#222222")
    legend = [("box", "#888888", "25-75% (line: 5-95%)"), ("-", "#C00000", "median")]
    if "mean_seconds_capped" in rows.columns:
        legend.append(("D", "#222222", f"mean (capped at {cap:.0f} s)"))
    right = label_w + _W
    if "fatigue_slope" in rows.columns and rows["fatigue_slope"].notna().any():
        slope = rows["fatigue_slope"].astype(float).to_numpy()
        se = (
            rows["fatigue_slope_se"].astype(float).to_numpy()
            if "fatigue_slope_se" in rows.columns
            else np.full(len(rows), np.nan)
        )
        lo = np.where(np.isfinite(se), slope - 1.96 * se, slope)
        hi = np.where(np.isfinite(se), slope + 1.96 * se, slope)
        span = np.concatenate([lo[np.isfinite(lo)], hi[np.isfinite(hi)], [0.0]])
        lim = float(np.max(np.abs(span))) * 1.1 or 1.0
        ps = Panel(c, right + 30, top, _W, h, (-lim, lim), (0.0, h))
        ps.title("pace over the session (fatigue slope)")
        ps.frame(left=False)
        ps.vline(0.0)
        st = nice_ticks(-lim, lim, 4)
        ps.xticks(st, [tick_label(t) for t in st])
        ps.xlabel("change in seconds per pair along the session (95% CI)")
        offset = 1 if capped_rows else 0
        for i in range(len(rows)):
            yy = top + (i + offset + 0.5) * _ROW
            if np.isfinite(lo[i]) and np.isfinite(hi[i]):
                c.line(ps.sx(lo[i]), yy, ps.sx(hi[i]), yy, colour=colour_for(i), width=1.6)
            if np.isfinite(slope[i]):
                c.marker("o", ps.sx(slope[i]), yy, size=4.5, fill=colour_for(i))
        right = ps.x + ps.w
    c.legend(right + 14, top - 8, legend)
    n_capped = int(summary["n_capped"].fillna(0).astype(int).gt(0).sum()) if "n_capped" in summary.columns else 0
    if n_capped and capped_rows:
        c.text(right + 14, top + 60, f"{n_capped:,} readers have capped times", size=7.0)
    svg = c.svg(fig_id)
    verify_svg(svg)
    return svg
