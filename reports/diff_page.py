"""The HTML page of `audit diff OLD NEW --html PATH`: one self-contained page, every value escaped."""

from __future__ import annotations

import html
import math

from judge_transfer_audit.results.diff import QUANTITIES, Change, ResultDiff

_CSS = """body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}
td,th{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}th{background:#f4f4f4}
.worse{background:#fde2e2}.better{background:#e2f5e2}.removed{background:#fde2e2}.added{background:#eef}
.num{font-variant-numeric:tabular-nums;white-space:nowrap}caption{text-align:left;font-weight:600}"""


def _e(x: object) -> str:
    return html.escape(str(x), quote=True)


def _change(c: Change | None) -> str:
    if c is None:
        return ""
    return f'<span class="num">{_e(c)}</span>' + (f" <small>({c.level:.0%})</small>" if math.isfinite(c.level) else "")


def diff_html(d: ResultDiff) -> str:
    """The diff as an HTML document."""
    head = (
        f"<h1>audit diff</h1><p><b>OLD</b> {_e(d.old_source)} &rarr; <b>NEW</b> {_e(d.new_source)} "
        f"(schema {_e(d.schema_version)})</p><p>Status {_e(d.old_status)} &rarr; {_e(d.new_status)}; judge "
        f"{_e(d.old_judge)} &rarr; {_e(d.new_judge)}</p>"
    )
    if d.same_sources:
        head += (
            "<p>Inputs: "
            + ", ".join(f"{_e(r)} {'same' if s else 'different'}" for r, s in sorted(d.same_sources.items()))
            + "</p>"
        )
    verdict = (
        f"<p><b>{'WORSE' if d.worse else 'No decision worse'}</b>: {d.n_worse} cell(s) counted under "
        f"[diff] worse = {_e(d.policy.worse)}, removed = {_e(d.policy.removed)}.</p>"
    )
    names = list(QUANTITIES)
    rows = [
        "<tr><th>cell</th><th>decision</th><th>decision change</th>"
        + "".join(f'<th title="{_e(QUANTITIES[n][0])}">{_e(n)}</th>' for n in names)
        + "</tr>"
    ]
    for c in d.cells:
        flip = "<br><small>OLD had the other system focal</small>" if c.flipped else ""
        rows.append(
            f'<tr class="{_e(c.direction)}"><td>{_e(c.matchup)} / {_e(c.criterion)}{flip}</td>'
            f"<td>{_e(c.old_status or '-')} &rarr; {_e(c.new_status or '-')}</td><td>{_e(c.direction)}</td>"
            + "".join(f"<td>{_change(c.changes.get(n))}</td>" for n in names)
            + "</tr>"
        )
    cells = "<table><caption>Cells (old &rarr; new, change [interval])</caption>" + "".join(rows) + "</table>"
    agreement = ""
    if d.agreement:
        stats = list(d.agreement[0].changes)
        arows = ["<tr><th>scope</th>" + "".join(f"<th>{_e(s)}</th>" for s in stats) + "</tr>"]
        arows += [
            f"<tr><td>{_e(a.scope)}</td>" + "".join(f"<td>{_change(a.changes[s])}</td>" for s in stats) + "</tr>"
            for a in d.agreement
        ]
        agreement = "<table><caption>Judge-human agreement</caption>" + "".join(arows) + "</table>"
    notes = "".join(f"<p><small>Note: {_e(n)}</small></p>" for n in d.notes)
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>audit diff</title>'
        f"<style>{_CSS}</style></head><body>{head}{verdict}{cells}{agreement}{notes}</body></html>\n"
    )
