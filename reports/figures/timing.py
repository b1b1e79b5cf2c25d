"""Annotation-time diagnostics (Figs. 6-7 of the motivating audit).

Left: seconds per pair for each reader (capped for display, capped count in the label,
median marked). Right (when an order is known): seconds against the reader's chronological
position, one line per reader, to show fatigue or rushing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from reports.figures._svg import colour_for, empty_svg, figure_context, figure_to_svg, new_figure, plain

COLUMNS = ("reader_id", "seconds")


def timing_svg(times: pd.DataFrame, *, cap: float = 600.0, fig_id: str = "fig-timing") -> str:
    """Draw per-reader annotation times and return inline SVG.

    Parameters
    ----------
    times : DataFrame
        One row per reader x pair: ``reader_id``, ``seconds``; optional ``order`` (the
        reader's chronological position) adds the trend panel.
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
    readers = list(dict.fromkeys(data["reader_id"]))
    has_order = "order" in data.columns and data["order"].notna().any()
    with figure_context():
        fig = new_figure(
            10.0 if has_order else 5.5,
            1.4 + 0.32 * len(readers) if not has_order else max(3.2, 1.4 + 0.32 * len(readers)),
        )
        if has_order:
            ax, axt = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.0, 1.3]})
        else:
            ax, axt = fig.subplots(1, 1), None
        labels = []
        for i, r in enumerate(readers):
            secs = data.loc[data["reader_id"] == r, "seconds"].astype(float).to_numpy()
            capped = int((secs > cap).sum())
            shown = np.minimum(secs, cap)
            jitter = (np.arange(len(shown)) % 7 - 3) * 0.05
            ax.plot(shown, i + jitter, "o", color=colour_for(i), alpha=0.45, markersize=3)
            med = float(np.median(secs))
            ax.plot([min(med, cap)] * 2, [i - 0.35, i + 0.35], color="#C00000", linewidth=1.6)
            labels.append(f"{r} (median {med:.0f} s" + (f", {capped} capped)" if capped else ")"))
        ax.set_yticks(range(len(readers)), [plain(x) for x in labels])
        ax.set_ylim(len(readers) - 0.5, -0.5)
        ax.set_xlim(0, cap * 1.03)
        ax.set_xlabel(f"seconds per pair (capped at {cap:.0f})")
        ax.set_title("time per pair (red: median)", loc="left")
        if axt is not None:
            for i, r in enumerate(readers):
                part = data[data["reader_id"] == r].sort_values("order")
                axt.plot(
                    part["order"].astype(float),
                    np.minimum(part["seconds"].astype(float), cap),
                    "-o",
                    color=colour_for(i),
                    markersize=2.5,
                    linewidth=0.9,
                    alpha=0.8,
                    label=plain(r),
                )
            axt.set_xlabel("position in the reader's sequence")
            axt.set_ylabel("seconds (capped)")
            axt.set_title("pace over the session", loc="left")
            axt.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
        return figure_to_svg(fig, fig_id)


def timing_summary_svg(summary: pd.DataFrame, *, cap: float = 600.0, fig_id: str = "fig-timing") -> str:
    """Per-reader summaries when per-pair times are not in the result.

    Parameters
    ----------
    summary : DataFrame
        ``reader_id``, ``median_seconds``; optional ``mean_seconds_capped``, ``n_capped``,
        ``fast_reader`` (bool), ``fatigue_slope`` and ``fatigue_slope_se`` (seconds per pair
        in the reader's sequence; adds the pace panel).
    """
    if len(summary) == 0:
        return empty_svg(fig_id, "No annotation times to draw")
    readers = [str(r) for r in summary["reader_id"]]
    has_slope = "fatigue_slope" in summary.columns and summary["fatigue_slope"].notna().any()
    with figure_context():
        fig = new_figure(10.0 if has_slope else 5.5, max(2.4, 1.2 + 0.32 * len(readers)))
        if has_slope:
            ax, axs = fig.subplots(1, 2, sharey=True)
        else:
            ax, axs = fig.subplots(1, 1), None
        ys = np.arange(len(readers))
        med = summary["median_seconds"].astype(float).to_numpy()
        quant = {"q05", "q25", "q50", "q75", "q95"} <= set(summary.columns)
        if quant:  # the distribution (Fig 6): 5-95% whiskers, 25-75% box, median line; drawn capped
            q = {k: np.minimum(summary[k].astype(float).to_numpy(), cap) for k in ("q05", "q25", "q50", "q75", "q95")}
            for i in range(len(readers)):
                ax.plot([q["q05"][i], q["q95"][i]], [i, i], color=colour_for(i), linewidth=1.2)
                ax.barh(
                    [i],
                    [q["q75"][i] - q["q25"][i]],
                    left=[q["q25"][i]],
                    height=0.55,
                    color=colour_for(i),
                    alpha=0.55,
                    label="25-75% (line: 5-95%)" if i == 0 else None,
                )
                ax.plot(
                    [q["q50"][i]] * 2,
                    [i - 0.3, i + 0.3],
                    color="#C00000",
                    linewidth=1.8,
                    label="median" if i == 0 else None,
                )
        else:
            ax.barh(
                ys,
                np.minimum(med, cap),
                height=0.6,
                color=[colour_for(i) for i in range(len(readers))],
                alpha=0.8,
                label="median",
            )
        if "mean_seconds_capped" in summary.columns:
            ax.plot(
                summary["mean_seconds_capped"].astype(float),
                ys,
                "D",
                color="#222222",
                markersize=4,
                label=f"mean (capped at {cap:.0f} s)",
            )
        labels = []
        for i, row in enumerate(summary.itertuples(index=False)):
            extra = []
            if "n_capped" in summary.columns and int(row.n_capped or 0):
                extra.append(f"{int(row.n_capped)} capped")
            if "fast_reader" in summary.columns and bool(row.fast_reader):
                extra.append("fast")
            labels.append(plain(readers[i]) + (f" ({', '.join(extra)})" if extra else ""))
        ax.set_yticks(ys, labels)
        ax.set_ylim(len(readers) + 0.7, -0.5)  # a free row at the bottom holds the legend
        ax.set_xlabel(f"seconds per pair (drawn capped at {cap:.0f})")
        ax.set_title("time per pair: distribution per reader" if quant else "time per pair", loc="left")
        ax.legend(loc="lower right", fontsize=7, framealpha=0.9, ncol=3)
        if axs is not None:
            slope = summary["fatigue_slope"].astype(float).to_numpy()
            se = summary["fatigue_slope_se"].astype(float).to_numpy() if "fatigue_slope_se" in summary.columns else None
            axs.axvline(0, color="#888888", linewidth=0.9)
            for i in range(len(readers)):
                if se is not None and np.isfinite(se[i]):
                    axs.plot(
                        [slope[i] - 1.96 * se[i], slope[i] + 1.96 * se[i]], [i, i], color=colour_for(i), linewidth=1.6
                    )
                axs.plot([slope[i]], [i], "o", color=colour_for(i), markersize=4.5)
            axs.set_xlabel("change in seconds per pair along the session (95% CI)")
            axs.set_title("pace over the session (fatigue slope)", loc="left")
        return figure_to_svg(fig, fig_id)
