"""Leave-one-reader-out GLMM intercepts without refitting: one Newton step from the full fit.

Refitting the crossed GLMM once per reader costs readers x votes; at 200 readers and 100k votes
that is minutes. This module approximates every reader's refit at once, in time linear in the
votes (plus one factorisation of a readers x readers matrix per cell).

The approximation
-----------------
Hold the variance parameters at the full-data optimum ``theta = (sd_pair, sd_reader)`` and
take one Newton step, from the full-data optimum ``(b0, u)``, on the penalised deviance of the
data without reader ``j``:

    dev_j(b0, u) = sum_{votes not of j} -2 log p(y | b0 + theta_p u_pair + theta_r u_reader) + ||u||^2

(``u`` the spherical random effects; the log-determinant of the Laplace objective is held at
its full-data gradient, which the full optimum balances). Because the full-data gradient is
zero there, the step is ``dx = H_j^{-1} r_j`` with ``r_j`` the score of reader ``j``'s votes and
``H_j`` the joint Hessian over ``(b0, u_pair, u_other readers)`` without reader ``j``'s votes
and without its own effect -- the cluster-deletion "one-step" of Pregibon (1981) for logistic
regression, applied to the GLMM's penalised system.

``H_j`` differs from the full Hessian ``H`` by reader ``j``'s row and column (removed exactly by a
rank-one Schur correction of ``H^{-1}``) and by the weight of ``j``'s votes on the pairs it read (a
low-rank update, one rank per pair read). The update is applied by the Woodbury identity with
its pair x pair matrix ``G = V' M^{-1} V`` taken as its exact diagonal plus the rank-two part
that runs through the intercept (``G_ab ~ M_00 + theta_p (M_0a + M_0b)`` for pairs ``a != b``);
the neglected entries are the posterior covariances between two pairs through the other
readers, which are small. In experiments this matched the exact Woodbury step to a few percent
of the shift (docs/uncertainty.md). All the entries of ``H^{-1}`` the step needs come from one
Cholesky factorisation of the ``(1 + readers)`` Schur complement left after eliminating the
pairs, whose block is diagonal. When every pair has one reader (Chatbot Arena's one vote per
battle) the readers' block of that complement is diagonal too, and its inverse is explicit
(an arrowhead matrix: O(readers) instead of O(readers^3)). When more than
:data:`STOCHASTIC_MIN_READERS` readers share pairs, the entries come from conjugate gradients and
random probes instead (:mod:`judge_transfer_audit.statistics.uncertainty.stochastic_inverse`): linear in the votes,
with the Monte-Carlo error estimated and returned (``OneStep.mc_error``).

What it leaves out, and how it is checked: the change of the variance parameters when a
reader is dropped, and Newton steps after the first. Validated against exact refits over
seeded designs (``tests/audit/statistics/uncertainty/test_one_step.py``; figures in docs/uncertainty.md);
:func:`judge_transfer_audit.statistics.uncertainty.loro.leave_one_reader_out` refits the most influential readers
exactly and reports the largest difference it saw.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from judge_transfer_audit.statistics.uncertainty.stochastic_inverse import (
    ReaderBlockInverse,
    pair_slabs,
    reader_schur_solve,
)

#: above this many readers sharing pairs the one-step estimates the entries of ``S^-1`` it needs with
#: random probes and conjugate gradients (:mod:`judge_transfer_audit.statistics.uncertainty.stochastic_inverse`):
#: linear in the
#: votes, no readers x readers block. At and below it the dense block is exact: at 3,000 readers and
#: 100k votes 3.6 CPU-s for the modes and the step, 474 MB peak (benchmarks/loro_readers.py)
STOCHASTIC_MIN_READERS = 3_000
#: probes per batch of the stochastic estimate; it starts with two batches
PROBE_BATCH = 64
#: the batches double until the estimated Monte-Carlo error is at most this share of the largest shift
STOCHASTIC_TOLERANCE = 0.02
#: ... or this many probes are used
MAX_PROBES = 1024
#: with every pair read by one reader and more readers than this, the block is diagonal and the
#: Schur complement an arrowhead, inverted in O(readers) (the GLMM engine's diagonal-path rule)
DIAGONAL_MIN_READERS = 200


def one_reader_per_pair(table) -> bool:
    """Whether every pair of the cell is read by one reader (its combinations, sorted by pair, have
    distinct pairs): then the readers' block of the Schur complement is diagonal."""
    a = table.cell_pair
    return bool(a.size) and bool(np.all(np.diff(a) > 0))


