"""Read one input file (CSV, TSV, JSONL or Parquet, by extension) into a table of strings.

Every value is read as text (``""`` when empty or missing) so that validation sees exactly
what the user wrote; numbers are parsed later by the readers that need them. Column names
are matched case-insensitively (stripped and lower-cased). Each row keeps the line number
it came from:

* CSV/TSV: the physical line where the record starts (header = line 1), correct even when
  a quoted field (a story text) spans several lines; blank lines are skipped;
* JSONL: the physical line of the JSON object (there is no header: the first record is line 1);
* Parquet: the 1-based row number.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judge_transfer_audit.core.errors import MissingDependencyError, did_you_mean
from judge_transfer_audit.core.output_files import restore_frame
from judge_transfer_audit.inputs.problems import ProblemLog

#: extension -> format name
EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}


@dataclass
class Table:
    """One file read as strings, with its provenance."""

    role: str
    path: str
    format: str
    sha256: str
    frame: pd.DataFrame  #: every column str, lower-case names, values stripped
    lines: np.ndarray  #: source line (or row) number of each row
    original_columns: dict[str, str]  #: lower-case name -> name as written

    @property
    def columns(self) -> list[str]:
        return list(self.frame.columns)

    def found(self) -> str:
        """The columns as written, for error messages."""
        return ", ".join(self.original_columns.values()) or "(none)"

    def __len__(self) -> int:
        return len(self.frame)


def file_format(path: str) -> str | None:
    """The format implied by ``path``'s extension, or None when unknown."""
    return EXTENSIONS.get(os.path.splitext(str(path))[1].lower())


def read_table(path: str | os.PathLike, role: str, log: ProblemLog) -> Table | None:
    """Read ``path``; report problems to ``log`` and return None when it cannot be used.

    Problems reported: unknown extension, missing/unreadable file, not UTF-8, malformed
    CSV/JSON, duplicate column names (after lower-casing), no columns, no data rows.
    """
    path = str(path)
    fmt = file_format(path)
    if fmt is None:
        log.add(
            path,
            f"unknown file extension for the {role} file",
            f"use one of {', '.join(sorted(EXTENSIONS))} (the format is chosen by extension)",
        )
        return None
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        log.add(
            path, f"cannot read the {role} file: {exc.strerror or exc}", "check the path and the file's permissions"
        )
        return None
    sha = hashlib.sha256(raw).hexdigest()
    if not raw.strip():
        log.add(path, f"the {role} file is empty", "provide a header line and at least one data row")
        return None
    try:
        if fmt in ("csv", "tsv"):
            frame, lines = _read_delimited(raw, "," if fmt == "csv" else "\t", path, log)
            if frame is None:
                return None
            frame = restore_frame(frame)  # a cell judge-audit neutralised ('=x) reads back as written
        elif fmt == "jsonl":
            frame, lines = _read_jsonl(raw, path, log)
            if frame is None:
                return None
        else:
            frame, lines = _read_parquet(path)
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        start = raw.rfind(b"\n", 0, exc.start) + 1
        end = raw.find(b"\n", exc.start)
        text = raw[start : end if end >= 0 else len(raw)].decode("utf-8", errors="replace").rstrip("\r")
        log.add(
            path,
            f"the {role} file is not valid UTF-8 text (byte {exc.start})",
            "save the file as UTF-8 (e.g. 'Save as CSV UTF-8' in a spreadsheet, or iconv -f latin1 -t utf-8)",
            line=line,
            value=text[:80],
        )
        return None
    except MissingDependencyError:
        raise
    except Exception as exc:  # malformed content: one plain message, never a traceback
        log.add(
            path,
            f"cannot parse the {role} file as {fmt.upper()}: {str(exc).strip()}",
            f"check that the file is well-formed {fmt.upper()}",
        )
        return None
    original = [str(c) for c in frame.columns]
    lower = [c.strip().lower() for c in original]
    dupes = sorted({c for c in lower if lower.count(c) > 1})
    for c in dupes:
        log.add(
            path,
            "duplicate column name (names are case-insensitive)",
            "rename or remove one of the columns",
            line=1 if fmt in ("csv", "tsv") else None,
            column=c,
            value=", ".join(o for o, lo in zip(original, lower) if lo == c),
        )
    if dupes:
        return None
    frame.columns = lower
    if not lower or lower == [""]:
        log.add(path, f"the {role} file has no columns", "add a header line naming the columns")
        return None
    if len(frame) == 0:
        log.add(path, f"the {role} file has a header but no data rows", "add at least one data row", value=None)
        return None
    return Table(
        role=role,
        path=path,
        format=fmt,
        sha256=sha,
        frame=frame,
        lines=np.asarray(lines, dtype=np.int64),
        original_columns=dict(zip(lower, original)),
    )


