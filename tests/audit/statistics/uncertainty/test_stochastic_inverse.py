"""The stochastic entries of the readers' block inverse: conjugate gradients against a direct solve,
the exact parts against the dense inverse's Neumann terms, the estimate against the dense inverse
(its error shrinking with the probes), and the one-step built on it against the dense one-step."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import expit

import judge_transfer_audit.statistics.uncertainty.one_step as one_step
from judge_transfer_audit.statistics.uncertainty._cells import cell_tables
from judge_transfer_audit.statistics.uncertainty.stochastic_inverse import (
    ReaderBlockInverse,
    block_cg,
    pair_slabs,
    reader_schur_solve,
)

from .test_one_step import _design


def _cell(n_pairs=400, n_readers=120, per_pair=6, seed=3, sd_pair=1.0, sd_reader=1.0):
    votes = _design(n_pairs, n_readers, per_pair, seed, sd_pair=sd_pair, sd_reader=sd_reader)
    return cell_tables(votes, ("matchup", "criterion"))[0]


def _block_quantities(t, b0=0.2, th_p=1.0, th_r=1.0):
    """The one-step's quantities at zero modes, and the dense S (b0 + readers) they define."""
    a, r = t.cell_pair, t.cell_reader
    P, R = t.n_pairs, t.n_readers
    mu = expit(np.full(a.size, b0))
    w = t.n * mu * (1 - mu)
    wa, wr = np.bincount(a, w, P), np.bincount(r, w, R)
    D = 1 + th_p**2 * wa
    v = th_p * th_r * w
    h0a = th_p * wa
    s_00 = w.sum() - np.sum(h0a**2 / D)
    s0r = th_r * wr - np.bincount(r, h0a[a] * v / D[a], R)
    d = 1 + th_r**2 * wr
    C = sp.csr_matrix((v / np.sqrt(D[a]), (a, r)), shape=(P, R)).toarray()
    S = np.zeros((R + 1, R + 1))
    S[0, 0], S[0, 1:], S[1:, 0] = s_00, s0r, s0r
    S[1:, 1:] = np.diag(d) - C.T @ C
    return v, D, s_00, s0r, d, C, S


def _dense_coupled(t, v, Sinv):
    """sum over the pair's cells c' of v_c' S^-1[r_c', j], per cell (a, j)."""
    a, r = t.cell_pair, t.cell_reader
    out = np.empty(a.size)
    for K, rk in pair_slabs(a, r, t.n_pairs):
        out[K] = np.einsum("pij,pj->pi", Sinv[1:, 1:][rk[:, :, None], rk[:, None, :]], v[K])
    return out


def test_block_cg_solves_every_column():
    rng = np.random.default_rng(0)
    G = rng.normal(size=(60, 60))
    M = G @ G.T + 60 * np.eye(60)
    B = rng.normal(size=(60, 5))
    X, converged = block_cg(lambda Y: M @ Y, B, (1 / np.diag(M))[:, None], tol=1e-12)
    assert converged
    np.testing.assert_allclose(X, np.linalg.solve(M, B), rtol=0, atol=1e-10)
    _, converged = block_cg(lambda Y: M @ Y, B, (1 / np.diag(M))[:, None], tol=1e-12, max_iter=2)
    assert not converged


def test_reader_schur_solve_equals_a_direct_solve():
    t = _cell()
    v, D, s_00, s0r, d, C, S = _block_quantities(t)
    B = np.random.default_rng(1).normal(size=(t.n_readers, 3))
    X, converged = reader_schur_solve(sp.csr_matrix(C), d, B)
    assert converged
    np.testing.assert_allclose(X, np.linalg.solve(S[1:, 1:], B), rtol=0, atol=1e-8)


def test_exact_parts_are_the_neumann_terms_and_the_b0_row():
    t = _cell()
    v, D, s_00, s0r, d, C, S = _block_quantities(t)
    inverse = ReaderBlockInverse(t, v, D, s_00, s0r, d)
    assert inverse.reason == ""
    Sinv = np.linalg.inv(S)
    np.testing.assert_allclose(inverse.s00, Sinv[0, 0], rtol=1e-8)
    np.testing.assert_allclose(inverse.s0, Sinv[0, 1:], rtol=0, atol=1e-9 * np.abs(Sinv[0, 1:]).max())
    T1 = np.diag(1 / d)
    y = np.linalg.solve(S[1:, 1:], s0r)
    sigma = s_00 - s0r @ y
    exact = np.zeros_like(S)
    exact[1:, 1:] = T1 + T1 @ (C.T @ C) @ T1 + np.outer(y, y) / sigma
    np.testing.assert_allclose(inverse.base_diagonal, np.diag(exact)[1:], rtol=1e-9)
    np.testing.assert_allclose(inverse.base_coupled, _dense_coupled(t, v, exact), rtol=1e-9)


