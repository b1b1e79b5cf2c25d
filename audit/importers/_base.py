"""What every importer shares: reading JSON / JSONL records, the problem list, the record tally.

An importer turns the files of another tool into the data contract's tables
(docs/data-contract.md, "Importing from other tools"). Every record it reads is either
used or counted as excluded with a reason (:class:`Tally`); every problem is collected
(:class:`Problems`) and raised together as one :class:`~judge_transfer_audit.core.errors.InputError` before
anything is written.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from judge_transfer_audit.core.errors import InputError, InputProblem

#: at most this many problems of one kind (same file, field and message) are listed
MAX_SAME = 20

#: the second half of the fix for a file of another tool
OTHER_TOOL = "for another tool's file use its format (audit import --help lists them)"

TIE = "tie"
INVALID = "invalid"


@dataclass(frozen=True)
class ImportOptions:
    """Options some formats need (each reader documents which it reads).

    Attributes
    ----------
    humans : tuple[Path, ...]
        Files to read as human labels where a format's judge and human files look alike
        (AlpacaEval cross-annotations without ``annotator_index``).
    pairs : Path | None
        Our own pairs.csv (Label Studio exports name sides, not systems).
    baseline : str | None
        arena-hard: the baseline model when records do not carry a ``baseline`` field.
    as_judge : tuple[str, ...]
        MT-Bench / arena votes files: values of ``judge`` that are automatic judges
        (e.g. ``gpt4_pair``), written to judge.csv instead of humans.csv.
    criterion : str
        The criterion name for formats with a single overall judgment.
    """

    humans: tuple[Path, ...] = ()
    pairs: Path | None = None
    baseline: str | None = None
    as_judge: tuple[str, ...] = ()
    criterion: str = "overall"


@dataclass
class Tally:
    """Records read from one file: used, or excluded by reason (read = used + excluded)."""

    file: str
    unit: str = "records"
    read: int = 0
    used: int = 0
    excluded: Counter = field(default_factory=Counter)
    fixed_used: int | None = None  #: set by a reader that counts its own used records

    def exclude(self, reason: str, n: int = 1) -> None:
        self.excluded[reason] += n

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "unit": self.unit,
            "read": self.read,
            "used": self.used,
            "excluded_by_reason": dict(self.excluded),
        }


class Problems:
    """Problems found while reading; :meth:`raise_if_any` raises them as one InputError."""

    def __init__(self) -> None:
        self.items: list[InputProblem] = []
        self._seen: Counter = Counter()

    def add(
        self,
        where: str,
        message: str,
        fix: str,
        *,
        field: str | None = None,
        value: Any = None,
        line: int | None = None,
    ) -> None:
        file = where.split(", ")[0]
        kind = (file, field, message)
        self._seen[kind] += 1
        if self._seen[kind] > MAX_SAME:
            return
        shown = None if value is None else _short(value)
        self.items.append(InputProblem(where, message, fix, line=line, column=field, value=shown))

    def raise_if_any(self) -> None:
        more = [(k, n - MAX_SAME) for k, n in self._seen.items() if n > MAX_SAME]
        problems = list(self.items)
        for (file, fld, message), n in more:
            problems.append(InputProblem(file, f"{n} more record(s) with the same problem: {message}", column=fld))
        if problems:
            raise InputError(problems)


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _read_text(path: Path, fix: str) -> str:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(InputProblem(str(path), "file not found", "check the path")) from None
    except IsADirectoryError:
        raise InputError(InputProblem(str(path), "this is a folder, not a file", "give the file")) from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            InputProblem(str(path), f"not UTF-8 text (byte {exc.start})", f"give the file as written by {fix}")
        ) from None


def _no_constant(name: str) -> float:
    # NaN / Infinity (Python's json.dumps and pydantic write them): read as a missing value
    return math.nan


def load_json(path: Path, producer: str) -> Any:
    """The JSON document of ``path``; a truncated or malformed file is one problem naming it."""
    text = _read_text(path, producer)
    if not text.strip():
        raise InputError(InputProblem(str(path), "the file is empty", f"give the file written by {producer}"))
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            raise InputError(
                InputProblem(
                    str(path),
                    f"not a {producer} file: it holds several JSON values (one per line?), not one JSON document",
                    f"give the file written by {producer}; {OTHER_TOOL}",
                    line=exc.lineno,
                )
            ) from None
        truncated = exc.pos >= len(text.rstrip()) - 1 or "Unterminated" in exc.msg
        what = "the file ends in the middle of a JSON value (truncated?)" if truncated else f"not valid JSON: {exc.msg}"
        fix = (
            "copy or download the file again: it was cut short"
            if truncated
            else f"give the unedited file written by {producer}"
        )
        raise InputError(InputProblem(str(path), what, fix, line=exc.lineno)) from None
    except (RecursionError, ValueError) as exc:
        raise InputError(
            InputProblem(str(path), f"not a readable JSON file: {exc}", f"give the file written by {producer}")
        ) from None


def load_jsonl(path: Path, producer: str) -> Iterator[tuple[int, Any]]:
    """(line number, object) of every non-blank line; the problems of all lines together."""
    text = _read_text(path, producer)
    lines = text.split("\n")
    out, problems = [], Problems()
    last = max((i for i, s in enumerate(lines) if s.strip()), default=-1)
    for i, s in enumerate(lines):
        if not s.strip():
            continue
        try:
            out.append((i + 1, json.loads(s, parse_constant=_no_constant)))
        except (json.JSONDecodeError, RecursionError, ValueError) as exc:
            cut = i == last and not s.rstrip().endswith("}")
            problems.add(
                str(path),
                "the last line ends in the middle of a JSON object (truncated?)"
                if cut
                else f"not a JSON object: {exc}",
                "copy or download the file again: it was cut short"
                if cut
                else f"give the unedited JSONL file written by {producer} (one JSON object per line)",
                line=i + 1,
            )
    if not out and not problems.items:
        problems.add(str(path), "the file holds no records", f"give the file written by {producer}")
    problems.raise_if_any()
    return iter(out)


def load_records(path: Path, producer: str, list_key: str | None = None) -> list[tuple[str, dict, int | None]]:
    """Records of a JSON list (or ``{list_key: [...]}``) or a JSONL file, each as
    (where, record, line): ``where`` names the file and record for messages."""
    path = Path(path)
    if path.suffix.lower() in {".jsonl", ".ndjson"}:
        return [(str(path), rec, line) for line, rec in load_jsonl(path, producer)]
    data = load_json(path, producer)
    if isinstance(data, dict) and list_key and isinstance(data.get(list_key), list):
        data = data[list_key]
    if not isinstance(data, list):
        raise InputError(
            InputProblem(
                str(path),
                f"not a {producer} file: expected a JSON list of records, found {type_name(data)}"
                + (f" with fields {', '.join(sorted(data)[:8])}" if isinstance(data, dict) else ""),
                f"give the file written by {producer}; {OTHER_TOOL}",
            )
        )
    return [(f"{path}, record {i + 1}", rec, None) for i, rec in enumerate(data)]


def first_record(recs: list[tuple[str, Any, int | None]]) -> dict | None:
    """The first record that is a JSON object (None when none is)."""
    return next((r for _, r, _ in recs if isinstance(r, dict)), None)


def refuse_format(
    recs: list[tuple[str, Any, int | None]], first: Any, problems: Problems, what: str, give: str
) -> None:
    """One problem for a file of another format: what it is not, the first record's fields, and the fix
    (``give``, then how to import another tool's file)."""
    where, _, line = recs[0]
    fields = f": the first record has fields {', '.join(sorted(first)[:8])}" if isinstance(first, dict) else ""
    problems.add(where, what + fields, f"{give}; {OTHER_TOOL}", line=line)


def check_record(where: str, rec: Any, line: int | None, problems: Problems, producer: str) -> bool:
    if isinstance(rec, dict):
        return True
    problems.add(
        where,
        f"a record must be a JSON object, found {type_name(rec)}",
        f"give the file written by {producer}",
        line=line,
    )
    return False


def text_field(
    rec: dict,
    key: str,
    where: str,
    line: int | None,
    problems: Problems,
    fix: str,
    *,
    required: bool = True,
    allow_number: bool = False,
) -> str | None:
    """A non-empty text field (an id may be a whole number when ``allow_number``)."""
    value = rec.get(key)
    if value is None or value == "":
        if required:
            problems.add(where, f"the record has no '{key}'", fix, field=key, line=line)
        return None
    if allow_number and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        problems.add(
            where,
            f"'{key}' must be text, found {type_name(value)}",
            fix,
            field=key,
            value=value,
            line=line,
        )
        return None
    return value.strip()


def number(value: Any) -> float | None:
    """A finite-or-NaN float from a JSON number (booleans are not numbers); None otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def pair_key(qid: str, a: str, b: str, *extra: str) -> str:
    """A pair id that does not depend on which model came first: ``qid__m1__m2[__extra]``,
    the two model names in code-point order."""
    lo, hi = sorted((a, b))
    return "__".join((qid, lo, hi, *extra))


__all__ = [
    "INVALID",
    "TIE",
    "ImportOptions",
    "Problems",
    "Tally",
    "check_record",
    "load_json",
    "load_jsonl",
    "load_records",
    "number",
    "pair_key",
    "text_field",
    "type_name",
]
