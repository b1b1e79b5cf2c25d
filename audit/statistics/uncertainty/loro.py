"""Leave-one-reader-out: how much does any single reader move each cell and the aggregate?

With seven readers, one reader is a seventh of every cell. For each cell and each reader the
cell is re-estimated without that reader's votes, both as a raw rate (focal votes / decisive
votes) and, optionally, by re-estimating the crossed pair + reader GLMM. The motivating audit
(Appendix E) reported that dropping any one reader moved the pooled rate by 2-4 points;
:attr:`LoroResult.aggregate` is that analysis for the user's study.

Exact or approximate (the rule, recorded per row in ``glmm_method``)
---------------------------------------------------------------------
An exact GLMM refit without one reader costs about ``votes + FIT_OVERHEAD_VOTES`` (a fit's
fixed cost, in votes); refitting every reader of every cell costs the sum of ``readers x
(votes + FIT_OVERHEAD_VOTES)`` over the cells. When that total is within ``exact_budget``
(default :data:`EXACT_BUDGET`, one million vote-equivalents: the 18-cell fixture needs 0.27
million), every reader is refitted exactly, warm-started from the full fit. Otherwise every
reader's estimate comes from one Newton step from the full-data optimum
(:mod:`judge_transfer_audit.statistics.uncertainty.one_step`: variance parameters held fixed, cost linear in the votes),
(in cells with at least :data:`MIN_READERS_ONE_STEP` readers: with fewer, dropping one reader
moves the variance estimates too much for a step that holds them fixed, and those readers get
no GLMM estimate unless refitted), and the (cell, reader) combinations with the largest
approximate shifts (raw shifts in the small cells) are then refitted
exactly, most influential first, as many as :data:`REFIT_SHARE` of the budget allows (at 100k
votes in one cell that is one refit; a cell of a million votes gets none, its one-step shifts
stand on the validation in docs/uncertainty.md). Those rows carry
the exact value, and ``one_step_max_error`` reports the largest |one-step - exact| shift seen
on them: the run checks its own approximation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judge_transfer_audit.model.data import HUMAN_OVERALL
from judge_transfer_audit.model.spec import LORO_EXACT_BUDGET
from judge_transfer_audit.statistics.uncertainty._cells import CellTable, cell_tables
from judge_transfer_audit.statistics.uncertainty.glmm_cells import fit_vote_arrays, fit_vote_arrays_many
from judge_transfer_audit.statistics.uncertainty.one_step import (
    STOCHASTIC_MIN_READERS,
    conditional_modes,
    modes_from_fit,
    one_step_without_readers,
)

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
        NaN when ``glmm=False`` or the fit failed), ``glmm_shift``, ``glmm_method``
        (``"exact"``: refitted; ``"one-step"``: the Newton-step approximation; ``"not
        computed"``: over the exact budget in a cell with too few readers for the one-step;
        ``""`` without GLMM), ``glmm_shift_one_step`` (the approximation's shift wherever it was computed,
        also on rows refitted exactly; NaN otherwise), ``glmm_converged``, ``glmm_singular``
        (of the refit; on one-step rows, of the full-data fit the step starts from),
        ``glmm_error``.
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
        Whether GLMMs were re-estimated; ``n_glmm_fits`` (full fits made here plus exact
        refits), ``n_glmm_failed``, ``n_glmm_singular`` count the fits.
    n_glmm_one_step : int
        Readers x cells whose GLMM estimate came from the one-step approximation (0 when every
        reader was refitted exactly).
    n_glmm_exact_refits : int
        Exact leave-one-out refits.
    exact_budget : int
        The budget (vote-equivalents) that decided exact versus one-step.
    one_step_max_error : float
        Largest |one-step shift - exact shift| over the rows that have both (NaN when none).
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
    n_glmm_one_step: int = 0
    n_glmm_exact_refits: int = 0
    exact_budget: int = 0
    one_step_max_error: float = float("nan")

    def to_frame(self) -> pd.DataFrame:
        return self.shifts.copy()

    def __str__(self) -> str:
        lines = [
            f"Leave-one-reader-out over {self.shifts['cell'].nunique()} cells and {self.readers.shape[0]} readers",
            f"  largest raw shift {self.largest_shift * 100:+.1f} points ({self.largest_shift_cell}, "
            f"without {self.largest_shift_reader})",
        ]
        if self.glmm:
            lines.append(
                f"  largest GLMM shift {self.largest_glmm_shift * 100:+.1f} points "
                f"({self.largest_glmm_shift_cell}, without {self.largest_glmm_shift_reader}); "
                f"{self.n_glmm_fits} fits, {self.n_glmm_failed} failed, {self.n_glmm_singular} singular"
            )
            if self.n_glmm_one_step:
                lines.append(
                    f"  {self.n_glmm_one_step} reader estimates by one Newton step, {self.n_glmm_exact_refits} "
                    f"refitted exactly (largest one-step error seen: {self.one_step_max_error * 100:.2f} points)"
                )
        lines.append(f"  most influential reader: {self.most_influential_reader}")
        if np.isfinite(self.aggregate_shift_max):
            lines.append(
                f"  pooled dimension rate moves {self.aggregate_shift_min * 100:.1f} to "
                f"{self.aggregate_shift_max * 100:.1f} points when one reader is dropped"
            )
        for _, r in self.readers.sort_values("mean_abs_shift", ascending=False, kind="stable").head(20).iterrows():
            lines.append(
                f"    {r['reader']:<14} mean |shift| {r['mean_abs_shift'] * 100:.1f}  "
                f"max |shift| {r['max_abs_shift'] * 100:.1f}  aggregate {r['aggregate_shift'] * 100:+.1f}"
            )
        if len(self.readers) > 20:
            lines.append(f"    ... {len(self.readers) - 20} more readers (see .readers)")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)


#: vote-equivalents of exact refits allowed per audit before one-step approximations take over
EXACT_BUDGET = LORO_EXACT_BUDGET
#: share of the budget spent on exact refits of the most influential readers when the whole
#: analysis does not fit in it (the rest of the readers get the one-step approximation)
REFIT_SHARE = 0.2
#: a GLMM fit's fixed cost in votes (design, optimiser set-up): a few milliseconds per fit
FIT_OVERHEAD_VOTES = 2_000
#: above this many votes the engine's own subsample start beats a warm start from the full fit
#: (measured at 100k votes: 15 BFGS iterations warm against 5 from its start)
WARM_START_MAX_VOTES = 50_000
#: the one-step holds the variances fixed, which is close only when one reader is a small part of
#: the cell: with fewer readers than this a cell beyond the budget gets no one-step estimate
MIN_READERS_ONE_STEP = 10
_NO_ONE_STEP = (
    f"not refitted (exact budget spent) and too few readers for the one-step approximation "
    f"(it needs {MIN_READERS_ONE_STEP})"
)


class _RawWithout:
    """Raw rates without each reader, for every (cell, reader) row at once (cells in order, readers
    sorted within each): the sums are of vote counts, so exact in any order."""

    def __init__(self, tables: list[CellTable]):
        n_readers = np.array([t.n_readers for t in tables], dtype=np.int64)
        first = np.concatenate([[0], np.cumsum(n_readers)])
        self.first = first
        self.cell = np.repeat(np.arange(len(tables)), n_readers)
        self.reader_names = [r for t in tables for r in t.readers]
        combos = np.array([t.cell_reader.size for t in tables], dtype=np.int64)
        if combos.sum():
            key = np.concatenate([t.cell_reader for t in tables]) + np.repeat(first[:-1], combos)
            s = np.concatenate([t.s for t in tables])
            n = np.concatenate([t.n for t in tables])
        else:
            key, s, n = np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0)
        rows = int(first[-1])
        self.s_r = np.bincount(key, s, rows)
        self.n_r = np.bincount(key, n, rows)
        self.n_total = np.array([t.n.sum() for t in tables], dtype=float)
        s_total = np.array([t.s.sum() for t in tables], dtype=float)
        self.rate = np.array([t.rate for t in tables], dtype=float)
        self.n_without = self.n_total[self.cell] - self.n_r
        with np.errstate(invalid="ignore", divide="ignore"):
            self.rate_without = np.where(
                self.n_without > 0,
                (s_total[self.cell] - self.s_r) / np.where(self.n_without > 0, self.n_without, 1.0),
                np.nan,
            )
        self.shift = self.rate_without - self.rate[self.cell]

    def abs_shift(self) -> list[np.ndarray]:
        """Per cell, |raw shift| of each reader (0 where not defined)."""
        a = np.abs(np.nan_to_num(self.shift))
        return [a[self.first[i] : self.first[i + 1]] for i in range(len(self.first) - 1)]


def _argmax_abs(values: np.ndarray) -> int | None:
    a = np.abs(values)
    return int(np.nanargmax(a)) if np.isfinite(a).any() else None


@dataclass(frozen=True)
class _CellJob:
    """Phase-one task: the full fit (or the pipeline's), then exact refits or the one-step."""

    index: int
    table: CellTable
    full: tuple[float, float, float] | None  #: (b0, sd_pair, sd_reader) from the caller, or None
    exact: bool  #: refit every reader exactly here


@dataclass(frozen=True)
class _RefitJob:
    """Phase-two task: one exact refit without reader ``reader``."""

    index: int
    reader: int
    y: np.ndarray
    pair: np.ndarray
    rdr: np.ndarray
    start: dict | None


def _start(full: dict, pair: np.ndarray, rdr: np.ndarray, keep: np.ndarray) -> dict | None:
    """Warm start (theta of the factors the refit keeps, beta) from the full fit, or None (cold)."""
    if keep.sum() >= WARM_START_MAX_VOTES or not np.isfinite(full["b0"]):
        return None
    theta = []
    for name, codes in (("pair", pair), ("reader", rdr)):
        if np.unique(codes[keep]).size >= 2:
            sd = full[f"sd_{name}"]
            theta.append(sd if np.isfinite(sd) else 1.0)
    return {"theta": theta, "beta": [full["b0"]]}


def _refit(job: _RefitJob) -> dict:
    keep = job.rdr != job.reader
    row, _ = fit_vote_arrays(job.y[keep], job.pair[keep], job.rdr[keep], start=job.start)
    return row


#: exact refits per task of the all-exact path: fixed, so the results never depend on ``--jobs``
REFIT_CHUNK = 64


def _refit_chunk(jobs: list[_RefitJob]) -> list[dict]:
    """:func:`_refit` of many jobs, fitted together (:func:`fit_vote_arrays_many`)."""
    cells = []
    for job in jobs:
        keep = job.rdr != job.reader
        cells.append((job.y[keep], job.pair[keep], job.rdr[keep], job.start))
    return fit_vote_arrays_many(cells)


def _exact_refits(tables, results, runner) -> dict[tuple[int, int], dict]:
    """Every reader of every cell refitted exactly, warm-started from the cell's full fit, in
    fixed chunks of :data:`REFIT_CHUNK` (each fitted together)."""
    jobs = []
    for i, t in enumerate(tables):
        y, pair, rdr = t.vote_arrays()
        full = results[i]["full"]
        jobs.extend(_RefitJob(i, j, y, pair, rdr, _start(full, pair, rdr, rdr != j)) for j in range(t.n_readers))
    chunks = [jobs[k : k + REFIT_CHUNK] for k in range(0, len(jobs), REFIT_CHUNK)]
    rows = [row for chunk in runner.map(_refit_chunk, chunks, label="leave-one-reader-out refits") for row in chunk]
    return {(job.index, job.reader): row for job, row in zip(jobs, rows)}


#: phase-one tasks hold consecutive cells up to this many votes (or :data:`PHASE_ONE_CELLS` cells): one
#: task per tiny cell cost more in task overhead than the work; fixed, so results never depend on ``--jobs``
PHASE_ONE_VOTES = 20_000
PHASE_ONE_CELLS = 500


def _phase_one_chunks(jobs: list[_CellJob]) -> list[list[_CellJob]]:
    chunks, current, votes = [], [], 0
    for job in jobs:
        if current and (votes + job.table.n_votes > PHASE_ONE_VOTES or len(current) >= PHASE_ONE_CELLS):
            chunks.append(current)
            current, votes = [], 0
        current.append(job)
        votes += job.table.n_votes
    if current:
        chunks.append(current)
    return chunks


def _phase_one(jobs: list[_CellJob]) -> list[dict]:
    return [_cell_phase_one(job) for job in jobs]


def _cell_phase_one(job: _CellJob) -> dict:
    t = job.table
    out = {"index": job.index, "fits": 0}
    modes = None  # the full fit's conditional modes, needed only by the one-step
    if job.full is not None:
        b0, sd_p, sd_r = job.full
        full = {
            "estimate": float(1.0 / (1.0 + np.exp(-b0))),
            "b0": b0,
            "sd_pair": sd_p,
            "sd_reader": sd_r,
            "singular": bool(min(sd_p, sd_r) < 1e-4),
            "error": "",
        }
    else:
        full, res = fit_vote_arrays(*t.vote_arrays())
        out["fits"] = 1
        if res is not None:
            modes = modes_from_fit(res, t.n_pairs, t.n_readers)
    out["full"] = full
    if job.exact:  # refitted afterwards, every cell's readers together (_refit_chunk)
        return out
    if full["error"] or not np.isfinite(full["b0"]):
        out["one_step"], out["reason"] = np.full(t.n_readers, np.nan), full["error"] or "no finite full-data estimate"
        return out
    if t.n_readers < MIN_READERS_ONE_STEP:
        out["one_step"], out["reason"], out["too_few"] = np.full(t.n_readers, np.nan), _NO_ONE_STEP, True
        return out
    if modes is None:  # given a full fit: its modes at its estimates (not needed by exact refits)
        modes = conditional_modes(t, *job.full)
    bp, br = modes
    sd_p = full["sd_pair"] if np.isfinite(full["sd_pair"]) else 0.0
    sd_r = full["sd_reader"] if np.isfinite(full["sd_reader"]) else 0.0
    step = one_step_without_readers(t, full["b0"], sd_p, sd_r, bp, br)
    out["one_step"], out["reason"] = step.b0_without, step.reason
    if step.probes:  # stochastic entries: their Monte-Carlo error on the probability scale (delta method)
        p = full["estimate"]
        out["probes"], out["mc_error"] = step.probes, step.mc_error * p * (1.0 - p)
    return out


def _expit(x):
    return 1.0 / (1.0 + np.exp(-np.asarray(x, float)))


def leave_one_reader_out(
    votes: pd.DataFrame,
    *,
    by: tuple[str, ...] = ("matchup", "criterion"),
    glmm: bool = True,
    full_fits: dict | None = None,
    exact_budget: int = EXACT_BUDGET,
    runner=None,
) -> LoroResult:
    """Re-estimate every cell, and the pooled rates, without each reader in turn.

    Parameters
    ----------
    votes : DataFrame
        Normalised votes (``pair_id``, ``reader_id``, ``y`` and the ``by`` columns); ties
        (``y`` NaN) are excluded from every rate.
    by : tuple of str
        Columns defining a cell.
    glmm : bool
        Also re-estimate the crossed GLMM without each reader (exactly or by one Newton step:
        the rule is in the module docstring).
    full_fits : dict, optional
        ``{cell key tuple: (b0, sd_pair, sd_reader)}``: full-data fits already made (the
        pipeline's, on the same decisive votes); those cells are not refitted, their
        conditional modes are recomputed at those values. Other cells are fitted here.
    exact_budget : int
        Vote-equivalents of exact refits allowed (see the module docstring); 0 approximates every
        reader and refits none.
    runner : judge_transfer_audit.core.tasks.TaskRunner, optional
        Runs the fits (in-process by default); the result does not depend on it.

    Returns
    -------
    LoroResult

    Notes
    -----
    Raw rates are validated against direct recomputation on the filtered frame; GLMM refits
    use :func:`judge_transfer_audit.statistics.glmm.fit_crossed_glmm` (validated against lme4); the one-step
    approximation against exact refits (docs/uncertainty.md). Failed or singular refits are
    recorded per row, never raised.
    """
    from judge_transfer_audit.core.tasks import TaskRunner

    by = tuple(by)
    tables = cell_tables(votes, by)
    runner = runner or TaskRunner()
    if isinstance(exact_budget, bool) or not isinstance(exact_budget, (int, np.integer)) or exact_budget < 0:
        raise ValueError(f"exact_budget must be a non-negative integer, got {exact_budget!r}")
    cost = [t.n_readers * (t.n_votes + FIT_OVERHEAD_VOTES) for t in tables]
    all_exact = sum(cost) <= exact_budget
    results: list[dict | None] = [None] * len(tables)
    refits: dict[tuple[int, int], dict] = {}
    n_fits = 0
    if glmm:
        jobs = []
        for i, t in enumerate(tables):
            given = (full_fits or {}).get(t.key)
            if given is not None and not all(np.isfinite(v) for v in given):
                given = None
            jobs.append(_CellJob(i, t, None if given is None else tuple(float(v) for v in given), all_exact))
        for part in runner.map(_phase_one, _phase_one_chunks(jobs), label="leave-one-reader-out fits"):
            for res in part:
                results[res["index"]] = res
                n_fits += res["fits"]
        if all_exact:
            refits.update(_exact_refits(tables, results, runner))
        else:
            raw_shift = _RawWithout(tables).abs_shift() if any(r.get("too_few") for r in results) else None
            refits.update(_refit_most_influential(tables, results, int(REFIT_SHARE * exact_budget), runner, raw_shift))
        n_fits += sum(1 for _ in refits)

    raw = _RawWithout(tables)
    shifts, counts, errors = _shift_columns(tables, raw, by, glmm, results, refits)
    n_failed, n_singular, n_one_step, n_not_computed = counts
    aggregate = _aggregate(tables, by, raw)
    readers_frame = _reader_summary(shifts, aggregate, glmm)

    k = _argmax_abs(shifts["shift"].to_numpy(float))
    kg = _argmax_abs(shifts["glmm_shift"].to_numpy(float))
    ki = _argmax_abs(readers_frame["mean_abs_shift"].to_numpy(float))
    agg_all = aggregate[aggregate["scope"] == ALL_DIMENSIONS]["shift"].abs()
    notes = [
        "shift = estimate without the reader minus estimate with all readers",
        "aggregate rates pool raw votes over cells; the GLMM is re-estimated per cell only",
    ]
    both = (
        shifts[(shifts["glmm_method"] == "exact") & shifts["glmm_shift_one_step"].notna()] if glmm else shifts.iloc[:0]
    )
    step_err = float((both["glmm_shift"] - both["glmm_shift_one_step"]).abs().max()) if len(both) else float("nan")
    if glmm and n_singular:
        notes.append(f"{n_singular} of {n_fits} GLMM fits were singular (a variance estimated at zero)")
    if glmm and n_one_step:
        notes.append(
            f"{n_one_step} reader estimates by one Newton step from the full fit (variances held fixed); "
            f"{len(refits)} refitted exactly, most influential first (exact budget {exact_budget:,} "
            "vote-equivalents)"
        )
    stochastic = [res for res in results if res is not None and res.get("probes")]
    if stochastic:
        probes = sorted({res["probes"] for res in stochastic})
        notes.append(
            f"{len(stochastic)} cells with more than {STOCHASTIC_MIN_READERS:,} readers sharing pairs: the "
            f"one-step's entries estimated with {probes[0]:,}"
            + (f"-{probes[-1]:,}" if len(probes) > 1 else "")
            + " random probes; largest estimated Monte-Carlo error "
            + _points(max(res["mc_error"] for res in stochastic))
        )
    if errors:
        notes.append(f"{len(errors)} one-step estimates not computable: {sorted(set(errors))[0]}")
    if n_not_computed:
        notes.append(f"{n_not_computed} reader x cell GLMM estimates not computed: {_NO_ONE_STEP}")
    return LoroResult(
        shifts=shifts,
        aggregate=aggregate,
        readers=readers_frame,
        largest_shift=float(shifts["shift"].iloc[k]) if k is not None else float("nan"),
        largest_shift_cell=str(shifts["cell"].iloc[k]) if k is not None else "",
        largest_shift_reader=str(shifts["reader"].iloc[k]) if k is not None else "",
        largest_glmm_shift=float(shifts["glmm_shift"].iloc[kg]) if kg is not None else float("nan"),
        largest_glmm_shift_cell=str(shifts["cell"].iloc[kg]) if kg is not None else "",
        largest_glmm_shift_reader=str(shifts["reader"].iloc[kg]) if kg is not None else "",
        most_influential_reader=str(readers_frame["reader"].iloc[ki]) if ki is not None else "",
        aggregate_shift_min=float(agg_all.min()) if len(agg_all) else float("nan"),
        aggregate_shift_max=float(agg_all.max()) if len(agg_all) else float("nan"),
        glmm=bool(glmm),
        n_glmm_fits=n_fits,
        n_glmm_failed=n_failed,
        n_glmm_singular=n_singular,
        notes=tuple(notes),
        n_glmm_one_step=n_one_step,
        n_glmm_exact_refits=len(refits),
        exact_budget=int(exact_budget),
        one_step_max_error=step_err,
    )


def _points(error: float) -> str:
    """A Monte-Carlo error in probability points, or why it has none."""
    if math.isfinite(error):
        return f"{error * 100:.2g} points"
    return "not measurable (half of the probes gave no estimate at the cap)"


def _shift_columns(tables, raw: _RawWithout, by, glmm: bool, results, refits) -> tuple[pd.DataFrame, tuple, list]:
    """The ``shifts`` frame (one row per cell x reader) and the counts ``(failed, singular, one-step,
    not computed)`` and the one-step errors, built on whole columns."""
    rows = raw.cell.size
    cell = raw.cell
    n_readers = np.diff(raw.first)
    columns: dict[str, object] = {}
    for k, name in enumerate(by):
        columns[name] = np.repeat(np.array([t.key[k] for t in tables], dtype=object), n_readers).tolist()
    columns["cell"] = np.repeat(np.array([t.label for t in tables], dtype=object), n_readers).tolist()
    columns["reader"] = list(raw.reader_names)
    columns["n_votes"] = np.repeat(np.array([t.n_votes for t in tables], dtype=np.int64), n_readers)
    columns["n_votes_without"] = raw.n_without.astype(np.int64)
    columns["rate"] = raw.rate[cell]
    columns["rate_without"] = raw.rate_without
    columns["shift"] = raw.shift
    nan = float("nan")
    g_full = np.full(len(tables), nan)
    g_wo = np.full(rows, nan)
    step_shift = np.full(rows, nan)
    method = np.full(rows, "", dtype=object)
    conv = np.zeros(rows, dtype=bool)
    sing = np.zeros(rows, dtype=bool)
    err = np.full(rows, "not fitted", dtype=object)
    n_failed = n_singular = n_one_step = n_not_computed = 0
    errors: list[str] = []
    if glmm:
        one_step = np.full(rows, nan)
        too_few = np.zeros(len(tables), dtype=bool)
        for i, res in enumerate(results):
            full = res["full"]
            if not full["error"]:
                g_full[i] = float(full["estimate"])
            if res.get("one_step") is not None:
                one_step[raw.first[i] : raw.first[i + 1]] = res["one_step"]
            too_few[i] = bool(res.get("too_few"))
            if res.get("fits"):
                n_failed += bool(full["error"])
                n_singular += bool(full["singular"])
        finite = np.isfinite(one_step)
        step_shift[finite] = _expit(one_step[finite]) - g_full[cell][finite]
        # one-step rows unless refitted or in a cell with too few readers
        one = ~too_few[cell]
        for i, j in refits:
            one[raw.first[i] + j] = False
        method[one] = "one-step"
        n_one_step = int(one.sum())
        g_wo[one] = g_full[cell][one] + step_shift[one]
        conv[one] = np.isfinite(step_shift[one])
        sing[one] = np.array([bool(r["full"]["singular"]) for r in results], dtype=bool)[cell][one]
        err[one] = ""
        for k in np.flatnonzero(one & ~conv):
            e = results[cell[k]].get("reason") or "one-step approximation not computable"
            err[k] = e
            errors.append(e)
        few = too_few[cell] & ~one
        refitted = np.zeros(rows, dtype=bool)
        for (i, j), refit in refits.items():
            k = raw.first[i] + j
            refitted[k] = True
            method[k] = "exact"
            g_wo[k] = refit["estimate"]
            conv[k], sing[k], err[k] = refit["converged"], refit["singular"], refit["error"]
            n_failed += bool(refit["error"])
            n_singular += bool(refit["singular"])
        few &= ~refitted
        method[few] = "not computed"
        err[few] = _NO_ONE_STEP
        n_not_computed = int(few.sum())
    columns["glmm"] = g_full[cell]
    columns["glmm_without"] = g_wo
    columns["glmm_shift"] = g_wo - g_full[cell]
    columns["glmm_method"] = method.tolist()
    columns["glmm_shift_one_step"] = step_shift
    columns["glmm_converged"] = conv
    columns["glmm_singular"] = sing
    columns["glmm_error"] = err.tolist()
    return pd.DataFrame(columns), (n_failed, n_singular, n_one_step, n_not_computed), errors


def _refit_most_influential(tables, results, budget: int, runner, raw_shift=None) -> dict[tuple[int, int], dict]:
    """Exact refits of the (cell, reader) combinations with the largest one-step shifts (those
    whose one-step failed first), as many as ``budget`` vote-equivalents allow (a cell larger
    than the budget gets none: at a million votes one refit costs as much as the audit)."""
    candidates = []
    for i, (t, res) in enumerate(zip(tables, results)):
        one = res.get("one_step")
        if one is None or res["full"]["error"]:
            continue
        if res.get("too_few"):
            # no one-step in a small cell: rank its readers by their raw shift
            shift = raw_shift[i]
        else:
            shift = np.abs(_expit(one) - res["full"]["estimate"])
            shift = np.where(np.isfinite(shift), shift, np.inf)
        for j in range(t.n_readers):
            candidates.append((-shift[j], i, j))
    candidates.sort()
    chosen, spent = [], 0
    for _, i, j in candidates:
        c = tables[i].n_votes + FIT_OVERHEAD_VOTES
        if spent + c > budget:
            continue  # too big for what is left; a smaller cell's reader may still fit
        chosen.append((i, j))
        spent += c
    if not chosen:
        return {}
    arrays = {i: tables[i].vote_arrays() for i in sorted({i for i, _ in chosen})}  # once per cell
    jobs = []
    for i, j in chosen:
        y, pair, rdr = arrays[i]
        jobs.append(_RefitJob(i, j, y, pair, rdr, _start(results[i]["full"], pair, rdr, rdr != j)))
    chunks = [jobs[k : k + REFIT_CHUNK] for k in range(0, len(jobs), REFIT_CHUNK)]
    rows = [row for part in runner.map(_refit_exactly, chunks, label="leave-one-reader-out refits") for row in part]
    return {(job.index, job.reader): row for job, row in zip(jobs, rows)}


def _refit_exactly(jobs: list[_RefitJob]) -> list[dict]:
    """:func:`_refit` of every job, the same estimates and flags to the last bit without the standard
    errors (leave-one-reader-out does not read them): the small ones fitted in lockstep with the
    per-cell engine's own arithmetic (:mod:`judge_transfer_audit.statistics.glmm.lockstep`), the others by
    :func:`judge_transfer_audit.statistics.glmm.fit.native_estimates` (no covariance evaluations); a fit that raises is
    redone by :func:`_refit`, which records the error as before."""
    from judge_transfer_audit.statistics.glmm.lockstep import LOCKSTEP_MAX_VOTES, fit_optima

    designs = [_design_of(job) for job in jobs]
    small = [k for k, d in enumerate(designs) if d is not None and 2 <= d.y.size <= LOCKSTEP_MAX_VOTES]
    rows: dict[int, dict] = {}
    if len(small) > 1:
        for k, fit in zip(small, fit_optima([designs[k] for k in small], [jobs[k].start for k in small])):
            if fit is not None:
                rows[k] = _estimates_row(fit.b0, float(fit.x[0]), float(fit.x[1]), fit.converged, fit.singular, False)
    return [rows[k] if k in rows else _refit_estimates(job, designs[k]) for k, job in enumerate(jobs)]


def _refit_estimates(job: _RefitJob, design) -> dict:
    from judge_transfer_audit.core.errors import AuditError
    from judge_transfer_audit.core.threads import single_threaded_blas
    from judge_transfer_audit.statistics.glmm.fit import native_estimates

    if design is None:
        return _refit(job)
    try:
        with single_threaded_blas():
            est = native_estimates(design, start=job.start)
    except (AuditError, np.linalg.LinAlgError, ValueError):
        est = None
    if est is None:
        return _refit(job)
    nan = float("nan")
    return _estimates_row(
        est.b[0], est.sd.get("pair", nan), est.sd.get("reader", nan), est.converged, est.singular, est.separation
    )


def _design_of(job: _RefitJob):
    """The design :func:`_refit` fits (None where building it raises: :func:`_refit` records that)."""
    from judge_transfer_audit.core.errors import AuditError
    from judge_transfer_audit.statistics.glmm.design import build_design

    keep = job.rdr != job.reader
    if not keep.any():
        return None
    try:
        return build_design(job.y[keep], {"pair": job.pair[keep], "reader": job.rdr[keep]})
    except (AuditError, ValueError):
        return None


def _estimates_row(b0: float, sd_pair: float, sd_reader: float, converged: bool, singular: bool, separation: bool):
    """The refit row of :func:`_refit` from estimates alone (what leave-one-reader-out reads: the
    estimate and the flags; the standard error and interval are not computed)."""
    from judge_transfer_audit.statistics.glmm.model import _expit as expit_scalar

    nan = float("nan")
    return {
        "estimate": expit_scalar(b0),
        "ci_low": nan,
        "ci_high": nan,
        "b0": b0,
        "se": nan,
        "p_value": nan,
        "sd_pair": sd_pair,
        "sd_reader": sd_reader,
        "converged": bool(converged),
        "singular": bool(singular),
        "separation": bool(separation),
        "error": "",
    }


def _reader_summary(shifts: pd.DataFrame, aggregate: pd.DataFrame, glmm: bool) -> pd.DataFrame:
    """One row per reader: mean and max |raw shift| over cells, mean |GLMM shift|, aggregate shift."""
    abs_shift = shifts["shift"].abs()
    g = shifts.assign(_abs=abs_shift, _gabs=shifts["glmm_shift"].abs()).groupby("reader", sort=True)
    frame = pd.DataFrame({"reader": list(g.groups.keys())})
    frame["mean_abs_shift"] = g["_abs"].mean().to_numpy(float)
    frame["max_abs_shift"] = g["_abs"].max().to_numpy(float)
    frame["mean_abs_glmm_shift"] = g["_gabs"].mean().to_numpy(float) if glmm else float("nan")
    agg = aggregate[aggregate["scope"] == ALL_DIMENSIONS].set_index("reader")["shift"]
    frame["aggregate_shift"] = frame["reader"].map(agg).astype(float).to_numpy()
    return frame


def _aggregate(tables: list[CellTable], by: tuple[str, ...], raw: "_RawWithout") -> pd.DataFrame:
    """Pooled raw rates per scope x reader: one scope of every dimension (criteria other than
    ``overall``), then one per criterion (sorted), readers sorted within each. Every sum is of vote
    counts, so it is exact whatever the order (the rates equal a direct recomputation's bits)."""
    columns = ["scope", "reader", "n_votes_without", "rate", "rate_without", "shift"]
    if not tables:
        return pd.DataFrame(columns=columns)
    every, reader = np.unique(np.asarray(raw.reader_names, dtype=object), return_inverse=True)
    n_every = every.size
    if "criterion" in by:
        ci = by.index("criterion")
        criteria = [t.key[ci] for t in tables]
        names, crit = np.unique(np.asarray(criteria, dtype=object), return_inverse=True)
        scopes = [str(c) for c in names]
        dims = np.array([c != HUMAN_OVERALL for c in criteria])
        groups = [dims] if dims.any() else []
        labels = [ALL_DIMENSIONS] if dims.any() else []
        per_scope = crit
    else:
        scopes, per_scope, groups, labels = (
            [],
            np.zeros(len(tables), dtype=np.int64),
            [np.ones(len(tables), bool)],
            [ALL_DIMENSIONS],
        )
    frames = []
    row_cell = raw.cell
    for label, member in zip(labels, groups):  # pooled scopes (one: every dimension)
        keep = member[row_cell]
        frames.append(_pooled(label, reader[keep], raw.s_r[keep], raw.n_r[keep], every, n_every))
    if scopes:
        key = per_scope[row_cell] * n_every + reader
        uniq, inv = np.unique(key, return_inverse=True)
        s_by = np.bincount(inv, raw.s_r, uniq.size)
        n_by = np.bincount(inv, raw.n_r, uniq.size)
        scope_of = uniq // n_every
        bounds = np.searchsorted(scope_of, np.arange(len(scopes) + 1))
        s_tot = np.add.reduceat(s_by, bounds[:-1]) if uniq.size else np.zeros(0)
        n_tot = np.add.reduceat(n_by, bounds[:-1]) if uniq.size else np.zeros(0)
        s_tot, n_tot = s_tot[scope_of], n_tot[scope_of]
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = np.where(n_tot > 0, s_tot / np.where(n_tot > 0, n_tot, 1.0), np.nan)
            n_wo = n_tot - n_by
            rate_wo = np.where(n_wo > 0, (s_tot - s_by) / np.where(n_wo > 0, n_wo, 1.0), np.nan)
        frames.append(
            pd.DataFrame(
                {
                    "scope": np.asarray(scopes, dtype=object)[scope_of],
                    "reader": every[uniq % n_every],
                    "n_votes_without": n_wo.astype(int),
                    "rate": rate,
                    "rate_without": rate_wo,
                    "shift": rate_wo - rate,
                }
            )
        )
    if not frames:
        return pd.DataFrame(columns=columns)
    return pd.concat(frames, ignore_index=True)[columns]


def _pooled(label: str, reader: np.ndarray, s_r: np.ndarray, n_r: np.ndarray, every: np.ndarray, n_every: int):
    """One pooled scope's rows: the readers seen in it, sorted."""
    s_by = np.bincount(reader, s_r, n_every)
    n_by = np.bincount(reader, n_r, n_every)
    seen = np.bincount(reader, minlength=n_every) > 0
    s_tot, n_tot = s_by.sum(), n_by.sum()
    rate = s_tot / n_tot if n_tot > 0 else float("nan")
    n_wo = n_tot - n_by
    with np.errstate(invalid="ignore", divide="ignore"):
        rate_wo = np.where(n_wo > 0, (s_tot - s_by) / np.where(n_wo > 0, n_wo, 1.0), np.nan)
    sel = np.flatnonzero(seen)
    return pd.DataFrame(
        {
            "scope": label,
            "reader": every[sel],
            "n_votes_without": n_wo[sel].astype(int),
            "rate": rate,
            "rate_without": rate_wo[sel],
            "shift": rate_wo[sel] - rate,
        }
    )
