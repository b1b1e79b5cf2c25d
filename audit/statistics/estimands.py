"""The human estimands of a cell and the judge's rate, from per-pair sums (vectorised).

Every quantity here is a function of four per-pair arrays, so that one call evaluates the
original data (shape ``(P,)``) or every bootstrap replicate at once (shape ``(B, P)``):

``csum``   the readers' summed credit for the focal system on the pair (tie rule applied)
``qsum``   the summed squared credits (for the within-pair variance)
``nsum``   the number of credited votes (ties excluded under ``decisive``)
``weight`` the pair's frequency weight (1, or its bootstrap count)

and the judge's credit per pair ``judge`` (shape ``(P,)``; every compared pair has one).

The estimands (docs/audit.md, "What the judge is compared with"):

``J`` (judge rate)
    the mean of the judge's credits over the compared pairs.
``V`` (vote share)
    the mean over pairs of ``h_i = csum_i / nsum_i``: the readers' population-average
    preference, pair-weighted like the judge's rate. A judge that votes like one more reader
    has expected rate ``V``.
``M`` (majority rate)
    the share of pairs whose reader-population majority favours the focal system,
    ``P(p_i > 1/2)``, with ``p_i`` the pair's expected credit over the reader population. The
    distribution of ``p_i`` over pairs is taken to be a Beta with mean ``V`` and variance
    ``tau^2``, the between-pair variance estimated by the method of moments (one-way
    random-effects ANOVA on the per-pair shares; for binary votes this is the beta-binomial
    moment estimator): ``tau^2 = S^2 - s_w^2 * mean(1 / n_i)`` with ``S^2`` the variance of the
    per-pair shares and ``s_w^2`` the pooled within-pair variance of the credits, both over
    the pairs with at least two credited votes (a pair with one vote carries no information
    on the between-pair variance: its share is 0 or 1 whatever ``tau^2`` is). ``tau^2`` is
    clipped at 0 (then ``M`` is 0, 1/2 or 1: every pair's majority is the overall one) and at
    ``V (1 - V)`` (then every pair is unanimous and ``M = V``). A judge that picks the
    readers' expected majority on every pair has expected rate ``M``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np


def beta_upper_tail(mu: np.ndarray, tau2: np.ndarray) -> np.ndarray:
    """``P(p > 1/2)`` for ``p ~ Beta`` with mean ``mu`` and variance ``tau2`` (elementwise).

    ``tau2 <= 0``: a point mass at ``mu`` (1, 1/2 or 0); ``tau2 >= mu (1 - mu)``: the
    two-point limit on {0, 1} (``mu``). NaN where ``mu`` or ``tau2`` is NaN.
    """
    from scipy.special import betainc

    mu = np.asarray(mu, float)
    tau2 = np.asarray(tau2, float)
    mu, tau2 = np.broadcast_arrays(mu, tau2)
    out = np.full(mu.shape, np.nan)
    ok = np.isfinite(mu) & np.isfinite(tau2)
    var_max = mu * (1.0 - mu)
    point = ok & (tau2 <= 0.0)
    out[point] = np.where(mu[point] > 0.5, 1.0, np.where(mu[point] < 0.5, 0.0, 0.5))
    two_point = ok & ~point & (tau2 >= var_max)
    out[two_point] = mu[two_point]
    inner = ok & ~point & ~two_point
    if inner.any():
        k = var_max[inner] / tau2[inner] - 1.0
        a, b = mu[inner] * k, (1.0 - mu[inner]) * k
        # P(X > 1/2) = 1 - I_{1/2}(a, b) = I_{1/2}(b, a)
        out[inner] = betainc(b, a, 0.5)
    return out


@dataclass(frozen=True)
class Estimands:
    """``J``, ``V``, ``M`` and their ingredients, one value per replicate (internal)."""

    judge_rate: np.ndarray  #: J
    vote_share: np.ndarray  #: V
    majority_rate: np.ndarray  #: M
    between_pair_var: np.ndarray  #: tau^2 after clipping at 0 (NaN when not estimable)
    n_pairs: np.ndarray  #: summed weights of the pairs with a credited vote
    share_var: np.ndarray | float = float("nan")  #: S^2, variance of the shares over the multi-vote pairs
    within_var: np.ndarray | float = float("nan")  #: s_w^2, pooled within-pair variance of the credits
    mean_inv_n: np.ndarray | float = float("nan")  #: mean of 1 / n_i (effective) over the multi-vote pairs
    df_between: np.ndarray | float = float("nan")  #: multi-vote pairs - 1
    df_within: np.ndarray | float = float("nan")  #: sum of (n_i - 1) over the multi-vote pairs
    majority_mean: np.ndarray | float | None = None  #: the Beta mean M is read from (V unless shifted)

    def with_between_pair_var(self, tau2: np.ndarray) -> "Estimands":
        """The same J and V with ``M`` recomputed from another ``tau^2`` (clipped at 0)."""
        tau2 = np.where(np.isfinite(tau2), np.maximum(tau2, 0.0), np.nan)
        mean = self.vote_share if self.majority_mean is None else self.majority_mean
        return replace(self, between_pair_var=tau2, majority_rate=beta_upper_tail(mean, tau2))

    def statistics(self) -> dict[str, np.ndarray]:
        """The compared quantities: J, V, M and the judge's distances to them and to the band.

        With several judges (``judge_rate`` has a trailing judge axis) every entry has that
        shape; ``vote_share`` and ``majority_rate`` are repeated along it.
        """
        j, v, m = self.judge_rate, np.asarray(self.vote_share), np.asarray(self.majority_rate)
        if j.ndim > v.ndim:
            v, m = np.broadcast_to(v[..., None], j.shape), np.broadcast_to(m[..., None], j.shape)
        low, high = np.fmin(v, m), np.fmax(v, m)
        return {
            "judge_rate": j,
            "vote_share": v,
            "majority_rate": m,
            "difference_vote_share": j - v,
            "difference_majority": j - m,
            "d_lo": j - low,
            "d_hi": j - high,
        }


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num, den = np.broadcast_arrays(np.asarray(num, float), np.asarray(den, float))
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _wsum(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``sum_p w[..., p] x[..., p]``; a fixed per-pair ``x`` (1-D) against replicate weights is a matvec.

    Stacked cells (``w``: cells x replicates x pairs, ``x``: cells x 1 x pairs) take one matvec per
    cell (a stacked ``matmul``: the same BLAS call on each cell's rows as the 2-D case, so the same
    bits; tests/audit/verdict/test_stacked_bootstrap.py)."""
    if x.ndim == 1 and w.ndim == 2:
        return w @ x
    if w.ndim == 3 and x.ndim == 3 and x.shape[-2] == 1:
        return np.matmul(w, np.swapaxes(x, -1, -2))[..., 0]
    return (w * x).sum(-1)


