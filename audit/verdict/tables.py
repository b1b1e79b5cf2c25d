"""One cell's compared pairs as pair x reader tables of credited votes, plus the judge's credits.

The compared pairs of a cell are those with at least one credited human vote and a valid
judge credit (under the run's tie rule: a tie excluded by ``decisive`` is not credited, on
either side). On them
the humans' votes are credited with the *same* tie rule object as the judge's
(:mod:`judge_transfer_audit.model.tie_rules`), so both sides are rates of the same kind. Pairs and readers are
indexed in sorted order of their ids, so nothing depends on the row order of the input.

The tables are sparse (``scipy.sparse``, pairs x readers): a bootstrap replicate's per-pair
sums are one sparse-times-dense product, O(votes) per replicate whatever the design.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from judge_transfer_audit.core.ids import ranks as _ranks
from judge_transfer_audit.model.tie_rules import TieRule, credit_ties

if TYPE_CHECKING:
    from scipy import sparse


@dataclass(frozen=True, eq=False)
class ComparisonTable:
    """The compared pairs of one cell (internal; not a result).

    The credited votes are kept as arrays (pair and reader index, credit; sorted by pair, then
    reader); the sparse tables ``C``, ``Q``, ``N`` are built from them when first read. The per-pair
    sums and the dense tables the stacked bootstrap reads are computed from the arrays directly when
    no reader has two credited votes on one pair (the same sums ``scipy.sparse`` makes: the row
    segments of its data array, reduced by ``np.add.reduceat``), else from the sparse tables.
    """

    pairs: tuple[str, ...]
    readers: tuple[str, ...]
    pair_index: np.ndarray  #: per credited vote, its pair's index in ``pairs`` (non-decreasing)
    reader_index: np.ndarray  #: per credited vote, its reader's index in ``readers`` (increasing within a pair)
    credit: np.ndarray  #: per credited vote, its credit (a tie excluded by the rule is not a credited vote)
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

    def _table(self, values: np.ndarray) -> sparse.csr_matrix:
        from scipy import sparse

        shape = (self.n_pairs, self.n_readers)
        return sparse.csr_matrix((values, (self.pair_index, self.reader_index)), shape=shape)

    @cached_property
    def C(self) -> sparse.csr_matrix:
        """Summed credits, pairs x readers."""
        return self._table(self.credit)

    @cached_property
    def Q(self) -> sparse.csr_matrix:
        """Summed squared credits."""
        return self._table(self.credit * self.credit)

    @cached_property
    def N(self) -> sparse.csr_matrix:
        """Credited votes (a tie excluded by the rule is not counted)."""
        return self._table(np.ones_like(self.credit))

    @cached_property
    def one_vote_per_reader(self) -> bool:
        """Whether no reader has two credited votes on one pair (each table entry is one vote)."""
        p, r = self.pair_index, self.reader_index
        return not bool(np.any((p[1:] == p[:-1]) & (r[1:] == r[:-1])))

    def pair_sums(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per-pair credit, squared-credit and count sums over every reader."""
        if not self.one_vote_per_reader:
            return (
                np.asarray(self.C.sum(1)).ravel(),
                np.asarray(self.Q.sum(1)).ravel(),
                np.asarray(self.N.sum(1)).ravel(),
            )
        c = self.credit
        return self._row_sums(c), self._row_sums(c * c), self._row_sums(np.ones_like(c))

    def _row_sums(self, values: np.ndarray) -> np.ndarray:
        # what csr_matrix.sum(1) computes on this table: each row's stored values reduced by np.add.reduceat
        out = np.zeros(self.n_pairs)
        if values.size:
            rows = np.flatnonzero(np.diff(self.pair_index, prepend=-1))
            out[self.pair_index[rows]] = np.add.reduceat(values, rows)
        return out

    def dense(self) -> tuple[np.ndarray, np.ndarray]:
        """``C`` and ``N`` as dense pairs x readers arrays."""
        if not self.one_vote_per_reader:
            return self.C.toarray(), self.N.toarray()
        c, n = np.zeros((self.n_pairs, self.n_readers)), np.zeros((self.n_pairs, self.n_readers))
        c[self.pair_index, self.reader_index] = self.credit
        n[self.pair_index, self.reader_index] = 1.0
        return c, n

    def same_votes(self, other: ComparisonTable) -> bool:
        """Whether ``other`` has the same pairs, readers and credited votes."""
        return (
            self.pairs == other.pairs
            and self.readers == other.readers
            and np.array_equal(self.pair_index, other.pair_index)
            and np.array_equal(self.reader_index, other.reader_index)
            and np.array_equal(self.credit, other.credit)
        )

    def readers_per_pair(self) -> float:
        """Mean number of credited votes per compared pair."""
        n = self.pair_sums()[2]
        return float(n.mean()) if n.size else float("nan")


