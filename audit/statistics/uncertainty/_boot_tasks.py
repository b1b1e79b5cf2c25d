"""The cluster bootstrap as independent tasks: blocks of cells x chunks of replicates.

A task (:class:`BootstrapBlock`) holds some cells (with the judge tables of those cells) and
some replicate chunks. Its weights come from
:func:`~judge_transfer_audit.statistics.uncertainty.resampling.cluster_weights`,
seeded by the run's seed, the cluster set and the chunk, so a replicate is the same number
whichever task computes it. A block that covers every chunk summarises its cells itself and
returns finished rows; a big cell is split into one task per chunk and its replicates are
gathered and summarised by the caller (:func:`summarise_cells`), with the same code.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from judge_transfer_audit.statistics.uncertainty.resampling import (
    _DENSE_MAX,
    TableResampler,
    acceleration,
    bca_interval,
    bootstrap_p_value,
    chunk_rows,
    cluster_seeds,
    cluster_weights,
    n_chunks,
    percentile_interval,
)
from judge_transfer_audit.statistics.uncertainty.two_way import (
    cgm_from_cells,
    correct_two_way,
    t_calibrated_level,
    t_calibrated_p_value,
    two_way_constants,
)

INTERVAL_COLUMNS = (
    "se",
    "ci_low_percentile",
    "ci_high_percentile",
    "ci_low_bca",
    "ci_high_bca",
    "z0",
    "acceleration",
    "p_value",
    "ci_low_cgm",
    "ci_high_cgm",
    "se_cgm",
    "p_value_cgm",
    "df",
    "product_scale",
)


@dataclass(frozen=True)
class JudgeTable:
    """One cell x judge configuration: per-pair credit sums and valid counts (internal)."""

    key: tuple[str, ...]
    judge: str
    pairs: tuple[str, ...]
    credit_sum: np.ndarray
    credit_count: np.ndarray
    n_invalid: int
    order: int  #: position in sorted (cell, judge) order


@dataclass(frozen=True)
class BootstrapSettings:
    by: tuple[str, ...]
    schemes: tuple[str, ...]
    intervals: tuple[str, ...]
    n_boot: int
    level: float
    null: float
    entropy: int
    seed: int | None


@dataclass(frozen=True)
class BootstrapBlock:
    """One task: ``tables`` (CellTables) and their ``judges`` over replicate ``chunks``."""

    tables: tuple
    judges: tuple[JudgeTable, ...]
    chunks: tuple[int, ...]
    settings: BootstrapSettings
    summarise: bool = True


def raw_needed(schemes: tuple[str, ...]) -> tuple[str, ...]:
    """Raw replicate kinds the requested schemes need (the corrected two-way needs all three)."""
    need = set()
    for s in schemes:
        need |= {"pairs", "readers", "two-way-product"} if s in ("two-way", "two-way-product") else {s}
    return tuple(k for k in ("pairs", "readers", "two-way-product") if k in need)


#: replicate rates held at once by one block (rows x replicates over every kind): a block's cells are
#: processed in slices of about this many numbers, so memory stays bounded however many cells it has
SLICE_NUMBERS = 4_000_000


def run_block(block: BootstrapBlock) -> dict:
    """Replicates of every cell and judge table of ``block`` over its chunks; summarised columns
    when the block covers every chunk (``summarise``), else the raw replicate matrices."""
    st = block.settings
    need = raw_needed(st.schemes)
    total = sum(chunk_rows(st.n_boot, c) for c in block.chunks)
    if not block.summarise:
        reps, judge_reps = _replicates(block.tables, block.judges, block.chunks, st, need, total)
        return {"cells": reps, "judges": judge_reps}
    by_key: dict[tuple[str, ...], list[JudgeTable]] = {}
    for jt in block.judges:
        by_key.setdefault(jt.key, []).append(jt)
    keys = {t.key for t in block.tables}
    per_slice = max(1, SLICE_NUMBERS // max(1, total * (len(need) + 1)))
    parts = []
    for lo in range(0, len(block.tables), per_slice):
        tables = block.tables[lo : lo + per_slice]
        judges = tuple(jt for t in tables for jt in by_key.get(t.key, ()))
        reps, judge_reps = _replicates(tables, judges, block.chunks, st, need, total)
        parts.append(summarise(tables, reps, judges, judge_reps, st))
    orphans = tuple(jt for jt in block.judges if jt.key not in keys)
    if orphans:
        _, judge_reps = _replicates((), orphans, block.chunks, st, need, total)
        parts.append(summarise((), {k: np.zeros((0, total)) for k in need}, orphans, judge_reps, st))
    return {
        "columns": concat_columns([p[0] for p in parts], cell_columns(st)),
        "judge_columns": concat_columns([p[1] for p in parts], judge_columns(st)),
    }


class _SharedClusters:
    """Dense cells with the same pairs and the same readers: their resampling weights are the same, so
    a chunk's replicate rates of all of them are a few matrix products (the sums are of integer counts,
    so they are exact whatever the order: every rate equals the per-cell product's to the last bit)."""

    def __init__(self, tables):
        g, p, r = len(tables), tables[0].n_pairs, tables[0].n_readers
        col = np.repeat(np.arange(g), [t.cell_pair.size for t in tables])
        pair = np.concatenate([t.cell_pair for t in tables])
        reader = np.concatenate([t.cell_reader for t in tables])
        s = np.concatenate([t.s for t in tables])
        n = np.concatenate([t.n for t in tables])
        self.s_pair = np.bincount(pair * g + col, s, p * g).reshape(p, g)
        self.n_pair = np.bincount(pair * g + col, n, p * g).reshape(p, g)
        self.s_reader = np.bincount(reader * g + col, s, r * g).reshape(r, g)
        self.n_reader = np.bincount(reader * g + col, n, r * g).reshape(r, g)
        self.s_flat = np.bincount((pair * r + reader) * g + col, s, p * r * g).reshape(p * r, g)
        self.n_flat = np.bincount((pair * r + reader) * g + col, n, p * r * g).reshape(p * r, g)

    def rates(self, kind: str, wp: np.ndarray | None, wr: np.ndarray | None) -> np.ndarray:
        """``rows x cells`` replicate rates of ``kind``."""
        if kind == "pairs":
            return _ratio(wp @ self.s_pair, wp @ self.n_pair)
        if kind == "readers":
            return _ratio(wr @ self.s_reader, wr @ self.n_reader)
        # a vote of pair i and reader r weighs w_p[i] w_r[r]: one product with the pair x reader weights
        both = (wp[:, :, None] * wr[:, None, :]).reshape(wp.shape[0], -1)
        return _ratio(both @ self.s_flat, both @ self.n_flat)


