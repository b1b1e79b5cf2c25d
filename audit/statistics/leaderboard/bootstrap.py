"""The leaderboard's cluster bootstrap (:mod:`judge_transfer_audit.statistics.leaderboard.fit`): the Bradley-Terry fits
it repeats, and its replicates in blocks, a task each of the run's runner.

Each replicate resamples the clusters (pairs or prompts) with replacement; a cluster drawn twice
enters as two clusters with random intercepts of their own (:func:`replicate_clusters`); the human
GLMM is refitted from the full fit's estimates and curvature
(:func:`judge_transfer_audit.statistics.glmm.fit.inverse_hessian_at`),
the judge's logistic model from scratch. When the human model has the reader term only (one vote per
pair: no cluster term), a vote drawn twice is the same vote counted twice, so the replicate is the full
data with a weight per vote (how often its cluster was drawn) and is refitted by
:class:`judge_transfer_audit.statistics.glmm.bradley_terry_laplace.BradleyTerryLaplace`, the same objective without
repeating rows. Each block carries the section's generator as it stood before the block's first draw
(:class:`ReplicateBlock`), so every replicate draws what the in-order loop would: the result does not
depend on how the replicates are cut into blocks or which worker fits which.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from judge_transfer_audit.core.errors import AuditError

if TYPE_CHECKING:
    from judge_transfer_audit.statistics.glmm import GlmmResult


def strength_ranks(strength: np.ndarray) -> np.ndarray:
    """1 = strongest; equal strengths share the lower rank."""
    order = (-strength).argsort(kind="stable")
    ranks = np.empty(len(strength))
    ranks[order] = np.arange(1, len(strength) + 1)
    return ranks


def fit_humans(y, X, factors, names, start=None):
    """The humans' Bradley-Terry GLMM (:func:`judge_transfer_audit.statistics.glmm.fit_crossed_glmm`): the fit, its
    fixed effects and their covariance."""
    from judge_transfer_audit.statistics.glmm import fit_crossed_glmm

    fit = fit_crossed_glmm(y, factors, X, names, start=start)
    return fit, np.asarray(fit.b, float), np.asarray(fit.vcov, float)


def start_curvature(y, X, factors, names, fit) -> np.ndarray | None:
    """The full fit's inverse Hessian (:func:`judge_transfer_audit.statistics.glmm.fit.inverse_hessian_at`): the
    replicates' refits start their search from it (None: they start from the identity)."""
    from judge_transfer_audit.core.threads import single_threaded_blas
    from judge_transfer_audit.statistics.glmm.design import build_design
    from judge_transfer_audit.statistics.glmm.fit import inverse_hessian_at

    try:
        with single_threaded_blas():
            return inverse_hessian_at(build_design(y, factors, X, names), fit)
    except (AuditError, np.linalg.LinAlgError, ValueError):
        return None


def _replicate_strengths(y, X, factors, names, start, inverse_hessian=None) -> np.ndarray:
    """A bootstrap replicate's human strengths by :func:`judge_transfer_audit.statistics.glmm.fit.native_estimates`:
    the optimum
    :func:`fit_humans` finds (to the optimiser's tolerance when the search starts from the full fit's
    curvature, ``inverse_hessian``; to the last bit from the identity), without the covariance's
    evaluations, which the bootstrap never reads. Where that gives nothing or raises, the whole fit is
    made (and a replicate whose whole fit raises fails)."""
    from judge_transfer_audit.core.threads import single_threaded_blas
    from judge_transfer_audit.statistics.glmm.design import build_design
    from judge_transfer_audit.statistics.glmm.fit import native_estimates

    try:
        # the replicate links every system (all_linked), so its design has full column rank
        design = build_design(y, factors, X, names, check_rank=False)
        with single_threaded_blas():
            est = native_estimates(design, start=start, inverse_hessian=inverse_hessian)
    except (AuditError, np.linalg.LinAlgError, ValueError):
        est = None
    if est is None:
        return fit_humans(y, X, factors, names, start=start)[1]
    return np.asarray(est.b, float)


