"""The summary printed after ``audit run``: verdict, dev-vs-deployment, cell counts, cells to look at, report path.

Plain text (no colour codes by default, so CI logs stay clean); user text has its
control characters escaped (:func:`judge_transfer_audit.core.terminal_text.printable`) so a system name cannot
move the cursor or recolour the terminal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judge_transfer_audit.core.terminal_text import printable
from judge_transfer_audit.presentation.format import pct
from judge_transfer_audit.presentation.tables import CELL_ORDER, STATUS_ORDER, status_value, tie_words
from judge_transfer_audit.reports.sections import row_accounting, worst_first
from judge_transfer_audit.sections.registry import entries

_COLOURS = {
    "PASS": "32",
    "WARN": "33",
    "FAIL": "31",
    "ERROR": "35",
    "SKIPPED": "90",
    "INCONCLUSIVE": "33",
    "INSUFFICIENT": "90",
}


def _bootstrap_p(p: float, n_boot: int) -> str:
    """A bootstrap p-value; below ``1 / (B + 1)`` it is an extrapolation: ``< 0.001`` at B = 999."""
    floor = 1.0 / (n_boot + 1) if n_boot > 0 else 0.0
    return f"< {floor:.2g}" if p < floor else f"{p:.2g}"


def _safe(text: object) -> str:
    return printable(text)


def _points(x: float) -> str:
    return "-" if x is None or x != x else f"{100 * x:+.1f}"


def _margin(result: Any) -> str:
    margins = {c.transfer.margin for c in result.cells if c.transfer.margin == c.transfer.margin}
    return f"{100 * margins.pop():.0f} points" if len(margins) == 1 else "see the report"


def _level(result: Any) -> str:
    levels = {c.transfer.interval_level for c in result.cells if c.transfer.interval_level == c.transfer.interval_level}
    return f"{levels.pop():.0%}" if len(levels) == 1 else "TOST"


def judge_line(result: Any) -> str:
    """``Judge: ensemble (audited; 5 configurations: ...); tie rule even-split: a tie counts half ...``."""
    prov = result.provenance
    configs = list(dict.fromkeys(k.judge for c in result.cells if c.judge is not None for k in c.judge.configurations))
    primary = prov.primary_judge or (configs[0] if configs else "none")
    shown = ", ".join(_safe(k) for k in configs[:6]) + (f", ... ({len(configs) - 6} more)" if len(configs) > 6 else "")
    panel = f"; {len(configs)} configurations: {shown}" if len(configs) > 1 else ""
    return (
        f"Judge: {_safe(primary)} (audited{panel}); tie rule {_safe(prov.tie_rule)}: {_safe(tie_words(prov.tie_rule))}"
    )


#: the matchup statuses worst first, as the cells are listed
_MATCHUP_ORDER = {"FAIL": 0, "ERROR": 1, "INCONCLUSIVE": 2, "INSUFFICIENT": 3, "PASS": 4}


def matchup_lines(result: Any, max_matchups: int = 12) -> list[str]:
    """The study and matchup transfer decisions (criteria pooled), when the result holds them: every
    matchup in the result's order, or, beyond ``max_matchups``, the worst ``max_matchups`` (FAIL first, then
    by adjusted p) and a count of the rest."""
    matchups = tuple(getattr(result, "matchup_transfers", ()) or ())
    study = getattr(result, "study_transfer", None)
    if study is None or not matchups:
        return []
    lines = [f"Study (criteria pooled per matchup): {_safe(study.reason)}"]
    rest = 0
    if len(matchups) > max_matchups:
        ranked = sorted(
            matchups,
            key=lambda m: (
                _MATCHUP_ORDER.get(status_value(m.status), 5),
                1.0 if m.p_adjusted is None else m.p_adjusted,
            ),
        )
        matchups, rest = tuple(ranked[:max_matchups]), len(ranked) - max_matchups
        lines.append(f"  ({max_matchups} of {len(ranked)} matchups, worst first)")
    for m in matchups:
        p = "" if m.p_adjusted is None else f"  adj. p {m.p_adjusted:.2g}"
        lines.append(
            f"  matchup {_safe(m.matchup)}: {status_value(m.status)} ({m.n_fail} FAIL, {m.n_pass} PASS of "
            f"{m.n_assessed} compared cells){p}"
        )
    if rest:
        lines.append(f"  ... and {rest} more (result.json's matchup_transfers; the report)")
    return lines


def section_lines(result: Any, place: str) -> list[str]:
    """The sections' lines printed at ``place``, in the section table's terminal order
    (:class:`judge_transfer_audit.sections.registry.Terminal`)."""
    shown = [e for e in entries() if e.terminal is not None and e.terminal.place == place]
    return [line for e in sorted(shown, key=lambda e: e.terminal.rank) for line in e.terminal.lines(result)]


def render_summary(
    result: Any, report_path: str | Path | None = None, *, max_cells: int = 12, colour: bool = False
) -> str:
    """A few lines for the terminal after ``audit run``.

    Parameters
    ----------
    result : judge_transfer_audit.results.result.AuditResult
    report_path : str or Path, optional
        Where the HTML report was written (printed last).
    max_cells : int
        At most this many failing cells are listed; the rest are counted.
    colour : bool
        ANSI colour for the status word (off by default; the CLI turns it on for a TTY).
    """
    status = status_value(result.status)
    head = f"\x1b[1;{_COLOURS.get(status, '0')}m{status}\x1b[0m" if colour else status
    lines = [f"judge-audit: {head}", _safe(result.verdict), judge_line(result)]
    rows = row_accounting(result.provenance)
    if rows:
        lines.append("Rows: " + "; ".join(_safe(f"{r['role']}: {r['line']}") for r in rows))
        for r in rows:
            for e in r["excluded"]:
                lines.append(_safe(f"  {r['role']}: {e['n']} {e['reason']}"))
    lines += section_lines(result, "inputs")
    lines += matchup_lines(result, max_cells)
    cell_counts = dict(result.counts)
    lines.append(
        "Cells: "
        + ", ".join(f"{cell_counts.get(s, 0)} {s}" for s in CELL_ORDER)
        + f" (of {len(result.cells)}; margin {_margin(result)})"
    )
    lines += section_lines(result, "verdict")
    # worst first, as in the report: FAIL, ERROR, INCONCLUSIVE, each by largest distance from the band
    shown = worst_first(c for c in result.cells if status_value(c.transfer.status) in ("FAIL", "ERROR", "INCONCLUSIVE"))
    if shown:
        lines.append(
            f"Cells to look at ({len(shown)}, worst first; distance of the judge from the human band, "
            f"{_level(result)} interval):"
        )
        width = max(len(_safe(f"{c.matchup} / {c.criterion}")) for c in shown[:max_cells])
        for c in shown[:max_cells]:
            t, h = c.transfer, c.human
            label = _safe(f"{c.matchup} / {c.criterion}")
            status = status_value(t.status)
            if status == "ERROR":
                lines.append(f"  {status:<12} {label:<{width}}  {_safe(t.reason)}")
                continue
            flags = [
                name
                for name, on in (
                    ("direction conflict", bool(t.direction_conflict)),
                    ("below reader baseline", bool(t.below_reader_baseline)),
                    ("GLMM degenerate", bool(h.glmm.degenerate)),
                )
                if on
            ]
            more = f"  needs ~{t.pairs_needed} pairs" if t.pairs_needed is not None else ""
            if t.p_outside_adjusted is not None and status in ("FAIL", "INCONCLUSIVE"):
                p_cell = min(p for p in (t.p_outside_adjusted, t.p_conflict_adjusted) if p is not None)
                more = f"  adj. p {_bootstrap_p(p_cell, t.n_boot)}" + more
            lines.append(
                f"  {status:<12} {label:<{width}}  judge {pct(t.judge_rate.estimate)} for {_safe(c.focal)}  band "
                f"[{pct(t.band_low)}, {pct(t.band_high)}]  distance {_points(t.difference.estimate)} "
                f"[{_points(t.difference.ci_low)}, {_points(t.difference.ci_high)}]{more}"
                + (f"  ({', '.join(flags)})" if flags else "")
            )
        if len(shown) > max_cells:
            lines.append(f"  ... and {len(shown) - max_cells} more (see the report)")
    degenerate = [c for c in result.cells if c.human.glmm.degenerate]
    if degenerate:
        lines.append(
            f"GLMM degenerate in {len(degenerate)} cell(s): their expit(b0) is not shown as the human "
            "preference; the decision rests on the vote share and majority rate, never on the GLMM"
        )
    lines += section_lines(result, "sections")
    counts = {s: 0 for s in STATUS_ORDER}
    for c in result.checks:
        counts[status_value(c.status)] = counts.get(status_value(c.status), 0) + 1
    lines.append("Checks: " + ", ".join(f"{n} {s}" for s, n in counts.items()))
    if report_path is not None:
        lines.append(f"Report: {_safe(report_path)}")
    return "\n".join(lines) + "\n"
