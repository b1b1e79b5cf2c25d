"""Chance-corrected agreement of the judge with the human readers, with two-way intervals.

:func:`judge_agreement` reads the normalised ``votes`` frame of :mod:`judge_transfer_audit.model.data` and one
judge configuration's per-pair verdicts (``pair_id, criterion, y_judge`` with 1 = focal,
0 = other, 0.5 = tie, NaN = no verdict) and returns, per cell (matchup x criterion), per
criterion pooled over matchups and over everything:

* ``kappa_majority``: Cohen's kappa of the judge against the readers' majority (ties
  abstain from the majority; a split unit is not scored; categories focal / other / tie);
* ``kappa_readers``: Cohen's kappa of the judge against each reader on that reader's
  units, averaged over readers (each reader's own kappa is in ``readers``);
* ``alpha_human``: Krippendorff's nominal alpha among the readers (as in
  :func:`judge_transfer_audit.statistics.agreement.agreement_table`), ``alpha_judge_human``: nominal alpha of the
  two-coder data (judge, reader) stacked over every reader's vote, and
  ``alpha_difference`` = judge-human minus human-human;
* ``raw_human`` (share of agreeing reader pairs), ``raw_judge_human`` (share of reader
  votes equal to the judge's verdict) and ``raw_difference``.

Rows pooled over matchups take chance agreement (kappa) and expected disagreement (alpha)
within each matchup and pool them, so no figure depends on which system of a matchup is
focal (see :func:`agreement_statistics`). The votes are held as sparse indicators (memory
grows with the votes, not units x readers).

The human-human and judge-human alpha and raw agreement are computed on the same units:
those with at least two human votes (the only units with human-human information).

Intervals: the pairs x readers bootstrap of :mod:`judge_transfer_audit.statistics.uncertainty.bootstrap` (pairs
resampled within matchups, readers resampled, the product of the two weights) gives each
statistic's method-of-moments two-way variance ``V`` and its degrees of freedom ``df``
(:func:`judge_transfer_audit.statistics.uncertainty.two_way.correct_two_way`); the interval is
``estimate -/+ t_df sqrt(V)`` (centred on the estimate: see :func:`_interval`). A resampled
reader's copies are never paired with each other (a reader does not agree with itself).
With fewer than two readers the interval resamples pairs only (``scheme = "pairs"``).
The two-way correction is exact for a mean; for kappa and alpha (smooth functions of
means) it is the first-order (delta-method) version.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judge_transfer_audit.core.ids import ranks
from judge_transfer_audit.core.rng import resolve_rng
from judge_transfer_audit.model.estimate import Estimate
from judge_transfer_audit.statistics.agreement import POOLED, _check_judge, _check_votes
from judge_transfer_audit.statistics.judge.agreement_stats import (
    ScopeVotes,
    StackedCells,
    agreement_statistics,
    reader_kappas,
    scope_votes,
    stacked_cells,
)
from judge_transfer_audit.statistics.uncertainty.bootstrap import multinomial_weights

STATISTICS = (
    "kappa_majority",
    "kappa_readers",
    "alpha_judge_human",
    "alpha_human",
    "alpha_difference",
    "raw_judge_human",
    "raw_human",
    "raw_difference",
)
#: the range of each statistic: the rescaled two-way replicates can leave it, the interval cannot
_RANGE = dict(
    kappa_majority=(-1.0, 1.0),
    kappa_readers=(-1.0, 1.0),
    raw_judge_human=(0.0, 1.0),
    raw_human=(0.0, 1.0),
    raw_difference=(-1.0, 1.0),
)


# ----------------------------------------------------------------------------- result
@dataclass(frozen=True)
class JudgeAgreementRow:
    """Judge-human agreement in one scope (see the module docstring for each statistic).

    ``level`` is ``"cell"``, ``"criterion"`` (pooled over matchups) or ``"all"``; ``scope``
    is ``"matchup/criterion"`` with ``all`` where pooled. ``n_units_scored`` counts the
    units with a judge verdict and a decisive reader majority (the units of
    ``kappa_majority``); ``n_units_pairable`` those with at least two human votes (the
    units of the alpha and raw comparisons). ``scheme`` is the interval's resampling
    (``two-way``, ``pairs`` or ``none``) and ``df`` the two-way degrees of freedom of
    ``kappa_majority`` (NaN for other schemes).
    """

    level: str
    scope: str
    matchup: str
    criterion: str
    n_pairs: int
    n_readers: int
    n_units: int
    n_units_scored: int
    n_units_pairable: int
    kappa_majority: Estimate
    kappa_readers: Estimate
    alpha_judge_human: Estimate
    alpha_human: Estimate
    alpha_difference: Estimate
    raw_judge_human: Estimate
    raw_human: Estimate
    raw_difference: Estimate
    scheme: str
    df: float


@dataclass(frozen=True)
class JudgeAgreement:
    """Judge-human agreement per scope with bootstrap intervals (see :func:`judge_agreement`).

    ``readers`` has one row per scope x reader: ``scope``, ``reader_id``, ``n_units`` (units
    where both the reader and the judge gave a verdict) and ``kappa``.
    """

    rows: tuple[JudgeAgreementRow, ...]
    readers: pd.DataFrame
    judge: str
    n_boot: int
    level: float
    seed: int | None

    def to_frame(self) -> pd.DataFrame:
        out = []
        for r in self.rows:
            flat = {k: getattr(r, k) for k in JudgeAgreementRow.__dataclass_fields__ if k not in STATISTICS}
            for name in STATISTICS:
                e = getattr(r, name)
                flat.update({name: e.estimate, f"{name}_ci_low": e.ci_low, f"{name}_ci_high": e.ci_high})
            out.append(flat)
        return pd.DataFrame(out)

    def row(self, scope: str = f"{POOLED}/{POOLED}") -> JudgeAgreementRow:
        for r in self.rows:
            if r.scope == scope:
                return r
        raise KeyError(scope)

    def __str__(self) -> str:
        lines = [
            f"Judge-human agreement of {self.judge or 'the judge'} ({self.level:.0%} intervals, "
            f"{self.n_boot} pairs x readers bootstrap replicates)"
        ]
        for r in self.rows:
            lines.append(
                f"  {r.scope}: kappa vs majority {r.kappa_majority}; alpha judge-human minus "
                f"human-human {r.alpha_difference}; raw agreement difference {r.raw_difference}"
            )
        return "\n".join(lines)


# ----------------------------------------------------------------------------- computation
_BLOCK_MIN, _BLOCK_MAX = 16, 256  #: replicates drawn from one seed (the same weights in every scope)
_CELLS = 2**21  #: replicates x units per computed chunk (bounds memory at ~ 20 x 8 bytes x this)
_KEPT_MAX = 2**22  #: resampling weights kept between scopes (entries; 32 MB)
_READERS_KEPT_MAX = 2**25  #: every replicate's reader weights kept (entries; 256 MB) up to this many


@dataclass(frozen=True)
class _Design:
    """Integer codes of the votes, units and pairs (one row per vote / unit / pair)."""

    vote_unit: np.ndarray
    vote_reader: np.ndarray
    vote_category: np.ndarray
    unit_pair: np.ndarray
    unit_matchup: np.ndarray
    unit_judge: np.ndarray
    pair_matchup: np.ndarray
    pair_position: np.ndarray  #: a pair's index among its matchup's pairs
    matchup_sizes: np.ndarray
    reader_ids: np.ndarray


def _design(frame: pd.DataFrame, verdicts: pd.DataFrame) -> tuple[_Design, pd.DataFrame]:
    units = frame.drop_duplicates("unit")[["unit", "pair_id", "criterion", "matchup"]].reset_index(drop=True)
    reader_ids, vote_reader = ranks(frame["reader_id"].to_numpy())
    pair_ids, unit_pair = ranks(units["pair_id"].to_numpy())
    matchups, unit_matchup = ranks(units["matchup"].to_numpy())
    pair_matchup = np.zeros(len(pair_ids), dtype=np.int64)
    pair_matchup[unit_pair] = unit_matchup
    order = np.argsort(pair_matchup, kind="stable")
    sizes = np.bincount(pair_matchup, minlength=len(matchups))
    position = np.empty(len(pair_ids), dtype=np.int64)
    position[order] = np.arange(len(pair_ids)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    judged = units.merge(verdicts, on=["pair_id", "criterion"], how="left")["y_judge"].to_numpy(float)
    return _Design(
        vote_unit=pd.Index(units["unit"]).get_indexer(frame["unit"]),
        vote_reader=vote_reader,
        vote_category=frame["category"].to_numpy().astype(np.int64),
        unit_pair=unit_pair,
        unit_matchup=unit_matchup,
        unit_judge=np.where(np.isnan(judged), -1, np.where(judged == 0.5, 2, judged)).astype(np.int64),
        pair_matchup=pair_matchup,
        pair_position=position,
        matchup_sizes=sizes,
        reader_ids=reader_ids,
    ), units


def _scopes(units: pd.DataFrame, pooled_only: bool = False):
    """Yield (level, matchup, criterion, unit indices) for every scope, cells first."""
    everything = np.arange(len(units))
    if pooled_only:
        yield "all", POOLED, POOLED, everything
        return
    cells = units.groupby(["matchup", "criterion"], sort=False).indices
    if len(cells) > 1:
        for (matchup, criterion), idx in cells.items():
            yield "cell", matchup, criterion, idx
    if units["matchup"].nunique() > 1 and units["criterion"].nunique() > 1:
        for criterion, idx in units.groupby("criterion", sort=False).indices.items():
            yield "criterion", POOLED, criterion, idx
    yield "all", POOLED, POOLED, everything


class _Weights:
    """Pairs x readers resampling weights, drawn block by block from per-block seeds.

    Pairs are resampled within their matchup, readers over all readers; block ``k``'s weights
    for matchup ``m`` come from the seed ``(seed_k, 1, m)`` and its reader weights from
    ``(seed_k, 0)``, so every scope sees the same replicates without holding replicates x
    pairs in memory.
    """

    def __init__(self, rng: np.random.Generator, design: _Design, n_boot: int):
        self.design, self.n_boot = design, n_boot
        # replicates per block: many for small data (fewer, larger products), few for large (memory)
        self.block = int(max(_BLOCK_MIN, min(_BLOCK_MAX, _CELLS // max(len(design.unit_pair), 1))))
        self.seeds = rng.integers(0, 2**63 - 1, size=max(math.ceil(n_boot / self.block), 0))
        # a block's draws, kept for the next scope when small (10k cells each redrew the same weights)
        self._kept: dict[tuple, np.ndarray] = {}
        self._kept_size = 0
        self._grouped: tuple | None = None

    def blocks(self):
        for k, seed in enumerate(self.seeds):
            yield int(seed), min(self.block, self.n_boot - k * self.block)

    def _draw(self, seed_key: list[int], n: int, size: int, keep: bool = False) -> np.ndarray:
        """``multinomial_weights`` from the seed ``seed_key`` (the same draws whether kept or not); ``keep``:
        kept whatever the budget (outside it)."""
        key = (*seed_key, n, size)
        got = self._kept.get(key)
        if got is None:
            got = multinomial_weights(np.random.default_rng(seed_key), n, size)
            if keep:
                self._kept[key] = got
            elif self._kept_size + got.size <= _KEPT_MAX:
                self._kept[key] = got
                self._kept_size += got.size
        return got

    def units(self, seed: int, size: int, unit_pair: np.ndarray) -> np.ndarray:
        """The weights (size, *unit_pair.shape) of the pairs ``unit_pair`` (pair codes, any shape)."""
        d = self.design
        out = np.empty((size, *unit_pair.shape))
        flat_out = out.reshape(size, -1)
        for m, cols, position in self._by_matchup(unit_pair):
            w = self._draw([seed, 1, m], int(d.matchup_sizes[m]), size)
            flat_out[:, cols] = w[:, position]
        return out

    def _by_matchup(self, unit_pair: np.ndarray) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """The entries of ``unit_pair`` grouped by matchup: ``(matchup, entries, each one's pair position)``,
        from one sort, made once for the blocks of one scope (the last ``unit_pair`` asked for is kept)."""
        if self._grouped is not None and self._grouped[0] is unit_pair:
            return self._grouped[1]
        d = self.design
        flat_pair = unit_pair.reshape(-1)
        unit_m = d.pair_matchup[flat_pair]
        order = np.argsort(unit_m, kind="stable")
        matchups, starts = np.unique(unit_m[order], return_index=True)
        groups = [
            (m, order[lo:hi], d.pair_position[flat_pair[order[lo:hi]]])
            for m, lo, hi in zip(matchups.tolist(), starts.tolist(), [*starts[1:].tolist(), order.shape[0]])
        ]
        self._grouped = (unit_pair, groups)
        return groups

    def readers(self, seed: int, size: int) -> np.ndarray:
        """The block's weights of every reader (size, readers). Every scope reads them, so they are drawn
        once and kept (replicates x readers in all, up to ``_READERS_KEPT_MAX``): drawn again per scope, the
        cells of a study with many readers cost cells x readers."""
        n_readers = len(self.design.reader_ids)
        return self._draw([seed, 0], n_readers, size, keep=self.n_boot * n_readers <= _READERS_KEPT_MAX)


def _replicates(
    sv: ScopeVotes, weights: _Weights, unit_pair: np.ndarray, readers_in: np.ndarray, two_way: bool
) -> tuple[dict[str, np.ndarray], ...]:
    """Replicates resampling pairs only, readers only and both (the last two when ``two_way``).

    The blocks' weights are stacked into as few chunks as the memory bound allows (``_CELLS``
    replicates x units; a small scope: one chunk), and each chunk gives one
    :func:`agreement_statistics` call per kind (:func:`_replicate_kinds`): each replicate row is
    computed on its own, so stacking does not move a digit, it only removes per-call overhead.
    A large scope's chunks are computed a block at a time (:func:`_computed_together`).
    """
    rows_per_call = max(1, _CELLS // max(sv.n_units, 1))
    sizes = _chunk_sizes([size for _, size in weights.blocks()], rows_per_call)
    ones = (np.ones((1, sv.n_units)), np.ones((1, len(readers_in))))  # the side not resampled
    weight_chunks = _weight_chunks(weights, unit_pair, readers_in, _computed_together(sizes, weights.block))
    return _replicate_kinds(sv, weight_chunks, ones, two_way)


def _chunk_sizes(block_sizes: list[int], rows_per_call: int) -> list[int]:
    """The replicates of each chunk: the blocks cut into pieces of at most ``rows_per_call`` replicates, and
    consecutive pieces joined while they hold at most that many."""
    sizes, rows = [], 0
    for size in block_sizes:
        for lo in range(0, size, rows_per_call):
            piece = min(rows_per_call, size - lo)
            if rows and rows + piece > rows_per_call:
                sizes.append(rows)
                rows = 0
            rows += piece
    return sizes + [rows] if rows else sizes


def _computed_together(sizes: list[int], block: int) -> list[int]:
    """Consecutive chunks joined while together they hold at most one block's replicates.

    With a million units the memory bound cuts chunks of two replicates, and each pass over the votes costs
    about as much per replicate as for a chunk of hundreds: a block is already in memory, so its chunks are
    computed together. A chunk of one replicate stays alone (numpy sums the readers of a lone row in another
    order: its replicate keeps its digits)."""
    out: list[int] = []
    for n in sizes:
        if out and n > 1 and out[-1] > 1 and out[-1] + n <= block:
            out[-1] += n
        else:
            out.append(n)
    return out


def _weight_chunks(weights: _Weights, unit_pair: np.ndarray, readers_in: np.ndarray, sizes: list[int]):
    """Yield ``(unit weights, reader weights)`` of ``sizes[i]`` replicates in turn, the blocks' draws in
    order, each block drawn when the chunks reach it (one or two blocks' weights in memory at a time, not
    every replicate's: 500 replicates x a million units would be 4 GB)."""
    blocks = weights.blocks()
    pending_u: list[np.ndarray] = []
    pending_r: list[np.ndarray] = []
    held = 0
    for n in sizes:
        while held < n:
            seed, size = next(blocks)
            pending_u.append(weights.units(seed, size, unit_pair))
            pending_r.append(weights.readers(seed, size)[:, readers_in])
            held += size
        wu = pending_u[0] if len(pending_u) == 1 else np.concatenate(pending_u)
        wr = pending_r[0] if len(pending_r) == 1 else np.concatenate(pending_r)
        yield wu[:n], wr[:n]
        pending_u, pending_r, held = [wu[n:]], [wr[n:]], held - n


def _replicate_kinds(layout, weight_chunks, ones: tuple[np.ndarray, np.ndarray], two_way: bool) -> tuple[dict, ...]:
    """:func:`agreement_statistics` of every chunk of ``(unit weights, reader weights)`` for each kind of
    replicate (pairs; and readers, product when ``two_way``), concatenated along the replicates.

    The side not resampled stays one row of ones, and what depends on it alone (its reader counts,
    its reader kappas) is computed once; a chunk's reader counts serve both kinds that resample
    readers, and its per-reader kappas (a function of the unit weights only) both kinds that
    resample pairs.
    """
    from judge_transfer_audit.core.threads import single_threaded_blas

    kinds = ("pairs", "readers", "product") if two_way else ("pairs",)
    ones_u, ones_r = ones
    out: dict[str, list] = {kind: [] for kind in kinds}
    with single_threaded_blas():  # many small products: OpenBLAS thread hand-offs cost more than the work
        unweighted = layout.reader_counts(ones_r)  # the same for every chunk
        unit_kappas = layout.reader_kappas(ones_u) if two_way else None  # likewise, for the "readers" kind
        for wu, wr in weight_chunks:
            weighted = layout.reader_counts(wr) if two_way else None  # shared by "readers" and "product"
            wu_kappas = layout.reader_kappas(wu) if two_way else None  # shared by "pairs" and "product"
            for kind in kinds:
                if kind == "readers":
                    out[kind].append(_by_reader_weights(layout, ones_u, wr, weighted, unit_kappas))
                    continue
                u, r, c, kap = {
                    "pairs": (wu, ones_r, unweighted, wu_kappas),
                    "product": (wu, wr, weighted, wu_kappas),
                }[kind]
                out[kind].append(agreement_statistics(layout, u, r, c, kap))
    return tuple({k: np.concatenate([c[k] for c in out[kind]], axis=-1) for k in STATISTICS} for kind in kinds)


def _by_reader_weights(layout, ones_u: np.ndarray, wr: np.ndarray, weighted, unit_kappas) -> dict[str, np.ndarray]:
    """The replicates resampling readers only: a function of each replicate's reader weights, so with
    few readers (few distinct weight vectors: 10 for 3 readers) each distinct vector is computed once
    and copied to its replicates. Only where every sum over readers runs over fewer than 8 of them,
    which numpy adds one after the other whatever the arrays' layout, and, with 8 strata or more, where
    there are at least two distinct vectors: a sum over strata then runs along the replicates' layout
    (one row alone is contiguous and summed pairwise), as in the replicates computed in place. The
    same digits either way (tests/audit/statistics/judge/test_judge_agreement.py)."""
    n_r = wr.shape[-1]
    flat = wr.reshape(-1, n_r)
    base = int(flat.max(initial=0)) + 1  # the weights are counts: each vector one integer in this base
    if n_r >= 8 or n_r * math.log2(base) > 62:
        return agreement_statistics(layout, ones_u, wr, weighted, unit_kappas)
    keys = flat.astype(np.int64) @ (base ** np.arange(n_r, dtype=np.int64))
    _, first, index = np.unique(keys, return_index=True, return_inverse=True)
    if 2 * first.shape[0] > wr.shape[-2] or (layout.n_strata >= 8 and first.shape[0] < 2):
        return agreement_statistics(layout, ones_u, wr, weighted, unit_kappas)
    patterns = flat[first]
    patterns = patterns.reshape((1,) * (wr.ndim - 2) + patterns.shape)
    stats = agreement_statistics(layout, ones_u, patterns, layout.reader_counts(patterns), unit_kappas)
    index = index.reshape(wr.shape[:-1])
    return {
        k: np.take_along_axis(np.broadcast_to(v, (*index.shape[:-1], v.shape[-1])), index, axis=-1)
        for k, v in stats.items()
    }


def _py_square(x: np.ndarray) -> np.ndarray:
    """``x ** 2`` as Python floats compute it (the C library's ``pow``, which now and then rounds
    differently from numpy's ``x * x``): the vectorised correction keeps the scalar one's digits."""
    return np.array([v**2 for v in x.tolist()], dtype=float).reshape(x.shape)


def _compacted_variances(values: tuple[np.ndarray, ...], ok: np.ndarray, rows: np.ndarray) -> list[np.ndarray]:
    """``x[r][ok[r]].var(ddof=1)`` for every array ``x`` of ``values`` (N, B) and row ``r`` in ``rows``
    (each with at least two usable replicates; NaN elsewhere), the rows with as many usable
    replicates together: each row's variance is the same contiguous 1-D reduction as on its own."""
    out = [np.full(ok.shape[0], math.nan) for _ in values]
    count = ok.sum(axis=1)
    for n in np.unique(count[rows]):
        take = np.flatnonzero(rows & (count == n))
        mask = ok[take]
        for x, o in zip(values, out):
            o[take] = x[take][mask].reshape(-1, n).var(axis=1, ddof=1)
    return out


def two_way_variances(
    estimate: np.ndarray,
    product: np.ndarray,
    pairs: np.ndarray,
    readers: np.ndarray,
    n_pairs: np.ndarray,
    n_readers: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The variance ``V`` and degrees of freedom ``df`` of
    :func:`judge_transfer_audit.statistics.uncertainty.two_way.correct_two_way` for many statistics at once (row ``i``:
    ``estimate[i]``, the replicates ``product[i]``, ``pairs[i]``, ``readers[i]`` (N, B), ``n_pairs[i]``,
    ``n_readers[i]``), bit for bit its numbers (NaN where it gives NaN)."""
    gp, gr = np.asarray(n_pairs, dtype=np.int64), np.asarray(n_readers, dtype=np.int64)
    ok = np.isfinite(product) & np.isfinite(pairs) & np.isfinite(readers)
    valid = (ok.sum(axis=1) >= 2) & (gp >= 2) & (gr >= 2) & np.isfinite(estimate)
    var_p, var_r, var_e = _compacted_variances((pairs, readers, product - pairs - readers), ok, valid)
    # the scalar version's expressions, in its order
    gp1, gr1 = np.where(valid, gp - 1, 1), np.where(valid, gr - 1, 1)
    a_p = gp / gp1 * var_p
    a_r = gr / gr1 * var_r
    a_e = gp * gr / (gp1 * gr1) * var_e
    c_p = np.where(a_p > a_e, a_p - a_e, 0.0)
    c_r = np.where(a_r > a_e, a_r - a_e, 0.0)
    v = a_e + c_p + c_r
    den = _py_square(c_p) / gp1 + _py_square(c_r) / gr1 + _py_square(a_e) / (gp1 * gr1)
    with np.errstate(invalid="ignore", divide="ignore"):
        df = np.where(den > 0, _py_square(v) / np.where(den > 0, den, 1.0), math.inf)
    return np.where(valid, v, math.nan), np.where(valid, df, math.nan)


def replicate_variances(replicates: np.ndarray) -> np.ndarray:
    """The variance (ddof 1) of each row's finite replicates (N, B) -> (N,), NaN with fewer than two."""
    ok = np.isfinite(replicates)
    (var,) = _compacted_variances((replicates,), ok, ok.sum(axis=1) >= 2)
    return var


def _intervals(
    estimate: np.ndarray, variance: np.ndarray, df: np.ndarray, level: float, statistic: str
) -> tuple[np.ndarray, np.ndarray]:
    """``estimate -/+ t_df sqrt(variance)`` (normal quantile where ``df`` is not a positive finite
    number), kept inside the statistic's range; NaN where the estimate or the variance is not finite.

    Centred on the estimate rather than read off the replicates' percentiles: resampling
    readers gives each replicate a noisier majority than the data's, so the replicates of
    the majority-based statistics sit systematically below the estimate (a judge that tracks
    the readers' majority shows it most); their spread is still the spread we need.
    """
    from scipy.special import ndtri, stdtrit

    fine = np.isfinite(estimate) & np.isfinite(variance)
    t = np.isfinite(df) & (df > 0)
    # stdtrit is what scipy.stats.t.ppf evaluates (without its ~1 ms of argument handling per call)
    q = np.where(t, stdtrit(np.where(t, df, 1.0), 0.5 + level / 2.0), ndtri(0.5 + level / 2.0))
    half = q * np.sqrt(np.maximum(np.where(fine, variance, 0.0), 0.0))
    low, high = _RANGE.get(statistic, (-math.inf, math.inf))
    return (
        np.where(fine, np.maximum(estimate - half, low), math.nan),
        np.where(fine, np.minimum(estimate + half, high), math.nan),
    )


def _bounds(
    point: dict[str, np.ndarray],
    replicates: tuple[dict[str, np.ndarray], ...] | None,
    n_pairs: np.ndarray,
    n_readers: np.ndarray,
    level: float,
) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], np.ndarray]:
    """Every statistic's interval bounds and the two-way df of ``kappa_majority`` for N scopes:
    ``point[k]`` (N,), ``replicates`` the kinds of :func:`_replicate_kinds` ((N, B) each; pairs
    only: the interval's variance is the pairs replicates'), None without replicates."""
    nan = np.full(n_pairs.shape[0], math.nan)
    if replicates is None:
        return {k: (nan, nan) for k in STATISTICS}, nan
    bounds, df_majority = {}, nan
    for k in STATISTICS:
        if len(replicates) == 3:
            by_pairs, by_readers, product = (r[k] for r in replicates)
            variance, df = two_way_variances(point[k], product, by_pairs, by_readers, n_pairs, n_readers)
            if k == "kappa_majority":
                df_majority = df
        else:
            variance, df = replicate_variances(replicates[0][k]), np.full(nan.shape, math.inf)
        bounds[k] = _intervals(point[k], variance, df, level, k)
    return bounds, df_majority


