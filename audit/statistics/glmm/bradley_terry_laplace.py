"""The Laplace deviance of a Bradley-Terry model with a reader random intercept, from weighted votes.

``logit P(vote i prefers its focal system) = s[focal_i] - s[other_i] + theta * u[reader_i]``, with
``s[0] = 0`` (the reference system; ``beta = s[1:]``), ``u ~ N(0, 1)`` spherical reader effects and a
frequency weight ``c_i`` per vote (a vote drawn twice by a bootstrap counts twice). It is the objective
:class:`judge_transfer_audit.statistics.glmm.laplace.LaplaceDeviance` evaluates on the votes repeated by their weights,
with the design ``+1`` for the focal system and ``-1`` for the other
(:func:`judge_transfer_audit.statistics.leaderboard.bootstrap.codes_design`)
and the reader as the only factor: the same penalised iteratively reweighted least squares for the
modes (Newton steps with step halving, the same stopping rule), the same log determinant and the same
analytic gradient in ``(theta, beta)``. What differs is the arithmetic: the reader block of the
penalised Hessian is diagonal (one factor), the fixed part is two gathers of ``s`` instead of a
product with a dense ``N x (k - 1)`` design, and repeated votes are one row with a weight, so an
evaluation reads a few integer and float arrays of the distinct votes once per Newton step. The
element-wise arithmetic runs a block of votes at a time (:data:`BLOCK`), so that its temporaries stay in
the processor's cache; each vote's numbers are the same whatever the blocks, and the sums (the dot
products and the per-reader sums) are taken over whole arrays, so the deviance and its gradient do not
depend on the block size to the last bit.

Used by the leaderboard's cluster bootstrap (:mod:`judge_transfer_audit.statistics.leaderboard.bootstrap`) when its
human model has the reader term only; validated against :class:`LaplaceDeviance` on repeated votes (deviance and
gradient) in ``tests/audit/statistics/glmm/test_glmm_bradley_terry_laplace.py``.
"""

from __future__ import annotations

import numpy as np

from judge_transfer_audit.statistics.glmm.optimize import minimize_bounded_steps, run_steps

# as judge_transfer_audit.statistics.glmm.pirls and judge_transfer_audit.statistics.glmm.laplace: Newton steps,
# halvings of a step, the decrement's tolerance
_PIRLS_MAXIT = 60
_HALVINGS = 30
_PIRLS_TOL = 1e-22
#: votes per block of the element-wise arithmetic: a block's few temporaries (128 KB each) stay in a core's
#: cache, where whole-array temporaries at a million votes (8 MB each) go to memory and back at every step
BLOCK = 16_384


