"""The vote-level Bradley-Terry model: the model of LMArena's ``arena-rank`` and FastChat, beside the
leaderboard's crossed GLMM (:mod:`judge_transfer_audit.statistics.leaderboard.fit`).

``logit P(focal preferred) = s_focal - s_other [+ gamma * position]``, every vote an independent
Bernoulli draw (no reader or pair effect), fitted by Newton's method on the votes aggregated into
buckets of equal (focal, other, outcome, position): the cost is one pass over the votes, then
iterations over at most ``9 k^2`` buckets. Strengths are centred logits (mean zero over the systems).

Ties: ``ties="drop"`` leaves them out (the leaderboard's convention); ``ties="half"`` counts a tie as
half a win for each side (outcome 0.5, ``arena-rank``'s and FastChat's convention).

Three covariances of the centred strengths:

* ``cov_model``: the inverse Fisher information (votes independent, the model true);
* ``cov_votes``: the sandwich ``H^+ G H^+`` with ``G = sum_i g_i g_i'`` over votes (``g_i`` the score
  of vote ``i``): ``arena-rank``'s ``ci_method="sandwich"``, which adds ``1e-5 N`` to the Hessian's
  diagonal where this takes the pseudo-inverse on the centred subspace (``hessian_ridge`` reproduces
  its ridge);
* ``cov_readers``: the same sandwich with the scores summed per reader first (``G = sum_r g_r g_r'``):
  votes of one reader are not independent, and a reader who casts many votes counts as one cluster.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

TIES = ("drop", "half")


@dataclass(frozen=True)
class VoteLevelFit:
    """A vote-level Bradley-Terry fit (see the module docstring).

    ``strengths`` are centred logits in the order of the system codes; ``position`` is the logit
    advantage of the system shown first (NaN when not modelled) with its three standard errors in
    ``position_se`` (model, votes, readers; NaN where not computed); ``n_votes`` the votes used
    (ties included under ``ties="half"``).
    """

    strengths: np.ndarray
    cov_model: np.ndarray
    cov_votes: np.ndarray
    cov_readers: np.ndarray | None
    position: float
    position_se: tuple[float, float, float]
    n_votes: int
    n_iter: int
    converged: bool


def _buckets(focal, other, y, position, k):
    """Unique (focal, other, outcome, position) rows with their counts, and each vote's bucket."""
    ycode = np.where(np.isnan(y), 1, np.where(y >= 1.0, 2, np.where(y <= 0.0, 0, 1))).astype(np.int64)
    pcode = np.zeros(len(y), np.int64) if position is None else np.asarray(position, np.int64) + 1
    key = ((np.asarray(focal, np.int64) * k + np.asarray(other, np.int64)) * 3 + ycode) * 3 + pcode
    # the keys are dense (fewer than 9 k^2): counted, not sorted
    all_counts = np.bincount(key, minlength=9 * k * k)
    uniq = np.flatnonzero(all_counts)
    counts = all_counts[uniq]
    lookup = np.zeros(all_counts.size, np.int64)
    lookup[uniq] = np.arange(uniq.size)
    inverse = lookup[key]
    pc = uniq % 3 - 1
    rest = uniq // 3
    yc = rest % 3
    rest //= 3
    return rest // k, rest % k, yc * 0.5, pc.astype(float), counts.astype(float), inverse


def _design(bf, bo, bp, k, with_position):
    """The bucket design: +1 focal, -1 other, the first system left out; a position column last."""
    X = np.zeros((len(bf), k + (1 if with_position else 0)))
    rows = np.arange(len(bf))
    X[rows, bf] = 1.0
    X[rows, bo] -= 1.0
    X = np.delete(X, 0, axis=1)
    if with_position:
        X[:, -1] = bp
    return X


