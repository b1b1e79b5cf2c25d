"""The paired bootstrap of many cells of one shape at once, each on its own stream.

:func:`bootstrap_cells` returns what :func:`~judge_transfer_audit.verdict.paired_bootstrap.bootstrap_judges` returns for
each cell, bit for bit, with the arithmetic of the cells that have the same numbers of compared pairs,
readers and judges done on stacked arrays (cells x replicates x pairs), as
:mod:`judge_transfer_audit.statistics.glmm.batch`
stacks the GLMMs of same-shape cells. With thousands of tiny cells (a criterion each: 6 pairs x 3
readers) the per-cell cost was Python around a few small arrays; stacked, it is the arithmetic.

What keeps every cell's numbers its own:

- **Draws**: each cell's pair and reader draws, reader shift and between-pair variance draws come from
  its own generator in the order :func:`bootstrap_judges` makes them (draw per cell, compute on the
  stack), so the results do not depend on which cells are stacked together.
- **Arithmetic**: the same elementwise operations; sums over pairs are row reductions of C-contiguous
  arrays (the same pairwise sums as one cell's); the per-pair sums against replicate weights are one
  BLAS matrix-vector product per cell (``np.matmul`` on stacked operands makes the same call per cell);
  the readers' sparse products are summed reader by reader in index order, as ``scipy.sparse`` does.
  tests/audit/verdict/test_stacked_bootstrap.py compares every distribution with the per-cell call.

Cells with fewer than two pairs or readers, or too many replicates x pairs for one chunk, go through
:func:`bootstrap_judges` itself.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from judge_transfer_audit.core.threads import single_threaded_blas
from judge_transfer_audit.statistics.estimands import estimands, shifted_and_plain
from judge_transfer_audit.statistics.uncertainty.resampling import _counts
from judge_transfer_audit.statistics.uncertainty.two_way import correct_two_way
from judge_transfer_audit.verdict.paired_bootstrap import (
    BOUNDS,
    CHUNK_ELEMENTS,
    STATISTICS,
    CellBootstrap,
    LazyDistributions,
    PendingDistribution,
    _pair_shares,
    _vote_share,
    _weighted_share,
    between_pair_draws,
    between_pair_draws_finite,
    bootstrap_judges,
    chi2_ppf,
)
from judge_transfer_audit.verdict.tables import ComparisonTable

STACK_ELEMENTS = 500_000  #: cells x replicates x pairs in one stacked array (a few MB: cache-sized)


def bootstrap_cells(
    tables: Sequence[ComparisonTable],
    judges: Sequence[np.ndarray],
    n_boot: int,
    rngs: Sequence[np.random.Generator],
    draws: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None,
) -> list[list[CellBootstrap]]:
    """``[bootstrap_judges(t, j, n_boot, rng) for t, j, rng in zip(tables, judges, rngs)]``, stacked (module doc).

    ``draws``: per table, the pair weights, reader weights and reader-shift scores drawn by the caller
    (``bootstrap_judges``'s ``draws``: the joint bootstrap of a matchup's criteria,
    :mod:`judge_transfer_audit.verdict.hierarchy`); the rngs then give the between-pair variance's draws only.

    BLAS runs on one thread here, as in a worker of the run's pool (:mod:`judge_transfer_audit.core.threads`): the
    bootstrap's matrix-vector products are small and many, and with ``--jobs 1`` the default threads spent about
    a third more CPU on them (the same numbers).
    """
    with single_threaded_blas():
        return _bootstrap_cells(tables, judges, n_boot, rngs, draws)


def _bootstrap_cells(tables, judges, n_boot, rngs, draws) -> list[list[CellBootstrap]]:
    out: list[list[CellBootstrap] | None] = [None] * len(tables)
    groups: dict[tuple[int, int, int], list[int]] = defaultdict(list)
    for i, (table, rows) in enumerate(zip(tables, judges)):
        rows = np.atleast_2d(np.asarray(rows, float))
        p, r = table.n_pairs, table.n_readers
        if p < 2 or r < 2 or n_boot > max(1, CHUNK_ELEMENTS // p):
            out[i] = bootstrap_judges(table, rows, n_boot, rngs[i], draws=None if draws is None else draws[i])
        else:
            groups[(p, r, rows.shape[0])].append(i)
    for (p, _, _), members in groups.items():
        per_stack = max(1, STACK_ELEMENTS // (n_boot * p))
        for start in range(0, len(members), per_stack):
            chunk = members[start : start + per_stack]
            boots = _stacked(
                [tables[i] for i in chunk],
                np.stack([np.atleast_2d(np.asarray(judges[i], float)) for i in chunk]),
                n_boot,
                [rngs[i] for i in chunk],
                None if draws is None else [draws[i] for i in chunk],
            )
            for i, b in zip(chunk, boots):
                out[i] = b
    return out  # type: ignore[return-value]


def _reader_sums(dense: np.ndarray, wr: np.ndarray) -> np.ndarray:
    """``(table @ wr.T).T`` of every cell (cells x replicates x pairs), summed reader by reader in index
    order as ``scipy.sparse``'s product sums a row's stored entries.

    Only the nonzero entries are visited (an absent entry would add an exact 0), round ``j`` adding every
    pair's ``j``-th reader in index order: as many rounds as a pair has readers, not as the cell has
    (a cell of 500 pairs with one vote each from 475 readers: one round, not 475). A table at least a
    third full (every reader on most pairs) is summed over every reader in index order instead, on
    contiguous arrays: the absent entries add exact zeros (weights and entries are not negative), so the
    sums are the same."""
    n_cells, n_pairs, n_readers = dense.shape
    out = np.zeros((wr.shape[0], wr.shape[1], n_pairs))
    cell, pair, reader = np.nonzero(dense)  # row-major: by cell, then pair, then reader (increasing)
    if cell.size == 0:
        return out
    if dense.size <= 3 * cell.size:
        for r in range(n_readers):
            out += wr[:, :, r, None] * dense[:, None, :, r]
        return out
    key = cell * n_pairs + pair
    first = np.r_[0, np.flatnonzero(np.diff(key)) + 1]
    rank = np.arange(key.size) - np.repeat(first, np.diff(np.r_[first, key.size]))
    for j in range(int(rank.max()) + 1):
        at = rank == j  # at most one entry per (cell, pair) in a round
        g, p, r = cell[at], pair[at], reader[at]
        out[g, :, p] += wr[g, :, r] * dense[g, p, r][:, None]
    return out


def _stacked(
    tables: list[ComparisonTable],
    judges: np.ndarray,
    n_boot: int,
    rngs: list[np.random.Generator],
    draws: list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None,
) -> list[list[CellBootstrap]]:
    """:func:`bootstrap_judges` of ``G`` cells with the same pairs, readers and judges (``judges``: G x K x P),
    on the given ``draws`` when there are some (:func:`bootstrap_cells`)."""
    n_cells, n_judges, n_pairs = judges.shape
    n_readers = tables[0].n_readers
    sums = [t.pair_sums() for t in tables]
    c0, q0, n0 = (np.stack([s[k] for s in sums]) for k in range(3))
    ones = np.ones_like(c0)
    original = estimands(c0, q0, n0, ones, judges)
    stats0 = {k: np.asarray(v, float).reshape(n_cells, n_judges) for k, v in original.statistics().items()}
    tau2 = np.asarray(original.between_pair_var, float)
    tau = np.where(np.isfinite(tau2), np.sqrt(np.where(np.isfinite(tau2), tau2, 0.0)), np.nan)
    if draws is None:
        wp, wr = _weights(rngs, n_pairs, n_readers, n_boot)
    else:
        wp, wr = (np.stack([np.asarray(d[k], float) for d in draws]) for k in (0, 1))
    c_r = _reader_components(tables, c0, n0, wp, wr)
    if draws is None:
        shift = np.stack([np.sqrt(c) * rng.standard_normal(n_boot) for c, rng in zip(c_r.tolist(), rngs)])
    else:
        shift = np.stack([np.sqrt(c) * np.asarray(d[2], float) for c, d in zip(c_r.tolist(), draws)])
    kappa = _logit_shift_factors(original)
    per_pair = (c0[:, None, :], q0[:, None, :], n0[:, None, :])
    with_shift, plain = shifted_and_plain(*per_pair, wp, judges, shift, kappa[:, None] * shift)
    tau2_reps = _between_pair_replicates(original, n_boot, rngs, plain.share_var, plain.within_var)
    shifted = with_shift.with_between_pair_var(tau2_reps).statistics()
    pairs_only = plain.with_between_pair_var(tau2_reps).statistics()
    out = []
    for g in range(n_cells):
        per_judge = []
        for i in range(n_judges):
            build = {}
            for k in STATISTICS:
                reps = np.ascontiguousarray(_column(shifted[k], g, i, n_boot))
                plain_reps = np.ascontiguousarray(_column(pairs_only[k], g, i, n_boot))
                build[k] = PendingDistribution(float(stats0[k][g, i]), reps, plain_reps, BOUNDS[k], n_pairs, n_readers)
            per_judge.append(
                CellBootstrap(LazyDistributions(build), float(tau[g]), float(np.sqrt(c_r[g])), int(n_boot))
            )
        out.append(per_judge)
    return out


def _weights(rngs, n_pairs: int, n_readers: int, n_boot: int) -> tuple[np.ndarray, np.ndarray]:
    """Every cell's pair and reader resampling counts
    (:func:`~judge_transfer_audit.statistics.uncertainty.resampling.multinomial_weights`:
    each cell's draws from its stream in that order, counted together)."""
    idx_p = np.empty((len(rngs), n_boot, n_pairs), np.int64)
    idx_r = np.empty((len(rngs), n_boot, n_readers), np.int64)
    for g, rng in enumerate(rngs):
        idx_p[g] = rng.integers(0, n_pairs, (n_boot, n_pairs))
        idx_r[g] = rng.integers(0, n_readers, (n_boot, n_readers))
    wp = _counts(idx_p.reshape(-1, n_pairs)).reshape(len(rngs), n_boot, n_pairs)
    wr = _counts(idx_r.reshape(-1, n_readers)).reshape(len(rngs), n_boot, n_readers)
    return wp, wr


def _column(values: np.ndarray, g: int, i: int, n_boot: int) -> np.ndarray:
    """Cell ``g``'s replicates of judge ``i`` (a statistic of the humans only is repeated along the judges)."""
    values = np.asarray(values)
    return values[g, :, i] if values.ndim == 3 else values[g]


def _reader_components(
    tables: list[ComparisonTable], c0: np.ndarray, n0: np.ndarray, wp: np.ndarray, wr: np.ndarray
) -> np.ndarray:
    """:func:`~judge_transfer_audit.verdict.paired_bootstrap.reader_component` of every cell (one chunk of replicates
    each)."""
    dense = [t.dense() for t in tables]
    cr = _reader_sums(np.stack([c for c, _ in dense]), wr)
    nr = _reader_sums(np.stack([n for _, n in dense]), wr)
    ones = np.ones_like(c0)
    v0 = _vote_share(c0, n0, ones)
    pairs = _vote_share(c0[:, None, :], n0[:, None, :], wp)
    shares = _pair_shares(cr, nr)  # the readers-only and product replicates' pair shares
    readers = _weighted_share(*shares, ones[:, None, :])
    product = _weighted_share(*shares, wp)
    n_pairs, n_readers = c0.shape[1], tables[0].n_readers
    # correct_two_way's reader component, on the rows it computes from every replicate (all finite)
    gp, gr = n_pairs, n_readers
    whole = np.isfinite(v0) & (np.isfinite(product) & np.isfinite(pairs) & np.isfinite(readers)).all(axis=1)
    whole &= product.shape[1] >= 2
    out = np.empty(len(tables))
    if whole.any():
        a_r = gr / (gr - 1) * readers[whole].var(ddof=1, axis=1)
        a_e = gp * gr / ((gp - 1) * (gr - 1)) * (product[whole] - pairs[whole] - readers[whole]).var(ddof=1, axis=1)
        out[whole] = np.where(a_r > a_e, a_r - a_e, 0.0)
    for g in np.flatnonzero(~whole):
        c = correct_two_way(float(v0[g]), product[g], pairs[g], readers[g], n_pairs, n_readers).reader_component
        out[g] = float(c) if np.isfinite(c) else 0.0
    return out


def _logit_shift_factors(original) -> np.ndarray:
    """:func:`~judge_transfer_audit.verdict.paired_bootstrap.logit_shift_factor` of every cell."""
    v, tau2 = np.asarray(original.vote_share, float), np.asarray(original.between_pair_var, float)
    spread = v * (1.0 - v) - np.where(np.isfinite(tau2), tau2, 0.0)
    ok = np.isfinite(spread) & (spread > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ok, np.maximum(1.0, 0.25 / np.where(ok, spread, 1.0)), 1.0)


def _between_pair_replicates(original, n_boot, rngs, share_var, within_var) -> np.ndarray:
    """:func:`~judge_transfer_audit.verdict.paired_bootstrap.between_pair_replicates` of every cell (cells x
    replicates):
    the draws per cell from its stream, the chi-square quantiles of the copula draws on one stacked array."""
    from scipy.special import ndtr

    out = np.empty((len(rngs), n_boot))
    copula = []
    finite = (np.isfinite(share_var) & np.isfinite(within_var)).all(axis=1)
    with np.errstate(invalid="ignore"):  # rows with non-finite replicates are drawn by between_pair_draws
        var, sd_share, sd_within = share_var.var(ddof=1, axis=1), share_var.std(axis=1), within_var.std(axis=1)
    for g, rng in enumerate(rngs):
        cell = _cell_estimands(original, g)
        if finite[g]:
            d = between_pair_draws_finite(
                cell, n_boot, rng, share_var[g], within_var[g], var[g], sd_share[g], sd_within[g]
            )
        else:
            d = between_pair_draws(cell, n_boot, rng, share_var[g], within_var[g])
        if d.kind == "copula":
            copula.append((g, d))
        else:
            out[g] = d.replicates()
    if copula:
        rows = [g for g, _ in copula]
        col = {k: np.array([getattr(d, k) for _, d in copula], float)[:, None] for k in ("s2", "sw2", "m1", "df_b")}
        s2_reps = col["s2"] * chi2_ppf(ndtr(np.stack([d.first for _, d in copula])), col["df_b"]) / col["df_b"]
        within = [d for _, d in copula if d.df_w > 0]
        sw2_reps = np.empty((len(copula), n_boot))
        if within:
            at = [k for k, (_, d) in enumerate(copula) if d.df_w > 0]
            sw2 = np.array([d.sw2 for d in within], float)[:, None]
            df_w = np.array([d.df_w for d in within], float)[:, None]
            sw2_reps[at] = sw2 * chi2_ppf(ndtr(np.stack([d.second for d in within])), df_w) / df_w
        for k, (_, d) in enumerate(copula):
            if not d.df_w > 0:
                sw2_reps[k] = np.full(n_boot, d.sw2)
        out[rows] = s2_reps - sw2_reps * col["m1"]
    return out


class _CellEstimands:
    """The scalar moments :func:`~judge_transfer_audit.verdict.paired_bootstrap.between_pair_draws` reads, of one
    stacked cell."""

    __slots__ = ("share_var", "within_var", "mean_inv_n", "df_between", "df_within", "between_pair_var")

    def __init__(self, original, g: int):
        for name in self.__slots__:
            setattr(self, name, np.asarray(getattr(original, name))[g])


def _cell_estimands(original, g: int) -> _CellEstimands:
    return _CellEstimands(original, g)


__all__ = ["STACK_ELEMENTS", "bootstrap_cells"]