def _judge_sums(g: np.ndarray, judge: np.ndarray) -> np.ndarray:
    """``sum_p g[..., p] judge[k, p]`` per judge ``k`` (trailing judge axis), one product per judge, so a
    judge's rate has the same bits whichever judges it is batched with (a matrix product may sum in
    another order). ``judge``: judges x pairs, or cells x judges x pairs for stacked cells (``g``:
    cells x pairs, or cells x replicates x pairs)."""
    if judge.ndim == 2:
        return np.stack([g @ row for row in judge], -1)
    if g.ndim == 2:  # the original data of stacked cells: one dot product per cell and judge
        return np.stack([np.matmul(g[:, None, :], judge[:, k, :, None])[:, 0, 0] for k in range(judge.shape[1])], -1)
    return np.stack([np.matmul(g, judge[:, k, :, None])[..., 0] for k in range(judge.shape[1])], -1)


def _shifted(v0: np.ndarray, shift, majority_shift) -> tuple[np.ndarray, np.ndarray]:
    """``V`` moved by ``shift`` (clipped to [0, 1]; unmoved without a shift) and the mean ``M`` is read from."""
    shift = np.asarray(shift, float)
    if shift.ndim == 2:  # stacked cells: a cell without a shift keeps its unclipped V, as its own call
        v = np.where(np.any(shift != 0.0, axis=-1, keepdims=True), np.clip(v0 + shift, 0.0, 1.0), v0)
    else:
        v = np.clip(v0 + shift, 0.0, 1.0) if np.any(shift != 0.0) else v0
    if majority_shift is None:
        return v, v
    return v, np.clip(v0 + majority_shift, 0.0, 1.0)


def shifted_and_plain(
    csum: np.ndarray,
    qsum: np.ndarray,
    nsum: np.ndarray,
    weight: np.ndarray,
    judge: np.ndarray,
    shift: np.ndarray,
    majority_shift: np.ndarray,
) -> tuple[Estimands, Estimands]:
    """``estimands(..., shift=shift, majority_shift=majority_shift, majority=False)`` and
    ``estimands(..., majority=False)`` of the same replicates, from one evaluation: the shift moves only
    ``V`` and the mean ``M`` is read from, so everything else (the passes over replicates x pairs) is
    shared. The same numbers as the two calls, bit for bit."""
    plain = estimands(csum, qsum, nsum, weight, judge, majority=False)
    v, majority_mean = _shifted(plain.vote_share, shift, majority_shift)
    return replace(plain, vote_share=v, majority_mean=majority_mean), plain