class _ChunkWeights:
    """The resampling weights of one chunk, each cluster set's drawn once and dropped after its last
    use (``uses``: how many times each ``(kind, ids)`` is taken), so that a block holds the weights of
    the cluster sets under way, not of every cell's (with 190 matchups of 5k pairs, the whole chunk's
    pair weights alone are 250 x 1M numbers). ``kind`` "pair-transposed" is the pair weights made
    contiguous by columns (the sparse product's operand)."""

    def __init__(self, st: BootstrapSettings, chunk: int, uses: Counter, seeds: dict):
        self.st, self.chunk, self.left = st, chunk, Counter(uses)
        self.held: dict[tuple[str, tuple[str, ...]], np.ndarray] = {}
        self.seeds = seeds  #: (kind, ids) -> cluster_seeds, shared by the chunks of a block

    def take(self, kind: str, ids: tuple[str, ...], pair_weights: np.ndarray | None = None) -> np.ndarray:
        """The weights of ``(kind, ids)``; "pair-transposed" is made from ``pair_weights``."""
        key = (kind, ids)
        w = self.held.get(key)
        if w is None:
            if kind == "pair-transposed":
                w = np.ascontiguousarray(pair_weights.T)
            else:
                seeds = self.seeds.get(key)
                if seeds is None:
                    seeds = self.seeds[key] = cluster_seeds(self.st.entropy, kind, ids)
                w = cluster_weights(self.st.entropy, kind, ids, self.st.n_boot, self.chunk, seeds)
        self.left[key] -= 1
        if self.left[key] > 0:
            self.held[key] = w
        else:
            self.held.pop(key, None)
        return w


