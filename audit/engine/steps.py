"""The steps of one audit run (:mod:`judge_transfer_audit.engine.task_graph`): what each computes and what it reads.

The cells come from three kinds of step: the primary verdict (one call: the multiplicity
adjustment is across cells; with the other judge configurations decided in it, on the same cell
bootstraps, or beside it as a step of their own), the cells' GLMM fits (in chunks on a pool), and
the glue that joins them (``fitted``: each cell's human side; ``cells``: the decided cells). The
sections read as little as they need: the uncertainty and reader sections read only the cells'
GLMM fits (``fitted``), so they start before the verdict ends; the judge configurations' section
reads the decided cells; surface features, the dev set, judge agreement, judge position and the
leaderboard read none, so they start beside the verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from judge_transfer_audit import sections
from judge_transfer_audit.core.errors import AuditError
from judge_transfer_audit.engine.provenance import build_provenance
from judge_transfer_audit.engine.task_graph import Step
from judge_transfer_audit.model.data import AuditData
from judge_transfer_audit.model.spec import AuditSpec
from judge_transfer_audit.results.result import Cell, HumanSide
from judge_transfer_audit.sections import registry
from judge_transfer_audit.verdict import assess_transfers
from judge_transfer_audit.verdict.batched import assess_transfers_with_configurations


@dataclass(frozen=True)
class FittedCell:
    """A cell's humans before its decision: what the uncertainty and reader sections read of a
    cell (``human.glmm``), available as soon as the cell's GLMM is fitted."""

    matchup: str
    criterion: str
    human: HumanSide


@dataclass(frozen=True)
class CellPart:
    """One cell's inputs: its votes, the judge's side and the primary judge's per-pair credits."""

    matchup: str
    criterion: str
    votes: Any  #: the cell's votes (DataFrame)
    judge: Any  #: :class:`~judge_transfer_audit.results.result.JudgeSide` or None
    credits: Any  #: the primary judge's outcomes in the cell (DataFrame) or None


def human_sides_of(votes: list, level: float, backend: str) -> list:
    """:func:`~judge_transfer_audit.verdict.human_side.human_sides` of the cells' votes (tiny cells' GLMMs are evaluated
    together: :mod:`judge_transfer_audit.statistics.glmm.batch`)."""
    from judge_transfer_audit.verdict.human_side import human_sides

    return human_sides(votes, level=level, backend=backend)


#: a study of at least this many cells, none of more than this many votes, has its GLMMs fitted in
#: one chunk per worker (tiny cells' fits do not depend on which cells are fitted together)
GLMM_CHUNK_MIN_CELLS = 200
GLMM_CHUNK_MAX_VOTES = 64
#: ... and so has a study of large cells: at least two per worker and most of them with more pair and
#: reader levels than the engine stacks together (:data:`judge_transfer_audit.statistics.glmm.batch.STACK_MAX_LEVELS`),
#: so each
#: is fitted alone, whichever chunk it is in (arena-shaped studies: many readers, a vote or two a pair)
GLMM_CHUNK_LARGE_LEVELS = 200


def _large_cells(votes: list) -> int:
    """How many cells have more pair and reader levels than the engine stacks (their fits are their own)."""
    return sum(v["pair_id"].nunique() + v["reader_id"].nunique() > GLMM_CHUNK_LARGE_LEVELS for v in votes)


def human_sides_chunk_of(votes: list, level: float) -> list:
    """:func:`~judge_transfer_audit.verdict.human_side.human_sides_chunk` of a chunk of the cells' votes."""
    from judge_transfer_audit.verdict.human_side import human_sides_chunk

    return human_sides_chunk(votes, level=level)