@pytest.mark.slow
def test_the_estimate_converges_to_the_dense_inverse():
    """Unbiased: the error shrinks like 1 / sqrt(probes), and with 4,096 probes the entries are
    within 1% of the largest (the remainder's rows are small next to the exact parts)."""
    t = _cell()
    v, D, s_00, s0r, d, C, S = _block_quantities(t)
    inverse = ReaderBlockInverse(t, v, D, s_00, s0r, d)
    Sinv = np.linalg.inv(S)
    true_diag, true_coupled = np.diag(Sinv)[1:], _dense_coupled(t, v, Sinv)
    errors = []
    for probes in (64, 4096):
        diag, coupled = inverse.entries([inverse.probe(probes, batch=7)])
        errors.append((np.abs(diag - true_diag).max(), np.abs(coupled - true_coupled).max()))
    assert errors[1][0] < errors[0][0] / 3 and errors[1][1] < errors[0][1] / 3
    assert errors[1][0] < 0.01 * true_diag.max() and errors[1][1] < 0.01 * np.abs(true_coupled).max()
    # the exact parts alone are further off than the estimate: the probes carry information
    base_err = np.abs(inverse.base_coupled - true_coupled).max()
    assert errors[1][1] < base_err / 3


@pytest.mark.parametrize(
    "shape",
    [(3000, 300, 4, 1, 1.5, 1.0), (1500, 300, 10, 2, 0.5, 0.5), (2000, 200, 20, 3, 1.0, 2.0)],
)
@pytest.mark.slow
def test_stochastic_one_step_against_the_dense_one_step(shape, monkeypatch):
    """Forced on cells the dense path can check: the stochastic one-step's error is within 3x its own
    Monte-Carlo estimate and within 10% of the largest shift (mostly far less: docs/uncertainty.md)."""
    n_pairs, n_readers, per_pair, seed, sd_p, sd_r = shape
    t = _cell(n_pairs, n_readers, per_pair, seed, sd_p, sd_r)
    b0 = 0.3
    bp, br = one_step.conditional_modes(t, b0, sd_p, sd_r)
    dense = one_step.one_step_without_readers(t, b0, sd_p, sd_r, bp, br)
    monkeypatch.setattr(one_step, "STOCHASTIC_MIN_READERS", 0)
    est = one_step.one_step_without_readers(t, b0, sd_p, sd_r, bp, br)
    again = one_step.one_step_without_readers(t, b0, sd_p, sd_r, bp, br)
    assert dense.probes == 0 and est.probes >= 128 and est.reason == ""
    np.testing.assert_array_equal(est.b0_without, again.b0_without)  # seeded: the same bits every run
    largest = np.abs(dense.b0_without - b0).max()
    error = np.abs(est.b0_without - dense.b0_without).max()
    assert error <= 3 * est.mc_error + 1e-12 * largest
    assert error <= 0.10 * largest
    assert est.mc_error <= one_step.STOCHASTIC_TOLERANCE * largest or est.probes == one_step.MAX_PROBES


def test_iterative_conditional_modes_equal_the_dense_ones(monkeypatch):
    t = _cell(600, 150, 8, 5)
    args = (t, 0.2, 1.2, 0.8)
    monkeypatch.setattr(one_step, "DENSE_MAX_CELLS", 0)
    dense = one_step.conditional_modes(*args)
    monkeypatch.setattr(one_step, "STOCHASTIC_MIN_READERS", 0)
    iterative = one_step.conditional_modes(*args)
    for x, y in zip(dense, iterative):
        assert np.any(x != 0)
        np.testing.assert_allclose(y, x, rtol=0, atol=1e-9)


def _mixed_cell(seed=11):
    """Pairs read by 1 to 7 readers (a cell of uneven degrees)."""
    votes = _design(500, 120, 7, seed, sd_pair=1.0, sd_reader=1.0)
    rng = np.random.default_rng(seed)
    keep = rng.random(len(votes)) < rng.uniform(0.15, 1.0, 500)[np.repeat(np.arange(500), 7)]
    return cell_tables(votes[keep], ("matchup", "criterion"))[0]