def _replicates(tables, judges, chunks, st: BootstrapSettings, need, total: int):
    """Replicate rates of ``tables`` (``{kind: cells x replicates}``) and ``judges`` (``judges x
    replicates``) over ``chunks``: dense cells sharing their pairs and readers together, the others
    one by one (:class:`TableResampler`). The work is done pair set by pair set, so that a chunk holds
    the weights of few cluster sets at a time (:class:`_ChunkWeights`); every replicate is computed
    on its own, so the order changes no number."""
    reps = {k: np.empty((len(tables), total)) for k in need}
    judge_reps = np.empty((len(judges), total))
    shared: dict[tuple, list[int]] = {}
    single: list[tuple[int, TableResampler]] = []
    for i, t in enumerate(tables):
        if t.n_pairs * t.n_readers <= _DENSE_MAX:
            shared.setdefault((t.pairs, t.readers), []).append(i)
        else:
            single.append((i, TableResampler(t)))
    want_pairs = bool({"pairs", "two-way-product"} & set(need))
    want_readers = bool({"readers", "two-way-product"} & set(need))
    work: list[tuple[tuple[str, ...], str, tuple]] = []  # (pair set, what, its inputs)
    for (pairs, readers), idx in shared.items():
        work.append((pairs, "group", (readers, np.array(idx), _SharedClusters([tables[i] for i in idx]))))
    for i, rs in single:
        work.append((rs.table.pairs, "single", (i, rs)))
    by_pairs: dict[tuple[str, ...], list[int]] = {}
    for j, jt in enumerate(judges):
        by_pairs.setdefault(jt.pairs, []).append(j)
    for pairs, idx in by_pairs.items():
        credit_sum = np.column_stack([judges[j].credit_sum for j in idx])
        credit_count = np.column_stack([judges[j].credit_count for j in idx])
        work.append((pairs, "judges", (np.array(idx), credit_sum, credit_count)))
    first: dict[tuple[str, ...], int] = {}
    for pairs, _, _ in work:
        first.setdefault(pairs, len(first))
    work.sort(key=lambda w: first[w[0]])  # stable: each pair set's work together
    uses: Counter = Counter()
    for pairs, what, inputs in work:
        if what == "judges" or want_pairs:
            uses["pair", pairs] += 1
        if what == "group" and want_readers:
            uses["reader", inputs[0]] += 1
        if what == "single":
            rs = inputs[1]
            uses["reader", rs.table.readers] += want_readers
            uses["pair-transposed", pairs] += "two-way-product" in need and not rs.blas
    col = 0
    seeds: dict = {}
    for chunk in chunks:
        rows = chunk_rows(st.n_boot, chunk)
        weights = _ChunkWeights(st, chunk, uses, seeds)
        span = slice(col, col + rows)
        for pairs, what, inputs in work:
            if what == "judges":
                idx, credit_sum, credit_count = inputs
                wp = weights.take("pair", pairs)
                judge_reps[idx, span] = _ratio(wp @ credit_sum, wp @ credit_count).T
                continue
            if what == "group":
                readers, idx, group = inputs
                wp = weights.take("pair", pairs) if want_pairs else None
                wr = weights.take("reader", readers) if want_readers else None
                for kind in need:
                    reps[kind][idx, span] = group.rates(kind, wp, wr).T
                continue
            i, rs = inputs
            wp = weights.take("pair", pairs) if want_pairs else None
            wr = weights.take("reader", rs.table.readers) if want_readers else None
            wp_t = weights.take("pair-transposed", pairs, wp) if "two-way-product" in need and not rs.blas else None
            for kind in need:
                reps[kind][i, span] = rs.rates(kind, wp, wr, wp_t)
        col += rows
    return reps, judge_reps


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _too_few_clusters(scheme: str, n_pairs: int, n_readers: int) -> bool:
    return (scheme != "readers" and n_pairs < 2) or (scheme != "pairs" and n_readers < 2)


def summary(
    reps: np.ndarray,
    estimate: float,
    jack: list[np.ndarray],
    level: float,
    intervals: tuple[str, ...],
    null: float,
    df: float = float("inf"),
) -> dict:
    """SE, intervals and p-value of one set of replicates.

    With finite ``df`` the percentile / BCa tails are read at the Student-t calibrated level
    and the p-value is mapped to the same t (see :func:`t_calibrated_level`). The reference for
    :func:`judge_transfer_audit.statistics.uncertainty._summaries.replicate_summaries`, which gives the same numbers
    for many rows at once; :func:`summarise` uses this one for the rows that one does not cover.
    """
    finite = reps[np.isfinite(reps)]
    tail_level = t_calibrated_level(level, df)
    nan = float("nan")
    out = {
        "se": float(finite.std(ddof=1)) if finite.size > 1 else nan,
        "ci_low_percentile": nan,
        "ci_high_percentile": nan,
        "ci_low_bca": nan,
        "ci_high_bca": nan,
        "z0": nan,
        "acceleration": nan,
        "ci_low_cgm": nan,
        "ci_high_cgm": nan,
        "se_cgm": nan,
        "p_value_cgm": nan,
        "df": nan,
        "product_scale": nan,
        "p_value": t_calibrated_p_value(bootstrap_p_value(finite, null), df),
        "n_invalid": int(reps.size - finite.size),
    }
    if "percentile" in intervals:
        out["ci_low_percentile"], out["ci_high_percentile"] = percentile_interval(finite, tail_level)
    if "bca" in intervals:
        a = acceleration(jack)
        out["ci_low_bca"], out["ci_high_bca"], out["z0"] = bca_interval(finite, estimate, a, tail_level)
        out["acceleration"] = a
    return out


def cell_columns(st: BootstrapSettings) -> tuple[str, ...]:
    """The columns of the cells frame, in order (``degenerate`` is dropped by the caller)."""
    return (
        *st.by,
        "cell",
        "scheme",
        "rate",
        "n_votes",
        "n_ties",
        "n_pairs",
        "n_readers",
        *_SUMMARY_COLUMNS,
        "n_invalid",
        "n_boot",
        "seed",
        "degenerate",
    )


