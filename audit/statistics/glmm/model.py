"""The result of a crossed-random-intercept logistic GLMM fit."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd


def _expit(x: float) -> float:
    if math.isnan(x):
        return math.nan
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x)) if x != math.inf else 1.0
    if x == -math.inf:
        return 0.0
    z = math.exp(x)
    return z / (1.0 + z)


@dataclass(frozen=True)
class GlmmResult:
    """A binomial-logit GLMM with crossed random intercepts, fitted by the Laplace approximation.

    The model is ``logit P(y = 1) = X b + sum_k u_k[level_k]``, ``u_k ~ N(0, sd_k^2)``; the
    objective is the Laplace approximation to the marginal deviance, the one
    ``lme4::glmer(..., nAGQ = 1)`` maximises. Validated against lme4 1.1-31 (R 4.2) on the cases
    stored under ``tests/reference/glmm/`` (|db|, |dSE| <= 2e-3, |dsd| <= 1e-2,
    |dlogLik| <= 1e-3).

    Attributes
    ----------
    names : tuple[str, ...]
        Names of the fixed effects, e.g. ``("(Intercept)",)``.
    b : tuple[float, ...]
        Fixed-effect estimates on the logit scale. ``inf``/``-inf`` under separation.
    se : tuple[float, ...]
        Standard errors, square roots of the diagonal of ``vcov``.
    vcov : tuple[tuple[float, ...], ...]
        Covariance of the fixed effects as lme4's ``vcov()``: the fixed-effect block of the
        inverse of half the finite-difference Hessian of the Laplace deviance in
        ``(theta, beta)``; falls back to the penalised-least-squares ``RX`` form when that Hessian
        is not positive definite (as lme4 does).
    wald_low, wald_high : tuple[float, ...]
        Wald interval ``b -/+ z * se`` at ``level``.
    profile_low, profile_high : tuple[float, ...]
        Profile-likelihood interval (what ``confint(method = "profile")`` gives); NaN when not
        computed, ``-inf``/``inf`` for an unbounded side (separation).
    level : float
        Confidence level of both intervals.
    sd : dict[str, float]
        Standard deviation of each random intercept (0 for a singular term).
    conditional_modes : dict[str, dict[str, float]]
        Conditional modes (BLUPs, lme4's ``ranef``) per factor and level, logit scale.
    loglik : float
        Laplace-approximated log-likelihood (lme4's ``logLik``).
    aic : float
        ``-2 loglik + 2 * (n fixed effects + n random-effect sds)``.
    deviance : float
        ``-2 * loglik`` (the objective that was minimised).
    n_obs : int
        Number of observations used.
    n_levels : dict[str, int]
        Number of levels per factor, including factors dropped from the model.
    converged : bool
        The optimiser reported success and the gradient at the optimum is small.
    singular : bool
        A random-intercept standard deviation is (numerically) zero.
    separation : bool
        The responses are separated by the fixed effects (e.g. every vote went one way); the
        estimate is on the boundary and only a one-sided profile interval exists.
    iterations : int
        Number of Laplace-deviance evaluations of the main optimisation.
    notes : tuple[str, ...]
        Human-readable remarks (dropped terms, fallbacks, boundary estimates).
    backend : str
        ``"native"`` or ``"lme4"``.
    dropped_factors : tuple[str, ...]
        Factors given but left out of the model (one level).
    factorization : str
        How the native engine factorised the penalised Hessian: ``"dense"`` (the reader block
        as a dense Cholesky after the pairs are eliminated), ``"sparse"`` (CHOLMOD with a
        fill-reducing ordering), ``"diagonal"`` (one factor: nothing left after the
        elimination; or two, every level of the eliminated one meeting a single level of the other
        and that other having more than 200 levels: one reader per pair), ``"iterative"`` (CG and
        stochastic Lanczos quadrature), ``"none"`` (no random effect) or ``""`` (another backend).
    """

    names: tuple[str, ...]
    b: tuple[float, ...]
    se: tuple[float, ...]
    vcov: tuple[tuple[float, ...], ...]
    wald_low: tuple[float, ...]
    wald_high: tuple[float, ...]
    profile_low: tuple[float, ...]
    profile_high: tuple[float, ...]
    level: float
    sd: dict[str, float]
    conditional_modes: dict[str, dict[str, float]]
    loglik: float
    aic: float
    deviance: float
    n_obs: int
    n_levels: dict[str, int]
    converged: bool
    singular: bool
    separation: bool
    iterations: int
    notes: tuple[str, ...] = ()
    backend: str = "native"
    dropped_factors: tuple[str, ...] = field(default=())
    factorization: str = ""

    def prob_estimate(self, term: int | str = 0) -> tuple[float, float, float]:
        """Return ``(expit(b), expit(wald_low), expit(wald_high))`` for a term (default: intercept).

        For an intercept-only model this is the population-level probability that y = 1 for a
        typical pair and reader (all random effects at 0), with its Wald interval.
        """
        i = self.names.index(term) if isinstance(term, str) else int(term)
        return (_expit(self.b[i]), _expit(self.wald_low[i]), _expit(self.wald_high[i]))

    def prob_profile(self, term: int | str = 0) -> tuple[float, float]:
        """Profile interval of a term mapped through ``expit`` (NaN when not computed)."""
        i = self.names.index(term) if isinstance(term, str) else int(term)
        return (_expit(self.profile_low[i]), _expit(self.profile_high[i]))

    def to_frame(self) -> pd.DataFrame:
        """Tidy table: one row per fixed effect (``effect="fixed"``) and per random-intercept sd
        (``effect="ran_pars"``)."""
        rows = []
        for i, name in enumerate(self.names):
            rows.append(
                {
                    "effect": "fixed",
                    "group": "",
                    "term": name,
                    "estimate": self.b[i],
                    "std_error": self.se[i],
                    "wald_low": self.wald_low[i],
                    "wald_high": self.wald_high[i],
                    "profile_low": self.profile_low[i],
                    "profile_high": self.profile_high[i],
                }
            )
        for group, value in self.sd.items():
            rows.append(
                {
                    "effect": "ran_pars",
                    "group": group,
                    "term": "sd_(Intercept)",
                    "estimate": value,
                    "std_error": np.nan,
                    "wald_low": np.nan,
                    "wald_high": np.nan,
                    "profile_low": np.nan,
                    "profile_high": np.nan,
                }
            )
        return pd.DataFrame(rows)

    def __str__(self) -> str:
        pct = f"{100 * self.level:g}%"
        lines = [
            f"Logistic GLMM (Laplace), backend={self.backend}: n={self.n_obs}, "
            + ", ".join(f"{k}={v} levels" for k, v in self.n_levels.items()),
            f"logLik={self.loglik:.4f}  AIC={self.aic:.4f}  converged={self.converged}  "
            f"singular={self.singular}  separation={self.separation}",
            f"{'term':<16}{'estimate':>11}{'se':>10}{'wald ' + pct:>24}{'profile ' + pct:>26}",
        ]
        for i, name in enumerate(self.names):
            lines.append(
                f"{name:<16}{self.b[i]:>11.4f}{self.se[i]:>10.4f}"
                f"{f'[{self.wald_low[i]:.4f}, {self.wald_high[i]:.4f}]':>24}"
                f"{f'[{self.profile_low[i]:.4f}, {self.profile_high[i]:.4f}]':>26}"
            )
        for group, value in self.sd.items():
            lines.append(f"sd({group}) = {value:.4f}")
        for note in self.notes:
            lines.append(f"note: {note}")
        return "\n".join(lines)
