"""Cells fitted in lockstep (judge_transfer_audit.statistics.glmm.lockstep) equal the per-cell engine's fits to the
last bit."""

from __future__ import annotations

import numpy as np
import pytest

from judge_transfer_audit.statistics.glmm.backends import fit_native_single_thread
from judge_transfer_audit.statistics.glmm.design import build_design
from judge_transfer_audit.statistics.glmm.fit import canonical_order
from judge_transfer_audit.statistics.glmm.lockstep import LockstepLaplace, fit_optima, lockstep_able


def _cells(seed: int, n: int, shapes=((6, 3, 1), (3, 5, 2), (8, 2, 2), (4, 4, 1), (12, 3, 3))):
    """Balanced and unbalanced crossed cells of a few shapes (so that several share one), sds sometimes 0
    (boundary fits), intercepts sometimes large (near-separation), readers sometimes more than pairs,
    votes in any order; start values given (as leave-one-reader-out's) or not."""
    rng = np.random.default_rng(seed)
    designs, starts = [], []
    for k in range(n):
        n_pairs, n_readers, repeat = shapes[k % len(shapes)]
        pair = np.repeat(np.arange(n_pairs), n_readers * repeat)
        reader = np.tile(np.repeat(np.arange(n_readers), repeat), n_pairs)
        if k % 7 == 3:  # unbalanced: drop a few votes (the shape is the vote count, so few cells share it)
            keep = rng.random(pair.size) > 0.2
            pair, reader = pair[keep], reader[keep]
        sd_pair, sd_reader = rng.choice([0.0, 0.5, 1.5, 3.0]), rng.choice([0.0, 0.3, 1.0])
        b0 = rng.choice([0.0, 0.5, 1.5, 3.0]) * rng.choice([-1, 1])
        eta = b0 + rng.normal(0, sd_pair, n_pairs)[pair] + rng.normal(0, sd_reader, n_readers)[reader]
        y = (rng.random(pair.size) < 1 / (1 + np.exp(-eta))).astype(float)
        if y.min() == y.max():
            y[0] = 1.0 - y[0]
        order = rng.permutation(y.size)
        designs.append(
            build_design(y[order], {"pair": [f"p{i}" for i in pair[order]], "reader": [f"r{i}" for i in reader[order]]})
        )
        start = None
        if k % 3:
            start = {"theta": [float(rng.uniform(0.05, 2.0)), float(rng.uniform(0.05, 2.0))], "beta": [b0 / 2]}
        starts.append(start)
    return designs, starts


def _x(result) -> np.ndarray:
    return np.array([result.sd["pair"], result.sd["reader"], result.b[0]])


@pytest.mark.slow
def test_lockstep_optima_are_the_per_cell_engines_bit_for_bit():
    designs, starts = _cells(20261203, 200)
    fits = fit_optima(designs, starts)
    assert sum(f is not None for f in fits) > 170
    n_singular = n_unconverged = 0
    for design, start, fit in zip(designs, starts, fits):
        if fit is None:
            continue
        want = fit_native_single_thread(design, start=start)
        assert np.array_equal(fit.x, _x(want)), (fit.x, _x(want))
        assert (fit.converged, fit.singular) == (want.converged, want.singular)
        n_singular += fit.singular
        n_unconverged += not fit.converged
    assert n_singular > 10  # boundary fits (probes, restarts, snapping) are covered


@pytest.mark.slow
def test_cells_of_several_shapes_and_alone_give_the_same_optima():
    designs, starts = _cells(7, 40)
    together = fit_optima(designs, starts)
    alone = [fit_optima([d, d], [s, s])[0] for d, s in zip(designs, starts)]
    for a, b in zip(together, alone):
        assert (a is None) == (b is None)
        if a is not None:
            assert np.array_equal(a.x, b.x) and (a.converged, a.singular) == (b.converged, b.singular)


def test_designs_it_does_not_reproduce_are_left_to_the_caller():
    designs, starts = _cells(3, 5)
    same = build_design(np.ones(6), {"pair": list("aabbcc"), "reader": list("xyxyxy")})  # every vote one way
    one_factor = build_design(np.array([0.0, 1, 1, 0, 1, 0]), {"pair": list("aabbcc"), "reader": list("xxxxxx")})
    slopes = build_design(
        np.array([0.0, 1, 1, 0, 1, 0]),
        {"pair": list("aabbcc"), "reader": list("xyxyxy")},
        X=np.c_[np.ones(6), np.arange(6.0)],
    )
    assert not any(lockstep_able(canonical_order(d)) for d in (same, one_factor, slopes))
    fits = fit_optima([*designs, same, one_factor, slopes], [*starts, None, None, None])
    assert fits[-3:] == [None, None, None] and all(f is not None for f in fits[:-3])


def test_a_stacked_evaluation_that_raises_sends_its_group_back(monkeypatch):
    designs, starts = _cells(5, 10, shapes=((6, 3, 1),))

    def fail(self, idx, z):
        raise np.linalg.LinAlgError("Matrix is not positive definite")

    monkeypatch.setattr(LockstepLaplace, "evaluate", fail)
    assert fit_optima(designs, starts) == [None] * 10


@pytest.mark.slow
def test_native_estimates_are_fit_natives_without_the_covariance():
    """judge_transfer_audit.statistics.glmm.fit.native_estimates: the same b, sds and flags as fit_native, bit for bit,
    on the exact (dense and sparse-coupling), forced-iterative and subsample-start paths, BLAS on one thread."""
    import dataclasses

    from judge_transfer_audit.core.threads import single_threaded_blas
    from judge_transfer_audit.statistics.glmm.fit import native_estimates

    designs, starts = _cells(11, 6)
    rng = np.random.default_rng(12)
    n_pairs, n_readers = 2_600, 20  # 52k votes: the subsample start; 2.6k x 20 levels: sparse coupling
    pair = np.repeat(np.arange(n_pairs), n_readers)
    reader = np.tile(np.arange(n_readers), n_pairs)
    eta = 0.3 + rng.normal(0, 0.5, n_pairs)[pair] + rng.normal(0, 0.4, n_readers)[reader]
    big = build_design((rng.random(pair.size) < 1 / (1 + np.exp(-eta))).astype(float), {"pair": pair, "reader": reader})
    iterative = dataclasses.replace(designs[1], factorization="iterative")
    constant = build_design(np.ones(6), {"pair": list("aabbcc"), "reader": list("xyxyxy")})
    for design, start in [*zip(designs, starts), (big, None), (iterative, None), (constant, None)]:
        with single_threaded_blas():  # as fit_native_single_thread (threads may sum in another order)
            got = native_estimates(design, start=start)
        want = fit_native_single_thread(design, start=start)
        if got is None:
            assert want.separation and design is constant
            continue
        assert got.b == want.b and got.sd == want.sd
        assert (got.converged, got.singular, got.separation) == (want.converged, want.singular, want.separation)
