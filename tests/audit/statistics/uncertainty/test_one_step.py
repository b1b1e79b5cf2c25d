"""One-step leave-one-reader-out: the algebra against a dense reference, the estimate against
exact refits, the conditional modes against the GLMM engine's."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from judge_transfer_audit.statistics.glmm import fit_crossed_glmm
from judge_transfer_audit.statistics.uncertainty._cells import cell_tables
from judge_transfer_audit.statistics.uncertainty.one_step import (
    conditional_modes,
    modes_from_fit,
    one_step_without_readers,
)


def _design(n_pairs: int, n_readers: int, per_pair: int, seed: int, b0=0.3, sd_pair=0.5, sd_reader=0.5):
    """Each pair read by ``per_pair`` distinct readers, logit P = b0 + u_pair + v_reader."""
    rng = np.random.default_rng(seed)
    readers = np.argsort(rng.random((n_pairs, n_readers)), axis=1)[:, :per_pair]
    pair = np.repeat(np.arange(n_pairs), per_pair)
    reader = readers.ravel()
    eta = b0 + rng.normal(0, sd_pair, n_pairs)[pair] + rng.normal(0, sd_reader, n_readers)[reader]
    y = (rng.random(pair.size) < expit(eta)).astype(float)
    return pd.DataFrame(
        {
            "pair_id": [f"p{i:04d}" for i in pair],
            "reader_id": [f"r{j:03d}" for j in reader],
            "y": y,
            "matchup": "m",
            "criterion": "c",
        }
    )


def _fit(table):
    y, p, r = table.vote_arrays()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return y, p, r, fit_crossed_glmm(y, {"pair": p, "reader": r})


def _dense_reference(y, p, r, full, n_pairs, n_readers):
    """The same one-step written out densely: the joint Hessian over (b0, u_pair, u_reader),
    reader j's row and column removed by conditioning, its votes by the Woodbury identity with
    the pair x pair matrix G kept on its diagonal and its intercept part (as documented)."""
    th = np.array([full.sd["pair"], full.sd["reader"]])
    b0 = full.b[0]
    bp, br = modes_from_fit(full, n_pairs, n_readers)
    mu = expit(b0 + bp[p] + br[r])
    w = mu * (1 - mu)
    q = 1 + n_pairs + n_readers
    Z = np.zeros((y.size, q))
    Z[:, 0] = 1
    Z[np.arange(y.size), 1 + p] = th[0]
    Z[np.arange(y.size), 1 + n_pairs + r] = th[1]
    H = Z.T @ (Z * w[:, None])
    H[1:, 1:] += np.eye(n_pairs + n_readers)
    Hinv = np.linalg.inv(H)
    out = []
    for j in range(n_readers):
        mine = r == j
        cj = 1 + n_pairs + j
        M = Hinv - np.outer(Hinv[:, cj], Hinv[cj, :]) / Hinv[cj, cj]
        pj = p[mine]
        idx = np.concatenate([[0], 1 + pj])
        Msub = M[np.ix_(idx, idx)]
        V = np.zeros((len(idx), len(pj)))
        V[0, :] = 1
        V[1 + np.arange(len(pj)), np.arange(len(pj))] = th[0]
        G = V.T @ Msub @ V
        G_low = Msub[0, 0] + th[0] * (Msub[0, 1:][:, None] + Msub[0, 1:][None, :])
        np.fill_diagonal(G_low, np.diag(G))
        c = (mu - y)[mine]
        t = np.linalg.solve(np.diag(1 / w[mine]) - G_low, G_low @ c)
        out.append(b0 + (Msub @ V)[0] @ (c + t))
    return np.array(out)


@pytest.mark.parametrize("shape", [(60, 12, 5, 1), (80, 20, 6, 2)])
def test_one_step_equals_its_dense_reference(shape):
    n_pairs, n_readers, per_pair, seed = shape
    t = cell_tables(_design(n_pairs, n_readers, per_pair, seed), ("matchup", "criterion"))[0]
    y, p, r, full = _fit(t)
    bp, br = modes_from_fit(full, t.n_pairs, t.n_readers)
    step = one_step_without_readers(t, full.b[0], full.sd["pair"], full.sd["reader"], bp, br)
    assert step.reason == ""
    np.testing.assert_allclose(
        step.b0_without, _dense_reference(y, p, r, full, t.n_pairs, t.n_readers), rtol=0, atol=1e-10
    )


@pytest.mark.parametrize("threshold", [10, 10**9])
def test_one_reader_per_pair_arrowhead_equals_the_dense_reference(threshold, monkeypatch):
    """Every pair read by one reader (Chatbot Arena): above DIAGONAL_MIN_READERS readers the Schur
    complement is inverted as an arrowhead in O(readers); both branches equal the dense reference."""
    import judge_transfer_audit.statistics.uncertainty.one_step as one_step

    monkeypatch.setattr(one_step, "DIAGONAL_MIN_READERS", threshold)
    t = cell_tables(_design(300, 40, 1, 6, sd_pair=0.8, sd_reader=0.9), ("matchup", "criterion"))[0]
    assert t.n_readers > 10 and np.all(np.diff(t.cell_pair) > 0)
    y, p, r, full = _fit(t)
    # the pair sd of one vote per pair is weakly identified: hold it away from 0 so both blocks matter
    full = dataclasses.replace(full, sd={"pair": 0.7, "reader": max(full.sd["reader"], 0.5)})
    bp, br = modes_from_fit(full, t.n_pairs, t.n_readers)
    step = one_step_without_readers(t, full.b[0], full.sd["pair"], full.sd["reader"], bp, br)
    assert step.reason == ""
    np.testing.assert_allclose(
        step.b0_without, _dense_reference(y, p, r, full, t.n_pairs, t.n_readers), rtol=0, atol=1e-10
    )


def test_cells_of_any_size_get_a_one_step(monkeypatch):
    """No reader cap: with one reader per pair the block is diagonal; with readers sharing pairs and
    more than STOCHASTIC_MIN_READERS readers the entries are estimated (probes > 0), below they are exact."""
    import judge_transfer_audit.statistics.uncertainty.one_step as one_step

    monkeypatch.setattr(one_step, "STOCHASTIC_MIN_READERS", 10)
    monkeypatch.setattr(one_step, "DIAGONAL_MIN_READERS", 5)
    single = cell_tables(_design(200, 30, 1, 8), ("matchup", "criterion"))[0]
    shared = cell_tables(_design(60, 30, 4, 8), ("matchup", "criterion"))[0]
    small = cell_tables(_design(60, 8, 4, 8), ("matchup", "criterion"))[0]
    assert one_step.one_reader_per_pair(single) and not one_step.one_reader_per_pair(shared)
    for t, probes in ((single, 0), (shared, 128), (small, 0)):
        step = one_step_without_readers(t, 0.1, 0.5, 0.5, np.zeros(t.n_pairs), np.zeros(t.n_readers))
        assert step.reason == "" and np.isfinite(step.b0_without).all()
        assert step.probes == probes and (step.mc_error > 0) == (probes > 0)


def test_conditional_modes_match_the_engine():
    t = cell_tables(_design(120, 25, 8, 3), ("matchup", "criterion"))[0]
    _, _, _, full = _fit(t)
    bp, br = modes_from_fit(full, t.n_pairs, t.n_readers)
    mp, mr = conditional_modes(t, full.b[0], full.sd["pair"], full.sd["reader"])
    np.testing.assert_allclose(mp, bp, atol=1e-5)
    np.testing.assert_allclose(mr, br, atol=1e-5)


# Designs of the validation in docs/uncertainty.md (benchmarks/loro_validation.py prints the
# full table); the stated tolerance: the one-step shift is within 12% of the largest exact
# shift of the cell for every reader, and the most influential reader is the same.
@pytest.mark.parametrize("stochastic", [False, True])
@pytest.mark.parametrize("shape", [(300, 30, 10, 1), (400, 60, 10, 2)])
@pytest.mark.slow
def test_one_step_shifts_are_close_to_exact_refits(shape, stochastic, monkeypatch):
    """The same tolerance holds for the stochastic entries (forced here on small cells)."""
    import judge_transfer_audit.statistics.uncertainty.one_step as one_step

    if stochastic:
        monkeypatch.setattr(one_step, "STOCHASTIC_MIN_READERS", 0)
    n_pairs, n_readers, per_pair, seed = shape
    t = cell_tables(_design(n_pairs, n_readers, per_pair, seed), ("matchup", "criterion"))[0]
    y, p, r, full = _fit(t)
    bp, br = modes_from_fit(full, t.n_pairs, t.n_readers)
    step = one_step_without_readers(t, full.b[0], full.sd["pair"], full.sd["reader"], bp, br)
    assert (step.probes > 0) == stochastic
    base = expit(full.b[0])
    exact = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for j in range(t.n_readers):
            keep = r != j
            exact.append(expit(fit_crossed_glmm(y[keep], {"pair": p[keep], "reader": r[keep]}, start=full).b[0]) - base)
    exact = np.array(exact)
    approx = expit(step.b0_without) - base
    assert np.max(np.abs(approx - exact)) <= 0.12 * np.max(np.abs(exact))
    assert np.argmax(np.abs(approx)) == np.argmax(np.abs(exact))
    assert np.corrcoef(approx, exact)[0, 1] > 0.99


def test_conditional_modes_of_one_reader_per_pair_on_the_diagonal_block(monkeypatch):
    """Above DIAGONAL_MIN_READERS readers, one reader per pair: Newton steps on the diagonal reader
    block, the same modes as the Cholesky steps and as the engine's."""
    import judge_transfer_audit.statistics.uncertainty.one_step as one_step

    t = cell_tables(_design(400, 50, 1, 7, sd_pair=0.6, sd_reader=0.9), ("matchup", "criterion"))[0]
    _, _, _, full = _fit(t)
    args = (t, full.b[0], 0.6, max(full.sd["reader"], 0.5))
    monkeypatch.setattr(one_step, "DIAGONAL_MIN_READERS", 10**9)
    dense = conditional_modes(*args)
    monkeypatch.setattr(one_step, "DIAGONAL_MIN_READERS", 10)
    diagonal = conditional_modes(*args)
    np.testing.assert_allclose(diagonal[0], dense[0], rtol=0, atol=1e-10)
    np.testing.assert_allclose(diagonal[1], dense[1], rtol=0, atol=1e-10)
    bp, br = modes_from_fit(full, t.n_pairs, t.n_readers)
    mp, mr = conditional_modes(t, full.b[0], full.sd["pair"], full.sd["reader"])
    np.testing.assert_allclose(mp, bp, atol=1e-5)
    np.testing.assert_allclose(mr, br, atol=1e-5)


