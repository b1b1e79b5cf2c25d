"""The verdict's entry point: every cell compared, then decided together.

:func:`assess_transfers` is what :func:`audit.pipeline.assess_cells` calls: per cell
:func:`~audit.verdict.compare.compare_cell` (its own seeded stream, keyed by the cell),
then :func:`~audit.verdict.decision.decide` across cells (the multiplicity adjustment needs
them all). It also returns the human estimands (vote share, majority rate) that go on the
cell's :class:`~audit.result.HumanSide`.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from audit.policy import TransferPolicy
from audit.result import Transfer
from audit.verdict.compare import CellComparison, canonical_cell, cell_generator, compare_cell
from audit.verdict.decision import decide


def _human_estimands(c: CellComparison, level: float) -> dict:
    out = {"n_pairs_compared": c.table.n_pairs if c.table is not None else 0}
    if c.boot is None:
        return out
    out["vote_share"] = c.interval("vote_share", level)
    out["majority_rate"] = c.interval("majority_rate", level)
    out["between_pair_sd"] = float(c.boot.between_pair_sd)
    return out


def _stream_key(matchup: str, criterion: str, votes: pd.DataFrame) -> tuple[tuple[str, ...], float]:
    """The cell's orientation-free stream key (:func:`~audit.verdict.compare.canonical_cell`).

    From the votes' ``focal`` and ``other`` columns (one focal per matchup once the data are
    oriented); a frame without them is keyed by its matchup label, as oriented.
    """
    if {"focal", "other"} <= set(votes.columns) and len(votes):
        focal, other = votes["focal"].iloc[0], votes["other"].iloc[0]
        return canonical_cell(str(focal), str(other), criterion)
    return (str(matchup), str(criterion)), 1.0


def assess_transfers(
    cells: Sequence[tuple[str, str, pd.DataFrame, pd.DataFrame | None]],
    *,
    tie_rule: str,
    policy: TransferPolicy,
    seed: int,
) -> list[tuple[Transfer, dict]]:
    """Decide every cell.

    ``cells``: ``(matchup, criterion, votes, judge)`` with the cell's human votes (``pair_id``,
    ``reader_id``, ``y``) and the primary judge's per-pair outcomes (``pair_id``, ``credit``;
    None when the judge has no outputs for the criterion).
    """
    comparisons = []
    for matchup, criterion, votes, judge in cells:
        key, orientation = _stream_key(matchup, criterion, votes)
        rng = cell_generator(seed, *key)
        jp = None if judge is None else judge["pair_id"].to_numpy()
        jc = None if judge is None else pd.to_numeric(judge["credit"], errors="coerce").to_numpy(float)
        comparisons.append(
            compare_cell(
                votes["pair_id"].to_numpy(),
                votes["reader_id"].to_numpy(),
                votes["y"].to_numpy(float),
                jp,
                jc,
                tie_rule=tie_rule,
                policy=policy,
                rng=rng,
                orientation=orientation,
            )
        )
    transfers = decide(comparisons, policy)
    return [(t, _human_estimands(c, policy.level)) for t, c in zip(transfers, comparisons)]


__all__ = ["assess_transfers"]
