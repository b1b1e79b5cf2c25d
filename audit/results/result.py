"""The audit's result: frozen, serialisable, and the only thing reports read.

``AuditResult`` round-trips losslessly through JSON (:func:`result_to_json`,
:func:`result_from_json`), so ``audit report result.json`` re-renders without recomputing.
Field names here are a stable interface (users' scripts and CI jobs read them); bump
``SCHEMA_VERSION`` on any incompatible change.
"""

from __future__ import annotations

import functools
import html
import json
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from judge_transfer_audit.core.serialize import from_jsonable, to_jsonable
from judge_transfer_audit.model.cells import (  # noqa: F401  (the result's types, re-exported)
    Cell,
    GlmmSummary,
    HumanSide,
    Interval,
    JudgeConfigRate,
    JudgeSide,
    MatchupTransfer,
    StudyTransfer,
    Transfer,
    _nan_interval,
    headline_from_counts,
    plain_counts,
)
from judge_transfer_audit.model.checks import Check, Status
from judge_transfer_audit.model.section_result import Computed, Failed, Section, Skipped
from judge_transfer_audit.results.tables import AgreementRows, BaselineRows, JudgePairs

SCHEMA_VERSION = "2.5"


@dataclass(frozen=True)
class Provenance:
    package_version: str
    package_versions: dict[str, str]
    command: str
    seed: int | None
    tie_rule: str
    policy: dict[str, Any]
    policy_source: str
    sources: tuple[dict[str, Any], ...]
    exclusions: tuple[dict[str, Any], ...]
    focal_source: str
    human_shape: str
    primary_judge: str
    notes: tuple[str, ...]
    #: per input file: role, unit, read, used, excluded_by_reason {reason: count}; read = used + excluded
    rows: tuple[dict[str, Any], ...] = ()
    #: per matchup: matchup, focal, other, source ("--focal", "pairs file", "automatic"), n_pairs, n_reoriented
    orientation: tuple[dict[str, Any], ...] = ()
    #: the engine of every human GLMM in this result: "native" (audit/statistics/glmm) or "lme4" (through pymer4)
    glmm_backend: str = "native"
    # No wall-clock fields here: the same inputs and seed must give byte-identical JSON.