@dataclass(frozen=True)
class OneStep:
    """Approximate intercepts without each reader (internal)."""

    b0_without: np.ndarray  #: logit-scale intercept without reader j (NaN where not computable)
    reason: str  #: "" when computed; why not otherwise
    mc_error: float = 0.0  #: the stochastic estimate's largest Monte-Carlo error (logit scale); 0 when exact
    probes: int = 0  #: random probes of the stochastic estimate; 0 when exact


def modes_from_fit(full, n_pairs: int, n_readers: int) -> tuple[np.ndarray, np.ndarray]:
    """Conditional modes (natural scale) of a fit made with factors ``{"pair": index, "reader":
    index}``, as arrays in index order (0 where a factor was dropped)."""
    out = []
    for name, n in (("pair", n_pairs), ("reader", n_readers)):
        levels = full.conditional_modes.get(name, {})
        arr = np.zeros(n)
        if levels:
            keys = np.fromiter((int(k) for k in levels), dtype=np.int64, count=len(levels))
            arr[keys] = np.fromiter(levels.values(), dtype=float, count=len(levels))
        out.append(arr)
    return out[0], out[1]


#: at most this many pairs x readers, :func:`conditional_modes` works on dense blocks
DENSE_MAX_CELLS = 20_000


def conditional_modes(
    table, b0: float, sd_pair: float, sd_reader: float, *, tol: float = 1e-12, max_iter: int = 50
) -> tuple[np.ndarray, np.ndarray]:
    """Conditional modes (natural scale: ``sd * u``) of the pair and reader effects at given
    ``(b0, sd_pair, sd_reader)``: penalised IRLS (Newton with step halving) on the spherical
    effects, the pairs eliminated through their diagonal block. Lets leave-one-reader-out start
    from a fit it did not make (the pipeline's) without refitting it. Dense blocks for cells of
    at most :data:`DENSE_MAX_CELLS` pairs x readers (the same Newton steps; sums in another order),
    sparse above; with every pair read by one reader and more than :data:`DIAGONAL_MIN_READERS`
    readers, the readers' block is diagonal and each step O(votes)."""
    import scipy.linalg as sla
    import scipy.sparse as sp
    from scipy.special import expit

    P, R = table.n_pairs, table.n_readers
    a, r, n, s = table.cell_pair, table.cell_reader, table.n, table.s
    up, ur = np.zeros(P), np.zeros(R)
    diagonal = R > DIAGONAL_MIN_READERS and one_reader_per_pair(table)
    iterative = R > STOCHASTIC_MIN_READERS and not diagonal
    if P * R <= DENSE_MAX_CELLS:  # a small cell: dense pair x reader blocks (a sparse build costs more)
        flat = a * R + r

        def block(values):
            return np.bincount(flat, values, P * R).reshape(P, R)
    else:

        def block(values):
            return sp.csr_matrix((values, (a, r)), shape=(P, R))

    def objective(up, ur):
        eta = b0 + sd_pair * up[a] + sd_reader * ur[r]
        return float(np.sum(n * np.logaddexp(0.0, eta) - s * eta) + 0.5 * (up @ up + ur @ ur)), eta

    f, eta = objective(up, ur)
    for _ in range(max_iter):
        mu = expit(eta)
        w = n * mu * (1.0 - mu)
        res = n * mu - s
        gp = sd_pair * np.bincount(a, res, P) + up
        gr = sd_reader * np.bincount(r, res, R) + ur
        D = 1.0 + sd_pair**2 * np.bincount(a, w, P)
        vw = sd_pair * sd_reader * w
        sr = 1.0 + sd_reader**2 * np.bincount(r, w, R) - np.bincount(r, vw * vw / D[a], R) if diagonal else None
        if diagonal and np.all(sr > 0):  # one reader per pair: the reader block is diagonal, O(R)
            dr = -(gr - np.bincount(r, vw * (gp / D)[a], R)) / sr
            dp = (-gp - np.bincount(a, vw * dr[r], P)) / D
        elif iterative:  # many readers sharing pairs: the Newton direction by conjugate gradients
            # (sparse blocks at any size; an unconverged solve still gives a descent direction, and the
            # step halving below guards the decrease)
            Cw = sp.csr_matrix((vw, (a, r)), shape=(P, R))
            d_r = 1.0 + sd_reader**2 * np.bincount(r, w, R)
            C = sp.csr_matrix((vw / np.sqrt(D[a]), (a, r)), shape=(P, R))
            dr = reader_schur_solve(C, d_r, -(gr - Cw.T @ (gp / D))[:, None])[0][:, 0]
            dp = (-gp - Cw @ dr) / D
        else:
            C = block(vw / np.sqrt(D[a]))
            SR = -(C.T @ C)
            SR = SR.toarray() if sp.issparse(SR) else SR
            SR[np.diag_indices(R)] += 1.0 + sd_reader**2 * np.bincount(r, w, R)
            Cw = block(vw)
            dr = sla.cho_solve(
                sla.cho_factor(SR, lower=True, check_finite=False), -(gr - Cw.T @ (gp / D)), check_finite=False
            )
            dp = (-gp - Cw @ dr) / D
        decrease = -(gp @ dp + gr @ dr)
        if decrease < tol * max(1.0, abs(f)):
            break
        step = 1.0
        for _ in range(30):
            f_new, eta_new = objective(up + step * dp, ur + step * dr)
            if f_new <= f + 1e-13 * abs(f):
                break
            step *= 0.5
        else:
            break
        up, ur, f, eta = up + step * dp, ur + step * dr, f_new, eta_new
    return sd_pair * up, sd_reader * ur