def glmm_steps(parts: list[CellPart], *, level: float, backend: str, jobs: int) -> list[Step]:
    """The human GLMMs' steps and ``fitted`` (the cells with their human side). Many small cells, or
    many large ones (the native engine) are fitted in ``jobs`` chunks, ``human GLMMs 1..jobs``, joined by ``fitted``
    (which fits there the few middle-sized cells whose stacked fits depend on their companions:
    :func:`judge_transfer_audit.verdict.human_side.human_sides_joined`); else one step, ``human GLMMs``. Either way the
    same bits, whatever ``jobs``."""
    votes = [p.votes for p in parts]
    chunked = (
        jobs > 1
        and backend == "native"
        and 0.0 < level < 1.0
        and (
            (len(parts) >= GLMM_CHUNK_MIN_CELLS and max(len(v) for v in votes) <= GLMM_CHUNK_MAX_VOTES)
            or (len(parts) >= 2 * jobs and 2 * _large_cells(votes) >= len(parts))
        )
    )
    if not chunked:
        return [
            Step("human GLMMs", human_sides_of, dict(votes=votes, level=level, backend=backend)),
            Step(
                "fitted",
                fitted_cells,
                dict(parts=parts),
                after=("human GLMMs",),
                late=lambda r: {"sides": r["human GLMMs"]},
                here=True,
            ),
        ]
    bounds = np.linspace(0, len(parts), jobs + 1).round().astype(int)
    names = tuple(f"human GLMMs {k + 1}" for k in range(jobs))
    steps = [
        Step(name, human_sides_chunk_of, dict(votes=votes[lo:hi], level=level))
        for name, lo, hi in zip(names, bounds[:-1], bounds[1:])
    ]
    steps.append(
        Step(
            "fitted",
            joined_cells,
            dict(parts=parts, level=level),
            after=names,
            late=lambda r: {"chunks": [r[name] for name in names]},
            here=True,
        )
    )
    return steps


def joined_cells(parts: list[CellPart], chunks: list, level: float) -> tuple[FittedCell, ...]:
    """:func:`fitted_cells` of the chunks' sides
    (:func:`judge_transfer_audit.verdict.human_side.human_sides_joined`)."""
    from judge_transfer_audit.verdict.human_side import human_sides_joined

    return fitted_cells(parts, human_sides_joined([p.votes for p in parts], chunks, level=level))


def primary_verdict(cells, configurations, *, tie_rule, policy, seed):
    """The primary verdict, with the other judge configurations' cells decided on the same cell
    bootstraps when ``configurations`` holds any (their transfers, else None). If deciding them
    raises an input error, the primary verdict is made on its own and the configurations section
    decides them (and records the error)."""
    if configurations:
        try:
            return assess_transfers_with_configurations(
                cells, configurations, tie_rule=tie_rule, policy=policy, seed=seed
            )
        except AuditError:
            pass
    return assess_transfers(cells, tie_rule=tie_rule, policy=policy, seed=seed), None


def compared_chunk(cells, *, tie_rule, policy, seed):
    """One chunk of the primary verdict's cells compared
    (:func:`judge_transfer_audit.verdict.chunked.compare_chunk`)."""
    from judge_transfer_audit.verdict.chunked import compare_chunk

    return compare_chunk(cells, tie_rule=tie_rule, policy=policy, seed=seed)


def chunked_verdict(cells, compared, *, tie_rule, policy, seed):
    """The primary verdict from its chunks' comparisons (:func:`judge_transfer_audit.verdict.chunked.assess_compared`),
    as
    :func:`primary_verdict` returns it (no other configuration decided in it)."""
    from judge_transfer_audit.verdict.chunked import assess_compared

    return assess_compared(cells, compared, tie_rule=tie_rule, policy=policy, seed=seed), None


def verdict_steps(cell_args: list, configurations: dict, *, decision: dict) -> list[Step]:
    """The primary verdict's steps: one ``verdict`` step, or, with many cells and no other configuration
    decided in it, ``verdict cells K`` steps (chunks of cells compared on workers:
    :func:`judge_transfer_audit.verdict.chunked.chunks`, a rule of the number of cells alone) and the ``verdict`` step
    here that decides them together (the same transfers, bit for bit)."""
    from judge_transfer_audit.verdict.chunked import chunks

    parts = chunks(len(cell_args))
    if configurations or len(parts) < 2:
        return [Step("verdict", primary_verdict, dict(cells=cell_args, configurations=configurations, **decision))]
    names = [f"verdict cells {k + 1}" for k in range(len(parts))]
    steps = [
        Step(name, compared_chunk, dict(cells=cell_args[r.start : r.stop], **decision)) for name, r in zip(names, parts)
    ]
    steps.append(
        Step(
            "verdict",
            chunked_verdict,
            dict(cells=cell_args, **decision),
            after=tuple(names),
            late=lambda r: {"compared": [r[name] for name in names]},
            here=True,
        )
    )
    return steps


def fitted_cells(parts: list[CellPart], sides: list) -> tuple[FittedCell, ...]:
    """The cells before their decision: each with its human side (the GLMM step's, in cell order)."""
    return tuple(FittedCell(p.matchup, p.criterion, h) for p, h in zip(parts, sides))


