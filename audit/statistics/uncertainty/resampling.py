"""Resampling primitives of the cluster bootstrap: weights, replicate rates, intervals.

Weights are drawn per *chunk* of :data:`REPLICATE_CHUNK` replicates and per cluster set, each
chunk from its own seed derived from the run's seed, the kind of cluster ("pair" or
"reader"), the cluster ids and the chunk number (:func:`cluster_weights`). So the weights of a
replicate never depend on which process computes it or in what order cells are visited, and
every cell with the same pair set sees the same resampled pairs (the criteria of a matchup),
every cell with the same reader set the same resampled readers.

A cell's replicate rates are computed from its sparse (pair, reader) combinations
(:class:`~judge_transfer_audit.statistics.uncertainty._cells.CellTable`): the product scheme costs one
sparse-times-dense product per chunk, linear in the number of combinations, with no dense pairs x readers table
beyond small cells.
"""

from __future__ import annotations

import numpy as np

from judge_transfer_audit.core.tasks import TaskSeeds, task_seed
from judge_transfer_audit.statistics.uncertainty.two_way import correct_two_way

#: replicates per weight chunk; fixed, so results never depend on how the work is split
REPLICATE_CHUNK = 250
#: cells with at most this many pairs x readers use dense tables (faster than sparse when tiny)
_DENSE_MAX = 20_000
#: larger cells whose pair x reader table has at most this many entries, and at most
#: :data:`_BLAS_FILL` times as many as observed combinations, multiply a dense table by the weights in
#: one BLAS product: ~70 times faster per entry than the sparse product's loop (100k votes, 5k pairs x
#: 200 readers: 0.9 -> 0.2 s), and exact like it (sums of vote counts times resampling counts)
_BLAS_MAX = 2_000_000
_BLAS_FILL = 40


