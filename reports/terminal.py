"""The summary printed after ``audit run``: verdict, dev-vs-deployment, failing cells, report path.

Plain text (no colour codes by default, so CI logs stay clean); user text has its
control characters escaped (:func:`audit.terminal_text.printable`) so a system name cannot
move the cursor or recolour the terminal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from audit.terminal_text import printable
from reports import discover
from reports.format import interval, pct
from reports.peer_terminal import peer_summary_lines
from reports.sections import STATUS_ORDER, dev_summary, status_value

_COLOURS = {"PASS": "32", "WARN": "33", "FAIL": "31", "ERROR": "35", "SKIPPED": "90"}


def _safe(text: object) -> str:
    return printable(text)


def render_summary(result: Any, report_path: str | Path | None = None, *, max_cells: int = 12,
                   colour: bool = False) -> str:
    """A few lines for the terminal after ``audit run``.

    Parameters
    ----------
    result : audit.result.AuditResult
    report_path : str or Path, optional
        Where the HTML report was written (printed last).
    max_cells : int
        At most this many failing cells are listed; the rest are counted.
    colour : bool
        ANSI colour for the status word (off by default; the CLI turns it on for a TTY).
    """
    status = status_value(result.status)
    head = f"\x1b[1;{_COLOURS.get(status, '0')}m{status}\x1b[0m" if colour else status
    lines = [f"judge-audit: {head}", _safe(result.verdict)]
    dev = dev_summary(discover.field(result, "dev"), result.provenance.primary_judge)
    if dev["items"]:
        vals = ", ".join(f"{_safe(it['label'])} {it['value']}" for it in dev["items"])
        lines.append(f"Dev set (Spearman of {_safe(dev['judge'] or 'the judge')} with humans): {vals}")
        payload = discover.field(discover.field(result, "dev"), "payload")
        oof = discover.field(payload, "oof_pooled")
        if isinstance(oof, (int, float)):
            lines.append(f"  routed judge: {discover.field(payload, 'routed_in_sample_pooled'):.3f} in sample, "
                         f"{oof:.3f} out of fold (optimism {discover.field(payload, 'optimism_pooled'):+.3f})"
                         + ("; selection and validation share data" if discover.field(payload, "selection_shares_data")
                            else ""))
    elif dev["computed"]:
        lines.append("Dev set: computed (see the report)")
    else:
        reason = _safe(dev["reason"])
        # "no development set given (...)" reads on its own; other reasons say why it was not computed
        lines.append(f"Dev set: {reason}" if reason.startswith("no development set") else f"Dev set: not computed ({reason})")
    assessed = [c for c in result.cells if c.judge is not None and c.transfer.judge_in_human_ci is not None]
    outside = sum(c.transfer.judge_in_human_ci is False for c in assessed)
    skipped = len(result.cells) - len(assessed)
    lines.append(f"Deployment: judge outside the human 95% interval in {outside} of {len(assessed)} cells"
                 + (f" ({skipped} not assessed)" if skipped else ""))
    failing = [c for c in result.cells if status_value(c.transfer.verdict) in ("FAIL", "ERROR")]
    if failing:
        lines.append(f"Failing cells ({len(failing)}):")
        width = max(len(_safe(f"{c.matchup} / {c.criterion}")) for c in failing[:max_cells])
        for c in failing[:max_cells]:
            g = c.human.glmm
            flags = [name for name, on in (("outside CI", c.transfer.judge_in_human_ci is False),
                                           ("direction conflict", bool(c.transfer.direction_conflict)),
                                           ("below reader baseline", bool(c.transfer.below_reader_baseline))) if on]
            judge = pct(c.judge.rate) if c.judge is not None else "-"
            label = _safe(f"{c.matchup} / {c.criterion}")
            lines.append(f"  {label:<{width}}  human {pct(g.estimate)} {interval(g.ci_low, g.ci_high)}  "
                         f"judge {judge}  {', '.join(flags)}")
        if len(failing) > max_cells:
            lines.append(f"  ... and {len(failing) - max_cells} more (see the report)")
    lines.extend(peer_summary_lines(result))
    counts = {s: 0 for s in STATUS_ORDER}
    for c in result.checks:
        counts[status_value(c.status)] = counts.get(status_value(c.status), 0) + 1
    lines.append("Checks: " + ", ".join(f"{n} {s}" for s, n in counts.items()))
    if report_path is not None:
        lines.append(f"Report: {_safe(report_path)}")
    return "\n".join(lines) + "\n"