@dataclass(frozen=True, init=False)
class AuditResult:
    """The audit's result. Besides the fields below it holds one optional section per entry of the
    section table (:mod:`judge_transfer_audit.sections.registry`), each ``Computed(payload)``,
    ``Skipped(reason)`` or ``Failed(reason, error)``: read as an attribute (``result.dev``,
    ``result.leaderboard``, ...) or through :attr:`sections` (name -> section, in table order), given
    to the constructor by name (``AuditResult(..., dev=Computed(...))``) or as ``sections=``; a
    section not given is ``Skipped`` with its entry's reason. In ``result.json`` each section is a
    key of its own, between ``judge_pairs`` and ``matchup_transfers``, in table order."""

    schema_version: str
    status: Status
    verdict: str
    cells: tuple[Cell, ...]
    counts: dict[str, int]  #: cells per transfer status (PASS, FAIL, INCONCLUSIVE, INSUFFICIENT, ERROR)
    agreement: AgreementRows  #: inter-reader agreement per group and pooled (``.to_frame()``)
    reader_baseline: BaselineRows  #: reader leave-one-out agreement beside the judge's (``.to_frame()``)
    checks: tuple[Check, ...]
    provenance: Provenance
    judge_pairs: JudgePairs  #: per pair x criterion x configuration: outcome and credit for the focal system
    #: the optional sections by name, in the order of the section table
    sections: dict[str, Section] = field(default_factory=dict)
    # the transfer decision per matchup (criteria pooled) and for the study (audit/verdict/hierarchy.py)
    matchup_transfers: tuple[MatchupTransfer, ...] = ()
    study_transfer: StudyTransfer | None = None

    def __init__(
        self,
        schema_version: str,
        status: Status,
        verdict: str,
        cells: tuple[Cell, ...],
        counts: dict[str, int],
        agreement: AgreementRows,
        reader_baseline: BaselineRows,
        checks: tuple[Check, ...],
        provenance: Provenance,
        judge_pairs: JudgePairs,
        sections: Mapping[str, Section] | None = None,
        matchup_transfers: tuple[MatchupTransfer, ...] = (),
        study_transfer: StudyTransfer | None = None,
        **by_name: Section,
    ) -> None:
        given = {**(sections or {}), **by_name}
        table = _section_table()
        unknown = sorted(set(given) - set(table))
        if unknown:
            raise TypeError(f"AuditResult got unknown section(s) {', '.join(unknown)} (registered: {', '.join(table)})")
        ordered = {name: given[name] if name in given else Skipped(reason) for name, reason in table.items()}
        for name, value in (
            ("schema_version", schema_version),
            ("status", status),
            ("verdict", verdict),
            ("cells", cells),
            ("counts", counts),
            ("agreement", agreement),
            ("reader_baseline", reader_baseline),
            ("checks", checks),
            ("provenance", provenance),
            ("judge_pairs", judge_pairs),
            ("sections", ordered),
            ("matchup_transfers", matchup_transfers),
            ("study_transfer", study_transfer),
        ):
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Section:
        """A section by name (``result.dev``); one registered after this result was made is Skipped."""
        sections = self.__dict__.get("sections")
        if sections is not None and name in sections:
            return sections[name]
        if not name.startswith("_"):
            table = _section_table()
            if name in table:
                return Skipped(table[name])
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __jsonable__(self) -> dict[str, Any]:
        """The fields in order, each section a key of its own in place of ``sections``."""
        entries: dict[str, Any] = {}
        for f in fields(self):
            if f.name == "sections":
                entries.update(self.sections)
            else:
                entries[f.name] = getattr(self, f.name)
        return entries

    def jsonable_items(self, *, lazy_tables: bool = False) -> list[tuple[str, Callable[[], Any]]]:
        """``(key, make)`` of every entry of :meth:`__jsonable__`, in order: ``make()`` gives the entry's JSON
        data (so that a writer can hold one entry's data at a time; ``lazy_tables``: with its long tables'
        rows made while they are written, for :mod:`judge_transfer_audit.core.json_text`'s writers only)."""
        return [
            (key, functools.partial(to_jsonable, value, lazy_tables=lazy_tables))
            for key, value in self.__jsonable__().items()
        ]

    @classmethod
    def __from_jsonable__(cls, args: tuple, data: Any, load) -> AuditResult:
        """Read back what :meth:`__jsonable__` wrote: each registered section as its entry's payload
        type (``Section[payload]``), a section missing from the data Skipped with its entry's reason."""
        if not isinstance(data, dict):
            raise TypeError(f"AuditResult expects an object, got {type(data).__name__}")
        values = {name: load(hint, data[name]) for name, hint in _core_hints() if name in data}
        values["sections"] = {name: load(Section[tp], data[name]) for name, tp in _payload_types() if name in data}
        return cls(**values)

    @staticmethod
    def section_names() -> tuple[str, ...]:
        """The optional sections' names, in table order (``dev``, ``uncertainty``, ...)."""
        return tuple(_section_table())

    def cells_frame(self) -> pd.DataFrame:
        """The transfer table: one tidy row per matchup x criterion."""
        rows = []
        for c in self.cells:
            g, j, h, t = c.human.glmm, c.judge, c.human, c.transfer
            rows.append(
                {
                    "matchup": c.matchup,
                    "criterion": c.criterion,
                    "focal": c.focal,
                    "other": c.other,
                    "status": t.status.value,
                    "n_pairs": c.n_pairs,
                    "n_readers": c.n_readers,
                    "n_votes": c.n_votes,
                    "n_pairs_compared": t.n_pairs,
                    "human_rate": h.rate,
                    "human_ties": h.n_ties,
                    "vote_share": h.vote_share.estimate,
                    "vote_share_ci_low": h.vote_share.ci_low,
                    "vote_share_ci_high": h.vote_share.ci_high,
                    "majority_rate": h.majority_rate.estimate,
                    "majority_rate_ci_low": h.majority_rate.ci_low,
                    "majority_rate_ci_high": h.majority_rate.ci_high,
                    "between_pair_sd": h.between_pair_sd,
                    "judge": j.judge if j else None,
                    "judge_criterion": j.criterion if j else None,
                    "judge_rate": t.judge_rate.estimate,
                    "judge_rate_all_pairs": j.rate if j else float("nan"),
                    "judge_wins": j.wins if j else 0,
                    "judge_losses": j.losses if j else 0,
                    "judge_ties": j.ties if j else 0,
                    "judge_invalid": j.invalid if j else 0,
                    "tie_rule": j.tie_rule if j else None,
                    "band_low": t.band_low,
                    "band_high": t.band_high,
                    "difference": t.difference.estimate,
                    "difference_ci_low": t.difference.ci_low,
                    "difference_ci_high": t.difference.ci_high,
                    "difference_vote_share": t.difference_vote_share.estimate,
                    "difference_majority": t.difference_majority.estimate,
                    "interval_level": t.interval_level,
                    "margin": t.margin,
                    "p_outside_adjusted": t.p_outside_adjusted,
                    "p_conflict_adjusted": t.p_conflict_adjusted,
                    "direction_conflict": t.direction_conflict,
                    "human_direction": t.human_direction,
                    "judge_direction": t.judge_direction,
                    "pairs_needed": t.pairs_needed,
                    "judge_vs_majority": t.judge_vs_majority,
                    "reader_baseline": t.reader_baseline,
                    "glmm_estimate": g.estimate,
                    "glmm_ci_low": g.ci_low,
                    "glmm_ci_high": g.ci_high,
                    "glmm_majority_plugin": g.majority_plugin,
                    "glmm_b0": g.b0,
                    "glmm_se": g.se,
                    "sd_pair": g.sd_pair,
                    "sd_reader": g.sd_reader,
                    "singular": g.singular,
                    "converged": g.converged,
                    "separation": g.separation,
                    "degenerate": g.degenerate,
                    "degenerate_reason": g.degenerate_reason,
                    "reason": t.reason,
                }
            )
        return pd.DataFrame(rows)

    def to_frame(self) -> pd.DataFrame:
        """The transfer table (:meth:`cells_frame`): the result as one tidy DataFrame."""
        return self.cells_frame()

    def frames(self) -> dict[str, pd.DataFrame]:
        """Every table of the result by name: ``cells``, ``checks``, ``agreement``,
        ``reader_baseline``, ``judge_pairs`` and each computed optional section's main table
        (``readers``, ``uncertainty``, ...: :meth:`Section.to_frame`)."""
        out = {
            "cells": self.cells_frame(),
            "checks": self.checks_frame(),
            "agreement": self.agreement.to_frame(),
            "reader_baseline": self.reader_baseline.to_frame(),
            "judge_pairs": self.judge_pairs.to_frame(),
        }
        for name in self.section_names():
            section = getattr(self, name)
            if section.computed:
                out[name] = section.to_frame()
        return out

    def _repr_html_(self) -> str:
        """A notebook summary: the status and verdict, the transfer table, the checks that are not PASS."""
        cells = self.cells_frame()
        shown = [c for c in _HTML_CELL_COLUMNS if c in cells.columns]
        checks = self.checks_frame()
        checks = checks[checks["status"] != Status.PASS.value]
        parts = [
            f"<p><b>{html.escape(headline_from_counts(self.status.value, _cell_counts(self.cells)))}</b></p>",
            f"<p>{html.escape(self.verdict)}</p>",
            cells[shown].to_html(escape=True, index=False, float_format=lambda x: f"{x:.3f}"),
        ]
        if len(checks):
            parts.append(f"<p>{len(checks)} check(s) not PASS:</p>")
            parts.append(checks[["name", "scope", "status", "reason"]].to_html(escape=True, index=False))
        return "\n".join(parts)

    def checks_frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {
                    "name": c.name,
                    "scope": c.scope,
                    "status": c.status.value,
                    "value": c.value,
                    "threshold": c.threshold,
                    "reason": c.reason,
                }
                for c in self.checks
            ],
            columns=["name", "scope", "status", "value", "threshold", "reason"],
        )

    def failing(self, fail_on: tuple[str, ...] | frozenset[str] = ()) -> tuple[Check, ...]:
        """Checks that fail the gate: FAIL and ERROR, plus the statuses in ``fail_on``.

        ``fail_on`` may hold ``"INCONCLUSIVE"``, ``"INSUFFICIENT"`` and ``"WARN"`` (any case):
        ``audit run --gate --fail-on inconclusive``, ``audit gate --fail-on-warn``.
        """
        extra = {Status(str(s).upper()) for s in fail_on}
        statuses = {Status.FAIL, Status.ERROR} | extra
        return tuple(c for c in self.checks if c.status in statuses)

    def __str__(self) -> str:
        n_fail = sum(c.status is Status.FAIL for c in self.checks)
        return f"AuditResult({self.status.value}: {self.verdict} | {len(self.cells)} cells, {n_fail} failing checks)"

    def __repr__(self) -> str:
        """A few lines (the dataclass repr of every cell and table runs to hundreds of thousands of
        characters): the headline, the data's size, the worst cell, the sections, the checks, and
        where the tables are (:meth:`to_frame`, :meth:`frames`; a notebook shows :meth:`_repr_html_`)."""
        cells = self.cells
        judge = self.provenance.primary_judge or "the judge"
        matchups = len({c.matchup for c in cells})
        criteria = len({c.criterion for c in cells})
        readers = max((c.n_readers for c in cells), default=0)
        lines = [
            f"<AuditResult {headline_from_counts(self.status.value, _cell_counts(cells))}",
            f"  {len(cells)} cells ({matchups} matchup(s) x {criteria} criteria); judge {judge!s} against "
            f"{readers} readers",
        ]
        decided = [c for c in cells if c.transfer.status in (Status.FAIL, Status.INCONCLUSIVE, Status.ERROR)]
        if decided:
            order = {Status.FAIL: 0, Status.ERROR: 1, Status.INCONCLUSIVE: 2}

            def badness(c: Cell) -> tuple:
                d = c.transfer.difference.estimate
                return (order[c.transfer.status], -(abs(d) if d == d else -1.0))

            worst = min(decided, key=badness)
            d = worst.transfer.difference.estimate
            distance = f", {100 * d:+.1f} points from the human band" if d == d else ""
            lines.append(f"  worst cell: {worst.matchup} / {worst.criterion} {worst.transfer.status.value}{distance}")
        computed = [n for n in self.section_names() if getattr(self, n).computed]
        lines.append(f"  sections computed: {', '.join(computed) or 'none'}")
        worst_first = ("FAIL", "ERROR", "INCONCLUSIVE", "WARN", "INSUFFICIENT", "SKIPPED", "PASS")
        tally = dict.fromkeys(worst_first, 0)
        for c in self.checks:
            tally[c.status.value] = tally.get(c.status.value, 0) + 1
        lines.append("  checks: " + ", ".join(f"{n} {s}" for s, n in tally.items() if n))
        lines.append("  tables: .to_frame() (cells), .frames() (every table); .verdict for the sentence>")
        return "\n".join(lines)


