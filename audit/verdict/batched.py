"""One paired bootstrap per cell shared by every judge configuration.

The judge configurations of a study differ only in the judge's credits: the human votes, the
cell's stream (keyed by the cell, :func:`~judge_transfer_audit.verdict.compare.cell_generator`) and so the pair
draws, reader draws and reader shifts of its paired bootstrap are the same for every
configuration whose valid outputs cover the same pairs. :func:`decide_configurations` decides
each configuration's cells through the one path (:func:`~judge_transfer_audit.verdict.assess.decide_cells`,
its own multiplicity family and sequential re-runs), but the first configuration that asks
for a cell's bootstrap at some replicate count gets it for every configuration with the same
compared pairs at once (:func:`~judge_transfer_audit.verdict.paired_bootstrap.bootstrap_judges`, the humans'
replicates computed once); the others read theirs from the store. Each configuration's
numbers are those of its own unbatched run, bit for bit: the same draws, and a judge's rate is
one matrix-vector product per judge whatever it is batched with (tests/audit/verdict/test_batched.py).
A configuration whose compared table differs (other invalid outputs) is bootstrapped on its own.
The matchups' joint bootstraps behind the pooled tests (:func:`~judge_transfer_audit.verdict.hierarchy.group_pools`)
are shared the same way: the first configuration to pool a matchup computes the pooled p-values of every
configuration whose cells of that matchup have the same compared pairs and human votes, on the one joint
draw (:func:`~judge_transfer_audit.verdict.hierarchy.pooled_judges`); the others read theirs after checking
that their tables, credits and stream are those it was computed for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from judge_transfer_audit.model.cells import Transfer
from judge_transfer_audit.model.policy import TransferPolicy
from judge_transfer_audit.model.tie_rules import TieRule
from judge_transfer_audit.verdict.assess import CellInput, cell_input, decide_cells, human_estimands
from judge_transfer_audit.verdict.compare import CellComparison
from judge_transfer_audit.verdict.hierarchy import pooled_judges
from judge_transfer_audit.verdict.paired_bootstrap import CellBootstrap
from judge_transfer_audit.verdict.stacked_bootstrap import bootstrap_cells
from judge_transfer_audit.verdict.tables import ComparisonTable


def _judged(c: CellInput) -> np.ndarray | None:
    """The sorted pairs with a valid credit of the cell's judge (None: no outputs)."""
    if c.judge_pairs is None:
        return None
    jp = np.asarray(c.judge_pairs).astype(str)
    return np.unique(jp[np.isfinite(np.asarray(c.judge_credit, float))])


def _same_humans(a: CellInput, b: CellInput) -> bool:
    """Whether two judges' inputs of a cell have the same human side (shared arrays, or equal ones)."""

    def same(x, y) -> bool:
        return x is y or (len(x) == len(y) and bool(np.all(np.asarray(x) == np.asarray(y))))

    if a.key != b.key or a.orientation != b.orientation:
        return False
    return same(a.pair_id, b.pair_id) and same(a.reader_id, b.reader_id) and np.array_equal(a.y, b.y, equal_nan=True)


def _credits_on(c: CellInput, pairs: tuple[str, ...]) -> np.ndarray:
    """The judge's credit on ``pairs`` in the cell's canonical orientation (as the table holds it)."""
    jp = np.asarray(c.judge_pairs).astype(str)
    jc = np.asarray(c.judge_credit, float)
    if c.orientation < 0:
        jc = 1.0 - jc
    ok = np.isfinite(jc)
    jp, jc = jp[ok], jc[ok]
    order = np.argsort(jp)
    return jc[order][np.searchsorted(jp[order], np.asarray(pairs, dtype=str))]