def judge_agreement(
    votes: pd.DataFrame,
    judge_choice: pd.DataFrame,
    *,
    judge: str = "",
    n_boot: int = 1000,
    level: float = 0.95,
    rng: int | np.random.Generator | None = None,
    pooled_only: bool = False,
) -> JudgeAgreement:
    """Cohen's kappa and judge-minus-human alpha / raw agreement, per scope, with intervals.

    Parameters
    ----------
    votes : DataFrame
        Normalised votes (pair_id, reader_id, criterion, matchup, y: 1 focal, 0 other, NaN tie).
    judge_choice : DataFrame
        One configuration's verdicts: pair_id, criterion, y_judge (1, 0, 0.5 tie, NaN none).
    judge : str
        The configuration's name (recorded).
    n_boot : int
        Bootstrap replicates (0: estimates only). Only their variances are used, so a few
        hundred suffice (500 replicates estimate a standard error to ~3%).
    level : float
        Interval level.
    rng : int, Generator or None
        Seed of the bootstrap (recorded in ``seed``).
    pooled_only : bool
        Only the ``all/all`` row (what ranking configurations needs).

    Returns
    -------
    JudgeAgreement
        One :class:`JudgeAgreementRow` per scope (cells, criteria pooled over matchups when
        there are several of each, ``all``) and each reader's kappa per scope.

    Raises
    ------
    InputError
        As :func:`judge_transfer_audit.statistics.agreement.reader_baseline` (missing columns, votes or verdicts out of
        range, repeated votes or verdicts).

    Notes
    -----
    Statistics are NaN (never an error) where undefined: every vote in one category, no
    judge verdict, no unit with two human votes. Validated against R ``psych::cohen.kappa``
    (kappa against the majority and against each reader) and the ``krippendorff`` package
    (both alphas) in ``tests/reference/judge_agreement/``.
    """
    frame = _check_votes(votes, ("matchup", "criterion"))
    verdicts = _check_judge(judge_choice)
    rng, seed = resolve_rng(rng)
    design, units = _design(frame, verdicts)
    run = _Run(design, _Weights(rng, design, int(n_boot)), int(n_boot), float(level))
    scopes = list(_scopes(units, pooled_only))
    done = _stacked_cells(run, scopes)
    parts = [done[i] if i in done else _one_scope(run, *scope) for i, scope in enumerate(scopes)]
    return JudgeAgreement(
        rows=tuple(row for row, _ in parts),
        readers=_reader_frame([readers for _, readers in parts]),
        judge=judge,
        n_boot=int(n_boot),
        level=float(level),
        seed=seed,
    )