def one_step_without_readers(
    table, b0: float, sd_pair: float, sd_reader: float, pair_modes: np.ndarray, reader_modes: np.ndarray
) -> OneStep:
    """One-step intercepts of ``table``'s GLMM without each of its readers.

    Parameters
    ----------
    table : CellTable
        The cell (sparse pair x reader combinations).
    b0, sd_pair, sd_reader : float
        The full-data optimum (logit-scale intercept and the two random-intercept SDs; an SD
        of a factor the fit dropped is 0).
    pair_modes, reader_modes : ndarray
        The full-data conditional modes (natural scale), in the table's pair and reader order
        (:func:`modes_from_fit` or :func:`conditional_modes`).

    Returns
    -------
    OneStep
        ``b0_without`` per reader (table order), or NaN throughout with the ``reason``.
    """
    import scipy.linalg as sla
    import scipy.sparse as sp
    from scipy.special import expit

    R, P = table.n_readers, table.n_pairs
    nan = np.full(R, np.nan)
    th_p, th_r = float(sd_pair), float(sd_reader)
    if not (math.isfinite(b0) and math.isfinite(th_p) and math.isfinite(th_r)):
        return OneStep(nan, "the full-data fit has no finite intercept and SDs (separation)")
    a, r = table.cell_pair, table.cell_reader
    mu = expit(b0 + pair_modes[a] + reader_modes[r])
    w = table.n * mu * (1.0 - mu)
    res = table.n * mu - table.s  # score of each combination's votes, (mu - y) summed
    if not np.all(w > 0):
        return OneStep(nan, "a fitted probability is 0 or 1")
    wa = np.bincount(a, w, P)
    wr = np.bincount(r, w, R)
    D = 1.0 + th_p**2 * wa
    v = th_p * th_r * w  # (pair, reader) entries of the joint Hessian

    # Schur complement over (b0, readers) after eliminating the pairs (diagonal block D)
    h0a = th_p * wa  # (b0, pair) entries
    s_00 = w.sum() - np.sum(h0a**2 / D)
    s0r = th_r * wr - np.bincount(r, h0a[a] * v / D[a], R)
    if R > DIAGONAL_MIN_READERS and one_reader_per_pair(table):
        # every pair read by one reader: the readers' block of S is diagonal, S an arrowhead whose
        # inverse is explicit, O(R) (as the GLMM engine's diagonal path; the same numbers to rounding)
        d = 1.0 + th_r**2 * wr - np.bincount(r, v * v / D[a], R)
        sigma = s_00 - np.sum(s0r**2 / d) if np.all(d > 0) else -1.0
        if not sigma > 0:
            return OneStep(nan, "the penalised Hessian is not positive definite")
        s00 = 1.0 / sigma
        s0 = -(s0r / d) * s00
        h_jj = 1.0 / d + (s0r / d) ** 2 * s00
        h_aj, q = _coupled_entries(table, v, h0a, D, s00, s0, h_jj[r] * v)  # g: the pair's one cell
    elif R > STOCHASTIC_MIN_READERS:  # many readers sharing pairs: no dense block (stochastic_inverse)
        return _stochastic_one_step(table, b0, th_p, w, res, h0a, D, v, s_00, s0r, 1.0 + th_r**2 * wr)
    else:
        S = np.zeros((R + 1, R + 1))
        S[0, 0] = s_00
        S[0, 1:] = S[1:, 0] = s0r
        C = sp.csr_matrix((v / np.sqrt(D[a]), (a, r)), shape=(P, R))
        S[1:, 1:] = -(C.T @ C).toarray()
        S[np.arange(1, R + 1), np.arange(1, R + 1)] += 1.0 + th_r**2 * wr
        try:
            factor = sla.cho_factor(S, lower=True, check_finite=False)
            Sinv = sla.cho_solve(factor, np.eye(R + 1), check_finite=False)
        except (np.linalg.LinAlgError, ValueError):
            return OneStep(nan, "the penalised Hessian is not positive definite")
        s00, s0 = Sinv[0, 0], Sinv[0, 1:]
        SRR = Sinv[1:, 1:]
        h_aj, q = _pair_blocks(table, v, h0a, s0, s00, SRR, D)
        h_jj = np.diag(SRR)

    return _newton_step(table, b0, th_p, w, res, h0a, D, v, s00, s0, h_jj, h_aj, q)