def _system_pair(pair_meta, matchup) -> tuple[str, str]:
    meta = pair_meta.loc[matchup]
    return str(meta["focal"]), str(meta["other"])


def _systems(pair_meta, matchups: list) -> dict | None:
    """matchup -> (focal, other) as ``str(pair_meta.loc[matchup][column])`` reads them, in one lookup (None:
    the index is not unique, each cell then reads its row)."""
    if not pair_meta.index.is_unique:
        return None
    unique = list(dict.fromkeys(matchups))
    rows = pair_meta.loc[unique, ["focal", "other"]]  # a KeyError for a matchup without a row, as .loc[matchup]
    return {m: (str(f), str(o)) for m, f, o in zip(unique, rows["focal"].tolist(), rows["other"].tolist())}


def _distinct(column: pd.Series) -> int:
    """``column.nunique()`` (distinct values, missing ones not counted) without pandas' per-call overhead."""
    values = column.tolist()
    seen = {v for v in values if v is not None and v is not pd.NA and v == v}
    return len(seen)


def decided_cells(
    parts: list[CellPart], fitted: tuple[FittedCell, ...], verdict: tuple, *, base, pair_meta, gap
) -> tuple[tuple[Cell, ...], dict | None]:
    """The decided cells, and the other configurations' transfers (decided in the verdict's step)."""
    transfers, decided = verdict
    systems = _systems(pair_meta, [p.matchup for p in parts])
    cells = []
    for part, fit, (transfer, human_estimands) in zip(parts, fitted, transfers):
        j_vs_m, r_base = base.get((part.matchup, part.criterion), (None, None))
        below = None
        if j_vs_m is not None and r_base is not None and part.judge is not None:
            below = bool(j_vs_m < r_base - gap)
        transfer = replace(transfer, judge_vs_majority=j_vs_m, reader_baseline=r_base, below_reader_baseline=below)
        focal, other = systems[part.matchup] if systems is not None else _system_pair(pair_meta, part.matchup)
        votes = part.votes
        cells.append(
            Cell(
                matchup=part.matchup,
                criterion=part.criterion,
                focal=focal,
                other=other,
                n_pairs=_distinct(votes["pair_id"]),
                n_readers=_distinct(votes["reader_id"]),
                n_votes=int(len(votes)),
                human=replace(fit.human, **human_estimands),
                judge=part.judge,
                transfer=transfer,
            )
        )
    return tuple(cells), decided


def cell_steps(
    parts: list[CellPart],
    configurations: dict,
    *,
    level: float,
    backend: str,
    decision: dict,
    base: dict,
    pair_meta,
    gap: float,
    jobs: int,
) -> list[Step]:
    """The steps that make the cells: ``verdict`` (the other judge configurations decided in it, on
    the same cell bootstraps), ``human GLMMs``, ``fitted`` and ``cells`` (whose result is
    ``(cells, decided)``)."""
    cell_args = [(p.matchup, p.criterion, p.votes, p.credits) for p in parts]
    steps = verdict_steps(cell_args, configurations, decision=decision)
    steps += glmm_steps(parts, level=level, backend=backend, jobs=jobs)
    steps.append(
        Step(
            "cells",
            decided_cells,
            dict(parts=parts, base=base, pair_meta=pair_meta, gap=gap),
            after=("verdict", "fitted"),
            late=lambda r: {"fitted": r["fitted"], "verdict": r["verdict"]},
            here=True,
        )
    )
    return steps


def recording(fn, data, spec, **kwargs) -> tuple:
    """A section computed on a worker, with the detector figures it gave ``spec.timings`` (a worker's
    copy of the run's timings never comes back, so it records into its own and returns them)."""
    from judge_transfer_audit.core.timings import RunTimings

    record = RunTimings() if spec.timings is not None else None
    section = fn(data, replace(spec, timings=record), **kwargs)
    return section, ([] if record is None else record.detectors)


def section_step(
    name: str, fn, data, spec, *, pooled: bool, stage: str | None = None, after=(), late=None, **kwargs
) -> Step:
    """A section's step: ``fn(data, spec, **kwargs, **late(results))``. On a pool its result is
    ``(section, detector figures)`` (:func:`recording`); in order, the section itself."""
    if pooled:
        task_spec = replace(spec, progress_bar=None, progress=None)  # no bars or messages from workers
        return Step(
            name,
            recording,
            dict(fn=fn, data=data, spec=task_spec, **kwargs),
            after=tuple(after),
            late=late,
            stage=stage,
        )
    return Step(name, fn, dict(data=data, spec=spec, **kwargs), after=tuple(after), late=late, stage=stage)


