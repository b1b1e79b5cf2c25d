"""Leave-one-reader-out: how much does any single reader move each cell and the aggregate?

With seven readers, one reader is a seventh of every cell. For each cell and each reader the
cell is re-estimated without that reader's votes, both as a raw rate (focal votes / decisive
votes) and, optionally, by refitting the crossed pair + reader GLMM. The motivating audit
(Appendix E) reported that dropping any one reader moved the pooled rate by 2-4 points;
:attr:`LoroResult.aggregate` is that analysis for the user's study.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from audit.data import HUMAN_OVERALL
from audit.uncertainty._cells import CellTable, cell_tables
from audit.uncertainty.glmm_cells import fit_cell

ALL_DIMENSIONS = "all dimensions"


@dataclass(frozen=True)
class LoroResult:
    """Leave-one-reader-out shifts.

    Attributes
    ----------
    shifts : DataFrame
        Tidy, one row per cell x reader present in the cell: the ``by`` columns, ``cell``,
        ``reader``, ``n_votes`` and ``n_votes_without`` (decisive votes), ``rate`` and
        ``rate_without`` (raw), ``shift`` (= rate_without - rate; positive means the reader
        pulled the cell *down*), ``glmm`` and ``glmm_without`` (expit(b0) of the crossed GLMM;
        NaN when ``glmm=False`` or the fit failed), ``glmm_shift``, ``glmm_converged``,
        ``glmm_singular``, ``glmm_error``.
    aggregate : DataFrame
        Raw rates pooled over cells, per ``scope`` x reader: ``scope`` is ``"all dimensions"``
        (every criterion except ``overall``, as in the paper), ``"overall"``, and one scope per
        criterion (pooled over matchups); columns ``reader``, ``n_votes_without``, ``rate``,
        ``rate_without``, ``shift``.
    readers : DataFrame
        One row per reader: ``mean_abs_shift`` and ``max_abs_shift`` over cells (raw),
        ``mean_abs_glmm_shift``, ``aggregate_shift`` (the ``all dimensions`` shift).
    largest_shift : float
        Largest absolute raw cell shift; ``largest_shift_cell`` / ``largest_shift_reader`` say where.
    largest_glmm_shift : float
        Same for the GLMM estimate (NaN without GLMM).
    most_influential_reader : str
        The reader with the largest mean absolute raw shift over cells.
    aggregate_shift_min, aggregate_shift_max : float
        Smallest and largest absolute ``all dimensions`` shift over readers (the paper's "2-4
        points").
    glmm : bool
        Whether GLMMs were refitted; ``n_glmm_fits``, ``n_glmm_failed``, ``n_glmm_singular`` count them.
    notes : tuple of str
    """

    shifts: pd.DataFrame
    aggregate: pd.DataFrame
    readers: pd.DataFrame
    largest_shift: float
    largest_shift_cell: str
    largest_shift_reader: str
    largest_glmm_shift: float
    largest_glmm_shift_cell: str
    largest_glmm_shift_reader: str
    most_influential_reader: str
    aggregate_shift_min: float
    aggregate_shift_max: float
    glmm: bool
    n_glmm_fits: int
    n_glmm_failed: int
    n_glmm_singular: int
    notes: tuple[str, ...] = ()

    def to_frame(self) -> pd.DataFrame:
        return self.shifts.copy()

    def __str__(self) -> str:
        lines = [
            f"Leave-one-reader-out over {self.shifts['cell'].nunique()} cells and "
            f"{self.readers.shape[0]} readers",
            f"  largest raw shift {self.largest_shift * 100:+.1f} points ({self.largest_shift_cell}, "
            f"without {self.largest_shift_reader})",
        ]
        if self.glmm:
            lines.append(f"  largest GLMM shift {self.largest_glmm_shift * 100:+.1f} points "
                         f"({self.largest_glmm_shift_cell}, without {self.largest_glmm_shift_reader}); "
                         f"{self.n_glmm_fits} refits, {self.n_glmm_failed} failed, {self.n_glmm_singular} singular")
        lines.append(f"  most influential reader: {self.most_influential_reader}")
        if np.isfinite(self.aggregate_shift_max):
            lines.append(f"  pooled dimension rate moves {self.aggregate_shift_min * 100:.1f} to "
                         f"{self.aggregate_shift_max * 100:.1f} points when one reader is dropped")
        for _, r in self.readers.iterrows():
            lines.append(f"    {r['reader']:<14} mean |shift| {r['mean_abs_shift'] * 100:.1f}  "
                         f"max |shift| {r['max_abs_shift'] * 100:.1f}  aggregate {r['aggregate_shift'] * 100:+.1f}")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)


def _raw_without(t: CellTable) -> tuple[np.ndarray, np.ndarray]:
    s_r, n_r = t.S.sum(0), t.N.sum(0)
    n_wo = t.N.sum() - n_r
    with np.errstate(invalid="ignore", divide="ignore"):
        rate_wo = np.where(n_wo > 0, (t.S.sum() - s_r) / np.where(n_wo > 0, n_wo, 1.0), np.nan)
    return rate_wo, n_wo


def _argmax_abs(values: np.ndarray) -> int | None:
    a = np.abs(values)
    return int(np.nanargmax(a)) if np.isfinite(a).any() else None


def leave_one_reader_out(votes: pd.DataFrame, *, by: tuple[str, ...] = ("matchup", "criterion"),
                         glmm: bool = True) -> LoroResult:
    """Re-estimate every cell, and the pooled rates, without each reader in turn.

    Parameters
    ----------
    votes : DataFrame
        Normalised votes (``pair_id``, ``reader_id``, ``y`` and the ``by`` columns); ties
        (``y`` NaN) are excluded from every rate.
    by : tuple of str
        Columns defining a cell.
    glmm : bool
        Also refit the crossed GLMM (one fit per cell, plus one per cell x reader).

    Returns
    -------
    LoroResult

    Notes
    -----
    Raw rates are validated against direct recomputation on the filtered frame; GLMM refits
    use :func:`audit.glmm.fit_crossed_glmm` (validated against lme4). Failed or singular
    refits are recorded per row, never raised.
    """
    by = tuple(by)
    tables = cell_tables(votes, by)
    rows = []
    n_fits = n_failed = n_singular = 0
    for t in tables:
        rate = t.rate
        rate_wo, n_wo = _raw_without(t)
        full, full_res = fit_cell(t) if glmm else (None, None)
        if glmm:
            n_fits += 1
            n_failed += bool(full["error"])
            n_singular += bool(full["singular"])
        for j, reader in enumerate(t.readers):
            row = {**dict(zip(by, t.key)), "cell": t.label, "reader": reader, "n_votes": int(t.N.sum()),
                   "n_votes_without": int(n_wo[j]), "rate": rate, "rate_without": float(rate_wo[j]),
                   "shift": float(rate_wo[j] - rate)}
            g_full = g_wo = float("nan")
            conv, sing, err = False, False, "not fitted"
            if glmm:
                # warm start from the full-data fit: same model, one reader fewer
                wo, _ = fit_cell(t, drop_reader=j, start=full_res)
                n_fits += 1
                n_failed += bool(wo["error"])
                n_singular += bool(wo["singular"])
                g_full, g_wo = full["estimate"], wo["estimate"]
                conv, sing, err = wo["converged"], wo["singular"], wo["error"]
            row.update({"glmm": g_full, "glmm_without": g_wo, "glmm_shift": g_wo - g_full,
                        "glmm_converged": bool(conv), "glmm_singular": bool(sing), "glmm_error": err})
            rows.append(row)
    shifts = pd.DataFrame(rows)
    aggregate = _aggregate(tables, by)

    readers = sorted(shifts["reader"].unique())
    infl = []
    for r in readers:
        s = shifts[shifts["reader"] == r]
        agg = aggregate[(aggregate["scope"] == ALL_DIMENSIONS) & (aggregate["reader"] == r)]["shift"]
        infl.append({"reader": r, "mean_abs_shift": float(s["shift"].abs().mean()),
                     "max_abs_shift": float(s["shift"].abs().max()),
                     "mean_abs_glmm_shift": float(s["glmm_shift"].abs().mean()) if glmm else float("nan"),
                     "aggregate_shift": float(agg.iloc[0]) if len(agg) else float("nan")})
    readers_frame = pd.DataFrame(infl)

    k = _argmax_abs(shifts["shift"].to_numpy(float))
    kg = _argmax_abs(shifts["glmm_shift"].to_numpy(float))
    ki = _argmax_abs(readers_frame["mean_abs_shift"].to_numpy(float))
    agg_all = aggregate[aggregate["scope"] == ALL_DIMENSIONS]["shift"].abs()
    notes = ["shift = estimate without the reader minus estimate with all readers",
             "aggregate rates pool raw votes over cells; the GLMM is refitted per cell only"]
    if glmm and n_singular:
        notes.append(f"{n_singular} of {n_fits} GLMM fits were singular (a variance estimated at zero)")
    return LoroResult(
        shifts=shifts, aggregate=aggregate, readers=readers_frame,
        largest_shift=float(shifts["shift"].iloc[k]) if k is not None else float("nan"),
        largest_shift_cell=str(shifts["cell"].iloc[k]) if k is not None else "",
        largest_shift_reader=str(shifts["reader"].iloc[k]) if k is not None else "",
        largest_glmm_shift=float(shifts["glmm_shift"].iloc[kg]) if kg is not None else float("nan"),
        largest_glmm_shift_cell=str(shifts["cell"].iloc[kg]) if kg is not None else "",
        largest_glmm_shift_reader=str(shifts["reader"].iloc[kg]) if kg is not None else "",
        most_influential_reader=str(readers_frame["reader"].iloc[ki]) if ki is not None else "",
        aggregate_shift_min=float(agg_all.min()) if len(agg_all) else float("nan"),
        aggregate_shift_max=float(agg_all.max()) if len(agg_all) else float("nan"),
        glmm=bool(glmm), n_glmm_fits=n_fits, n_glmm_failed=n_failed, n_glmm_singular=n_singular,
        notes=tuple(notes),
    )


def _aggregate(tables: list[CellTable], by: tuple[str, ...]) -> pd.DataFrame:
    """Pooled raw rates per scope x reader."""
    scopes: dict[str, list[CellTable]] = {}
    if "criterion" in by:
        ci = by.index("criterion")
        dims = [t for t in tables if t.key[ci] != HUMAN_OVERALL]
        if dims:
            scopes[ALL_DIMENSIONS] = dims
        for crit in sorted({t.key[ci] for t in tables}):
            scopes[crit] = [t for t in tables if t.key[ci] == crit]
    else:
        scopes[ALL_DIMENSIONS] = list(tables)
    rows = []
    for scope, ts in scopes.items():
        s_by, n_by = {}, {}
        for t in ts:
            for j, r in enumerate(t.readers):
                s_by[r] = s_by.get(r, 0.0) + float(t.S[:, j].sum())
                n_by[r] = n_by.get(r, 0.0) + float(t.N[:, j].sum())
        s_tot, n_tot = sum(s_by.values()), sum(n_by.values())
        rate = s_tot / n_tot if n_tot > 0 else float("nan")
        for r in sorted(s_by):
            n_wo = n_tot - n_by[r]
            rate_wo = (s_tot - s_by[r]) / n_wo if n_wo > 0 else float("nan")
            rows.append({"scope": scope, "reader": r, "n_votes_without": int(n_wo), "rate": rate,
                         "rate_without": rate_wo, "shift": rate_wo - rate})
    return pd.DataFrame(rows, columns=["scope", "reader", "n_votes_without", "rate", "rate_without", "shift"])
