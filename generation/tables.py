"""Small table I/O shared by generation, Label Studio and scoring (CSV, TSV, JSONL, Parquet)."""

from __future__ import annotations

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
            frame = pd.read_json(path, lines=True, dtype=False).astype(str)
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


def write_csv(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write a UTF-8 CSV atomically (temporary file then rename), so a kill never leaves half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    frame.to_csv(tmp, index=False)
    tmp.replace(path)
    return path
