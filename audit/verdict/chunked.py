"""The primary verdict of many cells in chunks: the cells' bootstraps and readings on workers, the decision here.

With thousands of cells (10k criteria: a cell each) the verdict's work is the cells' bootstraps and the
readings of their distributions; the decision across cells (the multiplicity adjustment, the sequential
Monte Carlo) is a small part. :func:`chunks` cuts the cells into runs of ``CHUNK_CELLS`` (a rule of the
number of cells alone, never of ``--jobs``); :func:`compare_chunk` makes one chunk's first-round
comparisons (each cell on its own stream: :func:`~judge_transfer_audit.verdict.assess.compare_inputs`) with every
reading
the decision and the human estimands make of them computed (:mod:`judge_transfer_audit.verdict.stacked`, row by row the
same numbers whichever cells share a stack) and the replicates dropped (:func:`frozen`: what pickles back
from a worker is the cached readings, not cells x statistics x replicates); :func:`assess_compared` decides
all the cells on them (:func:`~judge_transfer_audit.verdict.assess.decide_cells`, whose re-runs recompute the few
borderline cells from their votes). Each cell's transfer is that of
:func:`~judge_transfer_audit.verdict.assess.assess_transfers`, bit for bit (tests/audit/verdict/test_chunked.py).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import replace

import pandas as pd

from judge_transfer_audit.model.cells import Transfer
from judge_transfer_audit.model.policy import TransferPolicy
from judge_transfer_audit.model.tie_rules import TieRule
from judge_transfer_audit.verdict.assess import CellInput, cell_input, compare_inputs, decide_cells, human_estimands
from judge_transfer_audit.verdict.compare import CellComparison
from judge_transfer_audit.verdict.decision import prefetch_readings
from judge_transfer_audit.verdict.intervals import MirroredDistribution, ReplicateDistribution
from judge_transfer_audit.verdict.paired_bootstrap import STATISTICS, CellBootstrap
from judge_transfer_audit.verdict.stacked import materialize, prefetch

CHUNK_CELLS = 500  #: cells per chunk; fewer than two chunks' worth of cells are decided in one call

Cells = Sequence[tuple[str, str, pd.DataFrame, pd.DataFrame | None]]


def chunks(n_cells: int) -> list[range]:
    """The chunks of ``n_cells`` cells: one chunk below ``2 * CHUNK_CELLS`` cells, else runs of
    ``CHUNK_CELLS`` (the last one up to twice that)."""
    if n_cells < 2 * CHUNK_CELLS:
        return [range(n_cells)]
    starts = list(range(0, n_cells - CHUNK_CELLS + 1, CHUNK_CELLS))
    return [range(a, b) for a, b in zip(starts, starts[1:] + [n_cells])]


def compare_chunk(cells: Cells, *, tie_rule: TieRule, policy: TransferPolicy, seed: int) -> list[CellComparison]:
    """The first-round comparisons of ``cells`` (``(matchup, criterion, votes, judge)``), read and frozen."""
    inputs = [cell_input(*cell) for cell in cells]
    return compare_frozen(inputs, tie_rule=tie_rule, policy=policy, seed=seed)


def compare_frozen(
    inputs: Sequence[CellInput], *, tie_rule: TieRule, policy: TransferPolicy, seed: int
) -> list[CellComparison]:
    """:func:`~judge_transfer_audit.verdict.assess.compare_inputs` of every input, with what the decision and the human
    estimands read of them computed, then :func:`frozen`."""
    comparisons = compare_inputs(inputs, range(len(inputs)), tie_rule=tie_rule, policy=policy, seed=seed)
    prefetch_readings([c for c in comparisons if c.assessed], policy.decisive_level)
    a = (1.0 - policy.level) / 2.0  # what human_estimands reads of every bootstrapped cell
    boots = [c.boot for c in comparisons if c.boot is not None]
    materialize((b, k) for b in boots for k in ("vote_share", "majority_rate"))
    prefetch(intervals=[(b[k], a) for b in boots for k in ("vote_share", "majority_rate")])
    memo: dict[int, object] = {}
    return [frozen(c, memo) for c in comparisons]


def frozen(c: CellComparison, memo: dict | None = None) -> CellComparison:
    """``c`` with its bootstrap's built distributions in a plain mapping and their smoothed replicates dropped
    (their readings stay cached); a distribution not built yet is left out (nothing reads it afterwards)."""
    if c.boot is None:
        return c
    memo = {} if memo is None else memo
    b = c.boot
    swap = {"d_lo": "d_hi", "d_hi": "d_lo"}
    if b.mirror_of is not None:
        built = {swap.get(k, k) for k in _built(b.mirror_of.distributions)}
    else:
        built = _built(b.distributions)
    dists = {k: _stripped(b[k], memo) for k in STATISTICS if k in built}
    boot = CellBootstrap(dists, b.between_pair_sd, b.reader_sd, b.n_boot)
    return replace(c, boot=boot)


def _built(distributions) -> set[str]:
    """The statistics built in a bootstrap's distributions (a lazy mapping's, without building the others)."""
    built = getattr(distributions, "_built", None)
    return set(distributions) if built is None else set(built)


def _stripped(d, memo: dict):
    """``d`` without its smoothed replicates (a reading not cached then fails loudly instead of being recomputed)."""
    key = id(d)
    if key in memo:
        return memo[key]
    if isinstance(d, MirroredDistribution):
        out = MirroredDistribution(_stripped(d.base, memo), d.about)
    elif isinstance(d, ReplicateDistribution) and d.defined and d._h > 0:
        out = copy.copy(d)
        out._reps = None
    else:
        out = d  # a count of replicates (or undefined): its readings read the replicates themselves
    memo[key] = out
    return out


class _Inputs(Sequence):
    """The cells' :class:`~judge_transfer_audit.verdict.assess.CellInput` made when read (the re-runs read a few)."""

    def __init__(self, cells: Cells):
        self._cells = cells
        self._made: dict[int, CellInput] = {}

    def __len__(self) -> int:
        return len(self._cells)

    def __getitem__(self, i):
        if i not in self._made:
            self._made[i] = cell_input(*self._cells[i])
        return self._made[i]