def _newton_step(table, b0, th_p, w, res, h0a, D, v, s00, s0, h_jj, h_aj, q) -> OneStep:
    """The one-step intercepts from the entries of ``S^{-1}`` (``s00``, ``s0``, ``h_jj``) and of
    ``H^{-1}`` at the observed cells (``h_aj``) and the pairs' quadratic forms ``q``."""
    a, r = table.cell_pair, table.cell_reader
    P, R = table.n_pairs, table.n_readers
    nan = np.full(R, np.nan)
    # entries of H^{-1}: (pair, b0), (pair, pair) diagonal, (pair, reader) at observed cells
    h_a0 = -(h0a * s00 + np.bincount(a, v * s0[r], P)) / D
    h_aa = 1.0 / D + q / D**2
    h_0j = s0

    # per reader: remove its own effect (rank-one Schur correction), then its votes (Woodbury)
    hjj_c = h_jj[r]
    m00 = s00 - h_0j**2 / h_jj  # per reader
    m_c = h_a0[a] - h_0j[r] * h_aj / hjj_c
    maa_c = h_aa[a] - h_aj**2 / hjj_c
    delta = th_p**2 * maa_c
    E = 1.0 / w - delta
    if not np.all(E > 0):
        return OneStep(nan, "a reader's votes carry all the weight of a pair (leverage 1)")
    sum_c = np.bincount(r, res, R)
    sum_mc = np.bincount(r, m_c * res, R)
    gc = delta * res + (m00[r] * sum_c[r] + th_p * sum_mc[r]) + m_c * th_p * sum_c[r]
    z = gc / E
    q11 = np.bincount(r, 1.0 / E, R)
    q12 = np.bincount(r, m_c / E, R)
    q22 = np.bincount(r, m_c**2 / E, R)
    uz0, uz1 = np.bincount(r, z, R), np.bincount(r, m_c * z, R)
    # K = [[m00, th_p], [th_p, 0]];  solve (I - K Q) y = K (U' z), reader by reader (2 x 2)
    rhs0, rhs1 = m00 * uz0 + th_p * uz1, th_p * uz0
    a11 = 1.0 - (m00 * q11 + th_p * q12)
    a12 = -(m00 * q12 + th_p * q22)
    a21 = -th_p * q11
    a22 = 1.0 - th_p * q12
    det = a11 * a22 - a12 * a21
    with np.errstate(invalid="ignore", divide="ignore"):
        y0 = (a22 * rhs0 - a12 * rhs1) / det
        y1 = (a11 * rhs1 - a21 * rhs0) / det
    t = z + (y0[r] + m_c * y1[r]) / E
    f = m00[r] + th_p * m_c
    step = np.bincount(r, f * (res + t), R)
    out = b0 + step
    out[~np.isfinite(det) | (det == 0)] = np.nan
    return OneStep(out, "")


