"""The optional sections, each registered once: the table every part of an audit reads.

One :class:`SectionEntry` per section, in the order the result lists them (``result.json``'s keys,
:meth:`AuditResult.section_names <judge_transfer_audit.results.result.AuditResult.section_names>`).
An entry names, for its section:

* ``name``: the result's attribute, the JSON key and the CSV file (``<name>.csv``);
* ``payload``: the type of the payload it computes (a frozen dataclass with ``to_frame()``),
  which ``result_from_json`` rebuilds;
* ``step``: how the pipeline computes it (:class:`Step`: its ``compute`` function, the run's
  inputs it reads, the stage it waits for, whether it runs on a worker);
* ``seed``: its seed slot, the spawn key of its stream under the run's root
  :class:`numpy.random.SeedSequence`, so that every section's stream stays the same whichever
  sections are registered;
* ``checks``: its checks (:class:`Checks`), if it has any;
* ``terminal`` and ``report``: its lines in the terminal summary and its part of the HTML report.

The pipeline (:mod:`judge_transfer_audit.engine.pipeline`), the result's JSON writer and reader
(:mod:`judge_transfer_audit.results.result`), the checks (:mod:`judge_transfer_audit.results.derive`), the
CSV outputs, the terminal summary and the report iterate :func:`entries`; none of them names a
section. A section's code lives in its folder, ``audit/sections/<name>/``: ``compute.py``,
``checks.py`` and ``render.py``. Adding one is that folder and one entry: in :data:`BUILTIN`, or
from another package through :func:`register` (docs/architecture.md, "Adding a section").

This module imports the sections' modules, which import their statistics lazily: loading the
table (as ``audit report`` does) pulls no SciPy.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

from judge_transfer_audit.model.checks import Check
from judge_transfer_audit.model.policy import Policy
from judge_transfer_audit.model.section_result import Section, Skipped
from judge_transfer_audit.sections.agreement_decision import checks as agreement_decision_checks
from judge_transfer_audit.sections.agreement_decision import compute as agreement_decision_compute
from judge_transfer_audit.sections.agreement_decision import render as agreement_decision_render
from judge_transfer_audit.sections.dev import checks as dev_checks
from judge_transfer_audit.sections.dev import compute as dev_compute
from judge_transfer_audit.sections.dev import render as dev_render
from judge_transfer_audit.sections.judge_agreement import compute as judge_agreement_compute
from judge_transfer_audit.sections.judge_agreement import render as judge_agreement_render
from judge_transfer_audit.sections.judge_configurations import compute as judge_configurations_compute
from judge_transfer_audit.sections.judge_configurations import render as judge_configurations_render
from judge_transfer_audit.sections.judge_position import checks as judge_position_checks
from judge_transfer_audit.sections.judge_position import compute as judge_position_compute
from judge_transfer_audit.sections.judge_position import render as judge_position_render
from judge_transfer_audit.sections.label_budget import compute as label_budget_compute
from judge_transfer_audit.sections.label_budget import render as label_budget_render
from judge_transfer_audit.sections.leaderboard import compute as leaderboard_compute
from judge_transfer_audit.sections.leaderboard import render as leaderboard_render
from judge_transfer_audit.sections.prediction_powered import compute as prediction_powered_compute
from judge_transfer_audit.sections.prediction_powered import render as prediction_powered_render
from judge_transfer_audit.sections.readers import checks as readers_checks
from judge_transfer_audit.sections.readers import compute as readers_compute
from judge_transfer_audit.sections.readers import render as readers_render
from judge_transfer_audit.sections.surface import checks as surface_checks
from judge_transfer_audit.sections.surface import compute as surface_compute
from judge_transfer_audit.sections.surface import render as surface_render
from judge_transfer_audit.sections.uncertainty import checks as uncertainty_checks
from judge_transfer_audit.sections.uncertainty import compute as uncertainty_compute
from judge_transfer_audit.sections.uncertainty import render as uncertainty_render
from judge_transfer_audit.statistics.budget.result import LabelBudget
from judge_transfer_audit.statistics.devset import DevValidity
from judge_transfer_audit.statistics.judge.agreement import JudgeAgreement
from judge_transfer_audit.statistics.judge.position import JudgePosition
from judge_transfer_audit.statistics.leaderboard.fit import Leaderboard
from judge_transfer_audit.statistics.prediction_powered.result import PredictionPowered
from judge_transfer_audit.statistics.readers import ReaderAnalysis
from judge_transfer_audit.statistics.surface import SurfaceResult
from judge_transfer_audit.statistics.uncertainty.section import UncertaintySection
from judge_transfer_audit.verdict.agreement_decision import AgreementDecision
from judge_transfer_audit.verdict.judge_configurations_result import JudgeConfigurations

#: What a section's ``compute`` may read besides ``data`` and ``spec`` (each passed as a keyword argument
#: of that name): the primary judge's name, its verdicts per pair and criterion (``choices``), every
#: configuration's (``choices_by_judge``), whether ``--judge auto`` chose the primary judge (``auto``),
#: the verdict's seed (``verdict_seed``), the primary judge's credits keyed by the human criterion
#: (``primary_credits``), every configuration's credits and outcomes (``judge_credits``), and, for a step
#: after ``"cells"``, the configurations' transfers decided beside the verdict (``decided``).
INPUTS = (
    "primary",
    "choices",
    "choices_by_judge",
    "auto",
    "verdict_seed",
    "primary_credits",
    "judge_credits",
    "decided",
)

#: The result's own JSON keys (the fields of :class:`~judge_transfer_audit.results.result.AuditResult`): no
#: section may take one as its name (tests/audit/sections/test_registry.py keeps the two the same).
RESULT_KEYS = (
    "schema_version",
    "status",
    "verdict",
    "cells",
    "counts",
    "agreement",
    "reader_baseline",
    "checks",
    "provenance",
    "judge_pairs",
    "sections",
    "matchup_transfers",
    "study_transfer",
)

#: The run's own seed slots (spawn keys under the root seed sequence), which no section may take.
RUN_SEEDS: Mapping[str, tuple[int, ...]] = {"judge ties": (0,), "verdict": (5,)}


@dataclass(frozen=True)
class Step:
    """How the pipeline computes a section: ``compute(data, spec, seed=..., **reads, **after)``.

    Attributes
    ----------
    compute : callable
        Returns the section: ``Computed``, ``Skipped`` or ``Failed``
        (:func:`judge_transfer_audit.sections._guard.guarded`).
    reads : tuple of str
        Inputs of the run it reads, out of :data:`INPUTS`, each passed under its name.
    after : {"fitted", "cells"} or None
        The stage it waits for, passed as ``cells``: the cells with their humans' GLMM fits
        (``"fitted"``, before the verdict) or the decided cells (``"cells"``); None: it starts at once.
    here : bool
        Runs in the pipeline's process (a step that farms out its own tasks, or that reads the
        decided cells cheaply); else on a worker of the run's pool.
    farm_first : bool
        For a ``here`` step: its farmed tasks go ahead of every queued step (False: it is queued at
        its own rank; for a section nothing waits for).
    stage : str, optional
        The progress message printed before it when the steps run in order.
    requested : str, optional
        The :class:`~judge_transfer_audit.model.spec.AuditSpec` flag that turns it on; when the flag is
        off the section is ``Skipped("not requested (--no-<flag>)")`` and not computed.
    """

    compute: Callable[..., Section]
    reads: tuple[str, ...] = ()
    after: Literal["fitted", "cells"] | None = None
    here: bool = False
    farm_first: bool = True
    stage: str | None = None
    requested: str | None = None


@dataclass(frozen=True)
class CheckContext:
    """What every section's checks may read: the policy, the primary judge, each matchup's focal
    system (named where a reason gives a rate), and the number of check families that share the
    run's family-wise error budget (the sum of every entry's :attr:`Checks.families`)."""

    policy: Policy
    primary: str | None
    focal: Mapping[str, str]
    families: int


@dataclass(frozen=True)
class Checks:
    """A section's checks.

    Attributes
    ----------
    run : callable
        ``run(section, context) -> list[Check]`` (``context`` a :class:`CheckContext`).
    decision : bool
        The checks are a decision listed with the cells' (before every other section's); else they
        follow the other sections' in table order.
    families : callable, optional
        ``families(section) -> int``: the check families it tests, each with an equal share of the
        family-wise error budget shared with every other section that has some (docs/detectors.md,
        "Multiplicity").
    """

    run: Callable[[Section, CheckContext], list[Check]]
    decision: bool = False
    families: Callable[[Section], int] | None = None


@dataclass(frozen=True)
class Terminal:
    """A section's lines in the terminal summary: ``lines(result) -> list[str]`` (names from the input
    made inert: :func:`judge_transfer_audit.core.terminal_text.printable`), printed at ``place`` (after
    the row counts: ``"inputs"``; after the cell counts: ``"verdict"``; after the cells to look at:
    ``"sections"``), in ascending ``rank`` there."""

    lines: Callable[[Any], list[str]]
    place: Literal["inputs", "verdict", "sections"] = "sections"
    rank: int = 1000


@dataclass(frozen=True)
class Report:
    """A section's part of the HTML report: ``contexts(result) -> list[dict]``, each a section context
    (:func:`judge_transfer_audit.presentation.renderers.render_section` with the section's renderer; none
    when the section is not shown), in ascending ``rank`` among the report's sections."""

    contexts: Callable[[Any], list[dict]]
    rank: int = 1000


