"""The humans' side of each cell: the raw share and the crossed pair + reader GLMM.

Human ties (when a study allowed them, or when scalar ratings were turned into pairs) are
excluded from both the raw rate and the GLMM (the model is binary), and always counted;
the even-split share is reported beside them for comparison.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy.special import expit

from audit.checks import Status
from audit.errors import AuditError
from audit.result import GlmmSummary, HumanSide


def _failed_glmm(reason: str, status: Status = Status.ERROR) -> GlmmSummary:
    nan = float("nan")
    return GlmmSummary(estimate=nan, ci_low=nan, ci_high=nan, b0=nan, se=nan, sd_pair=nan,
                       sd_reader=nan, singular=False, converged=False, separation=False,
                       loglik=nan, status=status, reason=reason)


def fit_cell_glmm(cell_votes: pd.DataFrame, *, level: float = 0.95, backend: str = "native") -> GlmmSummary:
    """Fit ``logit P(y=1) = b0 + u_pair + v_reader`` to one cell's decisive votes."""
    from audit.glmm import fit_crossed_glmm

    decisive = cell_votes[cell_votes["y"].notna()]
    if decisive.empty:
        # Nothing to fit is not a failure: the cell is skipped, and says why.
        return _failed_glmm("no decisive votes in this cell (all ties)", Status.SKIPPED)
    try:
        with warnings.catch_warnings():
            # Singular fits and separation are reported as flags on the result.
            warnings.simplefilter("ignore")
            fit = fit_crossed_glmm(
                decisive["y"].to_numpy(float),
                {"pair": decisive["pair_id"].to_numpy(), "reader": decisive["reader_id"].to_numpy()},
                level=level,
                backend=backend,
            )
    except AuditError as exc:
        return _failed_glmm(str(exc))
    b0, se = float(fit.b[0]), float(fit.se[0])
    estimate, low, high = fit.prob_estimate()
    if fit.separation:
        # Every vote one way: the Wald interval is [0, 1] (infinite SE); the profile interval
        # is one-sided and informative (e.g. [0.8, 1] for 20 of 20 pairs).
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            profiled = fit_crossed_glmm(
                decisive["y"].to_numpy(float),
                {"pair": decisive["pair_id"].to_numpy(), "reader": decisive["reader_id"].to_numpy()},
                level=level, backend=backend, profile=True,
            )
        low, high = profiled.prob_profile()
    status = Status.PASS
    reasons = []
    if fit.separation:
        status, reasons = Status.WARN, ["every vote went one way (separation): boundary estimate, "
                                        "profile-likelihood interval"]
    if fit.singular:
        status = Status.WARN
        reasons.append("singular fit: a variance component is estimated at zero")
    if not fit.converged:
        status = Status.WARN
        reasons.append("the optimiser did not report convergence")
    return GlmmSummary(
        estimate=float(estimate), ci_low=float(low), ci_high=float(high), b0=b0, se=se,
        sd_pair=float(fit.sd.get("pair", 0.0)), sd_reader=float(fit.sd.get("reader", 0.0)),
        singular=bool(fit.singular), converged=bool(fit.converged), separation=bool(fit.separation),
        loglik=float(fit.loglik), status=status, reason="; ".join(reasons), notes=tuple(fit.notes),
    )


def human_side(cell_votes: pd.DataFrame, *, level: float = 0.95, backend: str = "native") -> HumanSide:
    y = cell_votes["y"].to_numpy(float)
    n_focal = int(np.sum(y == 1.0))
    n_other = int(np.sum(y == 0.0))
    n_ties = int(np.sum(np.isnan(y)))
    decisive = n_focal + n_other
    rate = n_focal / decisive if decisive else float("nan")
    total = decisive + n_ties
    even = (n_focal + 0.5 * n_ties) / total if total else float("nan")
    return HumanSide(rate=rate, n_focal=n_focal, n_other=n_other, n_ties=n_ties, rate_even_split=even,
                     glmm=fit_cell_glmm(cell_votes, level=level, backend=backend))


def wilson_interval(successes: float, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion (successes may be fractional under even-split)."""
    from scipy.stats import norm

    if n <= 0:
        return float("nan"), float("nan")
    z = float(norm.ppf(0.5 + level / 2))
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return float(centre - half), float(centre + half)


__all__ = ["fit_cell_glmm", "human_side", "wilson_interval", "expit"]
