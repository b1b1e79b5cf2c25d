"""Variance-corrected two-way (pairs x readers) bootstrap.

Why a correction
----------------
The product ("pigeonhole") bootstrap gives the vote of pair ``i`` and reader ``r`` the weight
``w_p[i] * w_r[r]``. Write the votes of a balanced cell (every reader votes once on every pair)
as ``y_ir = m + a_i + b_r + e_ir`` (sample ANOVA decomposition). Each product replicate's
deviation from the estimate splits exactly into a pair part (the pairs-only replicate with the
same ``w_p``), a reader part (the readers-only replicate with the same ``w_r``) and an
interaction part, uncorrelated over the resampling, so

    V_product = V_pairs + V_readers + V_int,

and in expectation over studies ``V_pairs ~ (s_A^2 + s_E^2 / R) / P``, ``V_readers ~
(s_B^2 + s_E^2 / P) / R`` and ``V_int ~ s_E^2 / (P R)``: the vote-level variance ``s_E^2`` is
counted three times where the true variance of the rate, ``s_A^2/P + s_B^2/R + s_E^2/(P R)``,
counts it once (Owen 2007, "The pigeonhole bootstrap", Ann. Appl. Stat. 1:386; Owen and Eckles
2012 show the product bootstrap is conservative in general; McCullagh 2000 shows no resampling
scheme is exact for crossed arrays). With Bernoulli votes ``s_E^2`` dominates, so the product
bootstrap's 95% interval covers ~99%.

The correction (method of moments, the classical two-way ANOVA estimator)
-------------------------------------------------------------------------
With ``P`` pairs and ``R`` readers, and the three variances taken from the *same* draws
(``V_int`` is the variance of ``product - pairs - readers`` replicate by replicate)::

    A_p = P/(P-1) V_pairs            (= MS_pairs / (P R))
    A_r = R/(R-1) V_readers          (= MS_readers / (P R))
    A_e = P R/((P-1)(R-1)) V_int     (= MS_residual / (P R))
    V   = A_e + max(A_p - A_e, 0) + max(A_r - A_e, 0)

``A_p + A_r - A_e`` is exactly unbiased for the variance of the rate in a balanced cell; the
positive parts are the usual non-negative variance-component estimates (a pair or reader
component estimated below zero is set to zero), which keep ``V >= max(A_p, A_r) > 0`` and,
when readers do not differ, stop seven readers' noise from inflating the interval.

The corrected replicates are ``rate + sqrt(V / V_product) * (product replicate - rate)``: the
product bootstrap's shape, the corrected spread. The variance estimate has few degrees of
freedom when a 7-reader component matters, so the tails use Student's t on Satterthwaite-type
degrees of freedom of the *estimated components*, each treated as a scaled chi-square on its
factor's degrees of freedom::

    df = V^2 / (c_p^2/(P-1) + c_r^2/(R-1) + A_e^2/((P-1)(R-1)))

(``c_p``, ``c_r`` the truncated pair and reader components). A component estimated at zero
adds no uncertainty, so df is large when readers do not differ and close to ``R-1`` when the
reader component dominates. The percentile and BCa intervals are read at the tail
probability ``Phi(-t_df(1 - alpha/2))`` instead of ``alpha/2`` (Hesterberg's "expanded
percentile" interval does the same for one sample). The classical Satterthwaite df of the
mean squares used (``A_p``, ``A_r``, ``A_e`` with coefficients +-1) is also returned
(``df_mean_squares``); it is more conservative (docs/uncertainty.md compares both). Unbalanced cells
(missing pair x reader votes, ties,
repeated votes) use the same formulas with ``P`` and ``R`` the cell's pair and reader counts;
the unbiasedness is then approximate. Coverage: docs/uncertainty.md.

:func:`cgm_interval` (Cameron, Gelbach and Miller's two-way cluster-robust interval from the
same one-way bootstrap variances) lives here too; it is kept for comparison.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TwoWayCorrection:
    """Internal: the corrected two-way replicates and their constants (not a result)."""

    replicates: np.ndarray  #: corrected replicates, NaN where any of the three replicates was NaN
    variance: float  #: V, the corrected variance of the rate
    variance_product: float  #: variance of the product replicates
    scale: float  #: sqrt(V / V_product), applied to the product deviations
    df: float  #: component-wise Satterthwaite degrees of freedom of V (inf when V is 0)
    df_mean_squares: float  #: classical Satterthwaite df of the mean squares used
    pair_component: float  #: max(A_p - A_e, 0)
    reader_component: float  #: max(A_r - A_e, 0)
    residual_component: float  #: A_e


def _var(x: np.ndarray) -> float:
    return float(x.var(ddof=1)) if x.size > 1 else float("nan")


def correct_two_way(
    estimate: float, product: np.ndarray, pairs: np.ndarray, readers: np.ndarray, n_pairs: int, n_readers: int
) -> TwoWayCorrection:
    """Rescale product-bootstrap replicates to the variance-corrected two-way spread.

    ``product``, ``pairs`` and ``readers`` are the replicate rates of one cell computed with the
    *same* pair and reader weights (NaN where a replicate had no decisive vote). Replicates that
    are NaN in any of the three are left out (NaN in the returned replicates).

    Returns
    -------
    TwoWayCorrection
        ``replicates``, ``variance`` (V), ``variance_product``, ``scale``, ``df``,
        ``df_mean_squares``, and the three components. NaN throughout when fewer than two
        pairs or readers, or fewer than two usable replicates; ``scale`` 0 and ``df`` inf
        when the product replicates have no spread (every vote the same way).

    Notes
    -----
    Validated against the correction written out from a vote-by-vote loop over the same
    draws (1e-10), and its components against the mean squares of ``statsmodels``'
    two-way ``anova_lm`` (Monte Carlo tolerance); coverage by simulation in
    docs/uncertainty.md.
    """
    ok = np.isfinite(product) & np.isfinite(pairs) & np.isfinite(readers)
    prod, rp, rr = product[ok], pairs[ok], readers[ok]
    gp, gr = int(n_pairs), int(n_readers)
    nan = float("nan")
    out = np.full(product.shape, nan)
    if prod.size < 2 or gp < 2 or gr < 2 or not np.isfinite(estimate):
        out[ok] = prod
        return TwoWayCorrection(out, nan, nan, nan, nan, nan, nan, nan, nan)
    v_prod = _var(prod)
    v, scale, df, df_ms, c_p, c_r, a_e = two_way_constants(v_prod, _var(rp), _var(rr), _var(prod - rp - rr), gp, gr)
    out[ok] = estimate + scale * (prod - estimate)
    return TwoWayCorrection(out, v, v_prod, scale, df, df_ms, c_p, c_r, a_e)


def two_way_constants(
    v_prod: float, var_pairs: float, var_readers: float, var_interaction: float, n_pairs: int, n_readers: int
) -> tuple[float, float, float, float, float, float, float]:
    """The correction's constants from the variances of the product, pairs, readers and interaction
    (``product - pairs - readers``) replicates of one cell with ``n_pairs``, ``n_readers`` >= 2:
    ``(V, scale, df, df_mean_squares, pair component, reader component, residual component)``."""
    gp, gr = int(n_pairs), int(n_readers)
    a_p = gp / (gp - 1) * var_pairs
    a_r = gr / (gr - 1) * var_readers
    a_e = gp * gr / ((gp - 1) * (gr - 1)) * var_interaction
    keep_p, keep_r = a_p > a_e, a_r > a_e
    c_p, c_r = (a_p - a_e) if keep_p else 0.0, (a_r - a_e) if keep_r else 0.0
    v = a_e + c_p + c_r
    df_res = (gp - 1) * (gr - 1)
    den = c_p**2 / (gp - 1) + c_r**2 / (gr - 1) + a_e**2 / df_res
    df = float(v**2 / den) if den > 0 else float("inf")
    # classical Satterthwaite: V as a combination of mean squares with coefficients +-1 / 0
    k_e = 1.0 - keep_p - keep_r
    den_ms = (
        (a_p if keep_p else 0.0) ** 2 / (gp - 1) + (a_r if keep_r else 0.0) ** 2 / (gr - 1) + (k_e * a_e) ** 2 / df_res
    )
    df_ms = float(v**2 / den_ms) if den_ms > 0 else float("inf")
    scale = float(np.sqrt(v / v_prod)) if v_prod > 0 else 0.0
    return float(v), scale, df, df_ms, float(c_p), float(c_r), float(a_e)


def t_calibrated_level(level: float, df: float) -> float:
    """The normal-theory level whose z quantile equals Student's t quantile on ``df``.

    Reading a percentile (or BCa) interval at this level gives the interval the width of a
    t interval while keeping the bootstrap's shape. ``df`` infinite or NaN returns ``level``.
    """
    from scipy.special import ndtr

    from judge_transfer_audit.statistics.distributions import t as student_t

    if not np.isfinite(df) or df <= 0:
        return float(level)
    q = float(student_t.ppf(0.5 + level / 2.0, df))
    return float(1.0 - 2.0 * ndtr(-q))


def t_calibrated_p_value(p_normal: float, df: float) -> float:
    """Map a two-sided p read from normal-calibrated replicates to Student's t on ``df``.

    ``p_normal`` corresponds to the statistic ``|z| = Phi^-1(1 - p/2)``; the returned p is
    ``2 T_df(-|z|)``, so the cell's interval at ``t_calibrated_level`` excludes the null
    exactly when this p is below ``1 - level`` (up to quantile interpolation).
    """
    from scipy.special import ndtri

    from judge_transfer_audit.statistics.distributions import t as student_t

    if not np.isfinite(p_normal) or not np.isfinite(df) or df <= 0:
        return float(p_normal)
    z = float(ndtri(1.0 - min(p_normal, 1.0) / 2.0))
    return float(min(1.0, 2.0 * student_t.sf(z, df)))


def cgm_interval(
    estimate: float, var_pairs: float, var_readers: float, S: np.ndarray, N: np.ndarray, level: float, null: float = 0.5
) -> tuple[float, float, float, float]:
    """Two-way cluster-robust interval (Cameron, Gelbach and Miller 2011): ``(low, high, se, p)``.

    ``V = G_p/(G_p-1) V*_pairs + G_r/(G_r-1) V*_readers - M/(M-1) V_cells``: the one-way
    cluster-bootstrap variances (with the small-number-of-clusters factor ``G/(G-1)``; the
    bootstrap variance of a mean over G clusters is ``(G-1)/G`` of the unbiased one) minus the
    variance of the intersection clusters (pair x reader cells, ``M`` of them), which both
    one-way variances contain. ``V_cells`` is the linearised ratio variance
    ``sum_ij (S_ij - rate N_ij)^2 / N^2`` (what resampling cells would give). When V falls
    below ``max(V_pairs, V_readers)`` it is raised to it (CGM's fix for a non-positive V).
    The interval is ``rate -/+ t * sqrt(V)`` with ``t`` from Student's t on ``min(G_p, G_r) - 1``
    degrees of freedom, as CGM recommend for few clusters; ``p`` is the matching two-sided
    t-test of ``rate = null``.
    """
    S, N = np.asarray(S, float), np.asarray(N, float)
    keep = N != 0
    return cgm_from_cells(estimate, var_pairs, var_readers, S[keep], N[keep], S.shape[0], S.shape[1], level, null)


def cgm_from_cells(
    estimate: float,
    var_pairs: float,
    var_readers: float,
    s: np.ndarray,
    n: np.ndarray,
    n_pairs: int,
    n_readers: int,
    level: float,
    null: float = 0.5,
) -> tuple[float, float, float, float]:
    """:func:`cgm_interval` from the sparse pair x reader cells: focal votes ``s`` and decisive
    votes ``n`` of each observed (pair, reader) combination."""
    from judge_transfer_audit.statistics.distributions import t as student_t

    gp, gr = int(n_pairs), int(n_readers)
    m = int(np.count_nonzero(n))
    nt = float(np.sum(n))
    if not np.isfinite(estimate) or min(gp, gr) < 2 or m < 2 or nt <= 0:
        nan = float("nan")
        return nan, nan, nan, nan
    v_cells = float(np.sum((s - estimate * n) ** 2) / nt**2)
    v = gp / (gp - 1) * var_pairs + gr / (gr - 1) * var_readers - m / (m - 1) * v_cells
    v = max(v, gp / (gp - 1) * var_pairs, gr / (gr - 1) * var_readers)
    se = float(np.sqrt(v))
    df = min(gp, gr) - 1
    q = float(student_t.ppf(0.5 + level / 2.0, df))
    p = float(2.0 * student_t.sf(abs(estimate - null) / se, df)) if se > 0 else float("nan")
    return estimate - q * se, estimate + q * se, se, p