class SharedBootstraps:
    """The store of one study's batched cell bootstraps (see the module doc; internal)."""

    def __init__(self, inputs_by_judge: Mapping[str, Sequence[CellInput]]):
        self._inputs = {j: list(v) for j, v in inputs_by_judge.items()}
        self._judged = {j: [_judged(c) for c in v] for j, v in self._inputs.items()}
        #: (judge, cell, replicates) -> (table it was computed on, the judge's row, its bootstrap)
        self._store: dict[tuple[str, int, int], tuple[ComparisonTable, np.ndarray, CellBootstrap]] = {}
        self.n_bootstraps = 0  #: batched bootstrap calls made (for the tests and the profile)
        #: (judge, cells, replicates, margin) -> (tables, the judge's rows, stream state, pooled p-values)
        self._pools: dict[tuple, tuple[list[ComparisonTable], list[np.ndarray], dict, dict[int, float]]] = {}
        self.n_pools = 0  #: joint bootstraps of matchups made (for the tests)

    def _shares(self, judge: str, other: str, index: int) -> bool:
        """Whether ``other``'s cell ``index`` has the same judged pairs and human votes as ``judge``'s."""
        inputs = self._inputs[other]
        if index >= len(inputs):
            return False
        judged, theirs = self._judged[judge][index], self._judged[other][index]
        if judged is None or theirs is None or theirs.shape != judged.shape or not np.array_equal(theirs, judged):
            return False
        return _same_humans(inputs[index], self._inputs[judge][index])

    def _mates(self, judge: str, index: int, replicates: int) -> list[str]:
        return [
            other
            for other in self._inputs
            if other != judge and (other, index, replicates) not in self._store and self._shares(judge, other, index)
        ]

    def pools_for_judge(self, judge: str):
        """``decide_cells``'s ``pooled`` hook for ``judge``: ``(cells, tables, n_boot, margin, rng) -> pooled p``."""

        def run(cells, tables, n_boot: int, margin: float, rng) -> dict[int, float]:
            key = (tuple(cells), int(n_boot), float(margin))
            state = rng.bit_generator.state
            stored = self._pools.pop((judge, *key), None)
            if stored is not None:
                s_tables, rows, s_state, p = stored
                if (
                    s_state == state
                    and len(s_tables) == len(tables)
                    and all(a.same_votes(b) and np.array_equal(r, b.judge) for a, r, b in zip(s_tables, rows, tables))
                ):
                    return p
            mates = [
                m
                for m in self._inputs
                if m != judge and (m, *key) not in self._pools and all(self._shares(judge, m, i) for i in cells)
            ]
            judges = [
                np.vstack([np.asarray(t.judge, float)] + [_credits_on(self._inputs[m][i], t.pairs) for m in mates])
                for i, t in zip(cells, tables)
            ]
            pooled = pooled_judges(tables, judges, n_boot, margin, rng)
            self.n_pools += 1
            for k, m in enumerate(mates, 1):
                self._pools[(m, *key)] = (tables, [rows[k] for rows in judges], state, pooled[k])
            return pooled[0]

        return run

    def for_judge(self, judge: str):
        """``decide_cells``'s ``bootstrap`` hook for ``judge``: ``(cells, tables, replicates, rngs) -> bootstraps``."""

        def run(indices, tables, replicates: int, rngs) -> list[CellBootstrap]:
            replicates = int(replicates)
            out: list[CellBootstrap | None] = [None] * len(indices)
            jobs = []  # (position, mates, judge rows) of the cells to bootstrap now
            for k, (index, table) in enumerate(zip(indices, tables)):
                stored = self._store.pop((judge, index, replicates), None)
                if stored is not None:
                    t, row, boot = stored
                    if t.same_votes(table) and np.array_equal(row, table.judge):
                        out[k] = boot
                        continue
                shared = self._judged[judge][index] is not None  # no outputs: the humans only, not shared
                mates = self._mates(judge, index, replicates) if shared else []
                rows = [np.asarray(table.judge, float)] + [
                    _credits_on(self._inputs[m][index], table.pairs) for m in mates
                ]
                jobs.append((k, shared, mates, rows))
            boots = bootstrap_cells(
                [tables[k] for k, *_ in jobs],
                [np.vstack(rows) for *_, rows in jobs],
                replicates,
                [rngs[k] for k, *_ in jobs],
            )
            for (k, shared, mates, rows), boot in zip(jobs, boots):
                self.n_bootstraps += shared
                for m, row, b in zip(mates, rows[1:], boot[1:]):
                    self._store[(m, indices[k], replicates)] = (tables[k], row, b)
                out[k] = boot[0]
            return out  # type: ignore[return-value]

        return run


def decide_configurations(
    inputs_by_judge: Mapping[str, Sequence[CellInput]], *, tie_rule: TieRule, policy: TransferPolicy, seed: int
) -> dict[str, tuple[list[Transfer], list[CellComparison]]]:
    """:func:`~judge_transfer_audit.verdict.assess.decide_cells` for every judge, one bootstrap per cell shared (module
    doc)."""
    shared = SharedBootstraps(inputs_by_judge)
    return {
        judge: decide_cells(
            inputs,
            tie_rule=tie_rule,
            policy=policy,
            seed=seed,
            bootstrap=shared.for_judge(judge),
            pooled=shared.pools_for_judge(judge),
        )
        for judge, inputs in inputs_by_judge.items()
    }


def assess_transfers_with_configurations(
    cells: Sequence[tuple[str, str, pd.DataFrame, pd.DataFrame | None]],
    configurations: Mapping[str, Sequence[CellInput]],
    *,
    tie_rule: TieRule,
    policy: TransferPolicy,
    seed: int,
) -> tuple[list[tuple[Transfer, dict]], dict[str, list[Transfer]]]:
    """:func:`~judge_transfer_audit.verdict.assess.assess_transfers`, and every other judge configuration's cells
    (``configurations``: judge -> its cell inputs) decided beside it on the same cell bootstraps
    (:func:`decide_configurations`, the primary judge first): each judge's decisions are those of
    its own run, bit for bit; the pair draws are made once per cell."""
    primary = object()  # a key no configuration can have
    inputs = {primary: [cell_input(*cell) for cell in cells], **configurations}
    decided = decide_configurations(inputs, tie_rule=tie_rule, policy=policy, seed=seed)
    transfers, comparisons = decided.pop(primary)
    own = list(zip(transfers, human_estimands(comparisons, policy.level)))
    return own, {judge: t for judge, (t, _) in decided.items()}


__all__ = ["SharedBootstraps", "assess_transfers_with_configurations", "decide_configurations"]
