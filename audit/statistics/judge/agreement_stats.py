"""The statistics of :mod:`judge_transfer_audit.statistics.judge.agreement` on a layout of votes: one scope's sparse
indicators (:class:`ScopeVotes`) or many one-stratum cells of one shape stacked densely
(:class:`StackedCells`).

:func:`agreement_statistics` is written once for both: arrays are ``(..., B, U)`` (replicates x
units; ``...`` is the stacked cells' axis) and every sum runs over the last axis, so a stacked cell's
replicate goes through exactly the arithmetic of its own scope (sums of integers are exact in any
order; the floating-point sums over units, readers and strata are the same contiguous last-axis
reductions in both layouts, which numpy evaluates the same way whatever the leading axes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from scipy import sparse

_JUDGE_STRATUM_MAX = 2**22  #: entries of the dense judge x stratum indicator (32 MB); beyond it, element-wise products


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _kappa(po: np.ndarray, pe: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(pe < 1.0 - 1e-12, (po - pe) / (1.0 - pe), np.nan)


def _sum_last(x: np.ndarray, keepdims: bool = False) -> np.ndarray:
    """``x.sum(axis=-1)``, bit for bit: numpy adds an axis shorter than 8 one element after the other
    (whatever the layout), which explicit additions of the slices do without a reduction per row
    (many short rows: the stacked cells); a longer axis is left to numpy's own (pairwise) sum."""
    n = x.shape[-1]
    if 0 < n < 8:
        out = x[..., 0].copy()
        for i in range(1, n):
            out += x[..., i]
    else:
        out = x.sum(axis=-1)
    return out[..., None] if keepdims else out


def _alpha(o: np.ndarray) -> np.ndarray:
    """Nominal alpha pooled over strata from coincidence matrices ``o`` (... x B x S x 3 x 3).

    ``1 - sum_s D_o,s / sum_s D_e,s`` with ``D_o,s`` stratum ``s``'s disagreeing coincidences
    and ``D_e,s = (n_s^2 - sum_c n_cs^2) / (n_s - 1)`` the number expected from its own
    category shares; one stratum gives Krippendorff's ``1 - (n-1) D_o / D_e``. The sums over the
    three categories are written out (numpy adds three elements in order: the same digits).
    """
    nc = [(o[..., c, 0] + o[..., c, 1]) + o[..., c, 2] for c in range(3)]
    n = (nc[0] + nc[1]) + nc[2]
    use = n > 1
    d_o = _sum_last(np.ascontiguousarray(np.where(use, n - ((o[..., 0, 0] + o[..., 1, 1]) + o[..., 2, 2]), 0.0)))
    with np.errstate(invalid="ignore", divide="ignore"):
        spread = n**2 - ((nc[0] ** 2 + nc[1] ** 2) + nc[2] ** 2)
        d_e = _sum_last(np.ascontiguousarray(np.where(use, spread / np.where(use, n - 1.0, 1.0), 0.0)))
        return np.where(d_e > 1e-12, 1.0 - d_o / np.where(d_e > 1e-12, d_e, 1.0), np.nan)


#: the judge x reader tables a reader's kappa reads, as eight blocks of one column per reader (or
#: reader x stratum): its votes on units with a judge verdict, those equal to the verdict, those on
#: units where the judge said c (c = 0, 1, 2) and those of category c (on units with a verdict)
_TABLE_BLOCKS = 8


