"""Shared plumbing: validate the votes frame and turn each cell into pair x reader tables.

A *cell* is one combination of the ``by`` columns (by default matchup x criterion). Inside a
cell the votes are summarised by two ``n_pairs x n_readers`` tables: ``S`` (number of votes
for the focal system) and ``N`` (number of decisive votes, ties excluded). Every estimator of
this package is a ratio of weighted sums of these tables, which is what makes the cluster
bootstrap a matrix product.

Pairs and readers are indexed in sorted order of their ids and cells are visited in sorted
order of their keys, so results do not depend on the row order of the input.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judge_transfer_audit.core.errors import InputError, InputProblem

VOTE_COLUMNS = ("pair_id", "reader_id", "y")
JUDGE_COLUMNS = ("pair_id", "matchup", "criterion", "judge", "credit")


@dataclass(frozen=True, eq=False)
class CellTable:
    """Sparse pair x reader summary of one cell's votes (internal; not a result).

    Only the (pair, reader) combinations with at least one decisive vote are stored, as
    parallel arrays: memory and time stay linear in the number of votes however many pairs
    and readers the cell has (no dense pairs x readers matrix).
    """

    key: tuple[str, ...]
    pairs: tuple[str, ...]  #: every pair with a vote in the cell (ties included), sorted
    readers: tuple[str, ...]  #: every reader with a vote in the cell, sorted
    cell_pair: np.ndarray  #: int64 index into ``pairs`` of each stored combination
    cell_reader: np.ndarray  #: int64 index into ``readers``
    s: np.ndarray  #: focal votes of each combination (float)
    n: np.ndarray  #: decisive (non-tie) votes of each combination (float, > 0)
    n_ties: int

    @property
    def label(self) -> str:
        return "/".join(self.key)

    @property
    def n_pairs(self) -> int:
        return len(self.pairs)

    @property
    def n_readers(self) -> int:
        return len(self.readers)

    @functools.cached_property
    def n_votes(self) -> int:  # cached: the leave-one-reader-out refit budget reads it once per reader
        return int(self.n.sum())

    @property
    def rate(self) -> float:
        n = self.n.sum()
        return float(self.s.sum() / n) if n > 0 else float("nan")

    def pair_sums(self) -> tuple[np.ndarray, np.ndarray]:
        """Focal and decisive votes per pair (length ``n_pairs``)."""
        return (np.bincount(self.cell_pair, self.s, self.n_pairs), np.bincount(self.cell_pair, self.n, self.n_pairs))

    def reader_sums(self) -> tuple[np.ndarray, np.ndarray]:
        """Focal and decisive votes per reader (length ``n_readers``)."""
        return (
            np.bincount(self.cell_reader, self.s, self.n_readers),
            np.bincount(self.cell_reader, self.n, self.n_readers),
        )

    def sparse(self):
        """``(S, N)`` as scipy CSR matrices of shape (n_pairs, n_readers)."""
        import scipy.sparse as sp

        shape = (self.n_pairs, self.n_readers)
        return (
            sp.csr_matrix((self.s, (self.cell_pair, self.cell_reader)), shape=shape),
            sp.csr_matrix((self.n, (self.cell_pair, self.cell_reader)), shape=shape),
        )

    def dense(self) -> tuple[np.ndarray, np.ndarray]:
        """``(S, N)`` as dense arrays: for small cells and tests only."""
        S = np.zeros((self.n_pairs, self.n_readers))
        N = np.zeros((self.n_pairs, self.n_readers))
        S[self.cell_pair, self.cell_reader] = self.s
        N[self.cell_pair, self.cell_reader] = self.n
        return S, N

    @property
    def S(self) -> np.ndarray:  # small cells and tests
        return self.dense()[0]

    @property
    def N(self) -> np.ndarray:  # small cells and tests
        return self.dense()[1]

    def vote_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One entry per decisive vote: ``(y, pair index, reader index)``, built without a
        Python loop (focal votes of a combination first, then the others)."""
        n = self.n.astype(np.int64)
        s = self.s.astype(np.int64)
        pair = np.repeat(self.cell_pair, n)
        reader = np.repeat(self.cell_reader, n)
        # position of each vote within its combination: focal while below s
        starts = np.repeat(np.cumsum(n) - n, n)
        within = np.arange(n.sum()) - starts
        y = (within < np.repeat(s, n)).astype(float)
        return y, pair, reader


def _problem(message: str, fix: str, column: str | None = None, value: str | None = None) -> InputProblem:
    return InputProblem(file="votes", message=message, fix=fix, column=column, value=value)


def validate_votes(votes: pd.DataFrame, by: tuple[str, ...]) -> None:
    """Raise :class:`InputError` (all problems at once) unless ``votes`` is usable."""
    if not isinstance(votes, pd.DataFrame):
        raise InputError(
            _problem(
                f"expected a pandas DataFrame, got {type(votes).__name__}",
                "pass AuditData.votes (the normalised votes frame)",
            )
        )
    problems = []
    for col in (*VOTE_COLUMNS, *by):
        if col not in votes.columns:
            problems.append(
                _problem(
                    f"missing column '{col}'", "pass the normalised votes frame (see audit/model/data.py)", column=col
                )
            )
    if problems:
        raise InputError(problems)
    y = pd.to_numeric(votes["y"], errors="coerce").to_numpy(float)
    bad = ~(np.isnan(y) | (y == 0.0) | (y == 1.0))
    raw_bad = votes["y"].notna().to_numpy() & np.isnan(y)
    bad |= raw_bad
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        problems.append(
            _problem(
                f"{int(bad.sum())} value(s) of y are not 1 (focal), 0 (other) or NaN (tie)",
                "code y as 1.0 / 0.0 / NaN",
                column="y",
                value=str(votes["y"].iloc[first]),
            )
        )
    for col in ("pair_id", "reader_id", *by):
        if votes[col].isna().any():
            problems.append(
                _problem(
                    f"{int(votes[col].isna().sum())} missing value(s)",
                    "every vote needs a pair, a reader and its cell",
                    column=col,
                )
            )
    if problems:
        raise InputError(problems)
    if len(votes) == 0:
        raise InputError(_problem("no votes", "pass at least one vote"))