def human_credits(y: np.ndarray, tie_rule: TieRule, rng: np.random.Generator) -> np.ndarray:
    """Credits of human votes (1 focal, 0 other, NaN tie) under the judge's tie rule."""
    y = np.asarray(y, float)
    outcome = np.where(np.isnan(y), "tie", np.where(y == 1.0, "win", "loss")).astype(object)
    return credit_ties(outcome, tie_rule, rng)


@dataclass(frozen=True)
class CommonVotes:
    """The votes of a cell on pairs with a valid judge credit, before the tie rule (internal)."""

    n_pairs: int  #: pairs with a human vote and a valid judge credit
    n_readers: int  #: readers with a vote on them
    all_ties: bool  #: there are such votes and every one is a tie


def comparison_table(
    pair_id: np.ndarray,
    reader_id: np.ndarray,
    y: np.ndarray,
    judge_pairs: np.ndarray,
    judge_credit: np.ndarray,
    *,
    tie_rule: TieRule,
    rng: np.random.Generator,
) -> ComparisonTable:
    """Build the compared pairs of one cell.

    Parameters
    ----------
    pair_id, reader_id, y : arrays, one entry per human vote of the cell
        ``y`` is 1 (focal), 0 (other) or NaN (tie).
    judge_pairs, judge_credit : arrays, one entry per judged pair
        The judge's credit per pair under the tie rule (NaN = invalid or excluded tie).
    tie_rule : TieRule
        The run's tie rule; human ties are credited by the same rule object.
    rng : Generator
        For a random tie rule (seeded per cell by the caller).
    """
    return compared_votes(pair_id, reader_id, y, judge_pairs, judge_credit, tie_rule=tie_rule, rng=rng)[0]


def compared_votes(
    pair_id: np.ndarray,
    reader_id: np.ndarray,
    y: np.ndarray,
    judge_pairs: np.ndarray,
    judge_credit: np.ndarray,
    *,
    tie_rule: TieRule,
    rng: np.random.Generator,
) -> tuple[ComparisonTable, CommonVotes]:
    """:func:`comparison_table` and the :class:`CommonVotes` counts of the same cell (one pass over the ids)."""
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
    on_judged = judged[pair_rank]
    common = CommonVotes(
        n_pairs=int(judged.sum()),  # every pair name has a vote
        n_readers=int(np.unique(reader_rank[on_judged]).size),
        all_ties=bool(on_judged.any() and np.isnan(y[on_judged]).all()),
    )
    credited = np.zeros(len(pair_names), dtype=bool)
    credited[pair_rank[~np.isnan(credit)]] = True
    keep = on_judged & credited[pair_rank]
    pair_codes, pi = np.unique(pair_rank[keep], return_inverse=True)
    reader_codes, ri = np.unique(reader_rank[keep], return_inverse=True)
    pairs, readers = pair_names[pair_codes], reader_names[reader_codes]
    human_pairs = pair_names
    c = credit[keep]
    counted = ~np.isnan(c)
    ties = np.isnan(y[keep])
    table = ComparisonTable(
        pairs=tuple(pairs.tolist()),
        readers=tuple(readers.tolist()),
        pair_index=pi.reshape(-1)[counted],
        reader_index=ri.reshape(-1)[counted],
        credit=c[counted],
        judge=jc[np.argsort(jp)][np.searchsorted(np.sort(jp), pairs)] if len(pairs) else np.zeros(0),
        n_votes=int(keep.sum()),
        n_ties=int(ties.sum()),
        n_human_pairs=int(human_pairs.size),
        n_judge_missing=int(human_pairs.size - len(pairs)),
    )
    return table, common


__all__ = ["CommonVotes", "ComparisonTable", "comparison_table", "compared_votes", "human_credits"]
