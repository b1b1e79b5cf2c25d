"""The humans' side of each cell: the raw share and the crossed pair + reader GLMM.

Human ties (when a study allowed them, or when scalar ratings were turned into pairs) are
excluded from both the raw rate and the GLMM (the model is binary), and always counted;
the even-split share is reported beside them for comparison. The estimands the judge is
compared with (vote share, majority rate) are computed with the judge on the same pairs, by
:mod:`judge_transfer_audit.verdict`; the GLMM here gives the secondary figures: ``expit(b0)`` (the median
pair and reader) and the plug-in majority rate ``Phi(b0 / sd_pair)``, and is checked for
degeneracy (:mod:`judge_transfer_audit.verdict.degenerate`).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy.special import expit, ndtr

from judge_transfer_audit.core.errors import AuditError
from judge_transfer_audit.model.cells import GlmmSummary, HumanSide
from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.verdict.degenerate import degeneracy


def _failed_glmm(reason: str, status: Status = Status.ERROR) -> GlmmSummary:
    nan = float("nan")
    return GlmmSummary(
        estimate=nan,
        ci_low=nan,
        ci_high=nan,
        b0=nan,
        se=nan,
        sd_pair=nan,
        sd_reader=nan,
        singular=False,
        converged=False,
        separation=False,
        loglik=nan,
        status=status,
        reason=reason,
    )


def reader_rates(cell_votes: pd.DataFrame) -> np.ndarray:
    """Each reader's share of decisive votes for the focal system (ties excluded), readers sorted."""
    y, _, reader = _decisive(cell_votes)
    return _reader_rates(y, reader)


