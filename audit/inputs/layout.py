"""Shared pieces of the readers: required columns, wide-to-long, ids, numbers, duplicates."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from judge_transfer_audit.core.errors import closest, did_you_mean
from judge_transfer_audit.inputs.formats import Table
from judge_transfer_audit.inputs.problems import ProblemLog


def require(table: Table, required: list[str], log: ProblemLog, shape: str) -> bool:
    """Report the required columns absent from ``table``; True when all are present."""
    absent = [c for c in required if c not in table.frame.columns]
    if absent:
        spare = [table.original_columns.get(c, c) for c in table.frame.columns if c not in required]
        near = {c: closest(c, spare) for c in absent}
        renames = [f"rename '{n}' to '{c}'" for c, n in near.items() if n is not None]
        log.add(
            table.path,
            f"missing required column(s) {', '.join(c + did_you_mean(c, spare) for c in absent)} for {shape}",
            f"{'; '.join(renames) + ', or ' if renames else ''}add the column(s); columns found: {table.found()} "
            "(names are case-insensitive)",
            line=1 if table.format in ("csv", "tsv") else None,
            column=", ".join(absent),
        )
        return False
    return True


def wide_columns(table: Table, reserved: set[str]) -> list[str]:
    """Criterion columns of a wide layout: every column not reserved and not starting with ``_``."""
    return [c for c in table.frame.columns if c not in reserved and not c.startswith("_")]


def melt_wide(table: Table, criteria: list[str], value_name: str) -> pd.DataFrame:
    """One row per (source row, criterion column), row-major; keeps ``line`` and ``order``."""
    base = table.frame.drop(columns=criteria)
    n, k = len(base), len(criteria)
    rows = np.repeat(np.arange(n), k)
    out = base.iloc[rows].reset_index(drop=True)
    out["criterion"] = np.tile(np.asarray(criteria, dtype=object), n)
    out[value_name] = table.frame[criteria].to_numpy().reshape(-1)
    out["line"] = np.repeat(table.lines, k)
    return out


def long_frame(table: Table) -> pd.DataFrame:
    out = table.frame.copy()
    out["line"] = table.lines
    return out


def read_records(
    table: Table, log: ProblemLog, role: str, ids: list[str], value: str, what: str, reserved: set[str]
) -> tuple[pd.DataFrame, bool] | None:
    """The records of a judge or human file as one long frame, and whether the file was wide.

    Long: one record per row, with the columns ``ids``, criterion and ``value`` required. Wide
    (neither criterion nor ``value`` present): one record per row x criterion column (every
    column not in ``reserved``), with ``ids`` required. The criterion is lower-cased. None after
    reporting a missing column (``what`` names the layout in the message) or a wide file
    without criterion columns.
    """
    wide = "criterion" not in table.columns and value not in table.columns
    if wide:
        if not require(table, ids, log, f"{what} (wide layout)"):
            return None
        crits = wide_columns(table, reserved)
        if not crits:
            log.add(
                table.path,
                f"no criterion columns in the wide {role} file",
                f"add one column per criterion, or use the long layout ({', '.join(ids)}, criterion, "
                f"{value}); columns found: {table.found()}",
            )
            return None
        frame = melt_wide(table, crits, value)
    else:
        if not require(table, ids + ["criterion", value], log, what):
            return None
        frame = long_frame(table)
    frame["criterion"] = frame["criterion"].str.lower()
    return frame, wide


def blank_ids(frame: pd.DataFrame, columns: list[str], table: Table, log: ProblemLog, role: str) -> np.ndarray:
    """Rows with an empty id column, or a name holding a control character, are reported (and
    left out under drop_invalid)."""
    bad = np.zeros(len(frame), dtype=bool)
    for c in columns:
        m = (frame[c] == "").to_numpy()
        bad |= log.rows(
            table.path,
            role,
            m,
            frame["line"].to_numpy(),
            None,
            c,
            f"empty {c}",
            f"give every row a {c}",
            f"empty {c}",
            already=bad,
        )
    return bad | control_characters(frame, columns, table, log, role, already=bad)


#: Columns holding names (ids, systems, criteria, labels): they reach reports, figures (SVG)
#: and terminals, so a control character in one is an input problem, not something to render.
NAME_COLUMNS = (
    "pair_id",
    "item_id",
    "reader_id",
    "criterion",
    "system",
    "judge",
    "choice",
    "shown_first",
    "reader_group",
    "group_id",
    "system_a",
    "system_b",
    "focal",
    "matchup",
)
#: C0/C1 control characters (NUL, tab, line breaks, ESC...), Unicode line/paragraph separators
#: and lone UTF-16 surrogates (a JSON "\ud800" escape; no UTF-8 writer can encode them)
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def _printable_ascii(column: pd.Series) -> bool:
    """True when every value of an Arrow-backed text column without missing values is printable ASCII
    (no :data:`CONTROL` character then), read from the column's character buffers: no Python string
    per value. False when not so, or not told this way."""
    dtype = column.dtype
    if not isinstance(dtype, pd.StringDtype) or dtype.storage != "pyarrow" or column.hasnans:
        return False
    import pyarrow as pa  # the storage of this dtype: installed

    values = pa.array(column)
    for chunk in values.chunks if isinstance(values, pa.ChunkedArray) else [values]:
        data = chunk.buffers()[2]  # every value's characters (and maybe more): a superset
        if data is not None:
            raw = np.frombuffer(data, dtype=np.uint8)
            if not ((raw >= 0x20) & (raw < 0x7F)).all():
                return False
    return True


def control_characters(
    frame: pd.DataFrame, columns, table: Table, log: ProblemLog, role: str, already: np.ndarray | None = None
) -> np.ndarray:
    """Rows whose name columns (those of ``columns`` in :data:`NAME_COLUMNS` and present)
    hold a control character: one row problem each (the value shown escaped)."""
    bad = np.zeros(len(frame), dtype=bool)
    already = bad if already is None else already
    for c in columns:
        if c not in frame.columns or c not in NAME_COLUMNS:
            continue
        if _printable_ascii(frame[c]):  # the common case, told from the characters' bytes
            continue
        values = frame[c].to_numpy(dtype=object)
        if not CONTROL.search("".join(values)):  # one C-level scan per column
            continue
        m = np.fromiter((bool(CONTROL.search(v)) for v in values), dtype=bool, count=len(values))
        bad |= log.rows(
            table.path,
            role,
            m,
            frame["line"].to_numpy(),
            values,
            c,  # shown with repr(): escaped
            f"{c} contains a control character (a line break, tab, NUL, escape code or similar)",
            "remove the control character from the name in every file (names are shown in the "
            "report, its figures and the terminal)",
            f"control character in {c}",
            already=already | bad,
        )
    return bad


# what an empty cell means, by (judge file?, column), for the fix of a non-numeric value
_EMPTY_MEANS = {
    (True, "score"): " to mark an unparsable judge output",
    (True, "sample"): " (sample 0)",
    (False, "rating"): " (not rated)",
    (False, "seconds"): " (time unknown)",
}


def parse_numbers(
    values: pd.Series,
    table: Table,
    lines: np.ndarray,
    log: ProblemLog,
    role: str,
    column: str,
    scale: tuple[float, float] | None,
    what: str,
    columns: np.ndarray | None = None,
    already: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Parse a text column of numbers.

    Returns ``(numbers, bad)``: empty cells become NaN (not a problem here); non-numeric or
    non-finite cells and numbers outside ``scale`` are reported as row problems and flagged
    in ``bad``. ``columns`` (one name per value) names the source column of each value in a
    wide layout (the criterion column); ``column`` still decides the wording of the fix.
    """
    where = column if columns is None else np.asarray(columns, dtype=object)
    text = values.to_numpy(dtype=object)
    empty = values.to_numpy() == ""
    nums = pd.to_numeric(pd.Series(np.where(empty, None, text), dtype=object), errors="coerce").to_numpy(dtype=float)
    nonnum = ~empty & ~np.isfinite(nums)
    bad = log.rows_in(
        table.path,
        role,
        nonnum,
        lines,
        text,
        where,
        f"{what} is not a number",
        f"write a number, or leave the cell empty{_EMPTY_MEANS.get((role.endswith('judge'), column), '')}",
        f"non-numeric {column}",
        already=already,
    )
    if scale is not None:
        lo, hi = scale
        out = np.isfinite(nums) & ((nums < lo) | (nums > hi))
        bad = bad | log.rows_in(
            table.path,
            role,
            out,
            lines,
            text,
            where,
            f"{what} outside the declared scale [{lo:g}, {hi:g}]",
            "correct the value or declare the scale the data use",
            f"{column} outside the scale",
            already=bad if already is None else already | bad,
        )
    nums = np.where(nonnum, np.nan, nums)
    return nums, bad