class _Run:
    """What every scope of one :func:`judge_agreement` call reads: the design, the votes by unit
    (``vote_order[starts[u]:starts[u + 1]]`` are unit ``u``'s), the weights and the settings."""

    def __init__(self, design: _Design, weights: _Weights, n_boot: int, level: float):
        self.design, self.weights, self.n_boot, self.level = design, weights, n_boot, level
        self.vote_order = np.argsort(design.vote_unit, kind="stable")
        self.starts = np.searchsorted(design.vote_unit[self.vote_order], np.arange(design.unit_pair.shape[0] + 1))

    def votes_of(self, unit_idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The votes of the units ``unit_idx`` (unit by unit) and the position of each one's unit in ``unit_idx``."""
        lengths = self.starts[unit_idx + 1] - self.starts[unit_idx]
        offsets = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        return self.vote_order[np.repeat(self.starts[unit_idx], lengths) + offsets], np.repeat(
            np.arange(unit_idx.shape[0]), lengths
        )


def _one_scope(run: _Run, level_name: str, matchup, criterion, unit_idx: np.ndarray) -> tuple:
    """One scope's row and reader kappas, from its sparse votes (:class:`ScopeVotes`)."""
    d = run.design
    unit_idx = np.sort(unit_idx)
    votes_in, local_unit = run.votes_of(unit_idx)
    readers_in, local_reader = np.unique(d.vote_reader[votes_in], return_inverse=True)
    sv = scope_votes(
        local_unit,
        local_reader,
        d.vote_category[votes_in],
        d.unit_judge[unit_idx],
        d.unit_matchup[unit_idx],
        n_readers=len(readers_in),
    )
    unit_pair = d.unit_pair[unit_idx]
    n_p, n_r, n_u = len(np.unique(unit_pair)), len(readers_in), len(unit_idx)
    point = agreement_statistics(sv, np.ones((1, n_u)), np.ones((1, n_r)))
    replicates = None
    if run.n_boot > 0 and n_p >= 2:
        replicates = tuple(
            {k: v[None, :] for k, v in kind.items()}
            for kind in _replicates(sv, run.weights, unit_pair, readers_in, n_r >= 2)
        )
    bounds, df = _bounds(point, replicates, np.array([n_p]), np.array([n_r]), run.level)
    focal, other = (np.asarray(sv.ind[c].sum(axis=1)).ravel() for c in (1, 0))
    row = _row(
        level_name,
        matchup,
        criterion,
        dict(
            n_pairs=n_p,
            n_readers=n_r,
            n_units=n_u,
            n_units_scored=int(np.sum((focal != other) & (sv.judge >= 0))),
            n_units_pairable=int(sv.pairable.sum()),
            scheme="none" if replicates is None else ("two-way" if n_r >= 2 else "pairs"),
            df=float(df[0]),
        ),
        {k: (point[k][0], bounds[k][0][0], bounds[k][1][0]) for k in STATISTICS},
    )
    kappas, n_used = reader_kappas(sv)
    return row, (f"{matchup}/{criterion}", d.reader_ids[readers_in], n_used, kappas)


def _row(level_name: str, matchup, criterion, counts: dict, estimates: dict) -> JudgeAgreementRow:
    return JudgeAgreementRow(
        level=level_name,
        scope=f"{matchup}/{criterion}",
        matchup=str(matchup),
        criterion=str(criterion),
        **counts,
        **{k: Estimate(float(e), float(low), float(high)) for k, (e, low, high) in estimates.items()},
    )


def _reader_frame(parts: list[tuple]) -> pd.DataFrame:
    """The ``readers`` table from each scope's ``(scope, reader ids, units, kappas)``."""
    columns = ["scope", "reader_id", "n_units", "kappa"]
    parts = [p for p in parts if len(p[1])]
    if not parts:
        return pd.DataFrame([], columns=columns)
    return pd.DataFrame(
        {
            "scope": np.repeat(np.array([p[0] for p in parts], dtype=object), [len(p[1]) for p in parts]),
            "reader_id": np.concatenate([np.asarray(p[1], dtype=object) for p in parts]).astype(str).astype(object),
            "n_units": np.concatenate([np.asarray(p[2]).astype(int) for p in parts]),
            "kappa": np.concatenate([np.asarray(p[3], dtype=float) for p in parts]),
        },
        columns=columns,
    )


_STACKED_MAX = 4096  #: units x readers of a cell computed densely, stacked with the cells of its shape
_STACKED_CHUNK = 2**20  #: replicates x (the widest of units and 8 readers) of stacked cells per chunk


def _stacked_cells(run: _Run, scopes: list[tuple]) -> dict[int, tuple]:
    """The rows and reader kappas of the small cells (one matchup each), the cells of one shape
    (units x readers) computed together as :class:`StackedCells`: each cell's statistics from its own
    votes and its own replicates (its pairs' and readers' weights, as its own scope would draw them),
    with the arithmetic of its own scope (the same numbers). Keyed by the scope's index; the cells
    too large to hold densely are left out (computed one by one)."""
    d = run.design
    which = [i for i, scope in enumerate(scopes) if scope[0] == "cell"]
    if not which:
        return {}
    idx = [np.sort(scopes[i][3]) for i in which]
    n_units = np.array([x.shape[0] for x in idx])
    unit_start = np.cumsum(n_units) - n_units
    units_all = np.concatenate(idx)
    votes, slot = run.votes_of(units_all)
    vote_cell = np.repeat(np.arange(len(idx)), n_units)[slot]
    local_unit = slot - unit_start[vote_cell]
    n_rt = max(len(d.reader_ids), 1)
    combos, combo_code = np.unique(vote_cell * n_rt + d.vote_reader[votes], return_inverse=True)
    n_readers = np.bincount(combos // n_rt, minlength=len(idx))
    reader_start = np.cumsum(n_readers) - n_readers
    local_reader = combo_code.reshape(-1) - reader_start[vote_cell]
    width = np.maximum(n_units, 8 * n_readers)  # a replicate's widest array: units, or the eight judge x reader tables
    fits = (n_units * n_readers <= _STACKED_MAX) & (max(run.n_boot, 1) * width <= _CELLS)
    shape = n_units * (n_rt + 1) + n_readers
    out: dict[int, tuple] = {}
    for key in dict.fromkeys(shape[fits].tolist()):
        cells = np.flatnonzero(fits & (shape == key))
        u, r = int(n_units[cells[0]]), int(n_readers[cells[0]])
        per_chunk = max(1, _STACKED_CHUNK // (max(run.n_boot, 1) * int(width[cells[0]])))
        for lo in range(0, cells.shape[0], per_chunk):
            chunk = cells[lo : lo + per_chunk]
            position = np.full(len(idx), -1)
            position[chunk] = np.arange(chunk.shape[0])
            mine = position[vote_cell] >= 0
            unit_idx = units_all[unit_start[chunk][:, None] + np.arange(u)]
            layout = stacked_cells(
                position[vote_cell[mine]],
                local_unit[mine],
                local_reader[mine],
                d.vote_category[votes[mine]],
                d.unit_judge[unit_idx],
                r,
            )
            readers_in = combos[reader_start[chunk][:, None] + np.arange(r)] % n_rt
            results = _cells_of_shape(run, layout, d.unit_pair[unit_idx], readers_in)
            for g, cell in enumerate(chunk):
                level_name, matchup, criterion, _ = scopes[which[cell]]
                out[which[cell]] = results(g, level_name, matchup, criterion)
    return out


def _cells_of_shape(run: _Run, layout: StackedCells, unit_pair: np.ndarray, readers_in: np.ndarray):
    """Statistics, intervals and reader kappas of G stacked cells; returns ``part(g, level, matchup,
    criterion)`` giving cell ``g``'s row and reader kappas."""
    g_n, u, r = layout.n_cells, layout.n_units, layout.n_readers
    ones = (np.ones((1, 1, u)), np.ones((1, 1, r)))
    sorted_pairs = np.sort(unit_pair, axis=1)
    n_p = 1 + (np.diff(sorted_pairs, axis=1) != 0).sum(axis=1)
    point = {k: v[:, 0] for k, v in agreement_statistics(layout, *ones).items()}
    boot = (run.n_boot > 0) & (n_p >= 2)
    replicates = None
    if boot.any():
        blocks = list(run.weights.blocks())
        wu = np.concatenate([run.weights.units(seed, size, unit_pair) for seed, size in blocks])
        wr = np.concatenate([run.weights.readers(seed, size)[:, readers_in] for seed, size in blocks])
        weight_chunks = [(np.ascontiguousarray(wu.transpose(1, 0, 2)), np.ascontiguousarray(wr.transpose(1, 0, 2)))]
        replicates = _replicate_kinds(layout, weight_chunks, ones, r >= 2)
    bounds, df = _bounds(point, replicates, n_p, np.full(g_n, r), run.level)
    scheme = np.where(boot, "two-way" if r >= 2 else "pairs", "none")
    nan = np.full(g_n, math.nan)
    bounds = {k: (np.where(boot, low, nan), np.where(boot, high, nan)) for k, (low, high) in bounds.items()}
    df = np.where(boot, df, nan)
    focal, other = layout.ind[1].sum(axis=1), layout.ind[0].sum(axis=1)
    n_scored = ((focal != other) & (layout.judge >= 0)).sum(axis=1)
    n_pairable = layout.pairable.sum(axis=1)
    kappas, n_used = layout.reader_kappas(ones[0])
    reader_ids = run.design.reader_ids[readers_in]
    n_used = n_used[:, 0].astype(int)

    def part(g: int, level_name: str, matchup, criterion) -> tuple:
        row = _row(
            level_name,
            matchup,
            criterion,
            dict(
                n_pairs=int(n_p[g]),
                n_readers=r,
                n_units=u,
                n_units_scored=int(n_scored[g]),
                n_units_pairable=int(n_pairable[g]),
                scheme=str(scheme[g]),
                df=float(df[g]),
            ),
            {k: (point[k][g], bounds[k][0][g], bounds[k][1][g]) for k in STATISTICS},
        )
        return row, (f"{matchup}/{criterion}", reader_ids[g], n_used[g], kappas[g, 0])

    return part