@pytest.mark.parametrize("neumann", [True, False])
def test_exact_parts_on_uneven_pairs_and_past_the_lookup_cap(neumann, monkeypatch):
    """Pairs of 1-7 readers; past NEUMANN_MAX_ENTRIES the exact part is T1 + diag(T1 A T1)."""
    import judge_transfer_audit.statistics.uncertainty.stochastic_inverse as module

    if not neumann:
        monkeypatch.setattr(module, "NEUMANN_MAX_ENTRIES", 0)
    t = _mixed_cell()
    degrees = np.bincount(t.cell_pair)
    assert degrees.min() == 1 and degrees.max() == 7
    v, D, s_00, s0r, d, C, S = _block_quantities(t)
    inverse = ReaderBlockInverse(t, v, D, s_00, s0r, d)
    assert inverse.neumann == neumann
    T1 = np.diag(1 / d)
    A = C.T @ C
    T2 = T1 @ A @ T1 if neumann else np.diag(np.diag(A) / d**2)
    y = np.linalg.solve(S[1:, 1:], s0r)
    exact = np.zeros_like(S)
    exact[1:, 1:] = T1 + T2 + np.outer(y, y) / (s_00 - s0r @ y)
    np.testing.assert_allclose(inverse.base_diagonal, np.diag(exact)[1:], rtol=1e-9)
    np.testing.assert_allclose(inverse.base_coupled, _dense_coupled(t, v, exact), rtol=1e-9, atol=1e-15)
    # and the estimate around either exact part converges to the dense inverse
    Sinv = np.linalg.inv(S)
    diag, coupled = inverse.entries([inverse.probe(4096, batch=0)])
    assert np.abs(diag - np.diag(Sinv)[1:]).max() < 0.01 * np.diag(Sinv).max()
    true_coupled = _dense_coupled(t, v, Sinv)
    assert np.abs(coupled - true_coupled).max() < 0.02 * np.abs(true_coupled).max()


@pytest.mark.parametrize("zero", ["pair", "reader"])
def test_a_variance_at_zero_gives_the_dense_one_step(zero, monkeypatch):
    """A fit with an SD at exactly 0 has no coupling (nothing on A's pattern): the stochastic path
    must not look entries up that are not stored, and equals the dense path."""
    t = _cell(300, 60, 5, 1)
    sd_p, sd_r = (0.0, 0.8) if zero == "pair" else (0.8, 0.0)
    bp, br = one_step.conditional_modes(t, 0.3, sd_p, sd_r)
    dense = one_step.one_step_without_readers(t, 0.3, sd_p, sd_r, bp, br)
    monkeypatch.setattr(one_step, "STOCHASTIC_MIN_READERS", 0)
    est = one_step.one_step_without_readers(t, 0.3, sd_p, sd_r, bp, br)
    assert est.reason == "" and est.probes == 128
    np.testing.assert_allclose(est.b0_without, dense.b0_without, rtol=0, atol=1e-12)


@pytest.mark.slow
def test_the_probes_double_until_the_error_is_small_and_a_failed_half_counts_as_large(monkeypatch):
    t = _cell(2000, 200, 20, 3, 1.0, 2.0)
    bp, br = one_step.conditional_modes(t, 0.3, 1.0, 2.0)
    monkeypatch.setattr(one_step, "STOCHASTIC_MIN_READERS", 0)
    est = one_step.one_step_without_readers(t, 0.3, 1.0, 2.0, bp, br)
    assert est.probes > 128  # this cell needs more than the first 128
    # a half whose step fails (as a noisy one can) must not read as "no error": the probes double
    easy = _cell(1500, 300, 10, 2, 0.5, 0.5)
    ebp, ebr = one_step.conditional_modes(easy, 0.3, 0.5, 0.5)
    assert one_step.one_step_without_readers(easy, 0.3, 0.5, 0.5, ebp, ebr).probes == 128
    real = one_step._newton_step
    calls = []

    def failing_first_half(*args):
        calls.append(1)
        out = real(*args)
        if len(calls) % 3 == 2:  # the order is whole, first half, second half
            return one_step.OneStep(np.full_like(out.b0_without, np.nan), "a reader's votes carry all the weight")
        return out

    monkeypatch.setattr(one_step, "_newton_step", failing_first_half)
    failed = one_step.one_step_without_readers(easy, 0.3, 0.5, 0.5, ebp, ebr)
    assert failed.probes == one_step.MAX_PROBES and failed.mc_error == np.inf and failed.reason == ""


@pytest.mark.slow
def test_iterative_conditional_modes_on_few_pairs_and_many_readers(monkeypatch):
    """Readers above the threshold with few pairs (pairs x readers under DENSE_MAX_CELLS) still take
    the conjugate gradients, not a dense readers x readers factorisation."""
    import scipy.linalg

    t = _cell(3, 400, 300, 2)
    assert t.n_pairs * t.n_readers <= one_step.DENSE_MAX_CELLS
    args = (t, 0.2, 0.9, 0.7)
    dense = one_step.conditional_modes(*args)
    monkeypatch.setattr(one_step, "STOCHASTIC_MIN_READERS", 100)

    def no_dense(*a, **k):
        raise AssertionError("a dense factorisation on the iterative path")

    monkeypatch.setattr(scipy.linalg, "cho_factor", no_dense)
    iterative = one_step.conditional_modes(*args)
    for x, y in zip(dense, iterative):
        np.testing.assert_allclose(y, x, rtol=0, atol=1e-9)