def _decisive(cell_votes: pd.DataFrame, y: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A cell's decisive votes as arrays: y (1 focal, 0 other), pair ids, reader ids (``y``: the
    cell's ``y`` column as floats, when already read)."""
    y = cell_votes["y"].to_numpy(float) if y is None else y
    keep = ~np.isnan(y)
    return y[keep], cell_votes["pair_id"].to_numpy()[keep], cell_votes["reader_id"].to_numpy()[keep]


def _reader_rates(y: np.ndarray, reader: np.ndarray) -> np.ndarray:
    """Mean of ``y`` per reader in sorted reader order (sums of 0/1 votes: exact, as a groupby mean)."""
    if y.size == 0:
        return np.zeros(0)
    codes, _ = pd.factorize(reader, sort=True)
    return np.bincount(codes, weights=y) / np.bincount(codes)


#: a b0 this close to 0 is 0 to the optimiser's accuracy (two exact engines differ by ~1e-7 on tiny cells)
B0_ZERO = 1e-6


def majority_plugin(b0: float, sd_pair: float) -> float:
    """The GLMM's plug-in majority rate ``Phi(b0 / sd_pair)`` (a step when ``sd_pair`` is 0).

    At ``sd_pair`` 0 the step is taken on b0's sign only beyond :data:`B0_ZERO`: a cell with as many
    votes each way has b0 = +/-1e-15 (rounding), and its plug-in is 0.5, not 0 or 1 by the sign of
    the last digit."""
    if not (np.isfinite(b0) and np.isfinite(sd_pair)):
        return float("nan")
    if sd_pair <= 0:
        return 1.0 if b0 > B0_ZERO else (0.0 if b0 < -B0_ZERO else 0.5)
    return float(ndtr(b0 / sd_pair))


def fit_cell_glmm(
    cell_votes: pd.DataFrame, *, level: float = 0.95, backend: str = "native", fitted=None, _decisive_votes=None
) -> GlmmSummary:
    """Fit ``logit P(y=1) = b0 + u_pair + v_reader`` to one cell's decisive votes.

    ``fitted``: that fit already made (a :class:`judge_transfer_audit.statistics.glmm.GlmmResult`, or the
    :class:`judge_transfer_audit.core.errors.AuditError` it raised), as :func:`human_sides` does for many cells at once.
    """
    from judge_transfer_audit.statistics.glmm import fit_crossed_glmm

    y, pair, reader = _decisive(cell_votes) if _decisive_votes is None else _decisive_votes
    if y.size == 0:
        # Nothing to fit is not a failure: the cell is skipped, and says why.
        return _failed_glmm("no decisive votes in this cell (all ties)", Status.SKIPPED)
    if isinstance(fitted, AuditError):
        return _failed_glmm(str(fitted))
    try:
        if fitted is not None:
            fit = fitted
        else:
            with warnings.catch_warnings():
                # Singular fits and separation are reported as flags on the result.
                warnings.simplefilter("ignore")
                fit = fit_crossed_glmm(y, {"pair": pair, "reader": reader}, level=level, backend=backend)
    except AuditError as exc:
        return _failed_glmm(str(exc))
    b0, se = float(fit.b[0]), float(fit.se[0])
    estimate, low, high = fit.prob_estimate()
    profile_failed = ""
    if fit.separation:
        # Every vote one way: the Wald interval is [0, 1] (infinite SE); the profile interval
        # is one-sided and informative (e.g. [0.8, 1] for 20 of 20 pairs).
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                profiled = fit_crossed_glmm(
                    y, {"pair": pair, "reader": reader}, level=level, backend=backend, profile=True
                )
            low, high = profiled.prob_profile()
        except (AuditError, ValueError) as exc:
            # the profile's root search can fail to bracket (scipy's brentq: ValueError); the
            # GLMM is a secondary figure, so keep the Wald interval and say so
            profile_failed = f"the profile-likelihood interval could not be computed ({exc}); Wald interval shown"
    status = Status.PASS
    reasons = []
    if fit.separation:
        status, reasons = (
            Status.WARN,
            [
                "every vote went one way (separation): boundary estimate, "
                + ("profile-likelihood interval" if not profile_failed else profile_failed)
            ],
        )
    if fit.singular:
        status = Status.WARN
        reasons.append("singular fit: a variance component is estimated at zero")
    if not fit.converged:
        status = Status.WARN
        reasons.append("the optimiser did not report convergence")
    sd_pair, sd_reader = float(fit.sd.get("pair", 0.0)), float(fit.sd.get("reader", 0.0))
    degenerate, why = degeneracy(
        estimate=float(estimate),
        ci_low=float(low),
        ci_high=float(high),
        se=se,
        sd_pair=sd_pair,
        sd_reader=sd_reader,
        separation=bool(fit.separation),
        reader_rates=_reader_rates(y, reader),
        raw_share=float(y.mean()),
    )
    return GlmmSummary(
        estimate=float(estimate),
        ci_low=float(low),
        ci_high=float(high),
        b0=b0,
        se=se,
        sd_pair=sd_pair,
        sd_reader=sd_reader,
        singular=bool(fit.singular),
        converged=bool(fit.converged),
        separation=bool(fit.separation),
        loglik=float(fit.loglik),
        status=status,
        reason="; ".join(reasons),
        notes=tuple(fit.notes),
        majority_plugin=majority_plugin(b0, sd_pair),
        degenerate=degenerate,
        degenerate_reason=why,
        factorization=fit.factorization,
    )


def _fit_many_cells(cells_votes, level: float, decisive=None, defer_stacked: bool = False) -> list:
    """The native GLMM of every cell's decisive votes, tiny cells fitted together
    (:func:`judge_transfer_audit.statistics.glmm.batch.fit_many`): a GlmmResult, the AuditError its input raised, or
    None (no decisive vote), per cell (``decisive``: each cell's :func:`_decisive` arrays, when made)."""
    from judge_transfer_audit.statistics.glmm.batch import fit_many
    from judge_transfer_audit.statistics.glmm.design import build_design

    fitted: list = [None] * len(cells_votes)
    designs, where = [], []
    decisive = [_decisive(v) for v in cells_votes] if decisive is None else decisive
    for i, (y, pair, reader) in enumerate(decisive):
        if y.size == 0:
            continue
        try:
            designs.append(build_design(y, {"pair": pair, "reader": reader}))
            where.append(i)
        except AuditError as exc:
            fitted[i] = exc
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # singular fits and separation are flags on the result
        for i, fit in zip(where, fit_many(designs, level=level, defer_stacked=defer_stacked)):
            fitted[i] = _DEFERRED if fit is None else fit
    return fitted


#: a cell whose fit :func:`human_sides_chunk` left to :func:`human_sides_joined`
_DEFERRED = object()


def human_sides(cells_votes, *, level: float = 0.95, backend: str = "native") -> list[HumanSide]:
    """:func:`human_side` of many cells; with the native engine their GLMMs are fitted together
    (the same fits, evaluated at once for tiny cells: :mod:`judge_transfer_audit.statistics.glmm.batch`)."""
    if backend != "native" or not 0.0 < level < 1.0:
        return [human_side(v, level=level, backend=backend) for v in cells_votes]
    ys = [v["y"].to_numpy(float) for v in cells_votes]  # each cell's arrays once, for its fit and its summary
    decisive = [_decisive(v, y) for v, y in zip(cells_votes, ys)]
    fitted = _fit_many_cells(cells_votes, level, decisive)
    return [
        human_side(v, level=level, backend=backend, fitted=f, _decisive_votes=d, _y=y)
        for v, f, d, y in zip(cells_votes, fitted, decisive, ys)
    ]


def human_sides_chunk(cells_votes, *, level: float = 0.95) -> list:
    """:func:`human_sides` (native engine) of a chunk of a study's cells, without the middle-sized
    cells that the engine stacks with others of their shape (None in their place: their fits depend,
    by rounding, on their stack companions; :func:`judge_transfer_audit.statistics.glmm.batch.fit_many`). Chunks of any
    size give the bits of one :func:`human_sides` call once :func:`human_sides_joined` has fitted those."""
    ys = [v["y"].to_numpy(float) for v in cells_votes]
    decisive = [_decisive(v, y) for v, y in zip(cells_votes, ys)]
    fitted = _fit_many_cells(cells_votes, level, decisive, defer_stacked=True)
    return [
        None if f is _DEFERRED else human_side(v, level=level, fitted=f, _decisive_votes=d, _y=y)
        for v, f, d, y in zip(cells_votes, fitted, decisive, ys)
    ]


def human_sides_joined(cells_votes, chunks: list[list], *, level: float = 0.95) -> list[HumanSide]:
    """The chunks' sides (:func:`human_sides_chunk` of consecutive slices of ``cells_votes``) in cell
    order, the cells they left out fitted together here: the same bits as :func:`human_sides`."""
    sides = [side for chunk in chunks for side in chunk]
    if len(sides) != len(cells_votes):
        raise ValueError(f"human_sides_joined: {len(sides)} sides for {len(cells_votes)} cells")
    left = [i for i, side in enumerate(sides) if side is None]
    for i, side in zip(left, human_sides([cells_votes[i] for i in left], level=level) if left else []):
        sides[i] = side
    return sides


def human_side(
    cell_votes: pd.DataFrame,
    *,
    level: float = 0.95,
    backend: str = "native",
    fitted=None,
    _decisive_votes=None,
    _y=None,
) -> HumanSide:
    """The raw shares and the GLMM of one cell (``fitted``: as :func:`fit_cell_glmm`; ``_y``: the
    cell's ``y`` column as floats, when already read)."""
    y = cell_votes["y"].to_numpy(float) if _y is None else _y
    n_focal = int(np.sum(y == 1.0))
    n_other = int(np.sum(y == 0.0))
    n_ties = int(np.sum(np.isnan(y)))
    decisive = n_focal + n_other
    rate = n_focal / decisive if decisive else float("nan")
    total = decisive + n_ties
    even = (n_focal + 0.5 * n_ties) / total if total else float("nan")
    return HumanSide(
        rate=rate,
        n_focal=n_focal,
        n_other=n_other,
        n_ties=n_ties,
        rate_even_split=even,
        glmm=fit_cell_glmm(cell_votes, level=level, backend=backend, fitted=fitted, _decisive_votes=_decisive_votes),
    )


def wilson_interval(successes: float, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion (successes may be fractional under even-split)."""
    from judge_transfer_audit.statistics.distributions import norm

    if n <= 0:
        return float("nan"), float("nan")
    z = float(norm.ppf(0.5 + level / 2))
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return float(centre - half), float(centre + half)


__all__ = [
    "fit_cell_glmm",
    "human_side",
    "human_sides",
    "human_sides_chunk",
    "human_sides_joined",
    "majority_plugin",
    "reader_rates",
    "wilson_interval",
    "expit",
]
