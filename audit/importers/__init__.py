"""Readers for the files other evaluation tools write, into the data contract.

``audit import FORMAT SRC... --out DIR`` and ``audit run --from FORMAT SRC...`` read through
:func:`import_files`. Each format is one module with a ``read(sources, options, problems)``
function returning :class:`Rows`; it is registered once, in :data:`IMPORTERS`. The mapping
of every format is documented in docs/data-contract.md ("Importing from other tools").
"""

from __future__ import annotations

import importlib
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from judge_transfer_audit.core.errors import InputError, InputProblem
from judge_transfer_audit.importers._base import ImportOptions, Problems, Tally


@dataclass(frozen=True)
class Importer:
    """One registered format: its module under ``judge_transfer_audit.importers`` and what it reads."""

    name: str
    module: str
    reads: str


#: Every format, by the name given on the command line.
IMPORTERS: dict[str, Importer] = {
    i.name: i
    for i in (
        Importer("alpacaeval", "alpacaeval", "AlpacaEval annotations.json (+ human cross-annotations)"),
        Importer("mtbench", "mtbench", "FastChat MT-Bench pairwise judgments (gpt-4_pair.jsonl) + human/arena votes"),
        Importer("arena-hard", "arenahard", "arena-hard-auto model_judgment/<judge>/<model>.jsonl (+ arena votes)"),
        Importer("promptfoo", "promptfoo", "promptfoo results.json (assertion scores + human ratings)"),
        Importer("inspect", "inspect", "inspect_ai eval logs (.json; .eval with the 'inspect' extra)"),
        Importer("labelstudio", "labelstudio", "Label Studio JSON export of our own study (needs --pairs)"),
        Importer("argilla", "argilla", "Argilla v2 records (responses per user, suggestions as the judge)"),
    )
}

JUDGE_PAIRWISE = ["pair_id", "criterion", "judge", "sample", "choice", "shown_first"]
JUDGE_SCALAR = ["item_id", "system", "criterion", "judge", "score"]
HUMANS_PAIRWISE = ["pair_id", "reader_id", "criterion", "choice", "shown_first"]
HUMANS_SCALAR = ["item_id", "reader_id", "criterion", "rating", "group_id"]
PAIRS = ["pair_id", "system_a", "system_b", "group_id"]
STORIES_PAIR = ["pair_id", "system", "text"]
STORIES_ITEM = ["item_id", "system", "text"]
REPORT = "import-report.json"


@dataclass
class Rows:
    """What a reader found. Every row carries ``_rec`` (tally index, record number) so a
    record whose rows are all left out is counted as excluded, with the reason.

    ``key`` is ``pair_id`` (pairwise formats) or ``item_id`` (scalar ratings).
    """

    key: str
    judge: list[dict] = field(default_factory=list)
    humans: list[dict] = field(default_factory=list)
    pairs: dict[str, dict] = field(default_factory=dict)
    stories: dict[tuple[str, str], str] = field(default_factory=dict)
    tallies: list[Tally] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    dropped: dict[tuple[int, int], str] = field(default_factory=dict)  #: record -> why its rows were left out

    def tally(self, file: str, unit: str = "records") -> int:
        self.tallies.append(Tally(file, unit))
        return len(self.tallies) - 1


@dataclass(frozen=True)
class Imported:
    """The data contract's tables read from another tool's files.

    Attributes
    ----------
    format : str
    tables : dict[str, DataFrame]
        ``judge.csv``, ``humans.csv``, ``pairs.csv``, ``stories.csv`` (those the files hold).
    counts : tuple[dict, ...]
        Per source file: ``file``, ``unit``, ``read``, ``used``, ``excluded_by_reason``
        (read = used + excluded).
    notes : tuple[str, ...]
    """

    format: str
    tables: dict[str, pd.DataFrame]
    counts: tuple[dict[str, Any], ...]
    notes: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        """The record accounting, one line per file, then the tables written."""
        out = []
        for c in self.counts:
            ex = "; ".join(f"{n:,} {r}" for r, n in c["excluded_by_reason"].items())
            out.append(
                f"{c['file']}: {c['read']:,} {c['unit']} read, {c['used']:,} used"
                + (f", {c['read'] - c['used']:,} excluded ({ex})" if ex else "")
            )
        out.extend(f"note: {n}" for n in self.notes)
        out.append("wrote: " + ", ".join(f"{name} ({len(t):,} rows)" for name, t in self.tables.items()))
        return out

    def report(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "files": list(self.counts),
            "tables": {name: len(t) for name, t in self.tables.items()},
            "notes": list(self.notes),
        }

    def __str__(self) -> str:
        return "\n".join(self.lines())