def decide_compared(
    inputs: Sequence[CellInput],
    compared: Sequence[Sequence[CellComparison]],
    *,
    tie_rule: TieRule,
    policy: TransferPolicy,
    seed: int,
) -> tuple[list[Transfer], list[dict]]:
    """:func:`~judge_transfer_audit.verdict.assess.decide_cells` of ``inputs`` from their chunks' first-round
    comparisons (:func:`compare_frozen`, in the order of ``inputs``), and the cells' human estimands."""
    comparisons = [c for chunk in compared for c in chunk]
    if len(comparisons) != len(inputs):
        raise ValueError(f"{len(comparisons)} comparisons for {len(inputs)} cells")
    transfers, comparisons = decide_cells(inputs, tie_rule=tie_rule, policy=policy, seed=seed, compared=comparisons)
    return transfers, human_estimands(comparisons, policy.level)


def assess_compared(
    cells: Cells,
    compared: Sequence[Sequence[CellComparison]],
    *,
    tie_rule: TieRule,
    policy: TransferPolicy,
    seed: int,
) -> list[tuple[Transfer, dict]]:
    """:func:`~judge_transfer_audit.verdict.assess.assess_transfers` of ``cells`` from their chunks'
    :func:`compare_chunk`."""
    transfers, estimands = decide_compared(_Inputs(cells), compared, tie_rule=tie_rule, policy=policy, seed=seed)
    return list(zip(transfers, estimands))


def assess_in_chunks(
    cells: Cells, *, tie_rule: TieRule, policy: TransferPolicy, seed: int
) -> list[tuple[Transfer, dict]]:
    """:func:`assess_compared` on every chunk's :func:`compare_chunk`, in this process (the tests' path)."""
    cells = list(cells)
    compared = [
        compare_chunk([cells[i] for i in chunk], tie_rule=tie_rule, policy=policy, seed=seed)
        for chunk in chunks(len(cells))
    ]
    return assess_compared(cells, compared, tie_rule=tie_rule, policy=policy, seed=seed)


__all__ = [
    "CHUNK_CELLS",
    "assess_compared",
    "assess_in_chunks",
    "chunks",
    "compare_chunk",
    "compare_frozen",
    "decide_compared",
    "frozen",
]