def judge_columns(st: BootstrapSettings) -> tuple[str, ...]:
    """The columns of the judge frame, in order (``_order`` is dropped by the caller)."""
    return (
        *st.by,
        "cell",
        "judge",
        "rate",
        "n_pairs",
        "n_invalid",
        *_JUDGE_SUMMARY_COLUMNS,
        "human_rate",
        "gap",
        "gap_ci_low",
        "gap_ci_high",
        "paired",
        "n_boot",
        "seed",
        "_order",
    )


_SUMMARY_COLUMNS = (
    "se",
    "ci_low_percentile",
    "ci_high_percentile",
    "ci_low_bca",
    "ci_high_bca",
    "z0",
    "acceleration",
    "ci_low_cgm",
    "ci_high_cgm",
    "se_cgm",
    "p_value_cgm",
    "df",
    "product_scale",
    "p_value",
)
_JUDGE_SUMMARY_COLUMNS = (
    "se",
    "ci_low_percentile",
    "ci_high_percentile",
    "ci_low_bca",
    "ci_high_bca",
    "z0",
    "acceleration",
    "p_value",
)
#: the columns held as Python lists (strings and the seed, which may be None); the others are arrays
_LIST_COLUMNS = ("cell", "scheme", "judge", "seed")


def _empty_columns(names, n: int, by: tuple[str, ...]) -> dict:
    ints = {"n_votes", "n_ties", "n_pairs", "n_readers", "n_invalid", "n_boot", "_order"}
    bools = {"degenerate", "paired"}
    out = {}
    for name in names:
        if name in by or name in _LIST_COLUMNS:
            out[name] = [None] * n
        elif name in ints:
            out[name] = np.zeros(n, dtype=np.int64)
        elif name in bools:
            out[name] = np.zeros(n, dtype=bool)
        else:
            out[name] = np.full(n, np.nan)
    return out


def _put_row(columns: dict, i: int, row: dict) -> None:
    for name, value in row.items():
        columns[name][i] = value


def concat_columns(parts: list[dict], names: tuple[str, ...]) -> dict:
    """Columns of consecutive parts joined (lists added, arrays concatenated)."""
    out = {}
    for name in names:
        values = [p[name] for p in parts]
        if not values:
            out[name] = []
        elif isinstance(values[0], list):
            out[name] = [v for part in values for v in part]
        else:
            out[name] = np.concatenate(values)
    return out


def columns_frame(columns: dict, drop: tuple[str, ...] = ()):
    """The DataFrame of :func:`summarise`'s columns (the dtypes a frame of row dicts would infer)."""
    import pandas as pd

    return pd.DataFrame({k: v for k, v in columns.items() if k not in drop})


def summarise(
    tables, reps: dict[str, np.ndarray], judges, judge_reps: np.ndarray, st: BootstrapSettings
) -> tuple[dict, dict]:
    """The result columns of ``tables`` (one row per cell x scheme, cells in order) and ``judges`` (one
    row per cell x judge): stacked (:mod:`judge_transfer_audit.statistics.uncertainty._summaries`) where every
    replicate, estimate
    and jackknife value is finite and the cell has two pairs and two readers, the rest by the per-row
    code (:func:`summary`); the same numbers either way."""
    schemes = st.schemes
    ns = len(schemes)
    g = len(tables)
    cols = _empty_columns(cell_columns(st), g * ns, st.by)
    stacked = _StackedCells(tables, reps, st)
    for k, name in enumerate(st.by):
        cols[name] = [t.key[k] for t in tables for _ in schemes]
    cols["cell"] = [t.label for t in tables for _ in schemes]
    cols["scheme"] = list(schemes) * g
    cols["rate"] = np.repeat(stacked.estimates, ns)
    for name in ("n_votes", "n_ties", "n_pairs", "n_readers"):
        cols[name] = np.repeat(np.array([getattr(t, name) for t in tables], dtype=np.int64), ns)
    cols["n_boot"][:] = st.n_boot
    cols["seed"] = [st.seed] * (g * ns)
    for i in np.flatnonzero(~stacked.fast):
        rows, _ = _cell_rows([tables[i]], [{k: v[i] for k, v in reps.items()}], st)
        for s, row in enumerate(rows):
            _put_row(cols, i * ns + s, row)
    for s, scheme in enumerate(schemes):
        for name, values in stacked.columns(scheme).items():
            cols[name][stacked.rows * ns + s] = values
    pair_reps = {t.key: (t.pairs, i) for i, t in enumerate(tables)} if "pairs" in reps else {}
    human_rate = dict(zip((t.key for t in tables), stacked.estimates.tolist()))
    judge_cols = _judges(judges, judge_reps, pair_reps, reps.get("pairs"), human_rate, st)
    return cols, judge_cols


