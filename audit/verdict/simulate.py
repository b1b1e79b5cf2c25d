"""Simulated cells and judges of known truth, for the calibration study and the tests.

The readers follow the crossed model the audit fits: on pair ``i`` reader ``r`` sees the
latent preference ``eta = b0 + u_i + v_r`` (``u_i ~ N(0, sd_pair^2)``, ``v_r ~ N(0,
sd_reader^2)``) and votes for the focal system with probability ``expit(eta - t)``, for the
other with ``expit(-eta - t)``, and ties otherwise (``t >= 0``: ``t = 0`` means no ties; an
ordered-logit tie band). Some votes may be missing at random (unbalanced designs).

Judges (``JUDGES``):

``reader-like``    votes as one more reader drawn from the model (its own ``v_J``, ties too)
``majority``       picks the readers' expected majority on every pair: ``b0 + u_i > 0``
``noisy-aligned``  ``b0 + u_i + N(0, s^2) > 0`` with ``s = NOISE_SD``; ``INVALID_RATE`` of its
                   outputs are unparsable (NaN)
``skewed``         prefers the focal system with probability ``SKEW`` whatever the pair
``reversed``       ``1 -`` majority

Truths (even-split tie rule; Gauss-Hermite quadrature over the normal effects):
``V = E[q(b0 + u + v)]`` with ``q(eta) = P(focal) + P(tie) / 2``; ``M = Phi(b0 / sd_pair)``
(with symmetric reader effects the reader-population majority favours the focal system on
pair ``i`` exactly when ``b0 + u_i > 0``); each judge's expected rate given the judge (for
``reader-like``, conditional on its own ``v_J``: the interval is about this judge).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit, ndtr

JUDGES = ("reader-like", "majority", "noisy-aligned", "skewed", "reversed")
NOISE_SD = 1.0
INVALID_RATE = 0.03
SKEW = 0.9
_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(40)
_GH_W = _GH_W / _GH_W.sum()


@dataclass(frozen=True)
class CellDesign:
    b0: float
    sd_pair: float
    sd_reader: float
    tie: float = 0.0  #: tie threshold t of the ordered-logit tie band (0: no ties)
    missing: float = 0.0  #: share of pair x reader votes missing at random


@dataclass(frozen=True)
class SimulatedCell:
    design: CellDesign
    pair_id: np.ndarray  #: one entry per vote
    reader_id: np.ndarray
    y: np.ndarray  #: 1 focal, 0 other, NaN tie
    pairs: np.ndarray  #: the pair ids
    u: np.ndarray  #: pair effects, one per pair


def credit_probability(eta: np.ndarray, tie: float) -> np.ndarray:
    """Expected even-split credit of one vote at latent preference ``eta``."""
    p_focal, p_other = expit(eta - tie), expit(-eta - tie)
    return p_focal + 0.5 * (1.0 - p_focal - p_other)


def _expect(f, sd: float) -> float:
    """``E f(Z sd)`` for ``Z ~ N(0, 1)`` (f vectorised)."""
    return float(np.sum(_GH_W * f(_GH_X * sd)))


def true_vote_share(d: CellDesign) -> float:
    return _expect(
        lambda u: np.array(
            [_expect(lambda v, x=x: credit_probability(d.b0 + x + v, d.tie), d.sd_reader) for x in np.atleast_1d(u)]
        ),
        d.sd_pair,
    )


def true_majority_rate(d: CellDesign) -> float:
    if d.sd_pair <= 0:
        return 1.0 if d.b0 > 0 else (0.0 if d.b0 < 0 else 0.5)
    return float(ndtr(d.b0 / d.sd_pair))


def simulate_cell(d: CellDesign, n_pairs: int, n_readers: int, rng: np.random.Generator) -> SimulatedCell:
    u = rng.normal(0.0, d.sd_pair, n_pairs)
    v = rng.normal(0.0, d.sd_reader, n_readers)
    eta = d.b0 + u[:, None] + v[None, :]
    p_focal, p_other = expit(eta - d.tie), expit(-eta - d.tie)
    draw = rng.random(eta.shape)
    y = np.where(draw < p_focal, 1.0, np.where(draw < p_focal + p_other, 0.0, np.nan))
    present = rng.random(eta.shape) >= d.missing
    pi, ri = np.nonzero(present)
    pairs = np.array([f"p{i:04d}" for i in range(n_pairs)])
    readers = np.array([f"r{r:03d}" for r in range(n_readers)])
    return SimulatedCell(d, pairs[pi], readers[ri], y[pi, ri], pairs, u)


@dataclass(frozen=True)
class SimulatedJudge:
    kind: str
    credit: np.ndarray  #: one per pair of the cell (NaN = invalid output)
    truth: float  #: the judge's expected rate on the pair population (given the judge)


def simulate_judge(kind: str, cell: SimulatedCell, rng: np.random.Generator) -> SimulatedJudge:
    d, u = cell.design, cell.u
    latent = d.b0 + u
    if kind == "reader-like":
        v_j = rng.normal(0.0, d.sd_reader)
        eta = latent + v_j
        p_focal, p_other = expit(eta - d.tie), expit(-eta - d.tie)
        draw = rng.random(u.size)
        credit = np.where(draw < p_focal, 1.0, np.where(draw < p_focal + p_other, 0.0, 0.5))
        truth = _expect(lambda x: credit_probability(d.b0 + x + v_j, d.tie), d.sd_pair)
    elif kind == "majority":
        credit = np.where(latent > 0, 1.0, 0.0)
        truth = true_majority_rate(d)
    elif kind == "noisy-aligned":
        credit = np.where(latent + rng.normal(0.0, NOISE_SD, u.size) > 0, 1.0, 0.0)
        credit[rng.random(u.size) < INVALID_RATE] = np.nan
        truth = float(ndtr(d.b0 / np.hypot(d.sd_pair, NOISE_SD)))
    elif kind == "skewed":
        credit = np.where(rng.random(u.size) < SKEW, 1.0, 0.0)
        truth = SKEW
    elif kind == "reversed":
        credit = np.where(latent > 0, 0.0, 1.0)
        truth = 1.0 - true_majority_rate(d)
    else:
        raise ValueError(f"unknown judge {kind!r}: use one of {', '.join(JUDGES)}")
    return SimulatedJudge(kind, credit, truth)


def band_distance(j: float, v: float, m: float) -> float:
    """Signed distance from ``j`` to the band ``[min(v, m), max(v, m)]`` (0 inside)."""
    low, high = min(v, m), max(v, m)
    return j - high if j > high else (j - low if j < low else 0.0)


__all__ = [
    "CellDesign",
    "JUDGES",
    "SimulatedCell",
    "SimulatedJudge",
    "band_distance",
    "credit_probability",
    "simulate_cell",
    "simulate_judge",
    "true_majority_rate",
    "true_vote_share",
]