def fit_judge(y, X, weights=None):
    """The judge's logistic Bradley-Terry fit (Firth's where separated): the fit, its coefficients and
    their covariance (the inverse information; NaN where singular). ``weights``: frequency weights of the
    rows (:func:`distinct_verdicts`), as :func:`judge_transfer_audit.statistics.readers.firth.fit_logistic` takes
    them."""
    from scipy.special import expit

    from judge_transfer_audit.statistics.readers.firth import fit_logistic

    fit = fit_logistic(X, y, method="auto", weights=weights)
    b = np.asarray(fit.coef, float)
    p = expit(X @ np.nan_to_num(b))
    c = np.ones(len(y)) if weights is None else np.asarray(weights, float)
    info = X.T @ (X * (c * p * (1 - p))[:, None])
    try:
        vcov = np.linalg.inv(info)
    except np.linalg.LinAlgError:
        vcov = np.full(info.shape, np.nan)
    return fit, b, vcov


def distinct_verdicts(y, focal, other, k: int):
    """The distinct ``(focal, other, y)`` rows of decisive verdicts (a few hundred at most, whatever their
    number): ``(each verdict's row, y, focal, other)`` of those rows, so that a logistic Bradley-Terry fit
    of the rows weighted by ``np.bincount(row, weights)`` is the fit of the verdicts (:func:`fit_judge`)."""
    key = (np.asarray(focal, np.int64) * k + np.asarray(other, np.int64)) * 2 + np.asarray(y, float).astype(np.int64)
    distinct, row = np.unique(key, return_inverse=True)
    return row, (distinct % 2).astype(float), distinct // 2 // k, distinct // 2 % k