def _solve(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``A^-1 b``; least squares where ``A`` is singular (a system that wins or loses every vote drives its
    weights to zero)."""
    try:
        return np.linalg.solve(A, b)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(A, b, rcond=None)[0]


def _inverse(A: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.inv(A)
    except np.linalg.LinAlgError:
        return np.linalg.pinv(A)


def _centre(k: int, n_extra: int) -> np.ndarray:
    """Map from (reduced strengths, extras) to (centred strengths, extras)."""
    T = np.zeros((k + n_extra, k - 1 + n_extra))
    T[1:k, : k - 1] = np.eye(k - 1)
    C = np.eye(k) - 1.0 / k
    T[:k] = C @ T[:k]
    if n_extra:
        T[k:, k - 1 :] = np.eye(n_extra)
    return T


def fit_vote_level(
    focal: np.ndarray,
    other: np.ndarray,
    y: np.ndarray,
    k: int,
    *,
    ties: str = "drop",
    position: np.ndarray | None = None,
    readers: np.ndarray | None = None,
    hessian_ridge: float = 0.0,
    tol: float = 1e-12,
    max_iter: int = 100,
) -> VoteLevelFit:
    """The vote-level Bradley-Terry fit of votes ``focal[i]`` vs ``other[i]`` (system codes 0..k-1).

    Parameters
    ----------
    y : array
        1 focal preferred, 0 other, NaN tie.
    ties : {"drop", "half"}
        Ties left out, or counted as outcome 0.5.
    position : array of -1/0/+1, optional
        +1 when the focal system was shown first, -1 when the other was; a logit position term is
        fitted. Votes with 0 (order unknown) must be left out by the caller.
    readers : array of reader codes, optional
        For the reader-clustered sandwich (``cov_readers``).
    hessian_ridge : float
        Added to the Hessian's diagonal (in the full k-system parametrisation) before the sandwich is
        formed, as ``arena-rank`` does (``1e-5 * n_votes``); 0 (default) takes the pseudo-inverse.
    """
    if ties not in TIES:
        raise ValueError(f"ties must be one of {TIES}")
    y = np.asarray(y, float)
    focal, other = np.asarray(focal, np.int64), np.asarray(other, np.int64)
    keep = np.ones(len(y), bool) if ties == "half" else ~np.isnan(y)
    focal, other, y = focal[keep], other[keep], y[keep]
    pos = None if position is None else np.asarray(position)[keep]
    rd = None if readers is None else np.asarray(readers)[keep]
    with_pos = pos is not None
    bf, bo, by, bp, w, inverse = _buckets(focal, other, y, pos, k)
    X = _design(bf, bo, bp, k, with_pos)
    p = X.shape[1]
    beta = np.zeros(p)
    converged, n_iter = False, 0
    while n_iter < max_iter:
        n_iter += 1
        mu = 1.0 / (1.0 + np.exp(-(X @ beta)))
        grad = X.T @ (w * (by - mu))
        info = X.T @ (X * (w * mu * (1.0 - mu))[:, None])
        step = _solve(info, grad)
        if not np.all(np.isfinite(step)):
            break
        beta = beta + step
        if np.max(np.abs(step)) < tol:
            converged = True
            break
    eta = X @ beta
    mu = 1.0 / (1.0 + np.exp(-eta))
    T = _centre(k, 1 if with_pos else 0)
    # Hessian and vote-level meat in the full (k [+1]) parametrisation, then pseudo-inverse
    Xf = np.zeros((len(bf), k + (1 if with_pos else 0)))
    rows = np.arange(len(bf))
    Xf[rows, bf] = 1.0
    Xf[rows, bo] -= 1.0
    if with_pos:
        Xf[:, -1] = bp
    H = Xf.T @ (Xf * (w * mu * (1.0 - mu))[:, None])
    G = Xf.T @ (Xf * (w * (by - mu) ** 2)[:, None])
    info = X.T @ (X * (w * mu * (1.0 - mu))[:, None])
    info_inv = _inverse(info)
    cov_model = T @ info_inv @ T.T
    if hessian_ridge > 0:
        Hinv = _inverse(H + hessian_ridge * np.eye(H.shape[0]))
    else:
        Hinv = T @ info_inv @ T.T
    cov_votes = Hinv @ G @ Hinv
    cov_readers = None
    if rd is not None:
        resid = (by - mu)[inverse]  # each vote's residual
        rcode = pd.factorize(rd)[0] if rd.dtype == object else np.unique(rd, return_inverse=True)[1]
        n_r = int(rcode.max()) + 1 if len(rcode) else 0
        scores = np.zeros(n_r * Xf.shape[1])
        ncol = Xf.shape[1]
        scores += np.bincount(rcode * ncol + bf[inverse], resid, minlength=n_r * ncol)
        scores -= np.bincount(rcode * ncol + bo[inverse], resid, minlength=n_r * ncol)
        if with_pos:
            scores += np.bincount(rcode * ncol + (ncol - 1), resid * bp[inverse], minlength=n_r * ncol)
        S = scores.reshape(n_r, ncol)
        cov_readers = Hinv @ (S.T @ S) @ Hinv
    strengths = (T @ beta)[:k]
    gamma = float(beta[-1]) if with_pos else float("nan")
    if with_pos:
        se = tuple(
            float(np.sqrt(c[-1, -1])) if c is not None else float("nan") for c in (cov_model, cov_votes, cov_readers)
        )
    else:
        se = (float("nan"),) * 3
    return VoteLevelFit(
        strengths=strengths,
        cov_model=cov_model[:k, :k],
        cov_votes=cov_votes[:k, :k],
        cov_readers=None if cov_readers is None else cov_readers[:k, :k],
        position=gamma,
        position_se=se,  # type: ignore[arg-type]
        n_votes=int(len(y)),
        n_iter=n_iter,
        converged=converged,
    )


__all__ = ["TIES", "VoteLevelFit", "fit_vote_level"]
