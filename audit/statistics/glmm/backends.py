"""GLMM backends by name: ``"native"`` (this package) and ``"lme4"`` (R through pymer4)."""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from judge_transfer_audit.core.errors import MissingDependencyError
from judge_transfer_audit.core.optional import import_optional
from judge_transfer_audit.core.registry import Registry
from judge_transfer_audit.core.threads import single_threaded_blas
from judge_transfer_audit.statistics.distributions import norm
from judge_transfer_audit.statistics.glmm.design import Design
from judge_transfer_audit.statistics.glmm.fit import SINGULAR_TOL, fit_native
from judge_transfer_audit.statistics.glmm.model import GlmmResult

BackendFn = Callable[..., GlmmResult]

BACKENDS: Registry[BackendFn] = Registry("GLMM backend")


@BACKENDS.register("native")
def fit_native_single_thread(design: Design, *, level: float = 0.95, profile: bool = False, start=None) -> GlmmResult:
    """The native engine (:func:`judge_transfer_audit.statistics.glmm.fit.fit_native`) with BLAS on one thread."""
    with single_threaded_blas():
        return fit_native(design, level=level, profile=profile, start=start)


@BACKENDS.register("lme4")
def fit_lme4(design: Design, *, level: float = 0.95, profile: bool = False, start=None) -> GlmmResult:
    """Fit with ``lme4::glmer`` through pymer4 (needs R with lme4 and ``pip install
    'judge-transfer-audit[lme4]'``). Raises :class:`judge_transfer_audit.core.errors.MissingDependencyError`
    otherwise."""
    pymer4_models = import_optional("pymer4.models", "the lme4 GLMM backend")
    import pandas as pd

    frame = pd.DataFrame({"y": design.y})
    terms = []
    for j, name in enumerate(design.x_names):
        if name == "(Intercept)":
            continue
        col = f"x{j}"
        frame[col] = design.X[:, j]
        terms.append(col)
    intercept = "(Intercept)" in design.x_names
    re_terms = []
    for k, (_name, codes, levels) in enumerate(zip(design.factor_names, design.codes, design.levels)):
        col = f"g{k}"
        frame[col] = np.asarray(levels, dtype=object)[codes]
        re_terms.append(f"(1|{col})")
    rhs = " + ".join((["1"] if intercept else ["0"]) + terms + re_terms)
    try:
        model = pymer4_models.Lmer(f"y ~ {rhs}", data=frame, family="binomial")
        model.fit(summarize=False, verbose=False, conf_int="profile" if profile else "Wald")
    except Exception as exc:  # rpy2 raises bare RRuntimeError subclasses
        raise MissingDependencyError(f"the lme4 backend failed to run R: {exc}") from exc
    coefs = model.coefs
    b = tuple(float(v) for v in coefs["Estimate"])
    se = tuple(float(v) for v in coefs["SE"])
    z = norm.ppf(0.5 + level / 2.0)
    sd = {}
    for k, name in enumerate(design.factor_names):
        sd[name] = float(model.ranef_var.loc[f"g{k}", "Std"])
    loglik = float(model.logLike)
    return GlmmResult(
        names=design.x_names,
        b=b,
        se=se,
        vcov=tuple(tuple(float(v) for v in row) for row in np.diag(np.square(se))),
        wald_low=tuple(v - z * s for v, s in zip(b, se)),
        wald_high=tuple(v + z * s for v, s in zip(b, se)),
        profile_low=tuple(float(v) for v in coefs["2.5_ci"]) if profile else tuple(math.nan for _ in b),
        profile_high=tuple(float(v) for v in coefs["97.5_ci"]) if profile else tuple(math.nan for _ in b),
        level=float(level),
        sd=sd,
        conditional_modes={},
        loglik=loglik,
        aic=float(model.AIC),
        deviance=-2.0 * loglik,
        n_obs=int(design.y.size),
        n_levels=dict(design.n_levels),
        converged=not bool(model.warnings),
        singular=any(v < SINGULAR_TOL for v in sd.values()),
        separation=bool(np.all(design.y == design.y[0])),
        iterations=0,
        notes=tuple(design.notes) + tuple(str(w) for w in (model.warnings or [])),
        backend="lme4",
        dropped_factors=design.dropped,
    )
