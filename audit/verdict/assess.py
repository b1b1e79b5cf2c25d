"""The verdict's entry point: every cell compared, then decided together.

:func:`assess_transfers` is what :func:`judge_transfer_audit.engine.pipeline.assess_cells` calls: per cell
:func:`~judge_transfer_audit.verdict.compare.compare_cell` (its own seeded stream, keyed by the cell),
then :func:`~judge_transfer_audit.verdict.decision.decide` across cells (the multiplicity adjustment needs
them all). Sequential Monte Carlo: a cell whose FAIL p-value lies within two Monte Carlo standard
errors of its adjusted level, or whose equivalence p-value lies within two of alpha
(``Transfer.monte_carlo_borderline``, ``monte_carlo_borderline_test`` says which), is re-run on
``SEQUENTIAL_FACTOR`` times the replicates (a stream keyed by the cell and the new count) and
the family decided again, at most ``SEQUENTIAL_ROUNDS`` times; a cell still borderline then
says so in its reason and JSON. It also returns the human estimands (vote share, majority rate) that go on the
cell's :class:`~judge_transfer_audit.results.result.HumanSide`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from judge_transfer_audit.model.cells import Interval, Transfer
from judge_transfer_audit.model.policy import TransferPolicy
from judge_transfer_audit.model.tie_rules import TieRule
from judge_transfer_audit.statistics.prediction_powered.compute import human_majority_rate
from judge_transfer_audit.verdict.compare import (
    CellComparison,
    PreparedCell,
    canonical_cell,
    cell_generator,
    compare_cell,
    compare_cells,
    prepare_cell,
)
from judge_transfer_audit.verdict.decision import decide as decide_family
from judge_transfer_audit.verdict.hierarchy import group_of, group_pools
from judge_transfer_audit.verdict.stacked import materialize, prefetch


def human_estimands(comparisons: Sequence[CellComparison], level: float) -> list[dict]:
    """:func:`_human_estimands` of every cell, their intervals computed at once
    (:mod:`judge_transfer_audit.verdict.stacked`)."""
    a = (1.0 - level) / 2.0
    boots = [c.boot for c in comparisons if c.boot is not None]
    materialize((b, k) for b in boots for k in ("vote_share", "majority_rate"))
    prefetch(intervals=[(b[k], a) for b in boots for k in ("vote_share", "majority_rate")])
    return [_human_estimands(c, level) for c in comparisons]


def _human_estimands(c: CellComparison, level: float) -> dict:
    out = {"n_pairs_compared": c.table.n_pairs if c.table is not None else 0}
    if c.boot is None:
        return out
    out["vote_share"] = c.interval("vote_share", level)
    out["majority_rate"] = majority_rate(c, level)
    out["between_pair_sd"] = float(c.boot.between_pair_sd)
    return out


def majority_rate(c: CellComparison, level: float) -> Interval:
    """The readers' majority rate and its interval: the estimate the decision's band is drawn with, the
    interval the profile interval over the vote share and the between-pair variance
    (:func:`~judge_transfer_audit.statistics.prediction_powered.compute.human_majority_rate`), widened to hold the
    estimate; the bootstrap's percentile interval where the profile one is not defined.

    The percentile interval of the bootstrap's ``M`` under-covers where ``M`` is near 0 or 1 (a variance's
    skewed, bounded error, mapped through a steep ``M``): 83-86% at 20 pairs x 12 readers and ``M`` = 0.885
    (docs/audit.md 4.1, "M's interval as shown"); the decision reads the intervals of ``J - M`` and of the band
    distance, which cover (the calibration study), not this one.
    """
    boot = c.interval("majority_rate", level)
    t = c.table
    if c.vote_share_only or t is None:
        return boot
    got = human_majority_rate(t.credit, t.pair_index, t.reader_index, level)
    if got is None or not (math.isfinite(got[1]) and math.isfinite(got[2])):
        return boot
    low, high = (1.0 - got[2], 1.0 - got[1]) if c.flipped else (got[1], got[2])
    return Interval(boot.estimate, min(low, boot.estimate), max(high, boot.estimate), level)


SEQUENTIAL_FACTOR = 4  #: a Monte Carlo borderline cell is re-run with this many times the replicates ...
SEQUENTIAL_ROUNDS = 2  #: ... at most this many times (999 -> 3,996 -> 15,984 by default)


def _stream_key(matchup: str, criterion: str, votes: pd.DataFrame) -> tuple[tuple[str, ...], float]:
    """The cell's orientation-free stream key (:func:`~judge_transfer_audit.verdict.compare.canonical_cell`).

    From the votes' ``focal`` and ``other`` columns (one focal per matchup once the data are
    oriented); a frame without them is keyed by its matchup label, as oriented.
    """
    columns = votes.columns
    if "focal" in columns and "other" in columns and len(votes):
        focal, other = votes.iat[0, columns.get_loc("focal")], votes.iat[0, columns.get_loc("other")]
        return canonical_cell(str(focal), str(other), criterion)
    return (str(matchup), str(criterion)), 1.0


@dataclass(frozen=True)
class CellInput:
    """One cell's arrays for the verdict: its stream key and orientation, the human votes, the judge's credits.

    ``judge_pairs`` / ``judge_credit`` are None when the judge has no outputs for the criterion.
    """

    key: tuple[str, ...]
    orientation: float
    pair_id: np.ndarray
    reader_id: np.ndarray
    y: np.ndarray
    judge_pairs: np.ndarray | None = None
    judge_credit: np.ndarray | None = None
    group: tuple[str, ...] | None = None  #: the cell's matchup (cells of one matchup share pairs); None: its own

    @property
    def systems(self) -> tuple[str, str] | None:
        """The cell's (focal, other) system names, from its key and orientation; None for a key that
        does not name them (a frame without ``focal`` and ``other`` columns)."""
        if len(self.key) != 3:
            return None
        first, second = self.key[0], self.key[1]
        return (first, second) if self.orientation > 0 else (second, first)

    def with_judge(self, judge_pairs: np.ndarray | None, judge_credit: np.ndarray | None) -> CellInput:
        """The same human side with another judge's credits (the judge configurations)."""
        return replace(self, judge_pairs=judge_pairs, judge_credit=judge_credit)