def _section_table() -> dict[str, str]:
    """Section name -> the reason of its default ``Skipped``, in table order (the table is imported
    when a result is first made or read: it names the payload types)."""
    from judge_transfer_audit.sections.registry import entries

    return {e.name: e.skipped for e in entries()}


def _payload_types() -> tuple[tuple[str, type], ...]:
    from judge_transfer_audit.sections.registry import entries

    return tuple((e.name, e.payload) for e in entries())


@functools.cache
def _core_hints() -> tuple[tuple[str, Any], ...]:
    """The resolved type of every field but ``sections`` (read by :meth:`AuditResult.__from_jsonable__`)."""
    hints = typing.get_type_hints(AuditResult)
    return tuple((f.name, hints[f.name]) for f in fields(AuditResult) if f.name != "sections")


def _cell_counts(cells) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in cells:
        out[c.transfer.status.value] = out.get(c.transfer.status.value, 0) + 1
    return out


#: the transfer-table columns a notebook shows
_HTML_CELL_COLUMNS = (
    "matchup",
    "criterion",
    "status",
    "n_pairs",
    "n_readers",
    "judge_rate",
    "band_low",
    "band_high",
    "difference",
    "margin",
)


def result_to_json(result: AuditResult, *, indent: int | None = 1, end: str = "") -> str:
    """Serialise to JSON text (stable key order, no NaN literals), followed by ``end`` (result.json's final
    newline)."""
    if indent is None:
        return json.dumps(to_jsonable(result), ensure_ascii=False, allow_nan=False) + end
    from judge_transfer_audit.core.json_text import dumps_indented_items  # json.dumps's text, with its C encoder

    return dumps_indented_items(result.jsonable_items(lazy_tables=True), indent, end)