def _sorted_codes(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Codes of ``values`` as strings, numbered in sorted order of the strings."""
    codes, uniques = pd.factorize(values.astype(str), sort=True)
    return np.asarray(codes, dtype=np.int64), np.asarray(uniques, dtype=object)


def _within_cell(cell: np.ndarray, codes: np.ndarray, n_codes: int, n_cells: int):
    """Distinct codes of each cell and each entry's rank among them.

    Returns ``(ranks, combos, bounds)``: ``combos`` are the distinct ``cell * n_codes + code``
    in sorted order, cell ``c`` owning ``combos[bounds[c]:bounds[c + 1]]``.
    """
    combos, inverse = np.unique(cell * n_codes + codes, return_inverse=True)
    bounds = np.searchsorted(combos // n_codes, np.arange(n_cells + 1))
    return inverse - bounds[cell], combos, bounds


def cell_tables(votes: pd.DataFrame, by: tuple[str, ...]) -> list[CellTable]:
    """One :class:`CellTable` per cell, in sorted key order.

    Vectorised over cells and votes: ids are factorised once (numbered in sorted order of the
    strings) and each (cell, pair, reader) combination is one integer key, so building every
    table costs a few sorts of the vote arrays, whatever the number of cells.
    """
    by = tuple(by)
    validate_votes(votes, by)
    y = pd.to_numeric(votes["y"], errors="coerce").to_numpy(float)
    pc, pair_ids = _sorted_codes(votes["pair_id"])
    rc, reader_ids = _sorted_codes(votes["reader_id"])
    cell = np.zeros(len(votes), dtype=np.int64)
    key_values = []
    for col in by:
        codes, uniques = _sorted_codes(votes[col])
        cell = cell * len(uniques) + codes
        key_values.append(uniques)
    cell_keys, cell = np.unique(cell, return_inverse=True)  # dense codes, in sorted key order
    n_cells, n_p, n_r = len(cell_keys), len(pair_ids), len(reader_ids)
    lp, pair_combos, pair_bounds = _within_cell(cell, pc, n_p, n_cells)
    lr, reader_combos, reader_bounds = _within_cell(cell, rc, n_r, n_cells)
    decisive = ~np.isnan(y)
    # one run per (cell, pair, reader) combination with a decisive vote
    combo = (cell[decisive] * n_p + pc[decisive]) * n_r + rc[decisive]
    runs, first, inverse = np.unique(combo, return_index=True, return_inverse=True)
    s_run = np.bincount(inverse, y[decisive], runs.size)
    n_run = np.bincount(inverse, minlength=runs.size).astype(float)
    run_cell = cell[decisive][first]
    run_lp, run_lr = lp[decisive][first], lr[decisive][first]
    run_bounds = np.searchsorted(run_cell, np.arange(n_cells + 1))
    ties = np.bincount(cell[~decisive], minlength=n_cells)
    tables = []
    for c in range(n_cells):
        rest, key = int(cell_keys[c]), []
        for uniques in reversed(key_values):
            rest, k = divmod(rest, len(uniques))
            key.append(str(uniques[k]))
        pairs = pair_ids[pair_combos[pair_bounds[c] : pair_bounds[c + 1]] % n_p]
        readers = reader_ids[reader_combos[reader_bounds[c] : reader_bounds[c + 1]] % n_r]
        a, b = run_bounds[c], run_bounds[c + 1]
        tables.append(
            CellTable(
                tuple(reversed(key)),
                tuple(str(p) for p in pairs),
                tuple(str(r) for r in readers),
                run_lp[a:b].astype(np.int64),
                run_lr[a:b].astype(np.int64),
                s_run[a:b],
                n_run[a:b],
                int(ties[c]),
            )
        )
    return tables


def validate_judge_credits(credits: pd.DataFrame, by: tuple[str, ...]) -> None:
    if not isinstance(credits, pd.DataFrame):
        raise InputError(
            InputProblem(
                "judge credits",
                f"expected a DataFrame, got {type(credits).__name__}",
                "pass the per-pair judge frame from judge_transfer_audit.verdict.judge_side",
            )
        )
    missing = [c for c in (*JUDGE_COLUMNS, *by) if c not in credits.columns]
    if missing:
        raise InputError(
            [
                InputProblem(
                    "judge credits",
                    f"missing column '{c}'",
                    "columns must be pair_id, matchup, criterion, judge, credit",
                    column=c,
                )
                for c in missing
            ]
        )
    c = pd.to_numeric(credits["credit"], errors="coerce").to_numpy(float)
    bad = (credits["credit"].notna().to_numpy() & np.isnan(c)) | (~np.isnan(c) & ((c < 0) | (c > 1)))
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise InputError(
            InputProblem(
                "judge credits",
                f"{int(bad.sum())} credit value(s) outside [0, 1]",
                "credit is 1 (focal wins), 0.5 (tie), 0 (other wins) or NaN (invalid)",
                column="credit",
                value=str(credits["credit"].iloc[first]),
            )
        )