def compare_input(
    c: CellInput,
    *,
    tie_rule: TieRule,
    policy: TransferPolicy,
    rng: np.random.Generator,
    n_boot: int | None = None,
    **kw,
) -> CellComparison:
    """:func:`~judge_transfer_audit.verdict.compare.compare_cell` on one :class:`CellInput` (its arrays and
    orientation); ``kw`` passes ``bootstrap=`` through."""
    return compare_cell(
        c.pair_id,
        c.reader_id,
        c.y,
        c.judge_pairs,
        c.judge_credit,
        tie_rule=tie_rule,
        policy=policy,
        rng=rng,
        orientation=c.orientation,
        n_boot=n_boot,
        **kw,
    )


def cell_input(matchup: str, criterion: str, votes: pd.DataFrame, judge: pd.DataFrame | None) -> CellInput:
    """A :class:`CellInput` from the cell's votes (``pair_id``, ``reader_id``, ``y``) and judge outcomes."""
    key, orientation = _stream_key(matchup, criterion, votes)
    return CellInput(
        key=key,
        group=group_of(key),
        orientation=orientation,
        pair_id=votes["pair_id"].to_numpy(),
        reader_id=votes["reader_id"].to_numpy(),
        y=votes["y"].to_numpy(float),
        judge_pairs=None if judge is None else judge["pair_id"].to_numpy(),
        judge_credit=None if judge is None else _floats(judge["credit"]),
    )


def _floats(column: pd.Series) -> np.ndarray:
    """``pd.to_numeric(column, errors="coerce")`` as floats (a float column as it is: the same numbers)."""
    if column.dtype.kind == "f":
        return column.to_numpy(float)
    return pd.to_numeric(column, errors="coerce").to_numpy(float)


def prepare_input(c: CellInput, *, tie_rule: TieRule, policy: TransferPolicy, rng: np.random.Generator) -> PreparedCell:
    """:func:`~judge_transfer_audit.verdict.compare.prepare_cell` on one :class:`CellInput`."""
    return prepare_cell(
        c.pair_id,
        c.reader_id,
        c.y,
        c.judge_pairs,
        c.judge_credit,
        tie_rule=tie_rule,
        policy=policy,
        rng=rng,
        orientation=c.orientation,
    )


def compare_inputs(
    inputs: Sequence[CellInput],
    indices: Sequence[int],
    *,
    tie_rule: TieRule,
    policy: TransferPolicy,
    seed: int,
    n_boot: int | None = None,
    bootstrap: Callable[[list[int], list, int, list], list] | None = None,
) -> list[CellComparison]:
    """The comparisons of the cells ``indices`` of ``inputs`` (one round of :func:`decide_cells`): each on its
    own stream (keyed by the cell, and by ``n_boot`` when the sequential Monte Carlo sets it)."""
    rngs = [
        cell_generator(seed, *inputs[i].key)
        if n_boot is None
        else cell_generator(seed, *inputs[i].key, f"n_boot={n_boot}")
        for i in indices
    ]
    prepared = [prepare_input(inputs[i], tie_rule=tie_rule, policy=policy, rng=r) for i, r in zip(indices, rngs)]
    hook = None
    if bootstrap is not None:

        def hook(need, tables, replicates, streams):
            return bootstrap([indices[k] for k in need], tables, replicates, streams)

    replicates = policy.n_boot if n_boot is None else int(n_boot)
    return compare_cells(prepared, replicates, rngs, hook)


