"""Scalar ratings for ``audit reliability``: loading, validation and reshaping.

A ratings file has one row per item x reader x question: columns ``item_id``,
``reader_id``, ``criterion`` (``question`` is accepted as an alias), ``rating`` (a number;
empty = missing) and optionally ``reader_group`` (e.g. expert / enthusiast). CSV, TSV,
JSONL and Parquet are read by extension.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from judge_transfer_audit.core.errors import InputError, InputProblem

REQUIRED = ("item_id", "reader_id", "criterion", "rating")
ALIASES = {"question": "criterion", "item": "item_id", "reader": "reader_id", "group": "reader_group"}
_MAX_LISTED = 10


def validate_ratings(raw: pd.DataFrame, file: str = "ratings") -> pd.DataFrame:
    """Normalise a ratings frame; one InputProblem per problem, raised together.

    Returns a frame with item_id, reader_id, criterion, reader_group ("" when absent),
    rating (float, NaN = missing) and line (1-based line in the file, header = 1).
    Repeated item x reader x criterion rows are an error (say which to keep).
    """
    frame = raw.rename(columns={c: c.strip() for c in raw.columns})
    renames = {a: t for a, t in ALIASES.items() if a in frame.columns and t not in frame.columns}
    frame = frame.rename(columns=renames)
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        raise InputError(
            InputProblem(
                file=file,
                message=f"missing column(s) {', '.join(missing)}",
                fix="give columns item_id, reader_id, criterion (or question), rating, optional reader_group; "
                f"found {', '.join(map(str, frame.columns))}",
            )
        )

    def text_of(col: str) -> pd.Series:
        # missing cells (NaN from JSONL / Parquet) become "" (pandas 3 keeps NaN through astype(str))
        return frame[col].astype(object).where(frame[col].notna(), "").astype(str).str.strip()

    out = pd.DataFrame(
        {
            "item_id": text_of("item_id"),
            "reader_id": text_of("reader_id"),
            "criterion": text_of("criterion"),
            "reader_group": text_of("reader_group") if "reader_group" in frame.columns else "",
            "line": np.arange(len(frame)) + 2,
        }
    )
    text = frame["rating"].astype(str).str.strip()
    blank = text.isin(["", "nan", "NaN", "NA", "None", "<NA>"])
    numbers = pd.to_numeric(text.where(~blank), errors="coerce")
    problems = []
    # inf / -inf parse as numbers but no statistic here is defined on them
    bad = ~blank & (numbers.isna() | ~np.isfinite(numbers.fillna(0.0)))
    for idx in np.flatnonzero(bad.to_numpy())[:_MAX_LISTED]:
        problems.append(
            InputProblem(
                file=file,
                line=int(out["line"].iloc[idx]),
                column="rating",
                value=str(text.iloc[idx]),
                message="rating is not a finite number",
                fix="write a number, or leave the cell empty for a missing rating",
            )
        )
    if bad.sum() > _MAX_LISTED:
        problems.append(
            InputProblem(
                file=file,
                column="rating",
                message=f"... and {int(bad.sum()) - _MAX_LISTED} more non-numeric or infinite ratings",
            )
        )
    for col in ("item_id", "reader_id", "criterion"):
        empty = out[col].isin(["", "nan"])
        if empty.any():
            idx = int(np.flatnonzero(empty.to_numpy())[0])
            problems.append(
                InputProblem(
                    file=file,
                    line=int(out["line"].iloc[idx]),
                    column=col,
                    message=f"{int(empty.sum())} empty {col} value(s)",
                    fix=f"give every row a {col}",
                )
            )
    out["rating"] = numbers.where(~bad).astype(float)
    dup = out.duplicated(["item_id", "reader_id", "criterion"], keep="first")
    if dup.any():
        idx = int(np.flatnonzero(dup.to_numpy())[0])
        row = out.iloc[idx]
        problems.append(
            InputProblem(
                file=file,
                line=int(row["line"]),
                message=f"{int(dup.sum())} repeated item x reader x criterion row(s) "
                f"(item {row.item_id!r}, reader {row.reader_id!r}, criterion {row.criterion!r})",
                fix="keep one rating per item, reader and criterion",
            )
        )
    groups = out.groupby("reader_id")["reader_group"].nunique()
    if (groups > 1).any():
        problems.append(
            InputProblem(
                file=file,
                column="reader_group",
                value=str(groups[groups > 1].index[0]),
                message="a reader belongs to several reader groups",
                fix="give each reader one reader_group",
            )
        )
    if problems:
        raise InputError(problems)
    return out[["item_id", "reader_id", "criterion", "reader_group", "rating", "line"]]


def load_ratings(path: str | Path) -> pd.DataFrame:
    """Read and validate a ratings file (see :func:`validate_ratings`)."""
    from judge_transfer_audit.inputs.formats import read_frame

    return validate_ratings(read_frame(path, "ratings"), file=str(path))


def complete_matrix(data: pd.DataFrame, *, row: str, column: str, value: str) -> tuple[pd.DataFrame, int]:
    """Pivot long ratings to a rows x columns matrix and keep complete rows.

    Returns the complete matrix and the number of rows left out (at least one missing
    value). Missing ratings (NaN) count as missing. Repeated row x column ratings raise
    InputError.
    """
    if data.duplicated([row, column]).any():
        raise InputError(
            InputProblem(
                file="ratings",
                message=f"repeated {row} x {column} ratings",
                fix=f"keep one rating per {row} and {column}",
            )
        )
    wide = data.pivot(index=row, columns=column, values=value).astype(float)
    complete = wide.dropna(axis=0, how="any")
    return complete, int(len(wide) - len(complete))