def write_result_json(result: AuditResult, write: Callable[[str], Any], *, end: str = "") -> None:
    """:func:`result_to_json`'s text (``indent=1``) handed to ``write`` in pieces of about a million characters,
    so that a file is written holding one top-level entry's JSON data at a time and never the whole text
    (:func:`judge_transfer_audit.core.json_text.write_indented_items`)."""
    from judge_transfer_audit.core.json_text import write_indented_items

    write_indented_items(result.jsonable_items(lazy_tables=True), write, 1, end)


def result_from_json(text: str, *, source: str = "result.json") -> AuditResult:
    """Rebuild an :class:`AuditResult` from :func:`result_to_json` output.

    ``source`` names the file in error messages. Optional sections are rebuilt as their
    variants (:mod:`judge_transfer_audit.model.section_result`) holding their typed results (each section's
    payload type in :mod:`judge_transfer_audit.sections.registry`). Anything that is not a
    judge-audit result of this schema major version is an :class:`~judge_transfer_audit.core.errors.InputError`.
    """
    from judge_transfer_audit.core.errors import InputError, InputProblem

    fix = "give the result.json written by `audit run`"
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InputError(InputProblem(source, f"not valid JSON: {exc}", fix)) from None
    except RecursionError:
        raise InputError(InputProblem(source, "not a judge-audit result: JSON nested too deeply", fix)) from None
    if not isinstance(data, dict):
        raise InputError(InputProblem(source, f"not a judge-audit result (a JSON {type(data).__name__})", fix))
    version = data.get("schema_version")
    if str(version).split(".")[0] == "1":
        raise InputError(
            InputProblem(
                file=source,
                column="schema_version",
                value=str(version),
                message=(
                    "a result of schema 1.x, written before the transfer decision was rebuilt (schema 2.0: "
                    "cell statuses PASS / FAIL / INCONCLUSIVE / INSUFFICIENT / ERROR, vote share and majority "
                    "rate, the judge's distance to the human band; docs/audit.md, 'Schema 2.0')"
                ),
                fix=f"re-run `audit run` on the same inputs to get a {SCHEMA_VERSION} result",
            )
        )
    if version is None or str(version).split(".")[0] != SCHEMA_VERSION.split(".")[0]:
        raise InputError(
            InputProblem(
                file=source,
                column="schema_version",
                value=str(version),
                message=f"this judge-audit reads result schema {SCHEMA_VERSION.split('.')[0]}.x",
                fix="re-run `audit run` with this version, or install the judge-audit version that wrote it",
            )
        )
    try:
        result = from_jsonable(AuditResult, data)
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise InputError(InputProblem(source, f"not a complete judge-audit result: {exc}", fix)) from None
    except RecursionError:
        raise InputError(InputProblem(source, "not a judge-audit result: values nested too deeply", fix)) from None
    return result


