"""The part of the Laplace deviance that every factorisation shares: the crossed design, the
conditional modes and the PIRLS loop that finds them.

A logistic GLMM with crossed random intercepts, for fixed relative standard deviations ``theta``
(one per factor) and fixed effects ``beta``: penalised iteratively reweighted least squares
(Newton steps with step halving) finds the conditional modes ``u`` of the spherical random
effects (``b_k = theta_k * u_k``), and

    deviance(theta, beta) = -2 log p(y | u) + ||u||^2 + log det(I + Lambda Z' W Z Lambda)

at the mode. The factor with the most levels ("A", the pairs) comes first in ``u``; the other
factors ("R", the readers and any further factor) follow, one block of columns each.

:class:`PirlsDeviance` holds that layout and the loop; what differs between the exact paths
(:class:`judge_transfer_audit.statistics.glmm.laplace.LaplaceDeviance`: dense or sparse Cholesky factor of the reader
block) and the iterative one (:class:`judge_transfer_audit.statistics.glmm.iterative.IterativeLaplace`: CG and
stochastic Lanczos quadrature) is how the penalised Hessian ``H`` is factorised, solved with and its log
determinant found: the hooks ``_factor``, ``_solve``, ``_converged``, ``_chord_factor`` and
``_log_det``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

_PIRLS_MAXIT = 60
# Halvings of a Newton step before the line search gives up.
_HALVINGS = 30


class PirlsDeviance:
    """Callable Laplace deviance for one data set: the design, the modes and PIRLS (internal).

    Parameters
    ----------
    y : ndarray (N,)
        0/1 responses.
    X : ndarray (N, p)
        Fixed-effect design.
    codes : sequence of ndarray (N,)
        Level index of each observation, one array per random-intercept factor.
    n_levels : sequence of int
        Number of levels of each factor.

    Subclasses give ``_factor(theta, w)`` (a factorisation of ``H`` at weights ``w``),
    ``_solve(f, rA, rR, kind)`` (``H x = r`` with it), ``_converged(decrement, pdev)`` (the
    Newton decrement test) and ``_log_det(theta, f)`` (``log det H`` and any state to keep);
    with ``chord_steps > 0`` that many Newton steps reuse the last exact factorisation, and
    ``_chord_factor()`` may return one from the previous call for the first steps.
    """

    def __init__(self, y, X, codes, n_levels):
        self.y = np.asarray(y, dtype=float)
        self.X = np.asarray(X, dtype=float)
        self.n = self.y.size
        self.K = len(codes)
        self.n_levels = [int(m) for m in n_levels]
        self.n_evals = 0
        self.path = None  # PathChoice of the reader block's factorisation (None: no reader block)
        if self.K == 0:
            self.q = 0
            self.u = np.zeros(0)
            return
        self.ia = int(np.argmax(self.n_levels))
        self.others = [k for k in range(self.K) if k != self.ia]
        self.ga = np.asarray(codes[self.ia], dtype=np.int64)
        self.na = self.n_levels[self.ia]
        offs = np.cumsum([0] + [self.n_levels[k] for k in self.others])
        self.r_off = offs
        self.qR = int(offs[-1])
        self.q = self.na + self.qR
        self.g_other = [np.asarray(codes[k], dtype=np.int64) for k in self.others]
        self.col_other = [g + offs[j] for j, g in enumerate(self.g_other)]
        self.u = np.zeros(self.q)

    # ------------------------------------------------------------------ the layout of u
    def _blocks(self):
        """(factor index, slice of u) pairs."""
        out = [(self.ia, slice(0, self.na))]
        for j, k in enumerate(self.others):
            out.append((k, slice(self.na + self.r_off[j], self.na + self.r_off[j + 1])))
        return out

    def _eta_re(self, theta, u):
        """Random-effect part of the linear predictor, Z Lambda u."""
        eta = theta[self.ia] * u[: self.na][self.ga]
        uR = u[self.na :]
        for j, k in enumerate(self.others):
            eta = eta + theta[k] * uR[self.col_other[j]]
        return eta

    def _lambda_zt(self, theta, v):
        """Lambda Z' v split as (A part, R part), for a per-observation vector v."""
        vA = theta[self.ia] * np.bincount(self.ga, v, self.na)
        if not self.others:
            return vA, np.zeros(0)
        vR = np.concatenate(
            [theta[k] * np.bincount(self.g_other[j], v, self.n_levels[k]) for j, k in enumerate(self.others)]
        )
        return vA, vR

    def _theta_cols(self, theta):
        """theta of the factor owning each R column."""
        return (
            np.concatenate([np.full(self.n_levels[k], theta[k]) for k in self.others]) if self.others else np.zeros(0)
        )

    def _grad_u(self, theta, u, resid):
        """Half the gradient of the penalised deviance w.r.t. u; resid = mu - y."""
        gA = theta[self.ia] * np.bincount(self.ga, resid, self.na) + u[: self.na]
        parts = [gA]
        for j, k in enumerate(self.others):
            parts.append(theta[k] * np.bincount(self.g_other[j], resid, self.n_levels[k]))
        g = np.concatenate(parts)
        g[self.na :] += u[self.na :]
        return g

    def _penalised(self, fixed, theta, u):
        """The linear predictor and the penalised deviance -2 log p(y | u) + ||u||^2 at u."""
        eta = fixed + self._eta_re(theta, u)
        return eta, -2.0 * (self.y @ eta - np.logaddexp(0.0, eta).sum()) + u @ u

    def _warm_start(self, theta):
        """The previous modes, kept on the b = theta * u scale when theta moves."""
        u = self.u.copy()
        if not np.all(np.isfinite(u)):
            u[:] = 0.0
        prev = getattr(self, "_theta_prev", None)
        if prev is not None:
            for k, sl in self._blocks():
                if prev[k] != 0.0 and theta[k] != 0.0:
                    u[sl] *= prev[k] / theta[k]
        self._theta_prev = theta.copy()
        return u

    # ------------------------------------------------------------------ hooks
    # Newton steps that reuse the last exact factorisation before refactorising (0: every step
    # factorises).
    chord_steps = 0

    def _chord_factor(self):
        """A factorisation (from the previous call) to reuse for the first Newton steps, or None."""
        return None

    # ------------------------------------------------------------------ deviance
    def __call__(self, theta, beta, offset=None):
        """Laplace deviance at (theta, beta); warm-starts PIRLS from the previous modes."""
        self.n_evals += 1
        theta = np.asarray(theta, dtype=float)
        fixed = self.X @ np.asarray(beta, dtype=float)
        if offset is not None:
            fixed = fixed + offset
        if self.K == 0:
            dev = float(-2.0 * (self.y @ fixed - np.logaddexp(0.0, fixed).sum()))
            self.state = {"eta": fixed, "theta": theta, "beta": beta, "logdet": 0.0}
            return dev
        u, eta, pdev, w, f, n_newton = self._pirls(theta, fixed)
        self._last_factor = f
        self.u = u
        logdet, extra = self._log_det(theta, f)
        self.state = {
            "eta": eta,
            "u": u,
            "w": w,
            "factor": f,
            "theta": theta,
            "beta": beta,
            "pirls_iter": n_newton,
            "logdet": logdet,
            **extra,
        }
        return float(pdev + logdet)

    def _pirls(self, theta, fixed):
        """The conditional modes at (theta, fixed part of eta): (u, eta, pdev, w, f, Newton steps),
        with f the factorisation at weights w of the final modes."""
        y = self.y
        u = self._warm_start(theta)
        eta, pdev = self._penalised(fixed, theta, u)
        # Newton steps; with a chord factorisation, steps reuse it (linear convergence) until the
        # decrement looks converged, then one exact factorisation at the final modes verifies it
        # and gives log det H there.
        approx = self._chord_factor()
        chord_left = self.chord_steps if approx is not None else 0
        f = None
        at_u = False  # f is the exact factorisation at the current u
        n_newton = 0
        for n_newton in range(1, _PIRLS_MAXIT + 1):  # noqa: B007  (read after the loop)
            mu = expit(eta)
            w = mu * (1.0 - mu)
            g = self._grad_u(theta, u, mu - y)
            if chord_left > 0:
                dA, dR = self._solve(approx, -g[: self.na], -g[self.na :])
                delta = np.concatenate([dA, dR])
                if self._converged(-(g @ delta), pdev):
                    chord_left = 0
                    continue
                chord_left -= 1
            else:
                f = self._factor(theta, w)
                at_u = True
                dA, dR = self._solve(f, -g[: self.na], -g[self.na :])
                delta = np.concatenate([dA, dR])
                if self._converged(-(g @ delta), pdev):
                    break
                approx = f
                chord_left = self.chord_steps
            step = 1.0
            for _ in range(_HALVINGS):
                u_new = u + step * delta
                eta_new, pdev_new = self._penalised(fixed, theta, u_new)
                if pdev_new <= pdev + 1e-12 * abs(pdev):
                    break
                step *= 0.5
            else:
                if not at_u:
                    chord_left = 0  # no descent along the chord step: verify exactly
                    continue
                break  # no descent possible: at the mode to machine precision
            u, eta, pdev = u_new, eta_new, pdev_new
            at_u = False
        if not at_u:  # iteration limit: factorise at the final modes for a consistent log det
            mu = expit(eta)
            w = mu * (1.0 - mu)
            f = self._factor(theta, w)
        return u, eta, pdev, w, f, n_newton

    # ------------------------------------------------------------------ by-products
    def conditional_modes(self, theta):
        """Per factor (original order) the conditional modes b_k = theta_k u_k at the last call."""
        u = self.state["u"]
        out = [None] * self.K
        out[self.ia] = theta[self.ia] * u[: self.na]
        uR = u[self.na :]
        for j, k in enumerate(self.others):
            out[k] = theta[k] * uR[self.r_off[j] : self.r_off[j + 1]]
        return out

    def vcov_rx(self):
        """Covariance of beta from the penalised least-squares system at the last call (lme4's
        ``sigma^2 * chol2inv(RX)``, used when the Hessian-based one is not positive definite)."""
        eta = self.state["eta"]
        mu = expit(eta)
        w = mu * (1.0 - mu)
        XtWX = self.X.T @ (self.X * w[:, None])
        if self.K == 0:
            return np.linalg.inv(XtWX)
        theta = self.state["theta"]
        f = self._factor(theta, w)
        p = self.X.shape[1]
        # V = Lambda Z' W X, one column per fixed effect; schur = X'WX - V' H^{-1} V
        V = [self._lambda_zt(theta, w * self.X[:, j]) for j in range(p)]
        schur = XtWX.copy()
        for j in range(p):
            xA, xR = self._solve(f, V[j][0], V[j][1], kind="adjoint")
            for i in range(p):
                schur[i, j] -= V[i][0] @ xA + V[i][1] @ xR
        return np.linalg.inv((schur + schur.T) / 2.0)