@dataclass(frozen=True)
class SectionEntry:
    """One optional section (see the module docstring for each field).

    ``skipped``: the reason of the ``Skipped`` section a result holds when it was made without the
    section (a result read from an older ``result.json``). ``error_check``: a ``Failed`` section adds a
    ``<name>.computed`` ERROR check (a section whose own checks report its failure sets False).
    ``csv``: its payload's ``to_frame()`` is written as ``<name>.csv``."""

    name: str
    payload: type
    step: Step
    seed: tuple[int, ...] | None
    skipped: str = "not computed"
    checks: Checks | None = None
    error_check: bool = True
    csv: bool = True
    terminal: Terminal | None = None
    report: Report | None = None


#: The sections of this package, in the order the result lists them.
BUILTIN: tuple[SectionEntry, ...] = (
    SectionEntry(
        "dev",
        DevValidity,
        Step(dev_compute.compute),
        seed=(1,),
        skipped="no development set given",
        checks=Checks(dev_checks.section_checks),
        terminal=Terminal(dev_render.terminal_lines, place="inputs"),
        # the report shows it in its headline card (reports/sections.py, from render.dev_summary)
    ),
    SectionEntry(
        "uncertainty",
        UncertaintySection,
        Step(
            uncertainty_compute.compute,
            reads=("primary_credits", "judge_credits"),
            after="fitted",
            here=True,
            stage="bootstraps and leave-one-reader-out",
            requested="uncertainty",
        ),
        seed=(2,),
        checks=Checks(uncertainty_checks.section_checks),
        report=Report(uncertainty_render.report, rank=20),
    ),
    SectionEntry(
        "readers",
        ReaderAnalysis,
        Step(
            readers_compute.compute,
            reads=("judge_credits",),
            after="fitted",
            stage="reader analysis",
            requested="readers",
        ),
        seed=(3,),
        checks=Checks(readers_checks.section_checks, families=readers_checks.families),
        report=Report(readers_render.report, rank=30),
    ),
    SectionEntry(
        "surface",
        SurfaceResult,
        Step(surface_compute.compute, reads=("primary",), stage="surface features", requested="surface"),
        seed=(4,),
        checks=Checks(surface_checks.section_checks, families=surface_checks.families),
        report=Report(surface_render.report, rank=40),
    ),
    SectionEntry(
        "judge_agreement",
        JudgeAgreement,
        Step(judge_agreement_compute.compute, reads=("choices", "primary")),
        seed=(6, 0),
        terminal=Terminal(judge_agreement_render.terminal_lines, rank=20),
        report=Report(judge_agreement_render.report, rank=50),
    ),
    SectionEntry(
        "judge_configurations",
        JudgeConfigurations,
        Step(
            judge_configurations_compute.compute,
            reads=("choices_by_judge", "primary", "auto", "verdict_seed", "decided"),
            after="cells",
            stage="judge configurations",
        ),
        seed=(6, 1),
        terminal=Terminal(judge_configurations_render.terminal_lines, rank=30),
        report=Report(judge_configurations_render.report, rank=60),
    ),
    SectionEntry(
        "leaderboard",
        Leaderboard,
        # here: its bootstrap refits join the run's queue, at the step's own rank (nothing reads the
        # leaderboard: its blocks must not delay the cells)
        Step(leaderboard_compute.compute, reads=("choices", "primary"), here=True, farm_first=False),
        seed=(6, 2),
        terminal=Terminal(leaderboard_render.terminal_lines, rank=50),
        report=Report(leaderboard_render.report, rank=80),
    ),
    SectionEntry(
        "judge_position",
        JudgePosition,
        Step(judge_position_compute.compute),
        seed=(6, 3),
        checks=Checks(judge_position_checks.section_checks),
        error_check=False,
        terminal=Terminal(judge_position_render.terminal_lines, rank=40),
        report=Report(judge_position_render.report, rank=70),
    ),
    SectionEntry(
        "label_budget",
        LabelBudget,
        Step(label_budget_compute.compute, after="cells", here=True),
        seed=None,
        error_check=False,
        terminal=Terminal(label_budget_render.terminal_lines, rank=60),
        report=Report(label_budget_render.report, rank=90),
    ),
    SectionEntry(
        "prediction_powered",
        PredictionPowered,
        Step(prediction_powered_compute.compute, reads=("choices", "primary"), here=True),
        seed=(8,),
        error_check=False,
        terminal=Terminal(prediction_powered_render.terminal_lines, rank=10),
        report=Report(prediction_powered_render.report, rank=10),
    ),
    SectionEntry(
        "agreement_decision",
        AgreementDecision,
        Step(agreement_decision_compute.compute, reads=("choices", "primary")),
        seed=(7,),
        checks=Checks(agreement_decision_checks.section_checks, decision=True),
        error_check=False,
        terminal=Terminal(agreement_decision_render.terminal_lines, place="verdict"),
        report=Report(agreement_decision_render.report, rank=100),
    ),
)