def import_files(fmt: str, sources: list[str | Path], options: ImportOptions | None = None) -> Imported:
    """Read ``sources`` (files written by the tool ``fmt``) into the data contract's tables.

    Raises :class:`~judge_transfer_audit.core.errors.InputError` listing every problem (nothing is returned
    then). An unknown ``fmt`` lists the known ones.
    """
    if fmt not in IMPORTERS:
        raise InputError(InputProblem("format", f"unknown format {fmt!r}", "use one of: " + ", ".join(IMPORTERS)))
    options = options or ImportOptions()
    paths = [Path(s) for s in sources]
    if not paths:
        raise InputError(InputProblem("sources", "no file given", f"give the files written by {fmt}"))
    module = importlib.import_module(f"judge_transfer_audit.importers.{IMPORTERS[fmt].module}")
    problems = Problems()
    rows = module.read(paths, options, problems)
    problems.raise_if_any()
    return _finish(fmt, rows)


def _match(rows: Rows) -> tuple[list[dict], list[dict]]:
    """Keep judge rows of keys with human labels and human rows of judged keys (when both
    sides were read); the others are excluded, counted against their record."""
    judge, humans = rows.judge, rows.humans
    if not judge or not humans:
        return judge, humans
    k = rows.key
    judged, labelled = {r[k] for r in judge}, {r[k] for r in humans}
    what = "pair" if k == "pair_id" else "output"
    j_drop = [r for r in judge if r[k] not in labelled]
    h_drop = [r for r in humans if r[k] not in judged]
    _exclude(rows, j_drop, f"{what} with no human label in the files read")
    _exclude(rows, h_drop, f"{what} with no judge output in the files read")
    return [r for r in judge if r[k] in labelled], [r for r in humans if r[k] in judged]


def _exclude(rows: Rows, dropped: list[dict], reason: str) -> None:
    for r in dropped:
        rows.dropped.setdefault(r["_rec"], reason)


def _finish(fmt: str, rows: Rows) -> Imported:
    judge, humans = _match(rows)
    kept = {r["_rec"] for r in judge} | {r["_rec"] for r in humans}
    for rec, reason in rows.dropped.items():
        if rec not in kept:
            rows.tallies[rec[0]].exclude(reason)
    used = Counter(t for t, _ in kept)
    for i, t in enumerate(rows.tallies):
        t.used = used.get(i, 0) if t.fixed_used is None else t.fixed_used
    tables: dict[str, pd.DataFrame] = {}
    pairwise = rows.key == "pair_id"
    if judge:
        cols = JUDGE_PAIRWISE if pairwise else JUDGE_SCALAR
        tables["judge.csv"] = pd.DataFrame(judge)[cols]
    if humans:
        h = pd.DataFrame(humans)
        cols = HUMANS_PAIRWISE if pairwise else HUMANS_SCALAR
        tables["humans.csv"] = h[cols + [c for c in ("seconds", "comment") if c in h.columns]]
    ids = {r[rows.key] for r in judge} | {r[rows.key] for r in humans}
    if pairwise and rows.pairs:
        tables["pairs.csv"] = pd.DataFrame([p for pid, p in rows.pairs.items() if pid in ids])[PAIRS]
    texts = [{rows.key: key, "system": s, "text": t} for (key, s), t in rows.stories.items() if key in ids and t]
    if texts:
        tables["stories.csv"] = pd.DataFrame(texts)[STORIES_PAIR if pairwise else STORIES_ITEM]
    if not tables:
        raise InputError(
            InputProblem(
                ", ".join(sorted({t.file for t in rows.tallies})) or "sources",
                "no usable record: nothing to write",
                "check the files: every record was left out (see the counts above)",
            )
        )
    return Imported(fmt, tables, tuple(t.to_dict() for t in rows.tallies), tuple(rows.notes))


def render_files(imported: Imported) -> dict[str, str]:
    """File name -> content: the tables as spreadsheet-safe CSV and the import report."""
    from judge_transfer_audit.core.output_files import csv_text

    files = {name: csv_text(t) for name, t in imported.tables.items()}
    files[REPORT] = json.dumps(imported.report(), indent=1, ensure_ascii=False) + "\n"
    return files


#: every name an import can write (so a conflict is found whatever this import holds)
MAY_WRITE = ("judge.csv", "humans.csv", "pairs.csv", "stories.csv", REPORT)


def write_imported(imported: Imported, out: str | Path, inputs: list[str | Path]):
    """Write the tables and the import report into ``out`` through the guarded writer
    (atomic, never onto an input, never over a file judge-audit did not write)."""
    from judge_transfer_audit.core.output_files import write_folder

    return write_folder(out, render_files(imported), command="import", inputs=inputs, may_write=MAY_WRITE)


__all__ = ["IMPORTERS", "ImportOptions", "Imported", "Importer", "Rows", "import_files", "write_imported"]
