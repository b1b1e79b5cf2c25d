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

from dataclasses import dataclass

import numpy as np
import pandas as pd

from audit.errors import InputError, InputProblem

VOTE_COLUMNS = ("pair_id", "reader_id", "y")
JUDGE_COLUMNS = ("pair_id", "matchup", "criterion", "judge", "credit")


@dataclass(frozen=True, eq=False)
class CellTable:
    """Pair x reader summary of one cell's votes (internal; not a result)."""

    key: tuple[str, ...]
    pairs: tuple[str, ...]
    readers: tuple[str, ...]
    S: np.ndarray  #: focal votes, shape (n_pairs, n_readers)
    N: np.ndarray  #: decisive (non-tie) votes, same shape
    n_ties: int

    @property
    def label(self) -> str:
        return "/".join(self.key)

    @property
    def rate(self) -> float:
        n = self.N.sum()
        return float(self.S.sum() / n) if n > 0 else float("nan")

    def vote_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Expand back to one entry per decisive vote: (y, pair ids, reader ids)."""
        ys, ps, rs = [], [], []
        for i, j in zip(*np.nonzero(self.N)):
            n, s = int(self.N[i, j]), int(self.S[i, j])
            ys.extend([1.0] * s + [0.0] * (n - s))
            ps.extend([self.pairs[i]] * n)
            rs.extend([self.readers[j]] * n)
        return np.asarray(ys, float), np.asarray(ps, object), np.asarray(rs, object)


def _problem(message: str, fix: str, column: str | None = None, value: str | None = None) -> InputProblem:
    return InputProblem(file="votes", message=message, fix=fix, column=column, value=value)


def validate_votes(votes: pd.DataFrame, by: tuple[str, ...]) -> None:
    """Raise :class:`InputError` (all problems at once) unless ``votes`` is usable."""
    if not isinstance(votes, pd.DataFrame):
        raise InputError(_problem(f"expected a pandas DataFrame, got {type(votes).__name__}",
                                  "pass AuditData.votes (the normalised votes frame)"))
    problems = []
    for col in (*VOTE_COLUMNS, *by):
        if col not in votes.columns:
            problems.append(_problem(f"missing column '{col}'",
                                     "pass the normalised votes frame (see audit/data.py)", column=col))
    if problems:
        raise InputError(problems)
    y = pd.to_numeric(votes["y"], errors="coerce").to_numpy(float)
    bad = ~(np.isnan(y) | (y == 0.0) | (y == 1.0))
    raw_bad = votes["y"].notna().to_numpy() & np.isnan(y)
    bad |= raw_bad
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        problems.append(_problem(f"{int(bad.sum())} value(s) of y are not 1 (focal), 0 (other) or NaN (tie)",
                                 "code y as 1.0 / 0.0 / NaN", column="y", value=str(votes["y"].iloc[first])))
    for col in ("pair_id", "reader_id", *by):
        if votes[col].isna().any():
            problems.append(_problem(f"{int(votes[col].isna().sum())} missing value(s)",
                                     "every vote needs a pair, a reader and its cell", column=col))
    if problems:
        raise InputError(problems)
    if len(votes) == 0:
        raise InputError(_problem("no votes", "pass at least one vote"))


def cell_tables(votes: pd.DataFrame, by: tuple[str, ...]) -> list[CellTable]:
    """One :class:`CellTable` per cell, in sorted key order."""
    by = tuple(by)
    validate_votes(votes, by)
    frame = pd.DataFrame({
        "pair_id": votes["pair_id"].astype(str).to_numpy(),
        "reader_id": votes["reader_id"].astype(str).to_numpy(),
        "y": pd.to_numeric(votes["y"], errors="coerce").to_numpy(float),
        **{f"_by{k}": votes[c].astype(str).to_numpy() for k, c in enumerate(by)},
    })
    keys = [f"_by{k}" for k in range(len(by))]
    tables = []
    for key, g in frame.groupby(keys, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        pairs, pi = np.unique(g["pair_id"].to_numpy(), return_inverse=True)
        readers, ri = np.unique(g["reader_id"].to_numpy(), return_inverse=True)
        y = g["y"].to_numpy()
        decisive = ~np.isnan(y)
        S = np.zeros((len(pairs), len(readers)))
        N = np.zeros((len(pairs), len(readers)))
        np.add.at(S, (pi[decisive], ri[decisive]), y[decisive])
        np.add.at(N, (pi[decisive], ri[decisive]), 1.0)
        tables.append(CellTable(tuple(str(k) for k in key), tuple(str(p) for p in pairs),
                                tuple(str(r) for r in readers), S, N, int((~decisive).sum())))
    return tables


def validate_judge_credits(credits: pd.DataFrame, by: tuple[str, ...]) -> None:
    if not isinstance(credits, pd.DataFrame):
        raise InputError(InputProblem("judge credits", f"expected a DataFrame, got {type(credits).__name__}",
                                      "pass the per-pair judge frame from audit.judge_side"))
    missing = [c for c in (*JUDGE_COLUMNS, *by) if c not in credits.columns]
    if missing:
        raise InputError([InputProblem("judge credits", f"missing column '{c}'",
                                       "columns must be pair_id, matchup, criterion, judge, credit",
                                       column=c) for c in missing])
    c = pd.to_numeric(credits["credit"], errors="coerce").to_numpy(float)
    bad = (credits["credit"].notna().to_numpy() & np.isnan(c)) | (~np.isnan(c) & ((c < 0) | (c > 1)))
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise InputError(InputProblem("judge credits", f"{int(bad.sum())} credit value(s) outside [0, 1]",
                                      "credit is 1 (focal wins), 0.5 (tie), 0 (other wins) or NaN (invalid)",
                                      column="credit", value=str(credits["credit"].iloc[first])))