def n_chunks(n_boot: int) -> int:
    return -(-int(n_boot) // REPLICATE_CHUNK)


def chunk_rows(n_boot: int, chunk: int) -> int:
    return min(REPLICATE_CHUNK, int(n_boot) - chunk * REPLICATE_CHUNK)


def chunk_seed(entropy: int, kind: str, ids: tuple[str, ...], chunk: int) -> np.random.SeedSequence:
    """Seed of the resampling of cluster set ``ids`` (``kind`` "pair" or "reader") in ``chunk``."""
    return task_seed(entropy, "bootstrap", kind, ids, chunk)


def cluster_seeds(entropy: int, kind: str, ids: tuple[str, ...]) -> TaskSeeds:
    """The seeds of every chunk of cluster set ``ids``: ``cluster_seeds(...)(chunk)`` is
    :func:`chunk_seed`, with the ids hashed once for all the chunks."""
    return TaskSeeds(entropy, "bootstrap", kind, ids)


def resample_indices(
    entropy: int, kind: str, ids: tuple[str, ...], n_boot: int, chunk: int, seeds: TaskSeeds | None = None
) -> np.ndarray:
    """Cluster indices drawn (with replacement) for the replicates of ``chunk``:
    ``rng.integers(0, n, (rows, n))`` from :func:`chunk_seed`, the stream
    ``scipy.stats.bootstrap`` draws from the same generator (``seeds``: the set's
    :func:`cluster_seeds`, when already made)."""
    seed = seeds(chunk) if seeds is not None else chunk_seed(entropy, kind, ids, chunk)
    rng = np.random.default_rng(seed)
    n = len(ids)
    return rng.integers(0, n, (chunk_rows(n_boot, chunk), n))


def cluster_weights(
    entropy: int, kind: str, ids: tuple[str, ...], n_boot: int, chunk: int, seeds: TaskSeeds | None = None
) -> np.ndarray:
    """``rows x n_clusters`` resampling counts of ``chunk`` (the counts of :func:`resample_indices`)."""
    return _counts(resample_indices(entropy, kind, ids, n_boot, chunk, seeds))


def _counts(idx: np.ndarray) -> np.ndarray:
    """``rows x n`` counts of each index in each row of ``idx`` (``rows x n`` draws in ``[0, n)``), as floats.

    The row offsets are added in place (``idx`` is consumed): at 50k clusters the copy cost as much as the count.
    """
    rows, n = idx.shape
    idx += n * np.arange(rows, dtype=idx.dtype)[:, None]
    return np.bincount(idx.ravel(), minlength=rows * n).astype(float).reshape(rows, n)


def multinomial_weights(rng: np.random.Generator, n_clusters: int, n_boot: int) -> np.ndarray:
    """``n_boot x n_clusters`` resampling counts (each row sums to ``n_clusters``).

    Drawn as ``rng.integers(0, n, (n_boot, n))`` -- the same stream ``scipy.stats.bootstrap``
    uses -- and counted, so replicate ``b`` resamples exactly the clusters scipy's would.
    """
    return _counts(rng.integers(0, n_clusters, (n_boot, n_clusters)))


def weighted_sums(W: np.ndarray, A: np.ndarray) -> np.ndarray:
    """``W @ A`` as one matrix-vector product per column of ``A``.

    Mathematically the same product; done column by column because OpenBLAS runs a
    ``(10000 x 20) @ (20 x 14)`` gemm on several threads, which on a busy two-core machine is
    ~100 times slower (thread contention) than the single-threaded gemv calls.
    """
    if A.ndim == 1:
        return W @ A
    return np.column_stack([W @ A[:, j] for j in range(A.shape[1])]) if A.shape[1] else np.zeros((W.shape[0], 0))


def replicate_rates(
    S: np.ndarray, N: np.ndarray, scheme: str, wp: np.ndarray | None, wr: np.ndarray | None
) -> np.ndarray:
    """Replicate rates of one cell (NaN where a replicate has no decisive vote).

    ``scheme`` is ``"pairs"``, ``"readers"`` or ``"two-way-product"`` (the raw product
    replicates); the corrected ``"two-way"`` replicates come from :func:`two_way_replicates`.
    """
    if scheme == "pairs":
        num, den = wp @ S.sum(1), wp @ N.sum(1)
    elif scheme == "readers":
        num, den = wr @ S.sum(0), wr @ N.sum(0)
    elif scheme == "two-way-product":
        k = S.shape[1]
        m = weighted_sums(wp, np.hstack([S, N]))  # (B x pairs) @ (pairs x 2 readers)
        num, den = (m[:, :k] * wr).sum(1), (m[:, k:] * wr).sum(1)
    else:
        raise ValueError(f"{scheme!r}: use 'pairs', 'readers' or 'two-way-product' (two_way_replicates for 'two-way')")
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def two_way_replicates(S: np.ndarray, N: np.ndarray, wp: np.ndarray, wr: np.ndarray):
    """Variance-corrected two-way replicates of one cell (a :class:`TwoWayCorrection`).

    Uses the pairs, readers and product replicates of the same weights ``wp`` and ``wr``.
    """
    n = N.sum()
    est = float(S.sum() / n) if n > 0 else float("nan")
    return correct_two_way(
        est,
        replicate_rates(S, N, "two-way-product", wp, wr),
        replicate_rates(S, N, "pairs", wp, wr),
        replicate_rates(S, N, "readers", wp, wr),
        S.shape[0],
        S.shape[1],
    )


def jackknife_rates(S: np.ndarray, N: np.ndarray, scheme: str) -> list[np.ndarray]:
    """Leave-one-cluster-out rates: one array per resampled factor."""
    st, nt = S.sum(), N.sum()
    axes = {"pairs": (1,), "readers": (0,), "two-way": (1, 0), "two-way-product": (1, 0)}[scheme]
    out = []
    with np.errstate(invalid="ignore", divide="ignore"):
        for ax in axes:
            s, n = S.sum(ax), N.sum(ax)
            out.append(np.where(nt - n > 0, (st - s) / np.where(nt - n > 0, nt - n, 1.0), np.nan))
    return out


def acceleration(jackknives: list[np.ndarray]) -> float:
    """BCa acceleration from one or several jackknife samples (scipy's multi-sample formula)."""
    num = den = 0.0
    for theta in jackknives:
        theta = theta[np.isfinite(theta)]
        n = theta.size
        if n < 2:
            continue
        u = (n - 1) * (theta.mean() - theta)
        num += float(np.sum(u**3)) / n**3
        den += float(np.sum(u**2)) / n**2
    return num / (6.0 * den**1.5) if den > 0 else 0.0


def percentile_interval(reps: np.ndarray, level: float) -> tuple[float, float]:
    alpha = (1.0 - level) / 2.0
    if reps.size == 0:
        return float("nan"), float("nan")
    lo, hi = np.quantile(reps, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def bca_interval(reps: np.ndarray, estimate: float, accel: float, level: float) -> tuple[float, float, float]:
    """``(low, high, z0)``; NaN bounds when every replicate falls on one side of the estimate."""
    from scipy.special import ndtr, ndtri

    if reps.size == 0 or not np.isfinite(estimate):
        return float("nan"), float("nan"), float("nan")
    share = (np.count_nonzero(reps < estimate) + np.count_nonzero(reps <= estimate)) / (2.0 * reps.size)
    z0 = float(ndtri(share))
    if not np.isfinite(z0):
        return float("nan"), float("nan"), z0
    alpha = (1.0 - level) / 2.0
    za = ndtri(np.array([alpha, 1.0 - alpha]))
    q = ndtr(z0 + (z0 + za) / (1.0 - accel * (z0 + za)))
    lo, hi = np.quantile(reps, q)
    return float(lo), float(hi), z0


def bootstrap_p_value(reps: np.ndarray, null: float) -> float:
    """Two-sided bootstrap p-value of ``rate = null``: ``2 min(P*(<= null), P*(>= null))``.

    Uses the ``(count + 1) / (B + 1)`` convention so it is never 0; it is the smallest
    two-sided level at which the percentile interval would exclude ``null`` (up to the
    interpolation of the quantiles).
    """
    if reps.size == 0:
        return float("nan")
    b = reps.size
    lo = (np.count_nonzero(reps <= null) + 1) / (b + 1)
    hi = (np.count_nonzero(reps >= null) + 1) / (b + 1)
    return float(min(1.0, 2.0 * min(lo, hi)))


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


class TableResampler:
    """Replicate rates of one :class:`~judge_transfer_audit.statistics.uncertainty._cells.CellTable` (dense below
    ``_DENSE_MAX`` pairs x readers, sparse above)."""

    def __init__(self, table):
        self.table = table
        self.s_pair, self.n_pair = table.pair_sums()
        self.s_reader, self.n_reader = table.reader_sums()
        entries = table.n_pairs * table.n_readers
        self.dense = entries <= _DENSE_MAX
        self.blas = not self.dense and entries <= _BLAS_MAX and entries <= _BLAS_FILL * table.cell_pair.size
        if self.dense or self.blas:
            S, N = table.dense()
            self._SN = np.hstack([S, N])
        else:
            S, N = table.sparse()
            self._ST, self._NT = S.T.tocsr(), N.T.tocsr()

    def rates(
        self, scheme: str, wp: np.ndarray | None, wr: np.ndarray | None, wp_t: np.ndarray | None = None
    ) -> np.ndarray:
        """Raw replicate rates of ``scheme`` ("pairs", "readers" or "two-way-product");
        ``wp_t`` is ``wp.T`` made contiguous (shared by the cells of one pair set)."""
        if scheme == "pairs":
            return _ratio(wp @ self.s_pair, wp @ self.n_pair)
        if scheme == "readers":
            return _ratio(wr @ self.s_reader, wr @ self.n_reader)
        if scheme != "two-way-product":
            raise ValueError(f"{scheme!r}: use 'pairs', 'readers' or 'two-way-product'")
        if self.dense or self.blas:
            k = self.table.n_readers
            m = weighted_sums(wp, self._SN) if self.dense else wp @ self._SN
            return _ratio((m[:, :k] * wr).sum(1), (m[:, k:] * wr).sum(1))
        if wp_t is None:
            wp_t = np.ascontiguousarray(wp.T)
        ms = self._ST @ wp_t  # (readers x rows): sum over pairs of w_p * S
        mn = self._NT @ wp_t
        return _ratio(np.einsum("rb,br->b", ms, wr), np.einsum("rb,br->b", mn, wr))

    def jackknife(self, scheme: str) -> list[np.ndarray]:
        """Leave-one-cluster-out rates: one array per resampled factor."""
        st, nt = self.s_pair.sum(), self.n_pair.sum()
        out = []
        sums = {"pairs": [(self.s_pair, self.n_pair)], "readers": [(self.s_reader, self.n_reader)]}
        sums["two-way"] = sums["two-way-product"] = sums["pairs"] + sums["readers"]
        for s, n in sums[scheme]:
            out.append(_ratio(st - s, nt - n))
        return out