def _may_hold_padding(text: str) -> bool:
    """False when no value can start or end with whitespace: an ASCII text without quotes whose only
    byte at or below the space is the line feed (stripping every value would change nothing)."""
    if not text.isascii() or '"' in text:
        return True
    raw = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    return int(np.count_nonzero(raw <= 32)) != int(np.count_nonzero(raw == 10))


def _strip_all(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.apply(lambda s: s.str.strip()) if len(frame.columns) else frame


def _read_delimited(raw: bytes, sep: str, path: str, log: ProblemLog) -> tuple[pd.DataFrame | None, np.ndarray]:
    # Line ends: CRLF and a lone CR (classic Mac) are line breaks, as for pandas and editors.
    text = raw.decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")
    records = _scan_records(text, sep)
    if _report_structure(records, text, sep, path, log):
        return None, np.asarray([])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", pd.errors.ParserWarning)
        try:
            frame = pd.read_csv(
                io.StringIO(text),
                sep=sep,
                dtype=str,
                keep_default_na=False,
                na_filter=False,
                skip_blank_lines=True,
                index_col=False,
            )
        except pd.errors.ParserError:
            # pandas names rows in its own numbering ("row 2", "line 4"): locate the
            # offending lines ourselves so that the message points into the file
            found = _report_long_rows(text, sep, path, log)
            found += _report_open_quote(text, sep, path, log)
            if not found:
                raise
            return None, np.asarray([])
    if any(issubclass(w.category, pd.errors.ParserWarning) for w in caught):
        _report_long_rows(text, sep, path, log)
        return None, np.asarray([])
    if len(frame.columns) == 1:
        other = [d for d in (",", ";", "\t", "|") if d != sep and d in str(frame.columns[0])]
        if other:
            name = {",": "commas", ";": "semicolons", "\t": "tabs", "|": "pipes"}[other[0]]
            log.add(
                path,
                f"the header line is one column holding {name}: the file is not "
                f"{'comma' if sep == ',' else 'tab'}-separated",
                "files ending in .csv must be comma-separated and .tsv/.tab tab-separated: re-export the "
                "file with that delimiter or rename it to match",
                line=1,
                value=str(frame.columns[0])[:80],
            )
            return None, np.asarray([])
    frame = frame.astype(str)
    if _may_hold_padding(text):
        frame = _strip_all(frame)
    frame = _drop_nameless_columns(frame, _header_text(text, records), sep, path, log)
    if frame is None:
        return None, np.asarray([])
    starts = records.starts[1:]
    lines = starts if len(starts) == len(frame) else np.arange(2, len(frame) + 2)
    return frame, lines


@dataclass
class _Records:
    """Where every non-blank CSV record starts and ends, and how many fields it has."""

    starts: np.ndarray  #: first physical line of each record (the header first)
    ends: np.ndarray  #: last physical line of each record
    counts: np.ndarray  #: number of fields of each record
    multiline: dict[int, list[str]]  #: record index -> fields, for records spanning several lines
    column_values: list[set[str]]  #: values seen per column in single-line records (quoted files only)


#: the bytes ``str.strip`` removes that are ASCII (tab, line feed, vertical tab, form feed,
#: carriage return, the four information separators, space)
_ASCII_SPACE = np.array([9, 10, 11, 12, 13, 28, 29, 30, 31, 32], dtype=np.uint8)


def _unquoted_records(text: str, sep: str) -> tuple[np.ndarray, np.ndarray]:
    """First line and field count of every non-blank line of a file without quotes, by array
    operations on its UTF-8 bytes (no Python loop per line, memory O(lines + delimiters)).

    A line is blank as pandas reads it: nothing but whitespace (``str.strip``) and no delimiter.
    A line holding the delimiter or starting with a visible ASCII character is a record; any
    other (empty, or starting with whitespace or a non-ASCII byte: rare) is decided by
    ``str.strip`` on that line alone.
    """
    raw = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    if len(sep.encode("utf-8")) != 1:  # a multi-byte delimiter: the line-by-line rule
        starts, counts = [], []
        for i, line in enumerate(text.split("\n"), start=1):
            if line.strip() or sep in line:
                starts.append(i)
                counts.append(line.count(sep) + 1)
        return np.asarray(starts, dtype=np.int64), np.asarray(counts, dtype=np.int64)
    breaks = np.flatnonzero(raw == 10)
    begin = np.concatenate(([0], breaks + 1))
    end = np.concatenate((breaks, [len(raw)]))
    at_sep = np.flatnonzero(raw == ord(sep))
    counts = np.searchsorted(at_sep, end) - np.searchsorted(at_sep, begin)
    first = np.append(raw, np.uint8(10))[begin]  # a line feed stands for an empty line
    keep = (counts > 0) | ((first < 0x80) & ~np.isin(first, _ASCII_SPACE))
    for i in np.flatnonzero(~keep):
        keep[i] = bool(raw[begin[i] : end[i]].tobytes().decode("utf-8").strip())
    return np.flatnonzero(keep).astype(np.int64) + 1, (counts[keep] + 1).astype(np.int64)


def _scan_records(text: str, sep: str) -> _Records:
    """One pass over the text with the csv module's rules (the same as pandas' for these files).

    Blank records are skipped as pandas skips them: an empty line, or a line of whitespace
    without the delimiter. Files without a quote character take a fast path (a record is a line).
    """
    if '"' not in text:
        s, counts = _unquoted_records(text, sep)
        return _Records(s, s.copy(), counts, {}, [])
    starts, ends, counts, multiline = [], [], [], {}
    values: list[set[str]] = []
    old_limit = csv.field_size_limit()
    csv.field_size_limit(max(old_limit, len(text) + 1))  # a story text may be longer than 128 KB
    try:
        reader = csv.reader(io.StringIO(text), delimiter=sep)
        prev = 0
        for rec in reader:
            start, prev = prev + 1, reader.line_num
            if not rec or (len(rec) == 1 and start == prev and not rec[0].strip() and sep not in rec[0]):
                continue
            if prev > start:
                multiline[len(starts)] = rec
            elif starts:  # a data record on one line: remember its values (to recognise swallowed rows)
                for k, v in enumerate(rec[:8]):
                    if k == len(values):
                        values.append(set())
                    if v.strip():
                        values[k].add(v.strip())
            starts.append(start)
            ends.append(prev)
            counts.append(len(rec))
    finally:
        csv.field_size_limit(old_limit)
    return _Records(
        np.asarray(starts, dtype=np.int64),
        np.asarray(ends, dtype=np.int64),
        np.asarray(counts, dtype=np.int64),
        multiline,
        values,
    )


def _swallowed_rows(fields: list[str], start: int, n_columns: int, sep: str, values: list[set[str]]) -> list[int]:
    """Lines inside the quoted values of one record that look like rows of the file.

    A line "looks like a row" when it splits into the header's number of fields (or one
    fewer: the last line ends at the closing quote) and at least two of its values, and at
    least half of the non-empty ones, are values the same column holds in other rows. A
    story text or a comment that merely spans lines does not.
    """
    out, line = [], start
    for value in fields:
        parts = value.split("\n")
        for k, part in enumerate(parts[1:], start=1):
            cells = next(csv.reader([part], delimiter=sep), [])
            if n_columns - 1 <= len(cells) <= n_columns and n_columns >= 2:
                filled = [(c, v.strip()) for c, v in enumerate(cells[: len(values)]) if v.strip()]
                known = sum(v in values[c] for c, v in filled)
                if known >= 2 and 2 * known >= len(filled):
                    out.append(line + k)
        line += len(parts) - 1
    return out


def _report_structure(records: _Records, text: str, sep: str, path: str, log: ProblemLog) -> bool:
    """Report records whose field count differs from the header's, and quoted values that
    swallow following rows (a stray quote in a comment); True when anything was reported."""
    if len(records.starts) < 2:
        return False
    n = int(records.counts[0])
    found = False
    physical = None
    swallowing = set()
    open_quote = False
    for idx, fields in records.multiline.items():
        if idx == 0:
            continue
        start, end = int(records.starts[idx]), int(records.ends[idx])
        if idx == len(records.starts) - 1 and _unterminated(text, start, sep):
            open_quote = True
            swallowing.add(idx)
            continue
        rows = _swallowed_rows(fields, start, n, sep, records.column_values)
        if rows:
            physical = physical or text.split("\n")
            swallowing.add(idx)
            found = True
            span = f"line {rows[0]}" if len(rows) == 1 else f"lines {rows[0]}-{rows[-1]}"
            log.add(
                path,
                f"a quoted value opened on this line runs to line {end} and swallows {len(rows)} "
                f"line(s) that look like rows ({span}): they would be read as one row",
                "close the quote where the value ends, or double every quote character inside a quoted "
                'value (""); a value that starts with a quote must end with one',
                line=start,
                value=physical[start - 1][:80],
            )
    bad = np.flatnonzero(records.counts != n)
    bad = [i for i in bad if i not in swallowing and i > 0]
    short = [i for i in bad if records.counts[i] < n]
    if short:
        found = True
        physical = physical or text.split("\n")
        for i in short[:50]:
            log.add(
                path,
                f"this row has {int(records.counts[i])} field(s) but the header names {n} columns",
                "give every row one value per column (an empty value still needs its delimiter), or quote "
                "values that contain a line break",
                line=int(records.starts[i]),
                value=physical[int(records.starts[i]) - 1][:80],
            )
        if len(short) > 50:
            log.add(
                path,
                f"{len(short) - 50} more row(s) with fewer fields than the header",
                "give every row one value per column",
            )
    if any(records.counts[i] > n for i in bad):
        found = True
        _report_long_rows(text, sep, path, log)
    if open_quote:
        found = _report_open_quote(text, sep, path, log) or found
    return found


def _unterminated(text: str, start: int, sep: str) -> bool:
    """True when the record starting on line ``start`` opens a quote that the file never closes."""
    tail = "\n".join(text.split("\n")[start - 1 :])
    old_limit = csv.field_size_limit()
    csv.field_size_limit(max(old_limit, len(tail) + 1))
    try:
        for _ in csv.reader(io.StringIO(tail), delimiter=sep, strict=True):
            pass
    except csv.Error as exc:
        return "end of data" in str(exc)
    finally:
        csv.field_size_limit(old_limit)
    return False


def _header_text(text: str, records: _Records) -> str:
    """The text up to the end of the header record (its last line), the blank lines before it included."""
    if not len(records.ends):
        return text
    end = -1
    for _ in range(int(records.ends[0])):
        end = text.find("\n", end + 1)
        if end < 0:
            return text
    return text[: end + 1]


def _drop_nameless_columns(frame: pd.DataFrame, text: str, sep: str, path: str, log: ProblemLog) -> pd.DataFrame | None:
    """Columns with an empty header cell (e.g. a trailing delimiter on every line); ``text`` holds the
    header record.

    pandas names them ``Unnamed: N``; in a wide file that name would become a criterion.
    An empty one is dropped (it holds nothing); one holding values is a problem.
    """
    header = next((rec for rec in csv.reader(io.StringIO(text), delimiter=sep) if rec), [])
    nameless = [i for i, name in enumerate(header) if not name.strip() and i < len(frame.columns)]
    if not nameless:
        return frame
    bad = False
    for i in nameless:
        col = frame.iloc[:, i]
        filled = col[col != ""]
        if len(filled):
            log.add(
                path,
                f"column {i + 1} has no name in the header line but holds values",
                "name the column in the header line (start the name with _ to keep it out of the audit)",
                line=1,
                column=f"column {i + 1}",
                value=filled.iloc[0][:80],
            )
            bad = True
    if bad:
        return None
    return frame.drop(columns=[frame.columns[i] for i in nameless])


def _report_long_rows(text: str, sep: str, path: str, log: ProblemLog) -> int:
    """Report rows with more fields than the header (first 50); return how many were reported."""
    reader = csv.reader(io.StringIO(text), delimiter=sep)
    header, prev, shown = None, 0, 0
    for rec in reader:
        start, prev = prev + 1, reader.line_num
        if not rec:
            continue
        if header is None:
            header = rec
            continue
        if len(rec) > len(header) and shown < 50:
            shown += 1
            log.add(
                path,
                f"this row has {len(rec)} fields but the header names {len(header)} columns",
                "quote values that contain the delimiter, or add the missing column names",
                line=start,
                value=sep.join(rec)[:80],
            )
    return shown


def _report_open_quote(text: str, sep: str, path: str, log: ProblemLog) -> bool:
    """Report a quoted value that is never closed (it swallows the rest of the file)."""
    reader = csv.reader(io.StringIO(text), delimiter=sep, strict=True)
    prev = 0
    try:
        for _ in reader:
            prev = reader.line_num
    except csv.Error as exc:
        if "end of data" not in str(exc):
            return False
        start = prev + 1
        lines = text.splitlines()
        value = lines[start - 1][:80] if start - 1 < len(lines) else ""
        log.add(
            path,
            "a quoted value opened on this line is never closed (the rest of the file would be one value)",
            'close the quote, or double any quote character inside a quoted value ("")',
            line=start,
            value=value,
        )
        return True
    return False


def _cell(v: object) -> str:
    if v is None:
        return ""
    if isinstance(v, float) and math.isnan(v):
        return ""
    if v is pd.NA or v is pd.NaT:  # Parquet nulls of nullable integer / string / time columns
        return ""
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False)
    return str(v).strip()