_registered: list[SectionEntry] = []  #: entries added by :func:`register`, after the built-in ones


def entries() -> tuple[SectionEntry, ...]:
    """Every registered section, in the order the result lists them: :data:`BUILTIN`, then each
    :func:`register`-ed entry in the order it was registered."""
    return BUILTIN + tuple(_registered)


def names() -> tuple[str, ...]:
    """The registered sections' names, in table order."""
    return tuple(e.name for e in entries())


def entry(name: str) -> SectionEntry:
    """The entry named ``name``; a KeyError lists the registered names."""
    for e in entries():
        if e.name == name:
            return e
    raise KeyError(f"no section named {name!r} (registered: {', '.join(names())})")


def _overlaps(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """One spawn key is the other or an ancestor of it: their streams are not independent."""
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def register(new: SectionEntry) -> SectionEntry:
    """Add a section after the registered ones; it is computed, checked, written, printed and
    rendered by every run from then on.

    Raises
    ------
    ValueError
        The name is not an identifier, is already registered or is a field of the result,
        ``step.reads`` names an input not in :data:`INPUTS`, or the seed slot is (or contains, or
        lies inside) a slot already taken.
    """
    if not new.name.isidentifier() or keyword.iskeyword(new.name) or new.name.startswith("_"):
        raise ValueError(f"a section's name is a public Python identifier (its attribute on the result): {new.name!r}")
    if new.name in names():
        raise ValueError(f"a section named {new.name!r} is already registered")
    if new.name in RESULT_KEYS:
        raise ValueError(f"{new.name!r} is a field of the result; a section takes another name")
    unknown = [r for r in new.step.reads if r not in INPUTS]
    if unknown:
        raise ValueError(f"section {new.name!r} reads {unknown}; a section reads only {', '.join(INPUTS)}")
    if new.seed is not None:
        taken = {**RUN_SEEDS, **{e.name: e.seed for e in entries() if e.seed is not None}}
        clash = [who for who, key in taken.items() if _overlaps(key, new.seed)]
        if clash:
            free = max(key[0] for key in taken.values()) + 1
            raise ValueError(
                f"section {new.name!r}: seed slot {new.seed} overlaps the slot of {', '.join(clash)}; "
                f"take a free one, e.g. ({free},)"
            )
    _registered.append(new)
    return new


def unregister(name: str) -> None:
    """Remove a section added by :func:`register` (the built-in ones stay)."""
    for i, e in enumerate(_registered):
        if e.name == name:
            del _registered[i]
            return
    raise KeyError(f"no section named {name!r} was added by register()")


@contextmanager
def registered(new: SectionEntry) -> Iterator[SectionEntry]:
    """``with registered(entry):`` the section is registered inside the block only (for tests)."""
    register(new)
    try:
        yield new
    finally:
        unregister(new.name)


def section_checks(
    policy: Policy,
    sections: Mapping[str, Section],
    *,
    primary: str | None = None,
    focal: Mapping[str, str] | None = None,
) -> list[Check]:
    """Every section's checks, in the order the result lists them: the decisions' (``Checks.decision``),
    then a ``<name>.computed`` ERROR per Failed section (``error_check``), then the other sections'
    checks in table order, under the policy's ``[severity]``. ``sections``: name -> section (a
    section missing there is taken as not computed). ``focal``: each matchup's focal system."""
    from judge_transfer_audit.model.checks import apply_severity
    from judge_transfer_audit.sections._guard import failed_check

    table = [(e, sections.get(e.name) or Skipped(e.skipped)) for e in entries()]
    families = sum(e.checks.families(s) for e, s in table if e.checks is not None and e.checks.families is not None)
    context = CheckContext(policy=policy, primary=primary, focal=dict(focal or {}), families=families)
    decisions: list[Check] = []
    for e, s in table:
        if e.checks is not None and e.checks.decision:
            decisions += e.checks.run(s, context)
    checks: list[Check] = [c for c in (failed_check(e.name, s) for e, s in table if e.error_check) if c is not None]
    for e, s in table:
        if e.checks is not None and not e.checks.decision:
            checks += e.checks.run(s, context)
    return decisions + apply_severity(checks, policy.severity)


def section_types() -> dict[str, type]:
    """Section name -> the type of its payload, in table order."""
    return {e.name: e.payload for e in entries()}


__all__ = [
    "BUILTIN",
    "INPUTS",
    "RESULT_KEYS",
    "RUN_SEEDS",
    "CheckContext",
    "Checks",
    "Report",
    "SectionEntry",
    "Step",
    "Terminal",
    "entries",
    "entry",
    "names",
    "register",
    "registered",
    "section_checks",
    "section_types",
    "unregister",
]