def _kappa_per_reader(t: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Votes, agreements and chance agreements per (reader, stratum) combination from the weighted
    counts ``t`` (..., 8K) of the eight :data:`_TABLE_BLOCKS` (sums of integers: exact)."""
    block = [t[..., b * k : (b + 1) * k] for b in range(_TABLE_BLOCKS)]
    n_k, diag = block[0], block[1]
    chance = sum(_ratio(block[2 + c] * block[5 + c], n_k) for c in range(3))
    return n_k, diag, np.where(n_k > 0, chance, 0.0)


def _table_entries(judge: np.ndarray, category: np.ndarray, column: np.ndarray, k: int) -> tuple[np.ndarray, ...]:
    """``(column of the 8K tables, vote)`` for every vote (its judge category ``judge``, its own
    ``category``, its reader (x stratum) column below ``k``) that counts in a block."""
    has = np.flatnonzero(judge >= 0)
    j, c, col = judge[has], category[has], column[has]
    same = j == c
    cols = np.concatenate([col, k + col[same], (2 + j) * k + col, (5 + c) * k + col])
    votes = np.concatenate([has, has[same], has, has])
    return cols, votes


# ----------------------------------------------------------------------------- one scope, sparse
def _right(x: np.ndarray, m_t: sparse.csr_matrix) -> np.ndarray:
    """``x @ m`` for dense ``x`` (B x U) and sparse ``m`` (U x K) given ``m_t = m.T``, as a dense (B x K) array."""
    if m_t.shape[0] == 1 and m_t.nnz == m_t.shape[1]:  # one stratum holding every unit: a row sum
        # in C order whatever x's layout (numpy sums an F-ordered array in another order: the last digit moves)
        return _sum_last(x if x.shape[-1] < 8 else np.ascontiguousarray(x), keepdims=True)
    return np.asarray((m_t @ x.T).T)


@dataclass(frozen=True)
class ScopeVotes:
    """One scope's votes as sparse indicators: memory grows with the votes, not units x readers.

    ``ind[c]`` (units x readers, CSR) is 1 where the reader voted category ``c`` (0 other,
    1 focal, 2 tie) on the unit; ``by_stratum_reader[c]`` the same with one column per
    (reader, stratum) combination that has votes and ``combo_reader`` (combinations x
    readers) maps those columns to readers; ``stratum`` (units x strata) is each unit's
    matchup. ``judge`` (U,) is the judge's category (-1: no verdict), ``pairable`` (U,) the
    units with at least two human votes.
    """

    ind: tuple[sparse.csr_matrix, ...]
    by_stratum_reader: tuple[sparse.csr_matrix, ...]
    combo_reader: sparse.csr_matrix
    stratum: sparse.csr_matrix
    judge: np.ndarray
    pairable: np.ndarray

    def __post_init__(self) -> None:
        # the transposes the products use, built once (scipy rebuilds a transpose on every .T)
        object.__setattr__(
            self,
            "_t",
            {
                "stratum": self.stratum.T.tocsr(),
                "combo_reader": self.combo_reader.T.tocsr(),
                "judge_stratum": self._judge_stratum(),
                "judge_stratum_t": self._judge_stratum_sparse(),
                **self._reader_tables(),
                **self._one_vote_features(),
            },
        )

    def _judge_stratum(self) -> np.ndarray | None:
        """Dense (U x 3S) indicator of each unit's judge category ``c`` and stratum ``s`` (column ``cS + s``),
        or None when it would be large: ``strat(x * (judge == c))`` for every ``c`` in one product."""
        n_u, n_s = self.stratum.shape
        if n_u * 3 * n_s > _JUDGE_STRATUM_MAX:
            return None
        out = np.zeros((n_u, 3 * n_s))
        has = self.judge >= 0
        units = np.flatnonzero(has)
        out[units, self.judge[has] * n_s + self.stratum.indices[units]] = 1.0
        return out

    def _judge_stratum_sparse(self) -> sparse.csr_matrix | None:
        """Where the dense indicator of :meth:`_judge_stratum` would be large and there are several strata: the
        same indicator as a sparse (3S x U) matrix, row ``cS + s`` holding the units of stratum ``s`` the judge
        said ``c`` on (the three by-judge sums of :meth:`by_judge` from one product); None otherwise."""
        n_u, n_s = self.stratum.shape
        if n_u * 3 * n_s <= _JUDGE_STRATUM_MAX or n_s < 2:
            return None
        from scipy import sparse

        units = np.flatnonzero(self.judge >= 0)
        rows = self.judge[units] * n_s + self.stratum.indices[units]
        return sparse.csr_matrix((np.ones(units.shape[0]), (rows, units)), shape=(3 * n_s, n_u))

    def _one_vote_features(self) -> dict:
        """For a scope with at most one vote per unit (one vote per pair): the seven per-stratum sums of
        the majority kappa (:data:`_MAJORITY_SUMS`) as fixed features of each vote, by unit (U x 7S) and
        summed by reader (R x 7S), and each unit's reader; empty otherwise."""
        if self.pairable.any():
            return {}
        from scipy import sparse

        coo = [m.tocoo() for m in self.ind]
        unit = np.concatenate([m.row for m in coo])
        reader = np.concatenate([m.col for m in coo])
        vote = np.concatenate([np.full(m.row.shape[0], c) for c, m in enumerate(coo)])
        judge, n_s = self.judge[unit], self.n_strata
        scored = (vote < 2) & (judge >= 0)  # a decisive vote on a unit with a verdict
        features = [scored, scored & (vote == judge), scored & (vote == 0), scored & (vote == 1)]
        features += [scored & (judge == c) for c in range(3)]
        column = self.stratum.indices[unit]
        cols = np.concatenate([i * n_s + column for i in range(len(features))])
        values = np.concatenate(features).astype(float)
        keep = values > 0
        width = len(features) * n_s
        unit_reader = np.zeros(self.n_units, dtype=np.int64)
        unit_reader[unit] = reader
        rows = np.tile(unit, len(features))[keep]
        by_unit = sparse.csr_matrix((values[keep], (rows, cols[keep])), shape=(self.n_units, width))
        by_reader = sparse.csr_matrix(
            (values[keep], (np.tile(reader, len(features))[keep], cols[keep])), shape=(self.n_readers, width)
        )
        return {
            "one_vote_units": by_unit.T.tocsr(),
            "one_vote_readers": by_reader.T.tocsr(),
            "unit_reader": unit_reader,
        }

    @property
    def one_vote(self) -> bool:
        """No unit with two human votes: the alpha and raw comparisons are undefined, and the majority
        kappa's sums come from each vote's weight (:meth:`majority_sums`)."""
        return "one_vote_units" in self._t

    def majority_sums(self, wu: np.ndarray, wr: np.ndarray) -> list[np.ndarray]:
        """The seven (B, S) sums of :data:`_MAJORITY_SUMS` of a one-vote scope (:attr:`one_vote`).

        A vote counts with its unit's weight when its reader's weight is positive (its reader's copies make
        it the majority of its unit); each sum is over integers (exact in any order) and comes out in the
        layout of the products it replaces, so that what is summed from it adds in the same order."""
        t, n_s = self._t, self.n_strata
        if wu.shape[-2] == 1 and np.all(wu == 1.0):  # readers resampled, units not: a product over readers
            y = t["one_vote_readers"] @ np.ascontiguousarray((wr > 0).T, dtype=float)
        else:
            x = wu if np.all(wr > 0) else wu * (wr > 0)[:, t["unit_reader"]]
            y = t["one_vote_units"] @ np.ascontiguousarray(x.T)
        y = np.asarray(y)  # (7S, B): each sum's transpose is an F-ordered (B, S) array, as a stratum product's
        sums = [y[i * n_s : (i + 1) * n_s].T for i in range(7)]
        if self._t["judge_stratum"] is not None:
            # the by-judge sums came out of one dense (B x 3S) product, in C order
            by_judge = np.ascontiguousarray(y[4 * n_s :].T)
            sums[4:] = [by_judge[:, c * n_s : (c + 1) * n_s] for c in range(3)]
        return sums

    def _reader_tables(self) -> dict:
        """What every (reader, stratum) combination's judge x reader counts are read from.

        A combination with one vote (most of them when every pair has one vote) has its counts
        straight from that vote's unit weight: votes ``w`` (0 without a judge verdict), agreements
        ``w [vote = verdict]``, and chance agreement equal to its agreements (``w^2 / w``, exact for
        the integer weights). The others get the eight :data:`_TABLE_BLOCKS` as one matrix (8K' x U)
        over their votes only, so that their counts come out of one product.
        """
        from scipy import sparse

        k = self.combo_reader.shape[0]
        coo = [m.tocoo() for m in self.by_stratum_reader]
        unit = np.concatenate([m.row for m in coo])
        combo = np.concatenate([m.col for m in coo])
        category = np.concatenate([np.full(m.row.shape[0], c) for c, m in enumerate(coo)])
        size = np.bincount(combo, minlength=k)
        # the one-vote combinations in their own order: their weights are gathered from the units once and
        # written in order (not scattered over the combinations three times)
        single = np.flatnonzero(size[combo] == 1)
        single = single[np.argsort(combo[single], kind="stable")]
        judge = self.judge[unit[single]]
        multi = np.flatnonzero(size > 1)
        code = np.full(k, -1)
        code[multi] = np.arange(multi.shape[0])
        rest = size[combo] > 1
        cols, votes = _table_entries(self.judge[unit[rest]], category[rest], code[combo[rest]], multi.shape[0])
        return {
            "single_combo": combo[single],
            "single_unit": unit[single],
            "single_has_judge": (judge >= 0).astype(float)[:, None],
            "single_agrees": (judge == category[single]).astype(float)[:, None],
            "multi_combo": multi,
            "multi_tables": sparse.csr_matrix(
                (np.ones(votes.shape[0]), (cols, unit[rest][votes])),
                shape=(_TABLE_BLOCKS * multi.shape[0], self.n_units),
            ),
        }

    @property
    def n_units(self) -> int:
        return int(self.judge.shape[0])

    @property
    def n_readers(self) -> int:
        return int(self.ind[0].shape[1])

    @property
    def n_strata(self) -> int:
        return int(self.stratum.shape[1])

    @property
    def judge_rows(self) -> np.ndarray:
        """The judge's categories shaped to broadcast against (B, U) arrays."""
        return self.judge[None, :]

    @property
    def pairable_rows(self) -> np.ndarray:
        return self.pairable[None, :]

    def strat(self, x: np.ndarray) -> np.ndarray:
        """Sums of ``x`` (B, U) over each stratum's units (B, S)."""
        return _right(x, self._t["stratum"])

    def weighted_sums(self, wu: np.ndarray, features: list[np.ndarray]) -> list[np.ndarray]:
        """``strat(wu * f)`` (B, S) for every integer feature ``f`` (1, U) of the units, from one product
        (sums of integers: exact in any order)."""
        n_u, n_s, k = self.n_units, self.n_strata, len(features)
        strata = self.stratum.indices
        if n_u * k * n_s <= _JUDGE_STRATUM_MAX:
            table = np.zeros((n_u, k, n_s))
            table[np.arange(n_u), :, strata] = np.concatenate(features).T
            y = wu @ table.reshape(n_u, k * n_s)
        else:
            from scipy import sparse

            values = np.concatenate(features).T  # (U, K)
            cols = np.arange(k)[None, :] * n_s + strata[:, None]
            table = sparse.csr_matrix(
                (values.ravel(), (np.repeat(np.arange(n_u), k), cols.ravel())), shape=(n_u, k * n_s)
            )
            y = np.asarray((table.T @ wu.T).T)
        return [y[..., i * n_s : (i + 1) * n_s] for i in range(k)]

    def in_strat_layout(self, sums: list[np.ndarray], judge_sums: list[np.ndarray]) -> tuple[list, list]:
        """Per-stratum sums (B x S each) from :meth:`weighted_sums`, laid out in memory as :meth:`strat` lays out
        ``sums`` and :meth:`by_judge` ``judge_sums``: with 8 strata or more numpy adds the strata of a row in
        an order that follows the layout, so what is summed from them keeps the digits of the element-wise
        products only in their layout (the values, sums of integers, are the same either way)."""
        n_s = self.n_strata
        b = sums[0].shape[0]
        if self._t["judge_stratum"] is not None:  # by_judge: column blocks of one C-ordered (B x 3S) product
            y = np.empty((b, 3 * n_s))
            for c, x in enumerate(judge_sums):
                y[:, c * n_s : (c + 1) * n_s] = x
            by_judge = [y[:, c * n_s : (c + 1) * n_s] for c in range(3)]
        elif self._t["judge_stratum_t"] is not None:  # column blocks of a transposed C-ordered (3S x B) product
            y = np.empty((3 * n_s, b))
            for c, x in enumerate(judge_sums):
                y[c * n_s : (c + 1) * n_s] = x.T
            by_judge = [y.T[:, c * n_s : (c + 1) * n_s] for c in range(3)]
        else:
            by_judge = [np.asfortranarray(x) for x in judge_sums]
        return [np.asfortranarray(x) for x in sums], by_judge  # strat: a transposed C-ordered (S x B) product

    def reader_sum(self, x: np.ndarray, kappa_r: np.ndarray, wr: np.ndarray) -> np.ndarray:
        """``x`` (B, R), the readers' weighted kappas, summed over the readers (in the order numpy takes
        for x's layout: see :meth:`StackedCells.reader_sum`)."""
        return _sum_last(x)

    def by_judge(self, x: np.ndarray) -> list[np.ndarray]:
        """``strat(x * (judge == c))`` (B x S) for ``c`` = 0, 1, 2, for *integer-valued* ``x`` (counts):
        one matrix product; its sums of integers are exact whatever their order, so equal to the
        element-wise products summed by stratum."""
        d = self._t["judge_stratum"]
        n_s = self.stratum.shape[1]
        if d is None and self._t["judge_stratum_t"] is not None:
            # one sparse product for the three categories: (B x 3S), each category's block laid out as
            # the product of its own masked copy of x would give it (columns of a transposed C array)
            y = _right(x, self._t["judge_stratum_t"])
            return [y[:, c * n_s : (c + 1) * n_s] for c in range(3)]
        if d is None:
            return [_right(x * (self.judge == c)[None, :], self._t["stratum"]) for c in range(3)]
        y = x @ d
        return [y[:, c * n_s : (c + 1) * n_s] for c in range(3)]

    def reader_counts(self, wr: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]] | None:
        """Weighted votes per category (B, U) under reader weights ``wr`` and the self-pairs of resampled copies
        (None in a one-vote scope: :func:`agreement_statistics` reads its votes directly)."""
        if self.one_vote:
            return None
        # in C order like the weights (so what is derived from both is C-ordered and summed in one order
        # whichever is resampled)
        n = [np.ascontiguousarray((self.ind[c] @ wr.T).T) for c in range(3)]
        s = [np.ascontiguousarray((self.ind[c] @ (wr**2).T).T) for c in range(3)]
        return n, s

    def reader_kappas(self, wu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each reader's kappa with the judge (B x R), chance taken within each stratum, and its units."""
        t = self._t
        k, b = self.combo_reader.shape[0], wu.shape[0]
        single, multi = t["single_combo"], t["multi_combo"]
        wu_t = np.ascontiguousarray(wu.T)  # (U, B): a unit's replicates contiguous, for the gathers below
        w = np.take(wu_t, t["single_unit"], axis=0)  # whole rows (faster than indexing them)
        if multi.shape[0]:
            counts = np.asarray((t["multi_tables"] @ wu_t).T)  # (B, 8K'): sums of integers, exact
            multi_parts = _kappa_per_reader(counts, multi.shape[0])
            del counts
        del wu_t
        # votes, agreements and chance agreements per combination, one after the other in one (K, B) array:
        # the layout the per-reader sums take (the transposes of the (B, K) arrays they were summed from
        # before: the same sums). A one-vote combination's agreements are its votes times [vote = verdict]
        # (a verdict agreed with is a verdict), its chance agreement its agreements.
        x = np.empty((k, b))
        by_reader = []
        for i, factor in enumerate((t["single_has_judge"], t["single_agrees"], None)):
            if factor is not None:
                np.multiply(w, factor, out=w)
                x[single] = w
            if multi.shape[0]:
                x[multi] = multi_parts[i].T
            by_reader.append(_right(x.T, t["combo_reader"]))
        n_r, diag_r, chance_r = by_reader
        return _kappa(_ratio(diag_r, n_r), _ratio(chance_r, n_r)), n_r


def scope_votes(
    unit: np.ndarray,
    reader: np.ndarray,
    category: np.ndarray,
    judge: np.ndarray,
    stratum: np.ndarray | None = None,
    n_readers: int | None = None,
) -> ScopeVotes:
    """Build :class:`ScopeVotes` from one row per vote (unit, reader, category codes).

    ``judge`` and ``stratum`` have one entry per unit (``stratum`` None: one stratum);
    ``n_readers`` defaults to ``max(reader) + 1``.
    """
    from scipy import sparse

    unit, reader, category = (np.asarray(a, dtype=np.int64) for a in (unit, reader, category))
    judge = np.asarray(judge, dtype=np.int64)
    n_u = judge.shape[0]
    n_r = int(n_readers if n_readers is not None else (reader.max() + 1 if reader.size else 0))
    strata = np.zeros(n_u, dtype=np.int64) if stratum is None else np.unique(stratum, return_inverse=True)[1]
    n_s = int(strata.max()) + 1 if n_u else 0
    combo, combo_code = np.unique(reader * max(n_s, 1) + strata[unit], return_inverse=True)
    ones = np.ones(unit.shape[0])

    def indicator(cols: np.ndarray, width: int, c: int) -> sparse.csr_matrix:
        m = category == c
        return sparse.csr_matrix((ones[m], (unit[m], cols[m])), shape=(n_u, width))

    counts = np.bincount(unit, minlength=n_u)
    return ScopeVotes(
        ind=tuple(indicator(reader, n_r, c) for c in range(3)),
        by_stratum_reader=tuple(indicator(combo_code, combo.shape[0], c) for c in range(3)),
        combo_reader=sparse.csr_matrix(
            (np.ones(combo.shape[0]), (np.arange(combo.shape[0]), combo // max(n_s, 1))), shape=(combo.shape[0], n_r)
        ),
        stratum=sparse.csr_matrix((np.ones(n_u), (np.arange(n_u), strata)), shape=(n_u, n_s)),
        judge=judge,
        pairable=counts >= 2,
    )


# ----------------------------------------------------------------------------- many cells, stacked
@dataclass(frozen=True)
class StackedCells:
    """G scopes of one stratum each (cells), every one with U units and R readers, as dense arrays.

    ``ind`` (3, G, R, U) is 1 where reader ``r`` of cell ``g`` voted category ``c`` on unit ``u``
    (each cell's readers in its own order: the sorted codes of those with votes in it); ``judge``
    (G, U) the judge's category (-1: no verdict), ``pairable`` (G, U) the units with at least two
    human votes. Weights are ``(G or 1, B, U)`` and ``(G or 1, B, R)``; what a cell's scope would give
    as ``(B, ...)`` comes out as ``(G, B, ...)``, the same numbers (see the module docstring).
    """

    ind: np.ndarray
    judge: np.ndarray
    pairable: np.ndarray

    def __post_init__(self) -> None:
        g, u = self.judge.shape
        judge_onehot = np.zeros((g, u, 3))
        gi, ui = np.nonzero(self.judge >= 0)
        judge_onehot[gi, ui, self.judge[gi, ui]] = 1.0
        # (G, U, 8R): the eight judge x reader tables of every reader (_TABLE_BLOCKS)
        c, cell, reader, unit = np.nonzero(self.ind)
        cols, votes = _table_entries(self.judge[cell, unit], c, reader, self.n_readers)
        tables = np.zeros((g, u, _TABLE_BLOCKS * self.n_readers))
        tables[cell[votes], unit[votes], cols] = 1.0
        object.__setattr__(self, "_judge_onehot", judge_onehot)
        object.__setattr__(self, "_tables", tables)

    @property
    def n_cells(self) -> int:
        return int(self.judge.shape[0])

    @property
    def n_units(self) -> int:
        return int(self.judge.shape[1])

    @property
    def n_readers(self) -> int:
        return int(self.ind.shape[2])

    @property
    def one_vote(self) -> bool:
        """Stacked cells are small and dense: computed the general way whatever their votes."""
        return False

    @property
    def n_strata(self) -> int:
        return 1

    @property
    def judge_rows(self) -> np.ndarray:
        return self.judge[:, None, :]

    @property
    def pairable_rows(self) -> np.ndarray:
        return self.pairable[:, None, :]

    def strat(self, x: np.ndarray) -> np.ndarray:
        # what _right does for one stratum holding every unit: a C-ordered sum over the units
        return _sum_last(x if x.shape[-1] < 8 else np.ascontiguousarray(x), keepdims=True)

    def reader_sum(self, x: np.ndarray, kappa_r: np.ndarray, wr: np.ndarray) -> np.ndarray:
        """:meth:`ScopeVotes.reader_sum` in the order numpy takes there: a scope's replicates of the
        per-reader kappas come out of a sparse product transposed and its reader weights out of a
        column selection, both in Fortran order, so numpy adds the readers of a block of replicates
        one after the other (one row of replicates: contiguous, a pairwise sum)."""
        if x.shape[-2] > 1 and x.shape[-1] >= 8:
            out = x[..., 0].copy()
            for i in range(1, x.shape[-1]):
                out += x[..., i]
            return out
        return _sum_last(np.ascontiguousarray(x))

    def weighted_sums(self, wu: np.ndarray, features: list[np.ndarray]) -> list[np.ndarray]:
        """:meth:`ScopeVotes.weighted_sums` of every cell (features (G, 1, U) each) -> (G, B, 1) each."""
        y = wu @ np.stack([f[..., 0, :] for f in features], axis=-1)  # (G, B, U) @ (G, U, K): exact
        return [y[..., i : i + 1] for i in range(len(features))]

    def by_judge(self, x: np.ndarray) -> list[np.ndarray]:
        y = x @ self._judge_onehot  # sums of integers: exact in any order
        return [y[..., c : c + 1] for c in range(3)]

    def reader_counts(self, wr: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
        wr2 = wr**2
        return [wr @ self.ind[c] for c in range(3)], [wr2 @ self.ind[c] for c in range(3)]

    def reader_kappas(self, wu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # one stratum: each reader is one (reader, stratum) combination, so the per-reader sums of
        # ScopeVotes.reader_kappas are these arrays as they are
        n_k, diag, chance = _kappa_per_reader(wu @ self._tables, self.n_readers)
        return _kappa(_ratio(diag, n_k), _ratio(chance, n_k)), n_k


def stacked_cells(
    cell: np.ndarray, unit: np.ndarray, reader: np.ndarray, category: np.ndarray, judge: np.ndarray, n_readers: int
) -> StackedCells:
    """Build :class:`StackedCells` from one row per vote: its cell, unit and reader (codes local to the
    cell: ``0 .. U-1`` and ``0 .. R-1``) and category; ``judge`` (G, U)."""
    g, u = judge.shape
    ind = np.zeros((3, g, n_readers, u))
    ind[category, cell, reader, unit] = 1.0
    counts = np.zeros((g, u), dtype=np.int64)
    np.add.at(counts, (cell, unit), 1)
    return StackedCells(ind=ind, judge=np.asarray(judge, dtype=np.int64), pairable=counts >= 2)


# ----------------------------------------------------------------------------- the statistics
def reader_counts(sv, wr: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Weighted votes per category (B, U) under reader weights ``wr`` and the self-pairs of resampled copies.

    What :func:`agreement_statistics` derives from the reader side alone: computed once per block of
    reader weights and passed to both kinds of replicate that resample readers (the sparse products
    over every vote are most of a large cell's agreement bootstrap).
    """
    return sv.reader_counts(wr)


#: the seven per-stratum sums kappa against the majority is computed from: the scored units' weights, those
#: where the judge agrees with the majority, where the majority is the other system, the focal one, and where
#: the judge said other, focal or tie
_MAJORITY_SUMS = ("scored", "agreed", "other", "focal", "judge_other", "judge_focal", "judge_tie")
#: the statistics of the units with at least two human votes (NaN in a scope without one)
_PAIRED = (
    "alpha_judge_human",
    "alpha_human",
    "alpha_difference",
    "raw_judge_human",
    "raw_human",
    "raw_difference",
)


def _kappas(sv, wu, wr, kappas, tot, agree, w_other, w_focal, w_judge) -> tuple[np.ndarray, np.ndarray]:
    """Kappa against the majority from its per-stratum sums, and the readers' kappas averaged over the
    (resampled) readers."""
    chance = sum(_ratio(w_judge[c] * major, tot) for c, major in ((0, w_other), (1, w_focal)))
    total = _sum_last(tot)
    kappa_majority = _kappa(_ratio(_sum_last(agree), total), _ratio(_sum_last(np.where(tot > 0, chance, 0.0)), total))

    # Cohen's kappa against each reader, averaged over (resampled) readers
    kappa_r, _ = kappas if kappas is not None else sv.reader_kappas(wu)
    ok_r = np.isfinite(kappa_r)
    weighted = np.where(ok_r, kappa_r * wr, 0.0)
    kappa_readers = _ratio(sv.reader_sum(weighted, kappa_r, wr), _sum_last(np.where(ok_r, wr, 0.0)))
    return kappa_majority, kappa_readers


def _unpaired(kappa_majority: np.ndarray, kappa_readers: np.ndarray) -> dict[str, np.ndarray]:
    """The statistics of a scope without a unit of two human votes (one vote per pair): the alpha and raw
    comparisons have no unit under any weights, so they are NaN without the (replicates x units) passes
    that would say so."""
    nan = np.full(kappa_majority.shape, np.nan)
    return dict(kappa_majority=kappa_majority, kappa_readers=kappa_readers, **{k: nan.copy() for k in _PAIRED})


def agreement_statistics(
    sv: ScopeVotes | StackedCells,
    wu: np.ndarray,
    wr: np.ndarray,
    counts: tuple[list[np.ndarray], list[np.ndarray]] | None = None,
    kappas: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """Every statistic of :data:`judge_transfer_audit.statistics.judge.agreement.STATISTICS` under unit weights ``wu``
    and reader weights ``wr``.

    ``wu`` (B, U) and ``wr`` (B, R) are integer resampling counts (all ones for the
    estimate); either may be one row of ones (1, U) or (1, R) when only the other side is
    resampled: what depends on it alone is then computed once, not once per replicate.
    Chance agreement (kappa) and expected disagreement (alpha) are taken within each stratum
    (matchup) and pooled, so swapping focal and other in any matchup changes nothing.
    ``counts`` is :func:`reader_counts` of ``(sv, wr)`` and ``kappas`` ``sv.reader_kappas(wu)``
    when the caller already has them (the side not resampled gives the same in every chunk).
    Returns arrays of length B. With :class:`StackedCells` every array has the cells' axis in
    front: weights (G or 1, B, U) and (G or 1, B, R), statistics (G, B).
    """
    if sv.one_vote:
        tot, agree, w_other, w_focal, *w_judge = sv.majority_sums(wu, wr)
        return _unpaired(*_kappas(sv, wu, wr, kappas, tot, agree, w_other, w_focal, w_judge))
    n, s = counts if counts is not None else sv.reader_counts(wr)
    m = n[0] + n[1] + n[2]
    judge = sv.judge_rows
    has_j = judge >= 0
    jcat = [judge == c for c in range(3)]
    strat = sv.strat

    # Cohen's kappa against the majority (ties abstain; a split is not scored), chance per stratum
    # majority focal (n1 > n0) or other (n0 > n1); every weight and count here is an integer
    focal_major, other_major = n[1] > n[0], n[0] > n[1]
    scored = (focal_major | other_major) & has_j
    agreed = (focal_major & jcat[1]) | (other_major & jcat[0])
    paired = bool(sv.pairable.any())
    if paired:
        ok = sv.pairable_rows & (m > 1)  # the units of the human-human and judge-human comparisons
        both = sv.pairable_rows & has_j
    if n[0].shape[-2] == 1:
        # the counts are the same in every replicate (readers not resampled): every sum of integers
        # below is the unit weights times a fixed integer per unit, all of them from one product (exact;
        # with fewer than 8 strata the sums over strata add in order whatever the layout, with more they
        # are laid out as the element-wise path lays them out)
        features = [scored, agreed, other_major & has_j, focal_major & has_j]
        features += [scored & jcat[c] for c in range(3)]
        if paired:
            agree_pairs = sum(n[c] ** 2 - s[c] for c in range(3))
            all_pairs = m**2 - (s[0] + s[1] + s[2])
            features += [np.where(ok, agree_pairs, 0.0), np.where(ok, all_pairs, 0.0)]
            features += [both * n[k] * jcat[c] for k in range(3) for c in range(3)]
        tot, agree, w_other, w_focal, *rest = sv.weighted_sums(wu, [np.asarray(x, dtype=float) for x in features])
        w_judge = rest[:3]
        if sv.n_strata >= 8:
            (tot, agree, w_other, w_focal), w_judge = sv.in_strat_layout([tot, agree, w_other, w_focal], w_judge)
        if paired:
            (g_agree, g_all), judge_reader = rest[3:5], rest[5:]
            raw_human = _ratio(_sum_last(g_agree), _sum_last(g_all))
    else:
        w = wu * scored
        tot, agree = strat(w), strat(w * agreed)
        w_judge = sv.by_judge(w)
        w_other, w_focal = strat(w * other_major), strat(w * focal_major)
        if paired:
            agree_pairs = sum(n[c] ** 2 - s[c] for c in range(3))
            all_pairs = m**2 - (s[0] + s[1] + s[2])
            g = np.where(ok, wu, 0.0)
            raw_human = _ratio(_sum_last(g * agree_pairs), _sum_last(g * all_pairs))
            gj = wu * both
            judge_reader = [column for k in range(3) for column in sv.by_judge(gj * n[k])]
    kappa_majority, kappa_readers = _kappas(sv, wu, wr, kappas, tot, agree, w_other, w_focal, w_judge)
    if not paired:
        return _unpaired(kappa_majority, kappa_readers)

    # human-human: Krippendorff's coincidences (copies of one reader never pair with each other)
    f = np.where(ok, wu / np.where(ok, m - 1.0, 1.0), 0.0)
    lead = np.broadcast_shapes(wu.shape[:-1], wr.shape[:-1], m.shape[:-1])
    o_h = np.empty((*lead, sv.n_strata, 3, 3))
    for c in range(3):
        fn = f * n[c]
        o_h[..., c, c] = strat(fn * n[c] - f * s[c])
        for k in range(c + 1, 3):
            o_h[..., c, k] = o_h[..., k, c] = strat(fn * n[k])
    alpha_human = _alpha(o_h)

    # judge-human: two-coder units (judge, one reader vote), on the same pairable units
    a = np.empty_like(o_h)  # a[..., b, s, c, k]: judge c, reader votes k
    for k in range(3):
        for c in range(3):
            a[..., c, k] = judge_reader[3 * k + c]
    alpha_judge_human = _alpha(a + np.swapaxes(a, -1, -2))
    raw_judge_human = _ratio(np.trace(a, axis1=-2, axis2=-1).sum(axis=-1), a.sum(axis=(-3, -2, -1)))

    return dict(
        kappa_majority=kappa_majority,
        kappa_readers=kappa_readers,
        alpha_judge_human=alpha_judge_human,
        alpha_human=alpha_human,
        alpha_difference=alpha_judge_human - alpha_human,
        raw_judge_human=raw_judge_human,
        raw_human=raw_human,
        raw_difference=raw_judge_human - raw_human,
    )


def reader_kappas(sv: ScopeVotes) -> tuple[np.ndarray, np.ndarray]:
    """Each reader's Cohen's kappa with the judge (R,) and the number of units it uses (R,)."""
    kappa, n_r = sv.reader_kappas(np.ones((1, sv.n_units)))
    return kappa[0], n_r[0].astype(int)