def test_separated_fit_gives_a_reason_not_numbers():
    t = cell_tables(_design(20, 5, 3, 4).assign(y=1.0), ("matchup", "criterion"))[0]
    step = one_step_without_readers(
        t, float("inf"), float("nan"), float("nan"), np.zeros(t.n_pairs), np.zeros(t.n_readers)
    )
    assert np.isnan(step.b0_without).all() and "separation" in step.reason


@pytest.mark.parametrize("shape", [(120, 25, 8, 3), (6, 3, 3, 4)])
def test_dense_and_sparse_conditional_modes_agree(shape, monkeypatch):
    """Small cells take dense blocks, large ones sparse: the same Newton steps, the same modes."""
    import judge_transfer_audit.statistics.uncertainty.one_step as one_step

    t = cell_tables(_design(*shape), ("matchup", "criterion"))[0]
    _, _, _, full = _fit(t)
    args = (t, full.b[0], full.sd.get("pair", 0.5), full.sd.get("reader", 0.5))
    dense = one_step.conditional_modes(*args)
    monkeypatch.setattr(one_step, "DENSE_MAX_CELLS", 0)
    sparse = one_step.conditional_modes(*args)
    assert t.n_pairs * t.n_readers <= 20_000
    for d, s in zip(dense, sparse):
        assert np.any(d != 0)
        np.testing.assert_allclose(d, s, rtol=0, atol=1e-12)