def seed_of(root: np.random.SeedSequence, key: tuple[int, ...]) -> np.random.SeedSequence:
    """The seed sequence at spawn key ``key`` under ``root``: the stream ``root.spawn`` gives there (the
    section table's seed slots, :mod:`judge_transfer_audit.sections.registry`), whatever else is spawned."""
    return np.random.SeedSequence(root.entropy, spawn_key=root.spawn_key + tuple(key), pool_size=root.pool_size)


def _late(after: str | None, decided: bool):
    """The stage a section waits for and how its result reaches the section (``cells``; with
    ``decided``, the configurations' transfers decided beside the verdict too)."""
    if after is None:
        return (), None
    if after == "fitted":
        return ("fitted",), lambda r: {"cells": r["fitted"]}
    if decided:
        return ("cells",), lambda r: {"cells": r["cells"][0], "decided": r["cells"][1]}
    return ("cells",), lambda r: {"cells": r["cells"][0]}


def section_steps(
    data: AuditData,
    spec: AuditSpec,
    *,
    pooled: bool,
    outcomes: pd.DataFrame,
    choices: pd.DataFrame,
    choices_by_judge: dict[str, pd.DataFrame],
    primary: str | None,
    auto: bool,
    verdict_seed: int,
    root: np.random.SeedSequence,
    seed: int | None,
) -> list[Step]:
    """One step per section of the table (:mod:`judge_transfer_audit.sections.registry`) that the spec
    requests, in table order, each reading what its entry names, with the seed of its slot under
    ``root``; then the run's provenance. A ``here`` step runs in this process (the uncertainty section
    and the leaderboard farm out their bootstrap blocks and refits through
    :func:`judge_transfer_audit.engine.parallel.open_runner`, which gives them the run's runner on a pool),
    the others on workers."""
    inputs = {  # made for each section that reads them: no two sections share a frame
        "primary": lambda: primary,
        "choices": lambda: choices,
        "choices_by_judge": lambda: choices_by_judge,
        "auto": lambda: auto,
        "verdict_seed": lambda: verdict_seed,
        "primary_credits": lambda: sections.primary_credits(choices, data.pairs, primary),
        "judge_credits": lambda: sections.judge_credits(outcomes),
    }
    out: list[Step] = []
    for entry in registry.entries():
        how = entry.step
        if how.requested is not None and not getattr(spec, how.requested):
            continue
        kwargs = {name: inputs[name]() for name in how.reads if name != "decided"}
        if entry.seed is not None:
            kwargs["seed"] = seed_of(root, entry.seed)
        after, late = _late(how.after, "decided" in how.reads)
        if how.here:
            out.append(
                Step(
                    entry.name,
                    how.compute,
                    dict(data=data, spec=spec, **kwargs),
                    after=after,
                    late=late,
                    here=True,
                    stage=how.stage,
                    farm_first=how.farm_first,
                )
            )
        else:
            out.append(
                section_step(
                    entry.name,
                    how.compute,
                    data,
                    spec,
                    pooled=pooled,
                    stage=how.stage,
                    after=after,
                    late=late,
                    **kwargs,
                )
            )
    # the installed packages' versions are read from their metadata (~0.1 s): beside the rest too
    out.append(
        Step(
            "provenance",
            build_provenance,
            dict(data=data, spec=spec, seed=seed, primary_judge=primary or ""),
        )
    )
    return out


def sections_of_run(spec: AuditSpec, done: dict) -> dict:
    """Every section of the table from the run's results: the computed ones, and the ones the spec did
    not request as ``Skipped("not requested (--no-<flag>)")``."""
    out = {}
    for entry in registry.entries():
        requested = entry.step.requested
        if requested is not None and not getattr(spec, requested):
            out[entry.name] = sections.not_requested(f"--no-{requested}")
        else:
            out[entry.name] = done[entry.name]
    return out


__all__ = [
    "section_steps",
    "sections_of_run",
    "seed_of",
    "FittedCell",
    "CellPart",
    "cell_steps",
    "section_step",
    "recording",
    "decided_cells",
    "fitted_cells",
    "primary_verdict",
    "chunked_verdict",
    "compared_chunk",
    "verdict_steps",
    "human_sides_of",
]