def _cluster_sums(tables, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Focal and decisive votes per pair (``kind`` "pair") or reader of every table, concatenated,
    and each table's first position (sums of counts: exact, the per-table bincount's bits)."""
    size = np.array([t.n_pairs if kind == "pair" else t.n_readers for t in tables], dtype=np.int64)
    first = np.concatenate([[0], np.cumsum(size)])
    combos = np.array([t.cell_pair.size for t in tables], dtype=np.int64)
    if not combos.sum():
        return np.zeros(int(first[-1])), np.zeros(int(first[-1])), first
    codes = np.concatenate([t.cell_pair if kind == "pair" else t.cell_reader for t in tables])
    key = codes + np.repeat(first[:-1], combos)
    s = np.concatenate([t.s for t in tables])
    n = np.concatenate([t.n for t in tables])
    return np.bincount(key, s, int(first[-1])), np.bincount(key, n, int(first[-1])), first


class _StackedCells:
    """The stacked summaries of the cells of :func:`summarise` that every replicate, estimate and
    jackknife value of is finite, with two pairs and two readers (``fast``); cells of one shape
    (pairs, readers) are summarised together."""

    def __init__(self, tables, reps: dict[str, np.ndarray], st: BootstrapSettings):
        self.estimates = np.array([t.rate for t in tables], dtype=float)
        est = self.estimates
        n_pairs = np.array([t.n_pairs for t in tables], dtype=np.int64)
        n_readers = np.array([t.n_readers for t in tables], dtype=np.int64)
        fast = np.isfinite(est) & (n_pairs >= 2) & (n_readers >= 2)
        for m in reps.values():
            fast &= np.isfinite(m).all(axis=1)
        bca = "bca" in st.intervals
        shapes: dict[tuple[int, int], np.ndarray] = {}
        if fast.any():
            keys = n_pairs * (int(n_readers.max()) + 1) + n_readers
            for key in np.unique(keys[fast]):
                idx = np.flatnonzero(fast & (keys == key))
                shapes[(int(n_pairs[idx[0]]), int(n_readers[idx[0]]))] = idx
        jack: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        if bca and shapes:
            sp, np_, pfirst = _cluster_sums(tables, "pair")
            sr, nr, rfirst = _cluster_sums(tables, "reader")
            for (gp, gr), idx in list(shapes.items()):
                at_p = pfirst[idx][:, None] + np.arange(gp)
                at_r = rfirst[idx][:, None] + np.arange(gr)
                s_pair, n_pair = sp[at_p], np_[at_p]
                s_tot, n_tot = s_pair.sum(axis=1)[:, None], n_pair.sum(axis=1)[:, None]
                jp = _ratio(s_tot - s_pair, n_tot - n_pair)
                jr = _ratio(s_tot - sr[at_r], n_tot - nr[at_r])
                ok = np.isfinite(jp).all(axis=1) & np.isfinite(jr).all(axis=1)
                fast[idx[~ok]] = False
                if ok.any():
                    shapes[(gp, gr)] = idx[ok]
                    jack[(gp, gr)] = (jp[ok], jr[ok])
                else:
                    del shapes[(gp, gr)]
        self.fast = fast
        self.rows = np.flatnonzero(fast)
        self._out: dict[str, dict[str, np.ndarray]] = {s: {} for s in st.schemes}
        place = np.cumsum(fast) - 1  # position of a fast row among the fast rows
        for (gp, gr), idx in shapes.items():
            at = place[idx]
            jp, jr = jack[(gp, gr)] if bca else (None, None)
            for scheme, columns in self._shape_columns(tables, idx, est[idx], reps, jp, jr, gp, gr, st).items():
                for name, values in columns.items():
                    self._out[scheme].setdefault(name, np.full(self.rows.size, np.nan))[at] = values

    def columns(self, scheme: str) -> dict[str, np.ndarray]:
        """``{column: values of the fast rows}`` of ``scheme``."""
        return self._out[scheme]

    @staticmethod
    def _shape_columns(tables, idx, est, reps, jp, jr, gp, gr, st: BootstrapSettings) -> dict[str, dict]:
        from judge_transfer_audit.statistics.uncertainty._summaries import replicate_summaries

        jack = {"pairs": [jp], "readers": [jr], "two-way": [jp, jr], "two-way-product": [jp, jr]}
        inf = np.full(idx.size, np.inf)
        out = {}
        for scheme in st.schemes:
            js = jack[scheme] if jp is not None else []
            if scheme != "two-way":
                out[scheme] = replicate_summaries(reps[scheme][idx], est, js, st.level, st.intervals, st.null, inf)
                continue
            prod, rp, rr = reps["two-way-product"][idx], reps["pairs"][idx], reps["readers"][idx]
            v_prod = prod.var(axis=1, ddof=1)
            v_pairs = rp.var(axis=1, ddof=1)
            v_readers = rr.var(axis=1, ddof=1)
            v_int = (prod - rp - rr).var(axis=1, ddof=1)
            consts = [
                two_way_constants(float(a), float(b), float(c), float(d), gp, gr)
                for a, b, c, d in zip(v_prod, v_pairs, v_readers, v_int)
            ]
            scale = np.array([c[1] for c in consts])
            df = np.array([c[2] for c in consts])
            corrected = est[:, None] + scale[:, None] * (prod - est[:, None])
            cols = replicate_summaries(corrected, est, js, st.level, st.intervals, st.null, df)
            cols["df"], cols["product_scale"] = df, scale
            if "cgm" in st.intervals:
                cols.update(_cgm_columns([tables[i] for i in idx], est, v_pairs, v_readers, gp, gr, st))
            out[scheme] = cols
        return out


def _jackknives(t) -> tuple[np.ndarray, np.ndarray]:
    """Leave-one-pair-out and leave-one-reader-out rates of one cell (as :meth:`TableResampler.jackknife`)."""
    s_pair, n_pair = t.pair_sums()
    s_reader, n_reader = t.reader_sums()
    st, nt = s_pair.sum(), n_pair.sum()
    return _ratio(st - s_pair, nt - n_pair), _ratio(st - s_reader, nt - n_reader)


def _cgm_columns(tables, est, v_pairs, v_readers, gp: int, gr: int, st: BootstrapSettings) -> dict[str, np.ndarray]:
    """:func:`cgm_from_cells` of cells of one shape (each with two pairs and two readers, finite
    estimate and one-way variances)."""
    from judge_transfer_audit.statistics.distributions import t as student_t

    m = np.array([np.count_nonzero(t.n) for t in tables], dtype=np.int64)
    nt = np.array([float(np.sum(t.n)) for t in tables])
    ss = np.array([float(np.sum((t.s - e * t.n) ** 2)) for t, e in zip(tables, est.tolist())])
    ok = (m >= 2) & (nt > 0)
    nan = np.full(est.size, np.nan)
    out = {"ci_low_cgm": nan.copy(), "ci_high_cgm": nan.copy(), "se_cgm": nan.copy(), "p_value_cgm": nan.copy()}
    if not ok.any():
        return out
    e, m, nt, ss, vp, vr = est[ok], m[ok], nt[ok], ss[ok], v_pairs[ok], v_readers[ok]
    v_cells = ss / nt**2
    a_p, a_r = gp / (gp - 1) * vp, gr / (gr - 1) * vr
    v = a_p + a_r - m / (m - 1) * v_cells
    v = np.maximum(np.maximum(v, a_p), a_r)
    se = np.sqrt(v)
    df = min(gp, gr) - 1
    q = float(student_t.ppf(0.5 + st.level / 2.0, df))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(se > 0, 2.0 * student_t.sf(np.abs(e - st.null) / se, df), np.nan)
    out["ci_low_cgm"][ok], out["ci_high_cgm"][ok], out["se_cgm"][ok], out["p_value_cgm"][ok] = (
        e - q * se,
        e + q * se,
        se,
        p,
    )
    return out


def _cell_rows(tables, cell_reps: list[dict], st: BootstrapSettings) -> tuple[list[dict], dict]:
    """The result rows of ``tables`` (cell x scheme) one by one: the reference for the stacked rows."""
    rows, pair_reps = [], {}
    for t, raw in zip(tables, cell_reps):
        rs = TableResampler(t) if "bca" in st.intervals else None
        est = t.rate
        for scheme in st.schemes:
            corr = None
            if scheme == "two-way":
                corr = correct_two_way(
                    est, raw["two-way-product"], raw["pairs"], raw["readers"], t.n_pairs, t.n_readers
                )
                reps = corr.replicates
            else:
                reps = raw[scheme]
            if scheme == "pairs":
                pair_reps[t.key] = (t.pairs, reps)
            row = {
                **dict(zip(st.by, t.key)),
                "cell": t.label,
                "scheme": scheme,
                "rate": est,
                "n_votes": t.n_votes,
                "n_ties": t.n_ties,
                "n_pairs": t.n_pairs,
                "n_readers": t.n_readers,
            }
            jack = rs.jackknife(scheme) if rs is not None else []
            row.update(
                summary(
                    reps, est, jack, st.level, st.intervals, st.null, df=corr.df if corr is not None else float("inf")
                )
            )
            if corr is not None:
                row.update({"df": corr.df, "product_scale": corr.scale})
                if "cgm" in st.intervals:
                    v = {}
                    for k in ("pairs", "readers"):
                        r = raw[k][np.isfinite(raw[k])]
                        v[k] = float(r.var(ddof=1)) if r.size > 1 else float("nan")
                    lo, hi, se_c, p_c = cgm_from_cells(
                        est, v["pairs"], v["readers"], t.s, t.n, t.n_pairs, t.n_readers, st.level, st.null
                    )
                    row.update({"ci_low_cgm": lo, "ci_high_cgm": hi, "se_cgm": se_c, "p_value_cgm": p_c})
            if _too_few_clusters(scheme, t.n_pairs, t.n_readers):
                # one cluster resampled is always the same data: a zero-width interval would mislead
                row.update({k: float("nan") for k in INTERVAL_COLUMNS})
                row["degenerate"] = True
            row.update({"n_boot": st.n_boot, "seed": st.seed})
            rows.append(row)
    return rows, pair_reps


def _judge_row(jt: JudgeTable, reps: np.ndarray, pair_reps: dict, human_rate: dict, st: BootstrapSettings) -> dict:
    """The result row of one judge table: the reference for the stacked rows."""
    csum, ccnt = jt.credit_sum, jt.credit_count
    tot_s, tot_n = csum.sum(), ccnt.sum()
    est = float(tot_s / tot_n) if tot_n > 0 else float("nan")
    jack = [_ratio(tot_s - csum, tot_n - ccnt)]
    row = {
        **dict(zip(st.by, jt.key)),
        "cell": "/".join(jt.key),
        "judge": jt.judge,
        "rate": est,
        "n_pairs": int(np.count_nonzero(ccnt)),
        "n_invalid": jt.n_invalid,
    }
    summ = summary(reps, est, jack, st.level, st.intervals, st.null)
    for k in ("n_invalid", "ci_low_cgm", "ci_high_cgm", "se_cgm", "p_value_cgm", "df", "product_scale"):
        summ.pop(k)
    row.update(summ)
    row["human_rate"] = human_rate.get(jt.key, float("nan"))
    row["gap"] = est - row["human_rate"]
    paired = jt.key in pair_reps and pair_reps[jt.key][0] == jt.pairs
    lo = hi = float("nan")
    if paired:
        diff = reps - pair_reps[jt.key][1]
        lo, hi = percentile_interval(diff[np.isfinite(diff)], st.level)
    row.update(
        {
            "gap_ci_low": lo,
            "gap_ci_high": hi,
            "paired": bool(paired),
            "n_boot": st.n_boot,
            "seed": st.seed,
            "_order": jt.order,
        }
    )
    return row


def _judges(
    judges,
    judge_reps: np.ndarray,
    pair_reps: dict,
    pair_matrix: np.ndarray | None,
    human_rate: dict,
    st: BootstrapSettings,
) -> dict:
    """The judge columns of :func:`summarise` (``pair_reps``: cell key -> (pairs, row of the cells' pairs
    replicates in ``pair_matrix``)): stacked where the replicates, the estimate, the jackknife and (when
    paired) the gap replicates are finite, else :func:`_judge_row`."""
    from judge_transfer_audit.statistics.uncertainty._summaries import replicate_summaries, sorted_quantiles

    n = len(judges)
    cols = _empty_columns(judge_columns(st), n, st.by)
    if not n:
        return cols
    nan = float("nan")
    for k, name in enumerate(st.by):
        cols[name] = [jt.key[k] for jt in judges]
    cols["cell"] = ["/".join(jt.key) for jt in judges]
    cols["judge"] = [jt.judge for jt in judges]
    cols["n_invalid"] = np.array([jt.n_invalid for jt in judges], dtype=np.int64)
    cols["_order"] = np.array([jt.order for jt in judges], dtype=np.int64)
    cols["n_boot"][:] = st.n_boot
    cols["seed"] = [st.seed] * n
    human = np.array([human_rate.get(jt.key, nan) for jt in judges], dtype=float)
    cols["human_rate"] = human
    partner = np.array(
        [pair_reps[jt.key][1] if jt.key in pair_reps and pair_reps[jt.key][0] == jt.pairs else -1 for jt in judges],
        dtype=np.int64,
    )
    paired = partner >= 0
    cols["paired"] = paired
    fast = np.isfinite(judge_reps).all(axis=1)
    diff = None
    if paired.any():
        diff = judge_reps[paired] - pair_matrix[partner[paired]]
        fast[paired] &= np.isfinite(diff).all(axis=1)
    sizes = np.array([jt.credit_sum.size for jt in judges], dtype=np.int64)
    for size in np.unique(sizes):
        idx = np.flatnonzero(sizes == size)
        csum = np.stack([judges[j].credit_sum for j in idx]) if size else np.zeros((idx.size, 0))
        ccnt = np.stack([judges[j].credit_count for j in idx]) if size else np.zeros((idx.size, 0))
        tot_s, tot_n = csum.sum(axis=1), ccnt.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            est = np.where(tot_n > 0, tot_s / np.where(tot_n > 0, tot_n, 1.0), np.nan)
        cols["rate"][idx] = est
        cols["gap"][idx] = est - human[idx]
        cols["n_pairs"][idx] = np.count_nonzero(ccnt, axis=1)
        ok = fast[idx] & np.isfinite(est)
        jack = _ratio(tot_s[:, None] - csum, tot_n[:, None] - ccnt)
        if "bca" in st.intervals:
            ok &= np.isfinite(jack).all(axis=1)
        fast[idx] = ok
        at = idx[ok]
        if at.size:
            js = [jack[ok]] if "bca" in st.intervals else []
            inf = np.full(at.size, np.inf)
            for name, values in replicate_summaries(
                judge_reps[at], est[ok], js, st.level, st.intervals, st.null, inf
            ).items():
                cols[name][at] = values
    if diff is not None:
        both = fast[paired]
        at = np.flatnonzero(paired)[both]
        if at.size:
            alpha = (1.0 - st.level) / 2.0
            q = np.tile([alpha, 1.0 - alpha], (at.size, 1))
            bounds = sorted_quantiles(np.sort(diff[both], axis=1), q)
            cols["gap_ci_low"][at], cols["gap_ci_high"][at] = bounds[:, 0], bounds[:, 1]
    if not fast.all():
        rows_of = {key: (pairs, pair_matrix[i]) for key, (pairs, i) in pair_reps.items()}
        for j in np.flatnonzero(~fast):
            _put_row(cols, j, _judge_row(judges[j], judge_reps[j], rows_of, human_rate, st))
    return cols


def gather_blocks(blocks: list[BootstrapBlock], results: list[dict]) -> tuple[dict, dict]:
    """Columns of every block in order (judges by their ``_order``); the chunk-split cells are
    summarised here."""
    st = blocks[0].settings if blocks else None
    parts, judge_parts = [], []
    i = 0
    while i < len(blocks):
        block, res = blocks[i], results[i]
        if block.summarise:
            parts.append(res["columns"])
            judge_parts.append(res["judge_columns"])
            i += 1
            continue
        t = block.tables[0]
        pieces = []
        while i < len(blocks) and not blocks[i].summarise and blocks[i].tables[0] is t:
            pieces.append(results[i])
            i += 1
        reps = {k: np.concatenate([p["cells"][k] for p in pieces], axis=1) for k in pieces[0]["cells"]}
        judge_reps = np.concatenate([p["judges"] for p in pieces], axis=1)
        cols, judge_cols = summarise(block.tables, reps, block.judges, judge_reps, block.settings)
        parts.append(cols)
        judge_parts.append(judge_cols)
    if st is None:
        return {}, {}
    cells = concat_columns(parts, cell_columns(st))
    judges = concat_columns(judge_parts, judge_columns(st))
    order = np.argsort(judges["_order"], kind="stable")
    judges = {k: ([v[j] for j in order] if isinstance(v, list) else v[order]) for k, v in judges.items()}
    return cells, judges


def plan_blocks(
    tables: list, judges: list[JudgeTable], settings: BootstrapSettings, jobs: int, split_above: int = 200_000
) -> list[BootstrapBlock]:
    """Cut the work into tasks: consecutive cells grouped to about ``1 / (4 jobs)`` of the work
    each; a cell with more than ``split_above`` vote combinations gets one task per chunk (so a
    single huge cell still spreads over the workers and the progress bar moves). The results do
    not depend on the cut."""
    by_key: dict[tuple[str, ...], list[JudgeTable]] = {}
    for jt in judges:
        by_key.setdefault(jt.key, []).append(jt)
    keys = {t.key for t in tables}
    orphans = tuple(jt for jt in judges if jt.key not in keys)
    chunks = tuple(range(n_chunks(settings.n_boot)))
    work = [t.cell_pair.size + t.n_pairs + t.n_readers for t in tables]
    target = max(1.0, sum(work) / max(1, 4 * jobs)) if jobs > 1 else float("inf")
    blocks, current, acc = [], [], 0.0
    for t, w in zip(tables, work):
        if t.cell_pair.size > split_above and len(chunks) > 1:
            if current:
                blocks.append(_block(current, by_key, chunks, settings))
                current, acc = [], 0.0
            for c in chunks:
                blocks.append(BootstrapBlock((t,), tuple(by_key.get(t.key, ())), (c,), settings, summarise=False))
            continue
        current.append(t)
        acc += w
        if acc >= target:
            blocks.append(_block(current, by_key, chunks, settings))
            current, acc = [], 0.0
    if current:
        blocks.append(_block(current, by_key, chunks, settings))
    if orphans:
        blocks.append(BootstrapBlock((), orphans, chunks, settings))
    return blocks


def _block(tables, by_key, chunks, settings) -> BootstrapBlock:
    judges = tuple(jt for t in tables for jt in by_key.get(t.key, ()))
    return BootstrapBlock(tuple(tables), judges, chunks, settings)
