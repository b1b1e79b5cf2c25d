"""One cell's compared pairs as pair x reader tables of credited votes, plus the judge's credits.

The compared pairs of a cell are those with at least one credited human vote and a valid
judge credit (under the run's tie rule: a tie excluded by ``decisive`` is not credited, on
either side). On them
the humans' votes are credited with the *same* tie rule object as the judge's
(:mod:`audit.tie_rules`), so both sides are rates of the same kind. Pairs and readers are
indexed in sorted order of their ids, so nothing depends on the row order of the input.

The tables are sparse (``scipy.sparse``, pairs x readers): a bootstrap replicate's per-pair
sums are one sparse-times-dense product, O(votes) per replicate whatever the design.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from audit.ids import ranks as _ranks
from audit.tie_rules import credit_ties

if TYPE_CHECKING:
    from scipy import sparse


@dataclass(frozen=True, eq=False)
class ComparisonTable:
    """The compared pairs of one cell (internal; not a result)."""

    pairs: tuple[str, ...]
    readers: tuple[str, ...]
    C: sparse.csr_matrix  #: summed credits, pairs x readers
    Q: sparse.csr_matrix  #: summed squared credits
    N: sparse.csr_matrix  #: credited votes (a tie excluded by the rule is not counted)
    judge: np.ndarray  #: the judge's credit per compared pair
    n_votes: int  #: human votes on the compared pairs (ties included)
    n_ties: int  #: human tie votes on the compared pairs
    n_human_pairs: int  #: pairs of the cell with at least one human vote
    n_judge_missing: int  #: of those, pairs not compared (no valid judge credit, or only excluded tie votes)

    @property
    def n_pairs(self) -> int:
        return len(self.pairs)

    @property
    def n_readers(self) -> int:
        return len(self.readers)

    def pair_sums(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per-pair credit, squared-credit and count sums over every reader."""
        return (np.asarray(self.C.sum(1)).ravel(), np.asarray(self.Q.sum(1)).ravel(), np.asarray(self.N.sum(1)).ravel())

    def readers_per_pair(self) -> float:
        """Mean number of credited votes per compared pair."""
        n = np.asarray(self.N.sum(1)).ravel()
        return float(n.mean()) if n.size else float("nan")


def human_credits(y: np.ndarray, tie_rule: str, rng: np.random.Generator) -> np.ndarray:
    """Credits of human votes (1 focal, 0 other, NaN tie) under the judge's tie rule."""
    y = np.asarray(y, float)
    outcome = np.where(np.isnan(y), "tie", np.where(y == 1.0, "win", "loss")).astype(object)
    return credit_ties(outcome, tie_rule, rng)


def comparison_table(
    pair_id: np.ndarray,
    reader_id: np.ndarray,
    y: np.ndarray,
    judge_pairs: np.ndarray,
    judge_credit: np.ndarray,
    *,
    tie_rule: str,
    rng: np.random.Generator,
) -> ComparisonTable:
    """Build the compared pairs of one cell.

    Parameters
    ----------
    pair_id, reader_id, y : arrays, one entry per human vote of the cell
        ``y`` is 1 (focal), 0 (other) or NaN (tie).
    judge_pairs, judge_credit : arrays, one entry per judged pair
        The judge's credit per pair under the tie rule (NaN = invalid or excluded tie).
    tie_rule : str
        The run's tie rule; human ties are credited by the same rule object.
    rng : Generator
        For a random tie rule (seeded per cell by the caller).
    """
    from scipy import sparse

    # ids as their ranks among the cell's sorted distinct ids (hashed once per vote, sorted once per
    # distinct id): every sort and lookup below is on integers, in the order of the id strings
    pair_names, pair_rank = _ranks(pair_id)
    reader_names, reader_rank = _ranks(reader_id)
    y = np.asarray(y, float)
    # sort by (pair, reader) first so that a random tie rule draws in a row-order-free order
    order = np.lexsort((reader_rank, pair_rank))
    pair_rank, reader_rank, y = pair_rank[order], reader_rank[order], y[order]
    credit = human_credits(y, tie_rule, rng)
    jp = np.asarray(judge_pairs).astype(str)
    jc = np.asarray(judge_credit, float)
    valid = np.isfinite(jc)
    jp, jc = jp[valid], jc[valid]
    if np.unique(jp).size != jp.size:
        raise ValueError("judge credits must have one row per pair")
    judged = np.zeros(len(pair_names), dtype=bool)
    at = np.searchsorted(pair_names, jp)
    found = at < len(pair_names)
    found[found] = pair_names[at[found]] == jp[found]
    judged[at[found]] = True
    credited = np.zeros(len(pair_names), dtype=bool)
    credited[pair_rank[~np.isnan(credit)]] = True
    keep = judged[pair_rank] & credited[pair_rank]
    pair_codes, pi = np.unique(pair_rank[keep], return_inverse=True)
    reader_codes, ri = np.unique(reader_rank[keep], return_inverse=True)
    pairs, readers = pair_names[pair_codes], reader_names[reader_codes]
    human_pairs = pair_names
    c = credit[keep]
    counted = ~np.isnan(c)
    shape = (len(pairs), len(readers))

    def table(values: np.ndarray) -> sparse.csr_matrix:
        return sparse.csr_matrix((values[counted], (pi[counted], ri[counted])), shape=shape)

    ties = np.isnan(y[keep])
    return ComparisonTable(
        pairs=tuple(str(p) for p in pairs),
        readers=tuple(str(r) for r in readers),
        C=table(c),
        Q=table(c * c),
        N=table(np.ones_like(c)),
        judge=jc[np.argsort(jp)][np.searchsorted(np.sort(jp), pairs)] if len(pairs) else np.zeros(0),
        n_votes=int(keep.sum()),
        n_ties=int(ties.sum()),
        n_human_pairs=int(human_pairs.size),
        n_judge_missing=int(human_pairs.size - len(pairs)),
    )


__all__ = ["ComparisonTable", "comparison_table", "human_credits"]
