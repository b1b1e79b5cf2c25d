"""Numerical pieces shared by the fit and the profile: bounded minimisation, finite differences,
start values and the separation check."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog, minimize
from scipy.special import expit

# Central-difference step of the gradient used by the optimiser.
_GRAD_STEP = 5e-5
# lme4's deriv12 step for the Hessian that gives vcov().
HESSIAN_STEP = 1e-4


def central_gradient(fun, x, f0=None, h=_GRAD_STEP):
    """Central-difference gradient of ``fun`` at ``x`` (2 * len(x) evaluations)."""
    g = np.empty(x.size)
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = h
        g[i] = (fun(x + e) - fun(x - e)) / (2.0 * h)
    return g


def hessian_deriv12(fun, x, fx, delta=HESSIAN_STEP):
    """Finite-difference Hessian with lme4's ``deriv12`` stencil (no bounds, step ``delta``).

    Diagonal: ``(f(x+d) - 2 f(x) + f(x-d)) / d^2``; off-diagonal: the four-point stencil
    ``(f(++) - f(+-) - f(-+) + f(--)) / (2d)^2``. Returns ``(gradient, hessian)``.
    """
    n = x.size
    H = np.empty((n, n))
    g = np.empty(n)
    eye = np.eye(n) * delta
    for j in range(n):
        fa = fun(x + eye[j])
        fs = fun(x - eye[j])
        H[j, j] = (fa - 2.0 * fx + fs) / delta**2
        g[j] = (fa - fs) / (2.0 * delta)
        for i in range(j):
            v = (
                fun(x + eye[i] + eye[j])
                - fun(x + eye[i] - eye[j])
                - fun(x - eye[i] + eye[j])
                + fun(x - eye[i] - eye[j])
            ) / (2.0 * delta) ** 2
            H[i, j] = H[j, i] = v
    return g, H


def minimize_bounded(fun_grad, x0, n_bounded, maxiter=500):
    """Minimise with the first ``n_bounded`` coordinates >= 0 (L-BFGS-B).

    ``fun_grad(x)`` returns ``(value, gradient)``. The result's ``nfev`` counts evaluations.
    """
    bounds = [(0.0, None)] * n_bounded + [(None, None)] * (x0.size - n_bounded)
    x0 = np.asarray(x0, dtype=float).copy()
    x0[:n_bounded] = np.maximum(x0[:n_bounded], 0.0)
    return minimize(fun_grad, x0, jac=True, method="L-BFGS-B", bounds=bounds,
                    options={"ftol": 1e-15, "gtol": 1e-8, "maxiter": maxiter, "maxcor": 20})


def hessian_from_gradient(grad, x, delta=HESSIAN_STEP):
    """Symmetrised central-difference Jacobian of an analytic gradient (2 * len(x) calls)."""
    n = x.size
    H = np.empty((n, n))
    for i in range(n):
        e = np.zeros(n)
        e[i] = delta
        H[:, i] = (grad(x + e) - grad(x - e)) / (2.0 * delta)
    return (H + H.T) / 2.0


def projected_gradient(g, x, n_bounded):
    """Gradient with the components pushing a bounded coordinate below 0 removed."""
    pg = g.copy()
    at_bound = (x[:n_bounded] <= 0.0) & (g[:n_bounded] > 0.0)
    pg[:n_bounded][at_bound] = 0.0
    return pg


def logistic_start(y, X, maxit=30):
    """Fixed-effect start values from an ordinary logistic regression (Newton/IRLS)."""
    p = X.shape[1]
    beta = np.zeros(p)
    for _ in range(maxit):
        mu = expit(X @ beta)
        w = np.maximum(mu * (1 - mu), 1e-10)
        step = np.linalg.lstsq(X.T @ (X * w[:, None]), X.T @ (y - mu), rcond=None)[0]
        beta = beta + step
        if np.max(np.abs(step)) < 1e-10 or np.max(np.abs(beta)) > 30:
            break
    return np.clip(beta, -30, 30)


def is_separated(y, X):
    """True when a fixed-effect direction separates the 0s from the 1s (complete or
    quasi-complete separation), so the maximum-likelihood estimate is infinite.

    Uses the linear programme of Konis (2007): maximise sum_i s_i x_i'd subject to
    s_i x_i'd >= 0 and -1 <= d <= 1, with s_i = 2 y_i - 1; separation iff the optimum is > 0.
    """
    if np.all(y == y[0]):
        return bool(np.any(np.abs(X).sum(axis=0) > 0))
    if X.shape[1] == 1 or np.all(np.ptp(X, axis=0) == 0):
        return False  # only constant columns: separation needs a constant response
    s = 2.0 * y - 1.0
    A = X * s[:, None]
    res = linprog(-A.sum(axis=0), A_ub=-A, b_ub=np.zeros(len(y)), bounds=[(-1, 1)] * X.shape[1], method="highs")
    return bool(res.status == 0 and -res.fun > 1e-7 * max(1.0, np.abs(A).sum()))
