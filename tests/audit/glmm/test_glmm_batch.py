"""The stacked fit of many tiny cells (audit.glmm.batch) against the per-cell engine, cell by cell."""

from __future__ import annotations

import math

import numpy as np
import pytest

from audit.glmm.backends import fit_native_single_thread
from audit.glmm.batch import BATCH_MAX_VOTES, batchable, fit_many
from audit.glmm.design import build_design
from audit.glmm.fit import canonical_order

TOL = 1e-6


def random_cell(rng: np.random.Generator):
    """A small crossed cell: 2-8 pairs, 2-6 readers, each pair read by 2+ readers; the sds are
    sometimes 0 (boundary fits) and the intercept sometimes large (near-separation)."""
    n_pairs, n_readers = int(rng.integers(2, 9)), int(rng.integers(2, 7))
    per_pair = int(rng.integers(2, n_readers + 1))
    pair = np.repeat(np.arange(n_pairs), per_pair)
    reader = np.concatenate([rng.choice(n_readers, per_pair, replace=False) for _ in range(n_pairs)])
    sd_pair = rng.choice([0.0, 0.5, 1.5, 3.0])
    sd_reader = rng.choice([0.0, 0.3, 1.0])
    b0 = rng.choice([0.0, 0.5, 1.5, 3.0]) * rng.choice([-1, 1])
    eta = b0 + rng.normal(0, sd_pair, n_pairs)[pair] + rng.normal(0, sd_reader, n_readers)[reader]
    y = (rng.random(pair.size) < 1 / (1 + np.exp(-eta))).astype(float)
    order = rng.permutation(y.size)  # votes in any order
    return build_design(y[order], {"pair": [f"p{i}" for i in pair[order]], "reader": [f"r{i}" for i in reader[order]]})


def _close(a: float, b: float) -> bool:
    """Equal to 1e-6 (relative beyond 1: an SE of 6.5 from a finite-difference Hessian of a fit at
    sd 25 moves by 6e-7 with the rounding of the deviance)."""
    return (math.isnan(a) and math.isnan(b)) or a == b or abs(a - b) <= TOL * max(1.0, abs(a))


def test_the_stacked_fits_equal_the_per_cell_fits_on_random_small_cells():
    rng = np.random.default_rng(20261201)
    designs = [random_cell(rng) for _ in range(400)]
    assert sum(batchable(canonical_order(d)) for d in designs) > 300  # most take the stacked path
    batched = fit_many(designs)
    n_singular = 0
    for design, got in zip(designs, batched):
        want = fit_native_single_thread(design)
        for field in ("b", "se", "wald_low", "wald_high"):
            assert all(_close(a, b) for a, b in zip(getattr(want, field), getattr(got, field))), field
        for name in want.sd:
            assert _close(want.sd[name], got.sd[name]), name
            for level, mode in want.conditional_modes[name].items():
                assert _close(mode, got.conditional_modes[name][level])
        assert abs(want.loglik - got.loglik) <= 1e-9
        assert (want.singular, want.converged, want.separation, want.factorization) == (
            got.singular,
            got.converged,
            got.separation,
            got.factorization,
        )
        assert want.notes == got.notes
        n_singular += want.singular
    assert n_singular >= 40  # boundary fits are among them


def test_cells_off_the_stacked_path_are_the_per_cell_fit_itself():
    rng = np.random.default_rng(7)
    big_pair = np.repeat(np.arange(30), 3)
    big = build_design(
        (rng.random(big_pair.size) < 0.6).astype(float),
        {"pair": big_pair, "reader": np.tile(np.arange(3), 30)},
    )
    constant = build_design(np.ones(6), {"pair": [0, 0, 1, 1, 2, 2], "reader": [0, 1, 0, 1, 0, 1]})
    assert big.y.size > BATCH_MAX_VOTES and not batchable(canonical_order(big))
    assert not batchable(canonical_order(constant))
    got = fit_many([big, constant, random_cell(rng)])
    for design, result in zip((big, constant), got):
        assert repr(result) == repr(fit_native_single_thread(design))  # repr: NaN == NaN


def test_no_designs_no_fits():
    assert fit_many([]) == []


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_shape_group_of_one_equals_its_fit(seed):
    design = random_cell(np.random.default_rng(seed))
    (got,) = fit_many([design])
    want = fit_native_single_thread(design)
    assert _close(want.b[0], got.b[0]) and _close(want.se[0], got.se[0])