def scale_numbers(
    frame: pd.DataFrame,
    column: str,
    table: Table,
    log: ProblemLog,
    role: str,
    scale: tuple[float, float] | None,
    wide: bool,
    already: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`parse_numbers` of a record's value (a rating or score) on ``scale``; in a wide file
    each value is reported under its criterion column."""
    return parse_numbers(
        frame[column],
        table,
        frame["line"].to_numpy(),
        log,
        role,
        column,
        scale,
        column,
        columns=frame["criterion"].to_numpy(dtype=object) if wide else None,
        already=already,
    )


def checked_numbers(
    frame: pd.DataFrame,
    column: str,
    table: Table,
    log: ProblemLog,
    role: str,
    bad: np.ndarray,
    rejects,
    message: str,
    fix: str,
    reason: str,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`parse_numbers` of an optional column without a scale, then a row problem
    (``message``, ``fix``, counted under ``reason``) for each number ``rejects(numbers)`` flags.
    Returns ``(numbers, rejected, bad)`` with ``bad`` the rows bad before or here."""
    lines = frame["line"].to_numpy()
    nums, bad_n = parse_numbers(frame[column], table, lines, log, role, column, None, column, already=bad)
    bad = bad | bad_n
    rejected = np.isfinite(nums) & rejects(nums)
    bad |= log.rows(
        table.path, role, rejected, lines, frame[column].to_numpy(), column, message, fix, reason, already=bad
    )
    return nums, rejected, bad


def duplicates(
    frame: pd.DataFrame, keys: list[str], table: Table, log: ProblemLog, role: str, message: str, fix: str
) -> np.ndarray:
    """Flag every repeat of a key (the first occurrence is kept); the message cites the first line."""
    dup = frame.duplicated(keys, keep="first").to_numpy()
    if not dup.any():
        return dup
    first_line = frame.groupby(keys, sort=False)["line"].transform("first").to_numpy()
    values = np.full(len(frame), None, dtype=object)
    for i in np.flatnonzero(dup)[:1000]:  # only the ones that can be listed
        values[i] = f"{' / '.join(str(frame[k].iat[i]) for k in keys)} (first at line {first_line[i]})"
    return log.rows(table.path, role, dup, frame["line"].to_numpy(), values, None, message, fix, message)