def all_linked(a: np.ndarray, b: np.ndarray, k: int) -> bool:
    """Whether comparisons of system codes ``a[i]`` vs ``b[i]`` (0..k-1) touch all ``k`` systems and
    link them into one graph (:func:`comparison_components` on the distinct links, not per row)."""
    present = np.zeros(k, bool)
    present[a] = present[b] = True
    if not present.all():
        return False
    parent = list(range(k))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    groups = k
    links = np.flatnonzero(np.bincount(np.asarray(a, np.int64) * k + b, minlength=k * k))  # the distinct links, sorted
    for link in links.tolist():
        ra, rb = find(link // k), find(link % k)
        if ra != rb:
            parent[ra] = rb
            groups -= 1
    return groups == 1


def replicate_clusters(code: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The cluster labels of a cluster-bootstrap replicate whose rows are ``np.repeat(rows,
    counts[code])``: each copy of a cluster drawn more than once is a cluster of its own (its
    random intercept drawn afresh), as a cluster bootstrap of a mixed model needs; a copy merged
    with its twin would be one cluster of twice the votes, and its variance overstated."""
    reps = counts[code]
    starts = np.repeat(np.cumsum(reps) - reps, reps)
    copy_index = np.arange(starts.size) - starts
    return np.repeat(code, reps).astype(np.int64) * max(int(counts.max()), 1) + copy_index


def codes_design(focal: np.ndarray, other: np.ndarray, k: int) -> np.ndarray:
    """The Bradley-Terry design from system codes (0..k-1, in the order of the sorted systems): +1 for
    the focal system, -1 for the other, the first system (reference) left out."""
    X = np.zeros((len(focal), k))
    rows = np.arange(len(focal))
    X[rows, focal] = 1.0
    X[rows, other] = -1.0
    return X[:, 1:]


@dataclass(frozen=True, eq=False)
class ReplicateBlock:
    """What a block of the leaderboard's bootstrap replicates reads: a task of the run's runner
    (:func:`replicate_block`; picklable and small: the design travels as integer codes, the draws as
    the generator's state). ``rng`` is the section's generator as it stood before this block's first
    draw, so the block redraws exactly the clusters the in-order loop would: the replicates do not
    depend on which block or worker fits them."""

    y: np.ndarray
    focal: np.ndarray  #: system codes (0..k-1, the sorted systems)
    other: np.ndarray
    readers: np.ndarray  #: reader codes, in the order of the sorted reader ids
    clustered: bool  #: whether the human fit has a cluster term (else the reader term only)
    cluster: str
    code: np.ndarray  #: each decisive vote's bootstrap cluster (0..n_clusters-1)
    n_clusters: int
    k: int
    names: tuple[str, ...]
    start: GlmmResult  #: the full fit (warm start; its conditional modes left out)
    curvature: np.ndarray | None  #: the full fit's inverse Hessian, where the refits' search starts
    judge_y: np.ndarray | None
    judge_focal: np.ndarray | None
    judge_other: np.ndarray | None
    judge_code: np.ndarray | None  #: each judged pair's bootstrap cluster (-1: none)
    rng: np.random.Generator | None = None
    n: int = 0  #: replicates in this block


def draw_clusters(rng: np.random.Generator, n_clusters: int) -> np.ndarray:
    """How often each cluster is drawn in one replicate (``n_clusters`` draws with replacement)."""
    return np.bincount(rng.integers(0, n_clusters, n_clusters), minlength=n_clusters)


def weighted_refits(block: ReplicateBlock) -> bool:
    """Whether the block's human refits weight the full data's votes (:func:`weighted_human_strengths`):
    the human model has the reader term only (no cluster term, the reader term kept)."""
    return not block.clustered and tuple(block.start.sd) == ("reader",)


def reader_start(block: ReplicateBlock) -> np.ndarray:
    """Where the weighted refits start: the full fit's reader sd (at least 0.05) and fixed effects, as
    the general refits do (:func:`judge_transfer_audit.statistics.glmm.fit.native_estimates` from ``block.start``)."""
    sd = float(block.start.sd["reader"])
    theta = 1.0 if not np.isfinite(sd) else max(sd, 0.05)
    return np.concatenate([[theta], np.asarray(block.start.b, float)])


def reader_curvature(block: ReplicateBlock) -> np.ndarray | None:
    """:func:`start_curvature` for the weighted refits: the inverse Hessian of the full data's deviance at
    :func:`reader_start` (forward differences of the analytic gradient, as
    :func:`judge_transfer_audit.statistics.glmm.fit.inverse_hessian_at`), computed by
    :class:`~judge_transfer_audit.statistics.glmm.bradley_terry_laplace.BradleyTerryLaplace`; None where not positive
    definite."""
    from judge_transfer_audit.core.threads import single_threaded_blas
    from judge_transfer_audit.statistics.glmm.bradley_terry_laplace import BradleyTerryLaplace
    from judge_transfer_audit.statistics.glmm.optimize import hessian_steps, run_steps

    lap = BradleyTerryLaplace(
        block.y, block.focal, block.other, block.readers, np.ones(len(block.y)), block.k, _n_readers(block)
    )
    x = reader_start(block)
    with single_threaded_blas():
        _, g0 = lap.fun_grad(x)
        H = run_steps(hessian_steps(x, g0=g0), lambda z: lap.fun_grad(z)[1])
    try:
        if not np.all(np.isfinite(H)) or np.linalg.eigvalsh(H).min() <= 0:
            return None
        B = np.linalg.inv(H)
    except np.linalg.LinAlgError:
        return None
    return (B + B.T) / 2.0


def _n_readers(block: ReplicateBlock) -> int:
    return int(block.readers.max()) + 1 if len(block.readers) else 0


def weighted_human_strengths(block: ReplicateBlock, weight: np.ndarray) -> np.ndarray | None:
    """A replicate's human strengths (reference left out) from the full data's votes, each weighted by
    how often the replicate drew it (votes drawn 0 times left out): the optimum of the deviance the
    general refit (:func:`_replicate_strengths`) minimises on the repeated votes, by the same optimiser
    from the same start and curvature. None where that optimum is not finite or the reader variance
    diverges (the caller then refits the general way)."""
    from judge_transfer_audit.statistics.glmm.bradley_terry_laplace import (
        BradleyTerryLaplace,
        bradley_terry_reader_estimates,
    )

    keep = weight > 0
    lap = BradleyTerryLaplace(
        block.y[keep],
        block.focal[keep],
        block.other[keep],
        block.readers[keep],
        weight[keep],
        block.k,
        _n_readers(block),
    )
    x = bradley_terry_reader_estimates(lap, reader_start(block), block.curvature)
    return None if x is None else x[1:]


def replicate_block(block: ReplicateBlock) -> list[tuple]:
    """Each replicate of ``block``: ``(human ranks or None, tau or None, rank shifts or None,
    failed)`` (a replicate that loses a system or a link, or whose refit raises, failed; a judge
    refit that raises after the humans' leaves their ranks in)."""
    from judge_transfer_audit.statistics.distributions import kendalltau

    rng = copy.deepcopy(block.rng)  # the block's own copy: calling it twice gives the same replicates
    y, focal, other, readers, code = block.y, block.focal, block.other, block.readers, block.code
    weighted = weighted_refits(block)
    X = None
    if not block.clustered and not weighted:
        # the rows in the GLMM engine's canonical order (reader, vote, design columns): a replicate
        # repeats rows in place, so its design is in that order already and the engine's sort of it
        # (canonical_order) is one pass. The same fits: the engine sorts every design so, and a
        # replicate's rows are the same multiset whatever the order of the block's rows
        X = codes_design(focal, other, block.k)
        order = np.lexsort([X[:, j] for j in range(X.shape[1] - 1, -1, -1)] + [y, readers])
        y, X, focal, other, readers, code = (v[order] for v in (y, X, focal, other, readers, code))
    jX = None
    if block.judge_y is not None:  # the judge's distinct verdicts, weighted in each replicate
        jrow, jy, jfocal, jother = distinct_verdicts(block.judge_y, block.judge_focal, block.judge_other, block.k)
        jX = codes_design(jfocal, jother, block.k)
    rows = np.arange(len(y))
    out = []
    for _ in range(block.n):
        counts = draw_clusters(rng, block.n_clusters)
        ranks = tau = shift = None
        failed = False
        try:
            weight = counts[code]
            drawn = weight > 0
            if not all_linked(focal[drawn], other[drawn], block.k):
                raise ValueError("a system or a link is missing from this replicate")
            b_r = weighted_human_strengths(block, weight) if weighted else None
            if b_r is None:
                idx = np.repeat(rows, weight)
                factors = {"reader": readers[idx]}
                if block.clustered:
                    factors = {block.cluster: replicate_clusters(code, counts), **factors}
                X = codes_design(focal, other, block.k) if X is None else X
                b_r = _replicate_strengths(
                    y[idx], X[idx], factors, list(block.names), start=block.start, inverse_hessian=block.curvature
                )
            s_r = np.concatenate([[0.0], b_r])
            ranks = strength_ranks(s_r)
            if jX is not None:
                jcode = block.judge_code
                jweight = np.where(jcode >= 0, counts[np.maximum(jcode, 0)], 1)
                _, jb_r, _ = fit_judge(jy, jX, weights=np.bincount(jrow, jweight, len(jy)))
                js_r = np.concatenate([[0.0], jb_r])
                tau = kendalltau(s_r, js_r).statistic
                shift = strength_ranks(js_r) - ranks
        except (AuditError, ValueError, np.linalg.LinAlgError):
            failed = True
            tau = shift = None
        out.append((ranks, tau, shift, failed))
    return out


def replicate_blocks(
    template: ReplicateBlock, rng: np.random.Generator, n_boot: int, jobs: int
) -> list[ReplicateBlock]:
    """``n_boot`` replicates in blocks, each with the generator's state before its first draw (``rng``
    is advanced past every draw, as the in-order loop leaves it): one block with one job, else four
    per job (a progress bar that moves, and the blocks' unequal costs balanced)."""
    n = 1 if jobs <= 1 else min(n_boot, 4 * jobs)
    bounds = np.linspace(0, n_boot, n + 1).round().astype(int)
    blocks = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        if hi > lo:
            blocks.append(replace(template, rng=copy.deepcopy(rng), n=int(hi - lo)))
            for _ in range(hi - lo):
                draw_clusters(rng, template.n_clusters)
    return blocks


__all__ = [
    "ReplicateBlock",
    "all_linked",
    "codes_design",
    "distinct_verdicts",
    "draw_clusters",
    "fit_humans",
    "fit_judge",
    "replicate_block",
    "replicate_blocks",
    "reader_curvature",
    "reader_start",
    "replicate_clusters",
    "start_curvature",
    "strength_ranks",
    "weighted_human_strengths",
    "weighted_refits",
]