def estimands(
    csum: np.ndarray,
    qsum: np.ndarray,
    nsum: np.ndarray,
    weight: np.ndarray,
    judge: np.ndarray,
    nsum2: np.ndarray | None = None,
    shift: np.ndarray | float = 0.0,
    majority_shift: np.ndarray | float | None = None,
    majority: bool = True,
) -> Estimands:
    """J, V and M from per-pair sums; the last axis is the pair axis (see the module doc).

    ``csum``, ``qsum``, ``nsum`` are ``(P,)`` (the original per-pair sums) or ``(B, P)`` (per
    replicate); ``weight`` is ``(P,)`` or ``(B, P)``. ``judge`` is ``(P,)`` or ``(K, P)`` for
    ``K`` judges at once (then ``judge_rate`` has a trailing axis of length ``K``).

    Stacked cells of one shape (:mod:`judge_transfer_audit.verdict.stacked_bootstrap`): a leading cell axis ``G`` on
    every argument, ``judge`` ``(G, K, P)``; the original data as ``(G, P)`` sums and weights, the
    replicates as ``(G, 1, P)`` sums against ``(G, B, P)`` weights with ``shift`` ``(G, B)``. Each cell's
    numbers are those of its own call, bit for bit.

    ``nsum2`` is the per-pair sum of the *squared* reader weights of the credited votes
    (``nsum`` itself when every reader weight is 1, the default). A resampled reader drawn
    ``k`` times brings ``k`` identical copies of their votes; ``nsum2`` lets the within-pair
    variance and the pair share's sampling variance use the effective number of votes
    ``nsum^2 / nsum2`` rather than treat the copies as independent (which would shrink the
    within-pair variance and inflate ``tau^2`` in every reader-resampled replicate).

    ``shift`` (scalar or one per replicate) moves the vote share by that amount, the effect
    of a different sample of readers, whose average leniency shifts every pair (clipped to
    [0, 1]); ``majority_shift`` (default: ``shift``) moves the mean of the Beta that ``M`` is
    read from. They differ because a leniency shift acts on the logit scale: a pair near
    1/2, where ``M`` is decided, moves more than the average pair.

    ``majority`` False leaves ``M`` NaN (not evaluated): the paired bootstrap's replicates read ``M``
    only after replacing ``tau^2`` (:meth:`Estimands.with_between_pair_var`), so the Beta tails of the
    replicates' own moment estimates would be computed for nothing.
    """
    csum, qsum, nsum = (np.asarray(x, float) for x in (csum, qsum, nsum))
    weight = np.asarray(weight, float)
    nsum2 = nsum if nsum2 is None else np.asarray(nsum2, float)
    judge = np.asarray(judge, float)
    defined = nsum > 0
    h = _safe_div(csum, nsum)
    h = np.where(defined, h, 0.0)
    g = weight * defined
    total = g.sum(-1)
    v0 = _safe_div(_wsum(g, h), total)
    v, majority_mean = _shifted(v0, shift, majority_shift)
    if judge.ndim == 1:
        j = _safe_div(_wsum(g, judge), total)
    else:  # several judges on the same pairs
        j = _safe_div(_judge_sums(g, judge), total[..., None])
    # between-pair variance from the pairs with at least two distinct credited votes
    dof = nsum - _safe_div(nsum2, nsum)  # weighted-variance denominator: n - 1 for unit weights
    multi = defined & (np.nan_to_num(dof) > 1e-9)
    if multi.any():
        e = weight * multi
        e_total = e.sum(-1)
        hm = np.where(multi, h, 0.0)
        sum_h, sum_h2 = _wsum(e, hm), _wsum(e, hm * hm)
        s2 = _safe_div(sum_h2 - _safe_div(sum_h * sum_h, e_total), e_total - 1.0)
        within_ss = np.where(multi, qsum - csum * h, 0.0)
        df_within = _wsum(e, np.where(multi, dof, 0.0))
        sw2 = _safe_div(_wsum(e, within_ss), df_within)
        inv_n_eff = np.where(multi, _safe_div(nsum2, nsum * nsum), 0.0)
        m1 = _safe_div(_wsum(e, inv_n_eff), e_total)
    else:
        # no pair with two distinct credited votes (one vote per pair): every weighted sum over such
        # pairs is 0, so the moments are undefined (NaN) without the passes over replicates x pairs
        shape = np.broadcast_shapes(weight.shape, multi.shape)[:-1]
        e_total, df_within = np.zeros(shape), np.zeros(shape)
        s2, sw2, m1 = (np.full(shape, np.nan) for _ in range(3))
    tau2 = s2 - sw2 * m1
    # NaN (not estimable) when fewer than two pairs have two or more distinct credited votes
    tau2 = np.where(np.isfinite(tau2), np.maximum(tau2, 0.0), np.nan)
    m = beta_upper_tail(majority_mean, tau2) if majority else np.full(np.shape(tau2), np.nan)
    return Estimands(
        judge_rate=j,
        vote_share=v,
        majority_rate=m,
        between_pair_var=tau2,
        n_pairs=total,
        share_var=s2,
        within_var=sw2,
        mean_inv_n=m1,
        df_between=e_total - 1.0,
        df_within=df_within,
        majority_mean=majority_mean,
    )


__all__ = ["Estimands", "beta_upper_tail", "estimands", "shifted_and_plain"]
