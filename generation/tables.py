"""Small table I/O shared by generation, Label Studio and scoring (CSV, TSV, JSONL, Parquet)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Iterable

import pandas as pd

from audit._optional import import_optional
from audit.errors import InputError, InputProblem


def read_table(path: str | Path, role: str, required: Iterable[str] = ()) -> pd.DataFrame:
    """Read ``path`` by extension with every column as text; lower-case the column names.

    Raises
    ------
    InputError
        Missing file, unknown extension, or missing required columns (one problem each).
    """
    path = Path(path)
    if not path.exists():
        raise InputError(InputProblem(str(path), f"{role} file not found", fix="check the path"))
    suffix = path.suffix.lower()
    try:
        if suffix == ".csv":
            frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        elif suffix == ".tsv":
            frame = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
        elif suffix in (".jsonl", ".ndjson"):
            frame = _read_jsonl(path, role)
        elif suffix == ".parquet":
            import_optional("pyarrow", "reading Parquet files")
            frame = pd.read_parquet(path).astype(str)
        else:
            raise InputError(InputProblem(str(path), f"unknown file type '{suffix}'", fix="use .csv, .tsv, .jsonl or .parquet"))
    except (ValueError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise InputError(InputProblem(str(path), f"cannot read the {role} file: {exc}", fix="check its format and encoding (UTF-8)")) from None
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise InputError(
            [
                InputProblem(str(path), "required column missing", column=c, fix=f"the {role} file needs columns {', '.join(required)}")
                for c in missing
            ]
        )
    return frame


def _read_jsonl(path: Path, role: str) -> pd.DataFrame:
    """One JSON object per line, every value as text.

    Read with :mod:`json` line by line (split on ``\n`` only, so a U+2028 inside a string
    is text, and line numbers are the file's): pandas' reader silently drops lone
    surrogates such as ``\ud800``, which the callers must see to refuse.
    """
    rows = []
    problems = []
    text = path.read_text(encoding="utf-8")
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError) as exc:
            problems.append(InputProblem(str(path), f"not a JSON object: {exc}", line=number, fix="write one JSON object per line"))
            continue
        if not isinstance(record, dict):
            problems.append(InputProblem(str(path), "not a JSON object", line=number, value=line[:60], fix="write one JSON object per line"))
            continue
        row = {str(k): "" if v is None else (v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)) for k, v in record.items()}
        for column, value in row.items():
            if _LONE_SURROGATE.search(column) or _LONE_SURROGATE.search(value):
                problems.append(InputProblem(str(path), "holds a lone UTF-16 surrogate (e.g. \\ud800), which no text file can store",
                                             line=number, column=column.encode("utf-8", "backslashreplace").decode(),
                                             value=value[:60].encode("utf-8", "backslashreplace").decode(),
                                             fix="remove the broken \\u escape from the file"))
        rows.append(row)
    if problems:
        raise InputError(problems[:50])
    return pd.DataFrame(rows, dtype=str).fillna("")


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def prepare_output(path: str | Path, role: str, *, directory: bool = False) -> Path:
    """Create what ``path`` needs (its parent, or itself with ``directory``) and check it is writable.

    Called by the commands *before* any work, so a typo in ``-o`` is an input error at once
    rather than a failure after hours of generation or scoring.

    Parameters
    ----------
    path : str or Path
        The output file (or directory).
    role : str
        What it is, for the message ("humans.csv", "output directory"...).
    directory : bool
        ``path`` is a directory to create, not a file.

    Returns
    -------
    Path

    Raises
    ------
    InputError
        The directory cannot be created (e.g. a file is in the way), is not writable, or
        a file path names an existing directory.
    """
    path = Path(path)
    folder = path if directory else path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocker = next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), None)
        why = f"'{blocker}' is a file, not a folder" if blocker else (exc.strerror or str(exc))
        raise InputError(InputProblem(str(path), f"cannot create the folder for the {role}: {why}",
                                      fix="choose a path whose folders can be created")) from None
    if not directory and path.is_dir():
        raise InputError(InputProblem(str(path), f"the {role} path is a directory", fix="give a file name"))
    if not os.access(folder, os.W_OK):
        raise InputError(InputProblem(str(folder), f"the folder for the {role} is not writable",
                                      fix="choose a writable location"))
    return path


def write_csv(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write a UTF-8 CSV atomically (temporary file then rename), so a kill never leaves half a file.

    Raises
    ------
    InputError
        The file cannot be written (see :func:`prepare_output`).
    """
    path = prepare_output(path, "output file")
    tmp = path.with_name(path.name + ".tmp")
    try:
        frame.to_csv(tmp, index=False)
        tmp.replace(path)
    except OSError as exc:
        raise InputError(InputProblem(str(path), f"cannot write: {exc.strerror or exc}",
                                      fix="choose a writable location")) from None
    return path
