"""How many cells are "significant", per method -- and what that count means.

The motivating audit counted 11 significant model-by-dimension cells under the crossed GLMM,
10 when resampling pairs and 5 when resampling readers (Appendix A). Such a tally depends on
the method and on whether the 18 intervals are read one at a time (pointwise, the default) or
adjusted for multiplicity. :func:`significance_tally` reports the count per method with an
explicit statement of which it is; Holm (family-wise error) and Benjamini-Hochberg (false
discovery rate) adjustments across cells are options.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from judge_transfer_audit.core.errors import InputError, InputProblem
from judge_transfer_audit.statistics.uncertainty.bootstrap import BootstrapResult

ADJUSTMENTS = ("none", "holm", "bh")


def holm(p: np.ndarray) -> np.ndarray:
    """Holm step-down adjusted p-values (NaN entries stay NaN and do not count in ``m``).

    Validated against ``statsmodels.stats.multitest.multipletests(method="holm")``.
    """
    p = np.asarray(p, float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out[order] = np.minimum(adj, 1.0)
    return out


def benjamini_hochberg(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg step-up adjusted p-values (NaN entries stay NaN, not counted).

    Validated against ``statsmodels.stats.multitest.multipletests(method="fdr_bh")``.
    """
    p = np.asarray(p, float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    scaled = p[order] * m / np.arange(1, m + 1)
    adj = np.minimum.accumulate(scaled[::-1])[::-1]
    out[order] = np.minimum(adj, 1.0)
    return out


@dataclass(frozen=True)
class SignificanceTally:
    """Significant cells per method.

    Attributes
    ----------
    tally : DataFrame
        One row per method (``glmm``, ``pairs``, ``readers``, ``two-way``, ``two-way-cgm``, and
        ``two-way-product`` when that scheme was bootstrapped): ``n_cells``,
        ``n_significant``, ``n_favour_focal``, ``n_favour_other``, ``adjust``.
    cells : DataFrame
        One row per method x cell: ``method``, ``cell``, ``estimate``, ``ci_low``, ``ci_high``,
        ``p_value``, ``p_adjusted`` (= p_value when ``adjust="none"``), ``significant``,
        ``direction`` ("focal", "other" or "chance").
    counts : dict of str to int
        ``n_significant`` per method.
    adjust : str
        "none", "holm" or "bh".
    level : float
        Confidence level of the intervals; ``alpha = 1 - level``.
    interval : str
        Bootstrap interval used ("percentile" or "bca").
    pointwise : bool
        True when no adjustment was applied.
    statement : str
        What the count means, to print next to it.
    """

    tally: pd.DataFrame
    cells: pd.DataFrame
    counts: dict[str, int]
    adjust: str
    level: float
    interval: str
    pointwise: bool
    statement: str

    def to_frame(self) -> pd.DataFrame:
        return self.tally.copy()

    def __str__(self) -> str:
        parts = ", ".join(
            f"{m}: {n}/{int(self.tally.loc[self.tally['method'] == m, 'n_cells'].iloc[0])}"
            for m, n in self.counts.items()
        )
        return f"Significant cells ({parts}). {self.statement}"


def _method_frame_from_glmm(glmm: pd.DataFrame) -> pd.DataFrame:
    g = glmm.copy()
    if "glmm_ci_low" in g.columns:  # AuditResult.cells_frame() naming
        g = g.rename(
            columns={
                "glmm_estimate": "estimate",
                "glmm_ci_low": "ci_low",
                "glmm_ci_high": "ci_high",
                "glmm_b0": "b0",
                "glmm_se": "se",
            }
        )
    if "cell" not in g.columns:
        if not {"matchup", "criterion"} <= set(g.columns):
            raise InputError(
                InputProblem(
                    "glmm cells",
                    "needs a 'cell' column or 'matchup' and 'criterion'",
                    "pass judge_transfer_audit.statistics.uncertainty.glmm_cells(votes) or AuditResult.cells_frame()",
                )
            )
        g["cell"] = g["matchup"].astype(str) + "/" + g["criterion"].astype(str)
    missing = [c for c in ("estimate", "ci_low", "ci_high") if c not in g.columns]
    if missing:
        raise InputError(
            InputProblem(
                "glmm cells",
                f"missing column(s) {missing}",
                "pass judge_transfer_audit.statistics.uncertainty.glmm_cells(votes) or AuditResult.cells_frame()",
            )
        )
    if "p_value" not in g.columns:
        from scipy.special import ndtr

        if {"b0", "se"} <= set(g.columns):
            b0, se = g["b0"].to_numpy(float), g["se"].to_numpy(float)
            with np.errstate(invalid="ignore", divide="ignore"):
                g["p_value"] = np.where(np.isfinite(b0) & (se > 0), 2 * ndtr(-np.abs(b0) / se), np.nan)
        else:
            g["p_value"] = np.nan
    return g[["cell", "estimate", "ci_low", "ci_high", "p_value"]].assign(method="glmm")


def significance_tally(
    bootstrap: BootstrapResult | None = None,
    glmm: pd.DataFrame | None = None,
    *,
    adjust: str = "none",
    interval: str = "percentile",
    level: float | None = None,
    null: float = 0.5,
) -> SignificanceTally:
    """Count the cells whose interval excludes ``null`` (or whose adjusted p < alpha), per method.

    Parameters
    ----------
    bootstrap : BootstrapResult, optional
        From :func:`cluster_bootstrap`; each of its schemes is a method (``two-way`` is the
        variance-corrected two-way interval with its t-calibrated p-value;
        ``two-way-product`` the uncorrected product bootstrap, if computed), plus
        ``two-way-cgm`` (the two-way cluster-robust t interval) when it was computed.
    glmm : DataFrame, optional
        Per-cell GLMM results: :func:`judge_transfer_audit.statistics.uncertainty.glmm_cells` output (``cell``,
        ``estimate``, ``ci_low``, ``ci_high``, ``p_value``) or ``AuditResult.cells_frame()``.
    adjust : {"none", "holm", "bh"}
        ``"none"``: significant = the pointwise interval excludes ``null`` (the paper's tally).
        ``"holm"`` / ``"bh"``: significant = adjusted p-value < 1 - level, adjusting across the
        cells of each method separately (GLMM: Wald p; bootstrap: two-sided bootstrap p).
    interval : {"percentile", "bca"}
        Which bootstrap interval decides significance when ``adjust="none"``.
    level : float, optional
        Confidence level; defaults to the bootstrap's (0.95 without a bootstrap).
    null : float
        The no-preference rate.

    Returns
    -------
    SignificanceTally
    """
    if adjust not in ADJUSTMENTS:
        raise InputError(
            InputProblem(
                "significance tally", f"unknown adjustment {adjust!r}", f"choose from {', '.join(ADJUSTMENTS)}"
            )
        )
    if interval not in ("percentile", "bca"):
        raise InputError(
            InputProblem("significance tally", f"unknown interval {interval!r}", "choose 'percentile' or 'bca'")
        )
    if bootstrap is None and glmm is None:
        raise InputError(
            InputProblem(
                "significance tally", "no method results given", "pass a BootstrapResult and/or the per-cell GLMM frame"
            )
        )
    if level is None:
        level = bootstrap.level if bootstrap is not None else 0.95
    alpha = 1.0 - level
    frames = []
    if glmm is not None:
        frames.append(_method_frame_from_glmm(glmm))
    if bootstrap is not None:
        c = bootstrap.cells
        for scheme in bootstrap.schemes:
            s = c[c["scheme"] == scheme]
            frames.append(
                pd.DataFrame(
                    {
                        "cell": s["cell"].to_numpy(),
                        "estimate": s["rate"].to_numpy(float),
                        "ci_low": s[f"ci_low_{interval}"].to_numpy(float),
                        "ci_high": s[f"ci_high_{interval}"].to_numpy(float),
                        "p_value": s["p_value"].to_numpy(float),
                        "method": scheme,
                    }
                )
            )
            if scheme == "two-way" and "ci_low_cgm" in s.columns and s["ci_low_cgm"].notna().any():
                frames.append(
                    pd.DataFrame(
                        {
                            "cell": s["cell"].to_numpy(),
                            "estimate": s["rate"].to_numpy(float),
                            "ci_low": s["ci_low_cgm"].to_numpy(float),
                            "ci_high": s["ci_high_cgm"].to_numpy(float),
                            "p_value": s["p_value_cgm"].to_numpy(float),
                            "method": "two-way-cgm",
                        }
                    )
                )
    rows, tally, counts = [], [], {}
    for f in frames:
        method = str(f["method"].iloc[0]) if len(f) else "?"
        p = f["p_value"].to_numpy(float)
        lo, hi = f["ci_low"].to_numpy(float), f["ci_high"].to_numpy(float)
        if adjust == "none":
            p_adj = p
            sig = (lo > null) | (hi < null)
        else:
            p_adj = holm(p) if adjust == "holm" else benjamini_hochberg(p)
            sig = np.isfinite(p_adj) & (p_adj < alpha)
        est = f["estimate"].to_numpy(float)
        direction = np.where(sig & (est > null), "focal", np.where(sig & (est < null), "other", "chance"))
        out = f[["method", "cell", "estimate", "ci_low", "ci_high", "p_value"]].assign(
            p_adjusted=p_adj, significant=sig.astype(bool), direction=direction
        )
        rows.append(out)
        counts[method] = int(sig.sum())
        tally.append(
            {
                "method": method,
                "n_cells": int(len(f)),
                "n_significant": int(sig.sum()),
                "n_favour_focal": int((direction == "focal").sum()),
                "n_favour_other": int((direction == "other").sum()),
                "adjust": adjust,
            }
        )
    m = max((t["n_cells"] for t in tally), default=0)
    pct = f"{level:.0%}"
    if adjust == "none":
        statement = (
            f"Intervals are pointwise {pct} intervals, unadjusted for multiplicity: each of the {m} "
            f"cells is read on its own, so about {alpha * m:.1f} cells would exclude {null:g} by "
            f"chance alone if no cell had a preference. Choose adjust='holm' or 'bh' for a "
            f"multiplicity-adjusted count."
        )
    elif adjust == "holm":
        statement = (
            f"Holm-adjusted across the {m} cells of each method separately: the chance of any "
            f"false 'significant' cell is at most {alpha:.0%} per method."
        )
    else:
        statement = (
            f"Benjamini-Hochberg-adjusted across the {m} cells of each method separately: the "
            f"expected share of false 'significant' cells is at most {alpha:.0%} per method."
        )
    return SignificanceTally(
        tally=pd.DataFrame(tally),
        cells=pd.concat(rows, ignore_index=True),
        counts=counts,
        adjust=adjust,
        level=float(level),
        interval=interval,
        pointwise=adjust == "none",
        statement=statement,
    )
