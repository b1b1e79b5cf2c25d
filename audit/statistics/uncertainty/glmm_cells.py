"""Per-cell crossed pair + reader GLMM fits, as the uncertainty tools need them.

Thin wrapper around :func:`judge_transfer_audit.statistics.glmm.fit_crossed_glmm` (imported lazily) that turns a
:class:`~judge_transfer_audit.statistics.uncertainty._cells.CellTable` into one tidy row, records instead of raises
when a fit fails, and records the singular / separation flags instead of emitting one
warning per refit (leave-one-reader-out does a hundred refits).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

from judge_transfer_audit.core.errors import AuditError, SeparationWarning, SingularFitWarning
from judge_transfer_audit.statistics.uncertainty._cells import CellTable, cell_tables

GLMM_COLUMNS = (
    "estimate",
    "ci_low",
    "ci_high",
    "b0",
    "se",
    "p_value",
    "sd_pair",
    "sd_reader",
    "converged",
    "singular",
    "separation",
    "error",
)


def _empty(error: str) -> dict:
    nan = float("nan")
    return {
        "estimate": nan,
        "ci_low": nan,
        "ci_high": nan,
        "b0": nan,
        "se": nan,
        "p_value": nan,
        "sd_pair": nan,
        "sd_reader": nan,
        "converged": False,
        "singular": False,
        "separation": False,
        "error": error,
    }


def fit_vote_arrays(y: np.ndarray, pair_ids: np.ndarray, reader_ids: np.ndarray, start=None) -> tuple[dict, object]:
    """Fit ``logit P(y=1) = b0 + u_pair + v_reader``.

    Returns the row described in :func:`glmm_cells` and the ``GlmmResult`` (None on failure).
    ``start`` (a previous ``GlmmResult``) warm-starts the optimiser.
    """
    from judge_transfer_audit.statistics.glmm import fit_crossed_glmm

    if y.size == 0:
        return _empty("no decisive votes"), None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SingularFitWarning)
            warnings.simplefilter("ignore", SeparationWarning)
            res = fit_crossed_glmm(y, {"pair": pair_ids, "reader": reader_ids}, X=None, profile=False, start=start)
    except (AuditError, np.linalg.LinAlgError, ValueError) as exc:
        return _empty(f"{type(exc).__name__}: {exc}"), None
    return _row(res), res


def fit_vote_arrays_many(cells: list[tuple[np.ndarray, np.ndarray, np.ndarray, object]]) -> list[dict]:
    """The rows of :func:`fit_vote_arrays` for many ``(y, pair_ids, reader_ids, start)`` at once:
    the fits run through :func:`judge_transfer_audit.statistics.glmm.batch.fit_many` (cells of one level shape evaluated
    together; each cell makes the per-cell engine's decisions, its estimates equal to rounding).
    A cell whose input is refused gets its error row; if the stacked fit itself raises, every
    cell is fitted on its own, so each failure is recorded on its own row."""
    from judge_transfer_audit.statistics.glmm.batch import fit_many
    from judge_transfer_audit.statistics.glmm.design import build_design

    rows: list[dict | None] = [None] * len(cells)
    designs, starts, where = [], [], []
    for i, (y, pair_ids, reader_ids, start) in enumerate(cells):
        if y.size == 0:
            rows[i] = _empty("no decisive votes")
            continue
        try:
            designs.append(build_design(y, {"pair": pair_ids, "reader": reader_ids}))
        except (AuditError, ValueError) as exc:
            rows[i] = _empty(f"{type(exc).__name__}: {exc}")
            continue
        starts.append(start)
        where.append(i)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SingularFitWarning)
            warnings.simplefilter("ignore", SeparationWarning)
            fitted = fit_many(designs, starts=starts)
    except (AuditError, np.linalg.LinAlgError, ValueError):
        fitted = None
    for k, i in enumerate(where):
        rows[i] = _row(fitted[k]) if fitted is not None else fit_vote_arrays(*cells[i])[0]
    return rows  # type: ignore[return-value]


def _row(res) -> dict:
    """The tidy row of one ``GlmmResult``."""
    from scipy.special import ndtr

    p, lo, hi = res.prob_estimate()
    b0, se = float(res.b[0]), float(res.se[0])
    pval = float(2.0 * ndtr(-abs(b0) / se)) if (math.isfinite(b0) and math.isfinite(se) and se > 0) else float("nan")
    return {
        "estimate": float(p),
        "ci_low": float(lo),
        "ci_high": float(hi),
        "b0": b0,
        "se": se,
        "p_value": pval,
        "sd_pair": float(res.sd.get("pair", float("nan"))),
        "sd_reader": float(res.sd.get("reader", float("nan"))),
        "converged": bool(res.converged),
        "singular": bool(res.singular),
        "separation": bool(res.separation),
        "error": "",
    }


def fit_cell(table: CellTable, drop_reader: int | None = None, start=None) -> tuple[dict, object]:
    """GLMM of one cell, optionally without reader number ``drop_reader`` (sorted order)."""
    y, p, r = table.vote_arrays()
    if drop_reader is not None:
        keep = r != table.readers[drop_reader]
        y, p, r = y[keep], p[keep], r[keep]
    return fit_vote_arrays(y, p, r, start=start)


def glmm_cells(votes: pd.DataFrame, *, by: tuple[str, ...] = ("matchup", "criterion")) -> pd.DataFrame:
    """Fit the crossed GLMM to every cell.

    Returns
    -------
    DataFrame
        One row per cell: the ``by`` columns, ``cell``, ``estimate`` (expit(b0), the rate for a
        typical pair and reader), ``ci_low``/``ci_high`` (Wald interval of b0, transformed),
        ``b0``, ``se`` (logit scale), ``p_value`` (Wald test of b0 = 0, i.e. rate 0.5),
        ``sd_pair``, ``sd_reader``, ``converged``, ``singular``, ``separation``, ``error`` ("" when
        the fit succeeded). Tie votes are excluded, as in the bootstrap.
    """
    rows = []
    for t in cell_tables(votes, tuple(by)):
        rows.append({**dict(zip(by, t.key)), "cell": t.label, **fit_cell(t)[0]})
    return pd.DataFrame(rows)
