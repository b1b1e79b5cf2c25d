"""The audit's result: frozen, serialisable, and the only thing reports read.

``AuditResult`` round-trips losslessly through JSON (:func:`result_to_json`,
:func:`result_from_json`), so ``audit report result.json`` re-renders without recomputing.
Field names here are a stable interface (users' scripts and CI jobs read them); bump
``SCHEMA_VERSION`` on any incompatible change.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

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

if (
    TYPE_CHECKING
):  # the payload types pull scipy: resolved when a result is loaded (AuditResult.__annotation_namespace__)
    from judge_transfer_audit.sections.types import (
        AgreementDecision,
        DevValidity,
        JudgeAgreement,
        JudgeConfigurations,
        JudgePosition,
        LabelBudget,
        Leaderboard,
        PredictionPowered,
        ReaderAnalysis,
        SurfaceResult,
        UncertaintySection,
    )

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


@dataclass(frozen=True)
class AuditResult:
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
    # the optional sections: each Computed(payload), Skipped(reason) or Failed(reason, error)
    dev: Section[DevValidity] = field(default_factory=lambda: Skipped("no development set given"))
    uncertainty: Section[UncertaintySection] = field(default_factory=Skipped)
    readers: Section[ReaderAnalysis] = field(default_factory=Skipped)
    surface: Section[SurfaceResult] = field(default_factory=Skipped)
    # the peer sections (audit/sections/judge_*.py, leaderboard.py): appended last, with defaults
    judge_agreement: Section[JudgeAgreement] = field(default_factory=Skipped)
    judge_configurations: Section[JudgeConfigurations] = field(default_factory=Skipped)
    leaderboard: Section[Leaderboard] = field(default_factory=Skipped)
    judge_position: Section[JudgePosition] = field(default_factory=Skipped)
    # schema 2.2: the label budget (audit/statistics/budget/compute.py), per cell at 80% power with the
    # pairs-vs-readers trade-off
    label_budget: Section[LabelBudget] = field(default_factory=Skipped)
    # the prediction-powered estimates (audit/statistics/prediction_powered/): needs judge-only pairs
    prediction_powered: Section[PredictionPowered] = field(default_factory=Skipped)
    # the agreement decision (audit/verdict/agreement_decision.py): the judge against a reader, pair by pair
    agreement_decision: Section[AgreementDecision] = field(default_factory=Skipped)
    # the transfer decision per matchup (criteria pooled) and for the study (audit/verdict/hierarchy.py)
    matchup_transfers: tuple[MatchupTransfer, ...] = ()
    study_transfer: StudyTransfer | None = None

    @staticmethod
    def __annotation_namespace__() -> dict[str, Any]:
        """The names the section annotations use, for :func:`typing.get_type_hints` (imported on
        demand: the payload types pull scipy, which ``import judge_transfer_audit.results.result`` does not need)."""
        import judge_transfer_audit.sections.types

        return vars(judge_transfer_audit.sections.types)

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

    @classmethod
    def section_names(cls) -> tuple[str, ...]:
        """The optional sections' field names, in field order (``dev``, ``uncertainty``, ...)."""
        return tuple(f.name for f in fields(cls) if str(f.type).startswith("Section["))

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


def result_to_json(result: AuditResult, *, indent: int | None = 1) -> str:
    """Serialise to JSON text (stable key order, no NaN literals)."""
    if indent is None:
        return json.dumps(to_jsonable(result), ensure_ascii=False, allow_nan=False)
    from judge_transfer_audit.core.json_text import dumps_indented  # json.dumps's text, with its C encoder

    return dumps_indented(to_jsonable(result), indent)


def result_from_json(text: str, *, source: str = "result.json") -> AuditResult:
    """Rebuild an :class:`AuditResult` from :func:`result_to_json` output.

    ``source`` names the file in error messages. Optional sections are rebuilt as their
    variants (:mod:`judge_transfer_audit.model.section_result`) holding their typed results (the annotations of
    :class:`AuditResult`; :data:`judge_transfer_audit.sections.types.SECTION_TYPES`). Anything that is not a
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


def read_result(path: str | Path) -> AuditResult:
    """:func:`result_from_json` of a file; a missing, unreadable or non-UTF-8 file is an InputError."""
    from judge_transfer_audit.core.errors import InputError, InputProblem

    source = str(path)
    fix = "give the result.json written by `audit run`"
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(InputProblem(source, "file not found", fix)) from None
    except UnicodeDecodeError as exc:
        raise InputError(InputProblem(source, f"not UTF-8 text (byte {exc.start})", fix)) from None
    except OSError as exc:
        raise InputError(InputProblem(source, f"cannot read the file: {exc.strerror or exc}", fix)) from None
    return result_from_json(text, source=source)


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
    "result_from_json",
    "read_result",
]
