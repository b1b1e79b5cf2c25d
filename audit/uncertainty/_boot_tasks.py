"""The cluster bootstrap as independent tasks: blocks of cells x chunks of replicates.

A task (:class:`BootstrapBlock`) holds some cells (with the judge tables of those cells) and
some replicate chunks. Its weights come from :func:`~audit.uncertainty.resampling.cluster_weights`,
seeded by the run's seed, the cluster set and the chunk, so a replicate is the same number
whichever task computes it. A block that covers every chunk summarises its cells itself and
returns finished rows; a big cell is split into one task per chunk and its replicates are
gathered and summarised by the caller (:func:`summarise_cells`), with the same code.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from audit.uncertainty.resampling import (
    TableResampler,
    acceleration,
    bca_interval,
    bootstrap_p_value,
    cluster_weights,
    n_chunks,
    percentile_interval,
)
from audit.uncertainty.two_way import cgm_from_cells, correct_two_way, t_calibrated_level, t_calibrated_p_value

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


def run_block(block: BootstrapBlock) -> dict:
    """Replicates of every cell and judge table of ``block`` over its chunks; summarised rows
    when the block covers every chunk (``summarise``), else the raw replicate arrays."""
    st = block.settings
    need = raw_needed(st.schemes)
    resamplers = [TableResampler(t) for t in block.tables]
    cell_reps: list[dict[str, list[np.ndarray]]] = [{k: [] for k in need} for _ in block.tables]
    judge_reps: list[list[np.ndarray]] = [[] for _ in block.judges]
    for chunk in block.chunks:
        cache: dict[tuple[str, tuple[str, ...]], np.ndarray] = {}

        def weights(kind: str, ids: tuple[str, ...], cache=cache, chunk=chunk) -> np.ndarray:
            if (kind, ids) not in cache:
                cache[(kind, ids)] = cluster_weights(st.entropy, kind, ids, st.n_boot, chunk)
            return cache[(kind, ids)]

        transposed: dict[tuple[str, ...], np.ndarray] = {}
        for rs, reps in zip(resamplers, cell_reps):
            t = rs.table
            wp = weights("pair", t.pairs) if {"pairs", "two-way-product"} & set(need) else None
            wr = weights("reader", t.readers) if {"readers", "two-way-product"} & set(need) else None
            wp_t = None
            if "two-way-product" in need and not rs.dense:
                if t.pairs not in transposed:
                    transposed[t.pairs] = np.ascontiguousarray(wp.T)
                wp_t = transposed[t.pairs]
            for kind in need:
                reps[kind].append(rs.rates(kind, wp, wr, wp_t))
        for jt, reps in zip(block.judges, judge_reps):
            wp = weights("pair", jt.pairs)
            reps.append(_ratio(wp @ jt.credit_sum, wp @ jt.credit_count))
    cells = [{k: np.concatenate(v) for k, v in reps.items()} for reps in cell_reps]
    judges = [np.concatenate(r) if r else np.zeros(0) for r in judge_reps]
    if not block.summarise:
        return {"cells": cells, "judges": judges}
    rows, judge_rows = summarise_cells(block.tables, cells, block.judges, judges, st)
    return {"rows": rows, "judge_rows": judge_rows}


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
    and the p-value is mapped to the same t (see :func:`t_calibrated_level`).
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


def summarise_cells(
    tables, cell_reps: list[dict], judges: tuple[JudgeTable, ...], judge_reps: list[np.ndarray], st: BootstrapSettings
) -> tuple[list[dict], list[dict]]:
    """The result rows of ``tables`` (cell x scheme) and ``judges`` (cell x judge)."""
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
    human_rate = {t.key: t.rate for t in tables}
    judge_rows = []
    for jt, reps in zip(judges, judge_reps):
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
        judge_rows.append(row)
    return rows, judge_rows


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


def gather_blocks(blocks: list[BootstrapBlock], results: list[dict]) -> tuple[list[dict], list[dict]]:
    """Rows of every block in order; the chunk-split cells are summarised here."""
    rows, judge_rows = [], []
    i = 0
    while i < len(blocks):
        block, res = blocks[i], results[i]
        if block.summarise:
            rows.extend(res["rows"])
            judge_rows.extend(res["judge_rows"])
            i += 1
            continue
        t = block.tables[0]
        parts = []
        while i < len(blocks) and not blocks[i].summarise and blocks[i].tables[0] is t:
            parts.append(results[i])
            i += 1
        cells = [{k: np.concatenate([p["cells"][0][k] for p in parts]) for k in parts[0]["cells"][0]}]
        judges = [np.concatenate([p["judges"][j] for p in parts]) for j in range(len(block.judges))]
        r, jr = summarise_cells(block.tables, cells, block.judges, judges, block.settings)
        rows.extend(r)
        judge_rows.extend(jr)
    judge_rows.sort(key=lambda row: row["_order"])
    for row in judge_rows:
        del row["_order"]
    return rows, judge_rows