def decide_cells(
    inputs: Sequence[CellInput],
    *,
    tie_rule: TieRule,
    policy: TransferPolicy,
    seed: int,
    bootstrap: Callable[[list[int], list, int, list], list] | None = None,
    compared: Sequence[CellComparison] | None = None,
    pooled: Callable | None = None,
) -> tuple[list[Transfer], list[CellComparison]]:
    """Compare every cell on its own stream, decide them together, re-run the borderline ones (module doc).

    The cells' bootstraps are made in one call per round (same-shape cells stacked:
    :func:`~judge_transfer_audit.verdict.compare.stacked_bootstraps`; each cell's numbers are those of its own
    :func:`~judge_transfer_audit.verdict.compare.compare_cell` call). ``bootstrap(cells, tables, replicates, rngs)``,
    when given, makes them instead (``cells``: indices into ``inputs``): the judge configurations share
    one bootstrap per cell (:mod:`judge_transfer_audit.verdict.batched`). ``compared``: the first round's comparisons,
    made
    beforehand (:mod:`judge_transfer_audit.verdict.chunked`: chunks of cells on workers); ``inputs`` is then read only
    for the cells re-run by the sequential Monte Carlo. ``pooled``: the matchups' pooled p-values
    (:func:`~judge_transfer_audit.verdict.hierarchy.group_pools`'s hook, shared the same way).
    """

    def compare(indices: list[int], n_boot: int | None = None) -> list[CellComparison]:
        return compare_inputs(
            inputs, indices, tie_rule=tie_rule, policy=policy, seed=seed, n_boot=n_boot, bootstrap=bootstrap
        )

    comparisons = list(compared) if compared is not None else compare(list(range(len(inputs))))
    groups = [c.group if (c.group is not None and policy.pool_criteria) else ("cell", *c.key) for c in inputs]
    # the matchups' joint bootstraps read the compared tables only, which the re-runs below do not change
    pools = group_pools(comparisons, groups, policy, seed, pooled) if comparisons else {}

    def decide(comparisons):
        return decide_family(comparisons, policy, groups, pools, [c.systems for c in inputs])

    transfers = decide(comparisons) if comparisons else []
    n_boot, extended = policy.n_boot, {}
    for _ in range(SEQUENTIAL_ROUNDS):
        near = [i for i, t in enumerate(transfers) if t.monte_carlo_borderline]
        if not near:
            break
        n_boot *= SEQUENTIAL_FACTOR
        for i, c in zip(near, compare(near, n_boot)):
            comparisons[i] = c
            extended.setdefault(i, transfers[i].monte_carlo_borderline_test)
        transfers = decide(comparisons)
    for i, test in extended.items():
        t = transfers[i]
        transfers[i] = replace(
            t,
            reason=t.reason + f"; decided on {t.n_boot:,} bootstrap replicates (sequential Monte Carlo: at "
            f"{policy.n_boot:,} {_WITHIN[test] if test in _WITHIN else _WITHIN['FAIL, PASS']})",
        )
    return transfers, comparisons


_WITHIN = {
    "FAIL": "its FAIL p-value was within two Monte Carlo standard errors of its adjusted level",
    "PASS": "its equivalence p-value was within two Monte Carlo standard errors of alpha",
    "FAIL, PASS": "its FAIL and equivalence p-values were within two Monte Carlo standard errors of their levels",
}


def assess_transfers(
    cells: Sequence[tuple[str, str, pd.DataFrame, pd.DataFrame | None]],
    *,
    tie_rule: TieRule,
    policy: TransferPolicy,
    seed: int,
) -> list[tuple[Transfer, dict]]:
    """Decide every cell.

    ``cells``: ``(matchup, criterion, votes, judge)`` with the cell's human votes (``pair_id``,
    ``reader_id``, ``y``) and the primary judge's per-pair outcomes (``pair_id``, ``credit``;
    None when the judge has no outputs for the criterion).
    """
    inputs = [cell_input(*cell) for cell in cells]
    transfers, comparisons = decide_cells(inputs, tie_rule=tie_rule, policy=policy, seed=seed)
    return list(zip(transfers, human_estimands(comparisons, policy.level)))


__all__ = [
    "SEQUENTIAL_FACTOR",
    "SEQUENTIAL_ROUNDS",
    "CellInput",
    "assess_transfers",
    "cell_input",
    "compare_input",
    "compare_inputs",
    "decide_cells",
    "prepare_input",
]