def _softplus_and_mean(eta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``log(1 + exp(eta))`` without overflow and ``expit(eta)`` (a third of the time of
    ``np.logaddexp(0, eta)`` and ``scipy.special.expit`` apart). ``expit(eta)`` is ``1 / (1 + exp(-|eta|))``
    times ``exp(min(eta, 0))`` (1 where ``eta >= 0``, else ``exp(-|eta|)``): a selection without branches,
    which a vote-by-vote choice between the two (``np.where`` on the sign) is not."""
    e = np.exp(-np.abs(eta))
    inv = 1.0 / (1.0 + e)
    return np.maximum(eta, 0.0) + np.log1p(e), inv * np.exp(np.minimum(eta, 0.0))


class BradleyTerryLaplace:
    """Callable Laplace deviance ``f(theta, beta)`` of the weighted Bradley-Terry reader-intercept model.

    Parameters
    ----------
    y : ndarray (N,)
        1 when the vote prefers its focal system, else 0.
    focal, other : ndarray of int (N,)
        System codes, 0..k-1 (0 the reference, left out of ``beta``).
    readers : ndarray of int (N,)
        Reader codes, 0..n_readers-1.
    weight : ndarray (N,)
        Frequency weight of each vote (positive).
    k, n_readers : int
    """

    def __init__(self, y, focal, other, readers, weight, k: int, n_readers: int):
        self.y = np.asarray(y, float)
        self.focal = np.asarray(focal, np.intp)
        self.other = np.asarray(other, np.intp)
        self.readers = np.asarray(readers, np.intp)
        self.c = np.asarray(weight, float)
        self.cy = self.c * self.y
        self.k = int(k)
        self.m = int(n_readers)
        self.u = np.zeros(self.m)
        n = len(self.y)
        self.blocks = [slice(lo, min(lo + BLOCK, n)) for lo in range(0, n, BLOCK)]
        self._theta_prev = None
        self.n_evals = 0
        self.state: dict = {}

    def _fixed(self, beta) -> np.ndarray:
        s = np.concatenate([[0.0], np.asarray(beta, float)])
        return s[self.focal] - s[self.other]

    def _penalised(self, fixed, theta, u):
        """The penalised deviance at ``u`` and the fitted probabilities."""
        eta, softplus, mu = np.empty(len(fixed)), np.empty(len(fixed)), np.empty(len(fixed))
        for b in self.blocks:
            eta[b] = fixed[b] + theta * u.take(self.readers[b])
            softplus[b], mu[b] = _softplus_and_mean(eta[b])
        return -2.0 * (self.cy @ eta - self.c @ softplus) + u @ u, mu

    def _weights_and_residuals(self, mu) -> tuple[np.ndarray, np.ndarray]:
        """``c mu (1 - mu)`` (the working weights) and ``c mu - c y`` of every vote."""
        cw, cr = np.empty(len(mu)), np.empty(len(mu))
        for b in self.blocks:
            cmu = self.c[b] * mu[b]
            cw[b] = cmu * (1.0 - mu[b])
            cr[b] = cmu - self.cy[b]
        return cw, cr

    def _reader_sums(self, v) -> np.ndarray:
        return np.bincount(self.readers, v, self.m)

    def __call__(self, theta, beta) -> float:
        """The deviance at ``(theta, beta)`` (``theta`` a length-1 array or a number); the modes warm-start
        from the previous call's, kept on the ``theta * u`` scale."""
        self.n_evals += 1
        t = float(np.ravel(theta)[0])
        fixed = self._fixed(beta)
        u = self.u.copy() if np.all(np.isfinite(self.u)) else np.zeros(self.m)
        if self._theta_prev is not None and self._theta_prev != 0.0 and t != 0.0:
            u *= self._theta_prev / t
        self._theta_prev = t
        pdev, mu = self._penalised(fixed, t, u)
        for _ in range(_PIRLS_MAXIT):
            cw, cr = self._weights_and_residuals(mu)
            S, G = self._reader_sums(cw), self._reader_sums(cr)
            D = 1.0 + t * t * S
            g = t * G + u
            delta = -g / D
            if -(g @ delta) < _PIRLS_TOL:
                break
            step = 1.0
            for _ in range(_HALVINGS):
                u_new = u + step * delta
                pdev_new, mu_new = self._penalised(fixed, t, u_new)
                if pdev_new <= pdev + 1e-12 * abs(pdev):
                    break
                step *= 0.5
            else:
                break  # no descent possible: at the mode to machine precision
            u, pdev, mu = u_new, pdev_new, mu_new
        else:  # iteration limit: the Hessian at the final modes, for a consistent log det
            cw, cr = self._weights_and_residuals(mu)
            S, G = self._reader_sums(cw), self._reader_sums(cr)
            D = 1.0 + t * t * S
        self.u = u
        # the weights, residuals and their reader sums at the modes: the gradient's too
        self.state = {"theta": t, "u": u, "mu": mu, "cw": cw, "cr": cr, "S": S, "G": G, "D": D}
        return float(pdev + np.log(D).sum())

    def gradient(self) -> np.ndarray:
        """Gradient in ``(theta, beta)`` at the last call: the penalised deviance's (envelope theorem at
        the modes) plus the log determinant's, through the weights and the modes' own derivatives."""
        st = self.state
        t, u, H, mu, cw, cr = st["theta"], st["u"], st["D"], st["mu"], st["cw"], st["cr"]  # cr: c (mu - y)
        G, S = st["G"], st["S"]
        cwp = np.empty(len(mu))  # c dw/deta
        for b in self.blocks:
            cwp[b] = cw[b] * (1.0 - 2.0 * mu[b])
        T = self._reader_sums(cwp)
        du_dtheta = -(G + t * u * S) / H
        g_theta = 2.0 * (u @ G) + np.sum((2.0 * t * S + t * t * T * (u + t * du_dtheta)) / H)
        # d eta_i / d beta = x_i + t du_r / d beta, with du_r / d beta = -t sum_r(c w x) / H_r
        # per reader first (the same operations on the same numbers as per vote), then gathered
        p, q = t * t / H, t**4 * T / H**2
        a = np.empty(len(mu))
        for b in self.blocks:
            r = self.readers[b]
            a[b] = 2.0 * cr[b] + p.take(r) * cwp[b] - q.take(r) * cw[b]
        g_s = np.bincount(self.focal, a, self.k) - np.bincount(self.other, a, self.k)
        return np.concatenate([[g_theta], g_s[1:]])

    def fun_grad(self, z):
        """``(deviance, gradient)`` at ``z = (theta, beta...)``: the evaluator of :func:`run_steps`."""
        value = self(z[:1], z[1:])
        return value, self.gradient()


def bradley_terry_reader_estimates(lap: BradleyTerryLaplace, x0, inverse_hessian=None) -> np.ndarray | None:
    """The maximum-likelihood ``(theta, beta)`` of ``lap`` by the native fit's optimiser
    (:func:`judge_transfer_audit.statistics.glmm.optimize.minimize_bounded_steps` from ``x0``, the search started from
    ``inverse_hessian``; a theta below 1e-10 set to 0, as
    :func:`judge_transfer_audit.statistics.glmm.fit.optimum_steps`), or None
    where the optimum is not finite or the reader variance diverges (the caller then fits the general
    way, which handles that case)."""
    from judge_transfer_audit.statistics.glmm.fit import THETA_DIVERGENT

    res = run_steps(minimize_bounded_steps(np.asarray(x0, float), 1, inverse_hessian=inverse_hessian), lap.fun_grad)
    x = np.asarray(res.x, float).copy()
    if not np.all(np.isfinite(x)) or x[0] > THETA_DIVERGENT:
        return None
    x[0] = 0.0 if x[0] < 1e-10 else x[0]
    return x


__all__ = ["BradleyTerryLaplace", "bradley_terry_reader_estimates"]