def result_from_file(path: str | Path) -> AuditResult:
    """:func:`result_from_json` of a file's text (UTF-8); an unreadable file raises ``OSError``, a file that is
    not UTF-8 ``UnicodeDecodeError``.

    A file written by ``audit run`` is read a chunk at a time, its long tables (judge pairs, ...) a block of
    rows at a time (:func:`judge_transfer_audit.core.serialize.read_jsonable`): never its whole text, nor
    its tables' rows as Python lists. Anything else (another layout, another schema, a file that is not a
    result) is read whole by :func:`result_from_json`, which says what is wrong with it."""
    from judge_transfer_audit.core.collector import older_objects_frozen
    from judge_transfer_audit.core.serialize import NotBlockwise, read_jsonable

    try:
        with open(path, "rb") as stream, older_objects_frozen():
            result = read_jsonable(AuditResult, stream)
        if result.schema_version.split(".")[0] == SCHEMA_VERSION.split(".")[0]:
            return result
    except NotBlockwise:
        pass
    return result_from_json(Path(path).read_text(encoding="utf-8"), source=str(path))


def read_result(path: str | Path) -> AuditResult:
    """:func:`result_from_file`; a missing, unreadable or non-UTF-8 file is an InputError."""
    from judge_transfer_audit.core.errors import InputError, InputProblem

    source = str(path)
    fix = "give the result.json written by `audit run`"
    try:
        return result_from_file(path)
    except FileNotFoundError:
        raise InputError(InputProblem(source, "file not found", fix)) from None
    except UnicodeDecodeError as exc:
        raise InputError(InputProblem(source, f"not UTF-8 text (byte {exc.start})", fix)) from None
    except OSError as exc:
        raise InputError(InputProblem(source, f"cannot read the file: {exc.strerror or exc}", fix)) from None


__all__ = [
    "SCHEMA_VERSION",
    "AuditResult",
    "Cell",
    "HumanSide",
    "JudgeSide",
    "JudgeConfigRate",
    "GlmmSummary",
    "Interval",
    "Transfer",
    "MatchupTransfer",
    "StudyTransfer",
    "Provenance",
    "Section",
    "Computed",
    "Skipped",
    "Failed",
    "AgreementRows",
    "BaselineRows",
    "JudgePairs",
    "result_to_json",
    "write_result_json",
    "result_from_json",
    "result_from_file",
    "read_result",
]