_SURROGATE = re.compile("[\ud800-\udfff]")


class _NonFinite:
    """A JSON ``NaN`` / ``Infinity`` / ``-Infinity`` (not JSON, but Python's json reads them)."""

    def __init__(self, name: str):
        self.name = name


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """json object hook: a key given twice in one object is an error (json would keep the last)."""
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


def _non_finite_keys(obj: object, prefix: str = "") -> list[tuple[str, str]]:
    """(key, constant) of every NaN/Infinity in a parsed object (nested keys joined by '.')."""
    out: list[tuple[str, str]] = []
    stack = [(prefix, obj)]
    while stack:
        key, value = stack.pop()
        if isinstance(value, _NonFinite):
            out.append((key, value.name))
        elif isinstance(value, dict):
            stack.extend((f"{key}.{k}" if key else str(k), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((f"{key}[{i}]", v) for i, v in enumerate(value))
    return sorted(out)


def _read_jsonl(raw: bytes, path: str, log: ProblemLog) -> tuple[pd.DataFrame | None, np.ndarray]:
    text = raw.decode("utf-8-sig")
    records, lines, bad = [], [], False
    # Records end at \n only: U+2028, U+2029, \x85, \v, \f are valid inside JSON strings
    # (str.splitlines would split there and shift every later line number).
    for i, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        try:
            obj = json.loads(line, parse_constant=_NonFinite, object_pairs_hook=_unique_keys)
        except _DuplicateKey as exc:
            log.add(
                path,
                "a key appears twice in this JSON object (only one value can be read)",
                "give each key once per object",
                line=i,
                column=str(exc),
                value=line[:80],
            )
            bad = True
            continue
        except RecursionError:
            log.add(path, "JSON nested too deeply", "write one flat JSON object per line", line=i, value=line[:80])
            bad = True
            continue
        except ValueError as exc:  # JSONDecodeError, or an integer too long to convert
            log.add(
                path,
                f"not valid JSON: {getattr(exc, 'msg', str(exc))}",
                "write one JSON object per line",
                line=i,
                value=line[:80],
            )
            bad = True
            continue
        if not isinstance(obj, dict):
            log.add(path, "each line must be a JSON object", "write one JSON object per line", line=i, value=line[:80])
            bad = True
            continue
        non_finite = _non_finite_keys(obj)
        for key, name in non_finite:
            # consistent with 'nan' in a CSV score: a non-number is an error, an empty cell
            # (here: null or a missing key) marks an unparsable output
            log.add(
                path,
                f"{name} is not a JSON number (JSON has no NaN or Infinity)",
                "write a number, or null (or leave the key out) to mark a missing value such as an "
                "unparsable judge output",
                line=i,
                column=key,
                value=name,
            )
            bad = True
        if non_finite:
            continue
        try:
            record = {str(k): _cell(v) for k, v in obj.items()}
        except (RecursionError, ValueError):  # a nested value too deep or too large to write back as text
            log.add(
                path,
                "a JSON value is nested too deeply or too large",
                "write one flat JSON object per line",
                line=i,
                value=line[:80],
            )
            bad = True
            continue
        if "\\u" in line and _SURROGATE.search("".join(record) + "".join(record.values())):
            # a "\ud800" escape decodes to half a UTF-16 pair: not text, and no UTF-8 file can hold it
            column = next((k for k, v in record.items() if _SURROGATE.search(k + v)), None)
            log.add(
                path,
                "a JSON string holds a lone UTF-16 surrogate escape (e.g. \\ud800), which is not text",
                "write the character itself, or a complete surrogate pair (e.g. \\ud83d\\ude00)",
                line=i,
                column=None if column is None else column.encode("utf-8", "backslashreplace").decode(),
                value=line[:80],
            )
            bad = True
            continue
        records.append(record)
        lines.append(i)
    if bad:
        return None, np.asarray([])
    frame = pd.DataFrame.from_records(records)
    frame = frame.fillna("").astype(str) if len(frame.columns) else frame
    return frame, np.asarray(lines, dtype=np.int64)


def _read_parquet(path: str) -> tuple[pd.DataFrame, np.ndarray]:
    from judge_transfer_audit.core.optional import import_optional

    import_optional("pyarrow", "reading Parquet files")
    frame = pd.read_parquet(path)
    out = {}
    for c in frame.columns:
        col = frame[c]
        out[str(c)] = [_cell(v) for v in col.tolist()]
    frame = pd.DataFrame(out, index=range(len(frame)), dtype=object).astype(str)
    return frame, np.arange(1, len(frame) + 1)


def read_frame(path: str | os.PathLike, role: str, required: Sequence[str] = ()) -> pd.DataFrame:
    """The one table reader of every command: :func:`read_table`'s checks (format by extension,
    UTF-8, malformed rows with their line, duplicate columns...) and, when ``required`` is
    given, its columns; returns the frame (every value text, stripped; lower-case names).

    Raises
    ------
    InputError
        One problem per defect found, each naming the file, the line or column and the fix.
    """
    log = ProblemLog()
    table = read_table(path, role, log)
    log.raise_if_any()
    missing = [c for c in required if c not in table.columns]
    spare = [table.original_columns.get(c, c) for c in table.columns if c not in required]
    for column in missing:
        log.add(
            str(path),
            f"required column missing{did_you_mean(column, spare)} (found: {table.found()})",
            f"the {role} file needs columns {', '.join(required)}",
            column=column,
        )
    log.raise_if_any()
    return table.frame
