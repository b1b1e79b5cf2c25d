"""Leaf helpers every report module shares: status names, a frame as a display table, the
section context. No imports from the rest of :mod:`reports` (this is what keeps the report
modules free of import cycles)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pandas as pd

from judge_transfer_audit.model.tie_rules import rule_words
from judge_transfer_audit.presentation.format import cell_value, count_or_value, is_count_name

STATUS_ORDER = ("FAIL", "ERROR", "INCONCLUSIVE", "WARN", "INSUFFICIENT", "SKIPPED", "PASS")
#: the transfer cell statuses, worst first (the headline counts them in this order)
CELL_ORDER = ("FAIL", "ERROR", "INCONCLUSIVE", "INSUFFICIENT", "PASS")
MAX_TABLE_ROWS = 80
FOLDED_ROWS = 50  #: rows of each folded table in the page; result.json and the CSVs hold all
MAX_TABLE_COLUMNS = 40  #: columns of a table in the page (a profile over 1,000 criteria is 1,000 columns wide)


def status_value(status: Any) -> str:
    """``Status.FAIL`` / ``"FAIL"`` -> ``"FAIL"``."""
    return str(getattr(status, "value", status))


def table(
    frame: pd.DataFrame | None,
    *,
    caption: str = "",
    columns: list[str] | None = None,
    max_rows: int = MAX_TABLE_ROWS,
    note: str = "",
    sort_by: tuple[tuple[str, bool], ...] = (),
    sort_label: str = "",
    print_omit: tuple[str, ...] = (),
    print_source: str = "result.json",
) -> dict | None:
    """A frame as ``{"caption", "columns", "rows", "truncated", "note", "print_omit", "print_note"}`` of
    display strings.

    ``sort_by``: ``(column, ascending)`` keys for a display order (worst first; a stable sort, missing
    values last, absent columns skipped), named in the note by ``sort_label``; the CSVs keep the
    producer's order. ``print_omit``: columns left off on paper (text-heavy or secondary ones, so the
    rest fit a Letter/A4 page); ``print_note`` names them and ``print_source``, the file holding them.
    """
    if frame is None:
        return None
    keys = [(c, asc) for c, asc in sort_by if c in frame.columns]
    order = None  # the display order's first rows, by position, when the frame is not sorted whole
    if keys and len(frame) > 1:
        by, ascending = [c for c, _ in keys], [a for _, a in keys]
        if frame.columns.is_unique:  # sort the key columns only: the same stable permutation, no wide copy
            ranked = frame[list(dict.fromkeys(by))].reset_index(drop=True)
            ranked = ranked.sort_values(by, ascending=ascending, kind="mergesort", na_position="last")
            order = ranked.index.to_numpy()[:max_rows]
        else:
            frame = frame.sort_values(by, ascending=ascending, kind="mergesort", na_position="last")
        if sort_label:
            note = " ".join(x for x in (note, f"Rows sorted {sort_label}.") if x)
    cols = [c for c in columns if c in frame.columns] if columns else frame.columns.tolist()
    cut_columns = max(0, len(cols) - MAX_TABLE_COLUMNS)
    if cut_columns:
        cols = cols[:MAX_TABLE_COLUMNS]
        note = " ".join(
            x
            for x in (
                note,
                f"The first {MAX_TABLE_COLUMNS} columns are shown; {cut_columns:,} more are in result.json.",
            )
            if x
        )
    # One conversion to Python scalars (as itertuples gives them: floats, ints, str, NaN), not one per row,
    # of the rows and columns shown only (a frame 1,000 columns wide is sliced to 40 before it is converted).
    if frame.columns.is_unique:
        at = frame.columns.get_indexer(cols)
        shown = frame.iloc[order if order is not None else slice(0, max(max_rows, 0)), at]
    else:
        shown = frame.head(max_rows)[cols]
    values = shown.to_numpy(dtype=object).tolist()
    formats = [count_or_value if is_count_name(c) else cell_value for c in shown.columns]
    rows = [[f(v) for f, v in zip(formats, row)] for row in values]
    omit = [i for i, c in enumerate(cols) if c in print_omit]
    return {
        "caption": caption,
        "columns": [str(c) for c in cols],
        "rows": rows,
        "truncated": max(0, len(frame) - max_rows),
        "note": note,
        "print_omit": omit,
        "print_note": (
            f"On paper the column{'s' if len(omit) > 1 else ''} {', '.join(str(cols[i]) for i in omit)} "
            f"{'are' if len(omit) > 1 else 'is'} left out; {'they are' if len(omit) > 1 else 'it is'} in the HTML "
            f"report and in {print_source}."
            if omit
            else ""
        ),
    }


def frames_of(obj: Any, path: str = "") -> list[tuple[str, pd.DataFrame]]:
    """Every non-empty DataFrame field of a (nested) frozen result, with its dotted path.

    Reads dataclass fields by type only (frames, nested results, tuples of results): the
    folded "tables behind this section" list, so that no table of a section goes unshown.
    """
    out: list[tuple[str, pd.DataFrame]] = []
    if isinstance(obj, pd.DataFrame):
        if len(obj) and len(obj.columns):
            out.append((path or "table", obj))
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            out += frames_of(getattr(obj, f.name), f"{path}.{f.name}" if path else f.name)
    elif isinstance(obj, tuple) and obj and all(dataclasses.is_dataclass(v) for v in obj):
        for i, v in enumerate(obj):
            out += frames_of(v, f"{path}[{i}]")
    return out


def section_context(section_id: str, title: str, section: Any) -> dict:
    """The context every section renderer fills: status, reason, figures, tables, notes."""
    status = status_value(section.status)
    computed = section.payload is not None and status != "SKIPPED"
    reason = section.reason or ("" if computed else "not computed")
    return {
        "id": section_id,
        "title": title,
        "status": status,
        "computed": computed,
        "reason": reason,
        "figures": [],
        "tables": [],
        "lead_tables": [],
        "cases": [],
        "facts": [],
        "parts": [],
        "notes": [],
        "csv": "",  #: the CSV beside result.json holding the section's table, when its renderer names it
    }


def folded_tables(ctx: dict, payload: Any, *, skip: tuple[str, ...] = ()) -> None:
    """Append every frame of ``payload`` (bar the paths in ``skip``) to the folded tables."""
    for path, frame in frames_of(payload):
        if path not in skip:
            ctx["tables"].append(
                table(
                    frame,
                    caption=path,
                    max_rows=FOLDED_ROWS,
                    note=f"{len(frame):,} rows in result.json" if len(frame) > FOLDED_ROWS else "",
                )
            )


def tie_words(rule: str) -> str:
    """``"even-split"`` -> ``"a tie counts half for each system"``: the registered rule's own
    summary (audit/model/tie_rules.py), so a newly registered rule reads as it says."""
    return rule_words(rule)
