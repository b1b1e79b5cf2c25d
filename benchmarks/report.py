"""Benchmark: rendering the HTML report of the shipped fixture.

Prints, for the fixture's AuditResult: the median wall time of ``render_html`` (inline SVG
figures, what judge-audit ships) next to the same report with every figure embedded as a PNG
(matplotlib Agg at 110 dpi, base64) -- the usual alternative -- with the ratio, the file
sizes, and the time per figure family.

    python benchmarks/report.py                 # runs the audit on fixtures/ first
    python benchmarks/report.py audit-out/result.json
"""

from __future__ import annotations

import base64
import io
import statistics
import sys
import time
from pathlib import Path
from unittest import mock

REPEATS = 5
ROOT = Path(__file__).resolve().parents[1]


def load_result(argv: list[str]):
    from audit.result import result_from_json

    if argv:
        return result_from_json(Path(argv[0]).read_text(encoding="utf-8"))
    from audit.inputs import load_audit_data
    from audit.pipeline import run_audit
    from audit.spec import AuditSpec

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


def _png(fig, fig_id: str) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    return f'<img id="{fig_id}" alt="" src="data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}">'


def timed_render(result, *, png: bool = False) -> tuple[list[float], int, dict[str, float]]:
    import reports.figures as figs
    from reports.html import render_html

    modules = [
        getattr(figs, m) for m in ("preference", "heatmap", "loro", "bootstrap", "dendrogram", "surface", "timing")
    ]
    per_figure: dict[str, float] = {}
    times, size = [], 0
    for i in range(REPEATS + 1):  # first run warms fonts and caches, not counted
        per_figure.clear()
        patches = []
        for mod in modules:
            original = mod.figure_to_svg
            render = _png if png else original

            def wrapped(fig, fig_id, _render=render):
                t = time.perf_counter()
                out = _render(fig, fig_id)
                family = fig_id.split("-")[1] if "-" in fig_id else fig_id
                per_figure[family] = per_figure.get(family, 0.0) + time.perf_counter() - t
                return out

            patches.append(mock.patch.object(mod, "figure_to_svg", wrapped))
        for p in patches:
            p.start()
        try:
            t = time.perf_counter()
            html = render_html(result)
            elapsed = time.perf_counter() - t
        finally:
            for p in patches:
                p.stop()
        if i:
            times.append(elapsed)
        size = len(html.encode("utf-8"))
    return times, size, dict(per_figure)


def main(argv: list[str]) -> None:
    result = load_result(argv)
    svg_t, svg_size, svg_fig = timed_render(result)
    png_t, png_size, _ = timed_render(result, png=True)
    ms, mp = statistics.median(svg_t), statistics.median(png_t)
    print(f"report of {len(result.cells)} cells, {REPEATS} repeats, medians")
    print(f"{'':28s}{'judge-audit (inline SVG)':>26s}{'PNG-embedded (110 dpi)':>26s}{'ratio':>8s}")
    print(f"{'render_html wall time (s)':28s}{ms:>26.2f}{mp:>26.2f}{ms / mp:>8.2f}")
    print(f"{'report size (MB)':28s}{svg_size / 1e6:>26.2f}{png_size / 1e6:>26.2f}{svg_size / png_size:>8.2f}")
    print("time per figure family, SVG (s): " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(svg_fig.items())))


if __name__ == "__main__":
    main(sys.argv[1:])
