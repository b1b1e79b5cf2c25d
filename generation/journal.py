"""Append-only JSONL journals: every request's outcome is written before it is used.

A run that is killed leaves at most one incomplete last line, which the reader counts and
skips; any other unreadable line is an input error (the file was edited or corrupted).
Writes are flushed per record so a kill loses at most the record being written.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Iterator

from judge_transfer_audit.core.errors import InputError, InputProblem


class Journal:
    """Thread-safe appender for one JSONL file."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        # A killed run may have left a partial line with no newline: start on a fresh line.
        if self.path.exists() and self.path.stat().st_size:
            with open(self.path, "rb") as fh:
                fh.seek(-1, 2)
                if fh.read(1) != b"\n":
                    with open(self.path, "ab") as out:
                        out.write(b"\n")

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, default=str)
        with self._lock, open(self.path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
            fh.flush()


def read_journal(path: str | Path) -> tuple[list[dict[str, Any]], int]:
    """Return ``(records, n_incomplete)`` from a journal; a missing file reads as empty.

    An unreadable line is tolerated (counted, not used) only when a kill explains it: it is
    the last line of the file, or the next line starts a later run (a ``"run"`` record).

    Raises
    ------
    InputError
        Any other unreadable line (the journal was edited or corrupted).
    """
    path = Path(path)
    if not path.exists():
        return [], 0
    parsed: list[tuple[int, dict[str, Any] | None]] = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                record = None
            parsed.append((number, record if isinstance(record, dict) else None))
    records: list[dict[str, Any]] = []
    n_incomplete = 0
    for i, (number, record) in enumerate(parsed):
        if record is not None:
            records.append(record)
            continue
        following = parsed[i + 1][1] if i + 1 < len(parsed) else None
        if i + 1 == len(parsed) or (following is not None and following.get("type") == "run"):
            n_incomplete += 1
            continue
        raise InputError(
            InputProblem(
                str(path),
                "unreadable line in the middle of a run (journal edited or corrupted)",
                line=number,
                fix="restore the file, or start again in a new output directory (or with --fresh)",
            )
        )
    return records, n_incomplete


def iter_type(records: list[dict[str, Any]], kind: str) -> Iterator[dict[str, Any]]:
    return (r for r in records if r.get("type") == kind)
