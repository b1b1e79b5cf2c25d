"""Benchmark: rendering the HTML report from a saved result (the `audit report` target: < 1.5 s).

Prints, for one AuditResult: the median wall time of ``render_html`` and the report size, the
time per figure family, and, side by side on the same data, each reader-rate heat map drawn by
judge-audit (direct SVG) and by matplotlib (``pcolormesh`` + a label per cell + colour bar,
constrained layout, saved as SVG: what a user would otherwise write), with the ratio. The load
average is printed with the timings (they are inflated on a shared machine).

    python benchmarks/report.py                 # runs the audit on fixtures/ first
    python benchmarks/report.py audit-out/result.json
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import time
from pathlib import Path
from unittest import mock

REPEATS = 5
ROOT = Path(__file__).resolve().parents[1]


def load_result(argv: list[str]):
    from judge_transfer_audit.results.result import result_from_json

    if argv:
        return result_from_json(Path(argv[0]).read_text(encoding="utf-8"))
    from judge_transfer_audit.engine.pipeline import run_audit
    from judge_transfer_audit.inputs import load_audit_data
    from judge_transfer_audit.model.spec import AuditSpec

    d, v = ROOT / "fixtures" / "deployment", ROOT / "fixtures" / "dev"
    data = load_audit_data(
        str(d / "judge.csv"),
        str(d / "humans.csv"),
        pairs=str(d / "pairs.csv"),
        stories=str(d / "stories.csv"),
        dev_judge=str(v / "judge.csv"),
        dev_humans=str(v / "humans.csv"),
    )
    return run_audit(data, AuditSpec(seed=1))


def timed_render(result) -> tuple[list[float], list[float], int, dict[str, float]]:
    """``render_html`` wall and CPU times (first run not counted), the size, seconds per figure function."""
    import importlib

    import judge_transfer_audit.reports.sections as sections
    from judge_transfer_audit.reports.html import render_html
    from judge_transfer_audit.sections.registry import names

    per_figure: dict[str, float] = {}

    def wrap(name, fn):
        def timed(*args, **kwargs):
            t = time.perf_counter()
            out = fn(*args, **kwargs)
            per_figure[name] = per_figure.get(name, 0.0) + time.perf_counter() - t
            return out

        return timed

    patches = [
        mock.patch.object(mod, name, wrap(name.removesuffix("_svg"), getattr(mod, name)))
        for mod in (sections, *(importlib.import_module(f"judge_transfer_audit.sections.{n}.render") for n in names()))
        for name in dir(mod)
        if name.endswith("_svg") and callable(getattr(mod, name))
    ]
    times, cpu, size = [], [], 0
    for p in patches:
        p.start()
    try:
        for i in range(REPEATS + 1):
            per_figure.clear()
            t, c = time.perf_counter(), time.process_time()
            html = render_html(result)
            if i:
                times.append(time.perf_counter() - t)
                cpu.append(time.process_time() - c)
            size = len(html.encode("utf-8"))
    finally:
        for p in patches:
            p.stop()
    return times, cpu, size, dict(per_figure)


def matplotlib_heatmap(frame) -> str:
    """The same reader x criterion heat map through matplotlib (the usual way), as SVG text."""
    import numpy as np
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.colors import TwoSlopeNorm
    from matplotlib.figure import Figure

    grid = frame.pivot_table(index="row", columns="criterion", values="rate", aggfunc="first", sort=False)
    fig = Figure(figsize=(1.6 + 1.05 * grid.shape[1], 1.0 + 0.32 * grid.shape[0]), layout="constrained")
    FigureCanvasSVG(fig)
    ax = fig.add_subplot()
    values = grid.to_numpy(dtype=float)
    mesh = ax.pcolormesh(np.ma.masked_invalid(values), cmap="RdBu_r", norm=TwoSlopeNorm(0.5, 0.0, 1.0))
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            ax.text(j + 0.5, i + 0.5, f"{100 * values[i, j]:.0f}%", ha="center", va="center", fontsize=7.5)
    ax.set_xticks(np.arange(values.shape[1]) + 0.5, list(grid.columns), rotation=90)
    ax.set_yticks(np.arange(values.shape[0]) + 0.5, list(grid.index))
    fig.colorbar(mesh, ax=ax)
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    return buf.getvalue()


def heatmaps_side_by_side(result) -> tuple[float, float, int]:
    """Seconds for every matchup's heat map: judge-audit, matplotlib; and the number of maps."""
    from judge_transfer_audit.presentation.figures.heatmap import MAX_READERS, reader_heatmap_svg

    rates = result.readers.payload.rates.rates
    kinds = {"reader": "reader", "human_pooled": "human", "human_glmm": "glmm", "judge": "judge"}
    long = rates.assign(row=rates["row_label"].astype(str), kind=rates["row_kind"].map(kinds))
    frames = [long[long["matchup"] == m] for m in dict.fromkeys(long["matchup"])]
    ours = matplotlib = 0.0
    for frame in frames:
        t = time.perf_counter()
        reader_heatmap_svg(frame)
        ours += time.perf_counter() - t
        # matplotlib gets the rows judge-audit draws (at most MAX_READERS readers), not one per reader
        readers = list(dict.fromkeys(frame.loc[frame["kind"] == "reader", "row"]))[:MAX_READERS]
        shown = frame[(frame["kind"] != "reader") | frame["row"].isin(readers)]
        t = time.perf_counter()
        matplotlib_heatmap(shown)
        matplotlib += time.perf_counter() - t
    return ours, matplotlib, len(frames)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("result", nargs="?", type=Path, help="a saved result.json (default: audit fixtures/ first)")
    args = parser.parse_args(argv)
    if args.result is not None and not args.result.is_file():
        parser.error(f"{args.result}: no such file")
    result = load_result([str(args.result)] if args.result is not None else [])
    times, cpu, size, per_figure = timed_render(result)
    print(f"report of {len(result.cells)} cells; load average {os.getloadavg()[0]:.1f}; {REPEATS} repeats, medians")
    print(
        f"render_html: {statistics.median(times):.2f} s wall, {statistics.median(cpu):.2f} s CPU; "
        f"report size: {size / 1e6:.2f} MB"
    )
    print("time per figure function (s): " + ", ".join(f"{k} {v:.3f}" for k, v in sorted(per_figure.items())))
    if result.readers is not None and getattr(result.readers.payload, "rates", None) is not None:
        ours, mpl, n = heatmaps_side_by_side(result)
        print(f"{'reader heat maps':28s}{'judge-audit (direct SVG)':>26s}{'matplotlib (SVG)':>20s}{'ratio':>8s}")
        print(f"{f'{n} maps, wall time (s)':28s}{ours:>26.3f}{mpl:>20.3f}{ours / mpl:>8.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