def _stochastic_one_step(table, b0, th_p, w, res, h0a, D, v, s_00, s0r, d) -> OneStep:
    """The one-step with the entries of ``S^{-1}`` from :class:`ReaderBlockInverse`: batches of
    :data:`PROBE_BATCH` probes, doubled until the Monte-Carlo error (half the largest difference
    between the steps of the two halves of the probes) is within :data:`STOCHASTIC_TOLERANCE` of the
    largest shift, or :data:`MAX_PROBES` are used. A half (or the whole) whose step fails where the
    whole's does not counts as an error too large: the probes double. The probes are seeded by the
    cell's size and the batch number: the same bits at any ``--jobs``."""
    P, R = table.n_pairs, table.n_readers
    seed = np.random.SeedSequence([R, P, int(table.n_votes)]).generate_state(1)[0]
    inverse = ReaderBlockInverse(table, v, D, s_00, s0r, d, seed=seed)
    if inverse.reason:
        return OneStep(np.full(R, np.nan), inverse.reason)
    s00, s0 = inverse.s00, inverse.s0

    def step(sums):
        h_jj, coupled = inverse.entries(sums)
        h_aj, q = _coupled_entries(table, v, h0a, D, s00, s0, coupled)
        return _newton_step(table, b0, th_p, w, res, h0a, D, v, s00, s0, h_jj, h_aj, q)

    sums: list = []
    batches = 2
    while True:
        while len(sums) < batches:
            got = inverse.probe(PROBE_BATCH, batch=len(sums))
            if isinstance(got, str):
                return OneStep(np.full(R, np.nan), got)
            sums.append(got)
        at_cap = batches * PROBE_BATCH >= MAX_PROBES
        full = step(sums)
        if full.reason:
            if at_cap:
                return full
            batches *= 2
            continue
        first, second = step(sums[: batches // 2]), step(sums[batches // 2 :])
        ok = np.isfinite(full.b0_without)
        both = ok & np.isfinite(first.b0_without) & np.isfinite(second.b0_without)
        if np.array_equal(both, ok):
            error = float(np.max(np.abs(first.b0_without - second.b0_without)[both]) / 2) if both.any() else 0.0
        else:  # a half failed where the whole did not: its noise is too large to measure
            error = math.inf
        largest = float(np.max(np.abs(full.b0_without - b0)[ok])) if ok.any() else 0.0
        if error <= STOCHASTIC_TOLERANCE * largest or at_cap:
            return OneStep(full.b0_without, "", mc_error=error, probes=batches * PROBE_BATCH)
        batches *= 2


def _coupled_entries(table, v, h0a, D, s00, s0, g):
    """``H^{-1}`` at the observed cells (pair a, reader j) and the pairs' quadratic forms ``q``, from
    ``g`` per cell: the sum over the pair's cells c' of ``v_c' S^-1[r_c', j]``."""
    a, r, P = table.cell_pair, table.cell_reader, table.n_pairs
    h_aj = -(h0a[a] * s0[r] + g) / D[a]
    q = h0a**2 * s00 + 2.0 * h0a * np.bincount(a, v * s0[r], P) + np.bincount(a, v * g, P)
    return h_aj, q


def _pair_blocks(table, v, h0a, s0, s00, SRR, D):
    """(pair, reader) entries of H^{-1} at the observed combinations, and the quadratic form
    ``B_a S^{-1} B_a'`` of each pair's row of the coupling, from the readers x readers block
    of ``S^{-1}`` gathered per pair (grouped by how many readers read the pair)."""
    a, r = table.cell_pair, table.cell_reader
    P = table.n_pairs
    h_aj = np.empty(a.size)
    q = h0a**2 * s00 + 2.0 * h0a * np.bincount(a, v * s0[r], P)
    for K, rk in pair_slabs(a, r, P):
        block = a[K[:, 0]]  # the slab's pairs
        sub = SRR[rk[:, :, None], rk[:, None, :]]  # (pairs, m, m)
        vk = v[K]
        g = np.einsum("pij,pj->pi", sub, vk)  # sum over the pair's cells c' of v_c' S^-1[r_c', r_c]
        # H^{-1}[a, j] = -(h0a S^-1[0, j] + sum_c' v_c' S^-1[r_c', j]) / D_a
        h_aj[K] = -(h0a[block][:, None] * s0[rk] + g) / D[block][:, None]
        q[block] += np.einsum("pi,pi->p", vk, g)
    return h_aj, q
