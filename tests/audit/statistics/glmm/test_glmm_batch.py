"""The stacked fit of many tiny cells (judge_transfer_audit.statistics.glmm.batch) against the per-cell engine, cell by
cell."""

from __future__ import annotations

import math

import numpy as np
import pytest

from judge_transfer_audit.statistics.glmm.backends import fit_native_single_thread
from judge_transfer_audit.statistics.glmm.batch import BATCH_MAX_VOTES, batchable, fit_many
from judge_transfer_audit.statistics.glmm.design import build_design
from judge_transfer_audit.statistics.glmm.fit import canonical_order

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


@pytest.mark.slow
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


def middle_cells(rng: np.random.Generator, n_cells: int, n_pairs: int, n_readers: int):
    """Cells of one level shape (n_pairs x n_readers) with different vote counts: every pair read by
    all readers, then a random share of the votes dropped (ties), keeping every level present."""
    designs = []
    for _ in range(n_cells):
        pair = np.repeat(np.arange(n_pairs), n_readers)
        reader = np.tile(np.arange(n_readers), n_pairs)
        keep = rng.random(pair.size) > rng.choice([0.0, 0.1, 0.3])
        keep[:n_readers] = True  # pair 0 read by every reader
        keep[np.arange(n_pairs) * n_readers] = True  # every pair read by reader 0
        sd_pair, sd_reader = rng.choice([0.0, 0.6, 1.5]), rng.choice([0.0, 0.4, 1.0])
        b0 = rng.choice([0.0, 0.8, 2.0]) * rng.choice([-1, 1])
        eta = b0 + rng.normal(0, sd_pair, n_pairs)[pair] + rng.normal(0, sd_reader, n_readers)[reader]
        y = (rng.random(pair.size) < 1 / (1 + np.exp(-eta))).astype(float)
        designs.append(
            build_design(
                y[keep], {"pair": [f"p{i:03d}" for i in pair[keep]], "reader": [f"r{i}" for i in reader[keep]]}
            )
        )
    return designs


@pytest.mark.slow
def test_middle_sized_cells_stacked_equal_the_per_cell_fits():
    from judge_transfer_audit.statistics.glmm.batch import STACK_MIN_CELLS, stackable

    rng = np.random.default_rng(20261202)
    designs = middle_cells(rng, 24, 40, 6) + middle_cells(rng, 12, 25, 9)
    assert all(stackable(canonical_order(d)) and not batchable(canonical_order(d)) for d in designs)
    assert len({d.y.size for d in designs}) > 10 and len(designs) >= STACK_MIN_CELLS  # padded, not one shape
    starts = [None] * 12 + [{"theta": [0.7, 0.4], "beta": [0.3]}] * 12 + [None] * 12
    got = fit_many(designs, starts=starts)
    n_singular = 0
    for design, start, result in zip(designs, starts, got):
        want = fit_native_single_thread(design, start=start)
        for field in ("b", "se", "wald_low", "wald_high"):
            assert all(_close(a, b) for a, b in zip(getattr(want, field), getattr(result, field))), field
        for name in want.sd:
            assert _close(want.sd[name], result.sd[name]), name
        assert abs(want.loglik - result.loglik) <= 1e-9
        assert (want.singular, want.converged, want.factorization, want.notes) == (
            result.singular,
            result.converged,
            result.factorization,
            result.notes,
        )
        n_singular += want.singular
    assert n_singular >= 3


def test_a_lone_middle_sized_cell_is_the_per_cell_fit_itself():
    rng = np.random.default_rng(3)
    (design,) = middle_cells(rng, 1, 30, 5)
    assert repr(fit_many([design])[0]) == repr(fit_native_single_thread(design))


def test_fit_many_wants_one_start_per_design():
    rng = np.random.default_rng(4)
    with pytest.raises(ValueError, match="2 start values for 1 designs"):
        fit_many(middle_cells(rng, 1, 10, 3), starts=[None, None])


def test_middle_sized_cells_with_slopes_stacked_equal_the_per_cell_fits():
    """The surface features' fits: the same votes and levels, one standardised feature each (and
    one intercept per matchup in a pooled scope), some of them separating the votes."""
    rng = np.random.default_rng(20261203)
    (base,) = middle_cells(rng, 1, 40, 6)
    y, codes, n = base.y, base.codes, base.y.size
    pair = np.asarray(base.levels[0], dtype=object)[codes[0]]
    reader = np.asarray(base.levels[1], dtype=object)[codes[1]]
    strata = (codes[0] % 2).astype(float)
    designs = []
    for k in range(10):
        z = rng.normal(size=40)[codes[0]]
        if k == 0:
            z = np.where(y == 1, 1.0, -1.0) + 0.01 * rng.normal(size=n)  # separates the votes
        X = np.column_stack([np.ones(n), z]) if k % 2 else np.column_stack([strata, 1 - strata, z])
        names = ["(Intercept)", "x"] if k % 2 else ["(Intercept: a)", "(Intercept: b)", "x"]
        designs.append(build_design(y, {"pair": pair, "reader": reader}, X, names))
    got = fit_many(designs)
    n_separated = 0
    for design, result in zip(designs, got):
        want = fit_native_single_thread(design)
        # a separated fit's SE is a finite difference across a flat likelihood (2e6 here): its
        # rounding differs by percents, so only its estimates and flags are compared
        for field in ("b",) if want.separation else ("b", "se", "wald_low", "wald_high"):
            assert all(_close(a, b) for a, b in zip(getattr(want, field), getattr(result, field))), field
        for name in want.sd:
            assert _close(want.sd[name], result.sd[name]), name
        assert abs(want.loglik - result.loglik) <= 1e-9
        assert (want.singular, want.converged, want.separation, want.factorization, want.notes) == (
            result.singular,
            result.converged,
            result.separation,
            result.factorization,
            result.notes,
        )
        n_separated += want.separation
    assert n_separated == 1


def _bits(fit) -> tuple:
    """Every figure of a fit, as exact values (for byte-identity checks)."""
    modes = tuple((k, tuple(sorted(v.items()))) for k, v in sorted(fit.conditional_modes.items()))
    return (
        tuple(np.asarray(fit.b).tolist()),
        tuple(np.asarray(fit.se).tolist()),
        tuple(sorted(fit.sd.items())),
        fit.loglik,
        fit.singular,
        fit.converged,
        fit.separation,
        modes,
        tuple(fit.notes),
    )


@pytest.mark.slow
def test_a_tiny_cells_stacked_fit_does_not_depend_on_its_stack_companions():
    """Each tiny cell's stacked fit keeps its own state (PIRLS steps, halvings, optimiser), so the
    same cell fitted with any other cells, or alone, gives the same bits: the fits can be split into
    chunks (over workers) without moving a digit. Cells with ties removed, one reader, all votes one
    way (separation: fitted apart) included."""
    rng = np.random.default_rng(20261203)
    designs = [random_cell(rng) for _ in range(120)]
    one_reader = build_design(np.array([1.0, 0.0, 1.0, 1.0]), {"pair": ["a", "a", "b", "c"], "reader": ["r"] * 4})
    separated = build_design(np.ones(6), {"pair": ["a", "b", "c"] * 2, "reader": ["r", "s"] * 3})
    designs += [one_reader, separated]
    whole = [_bits(f) for f in fit_many(designs)]
    halves = [_bits(f) for f in fit_many(designs[::2])], [_bits(f) for f in fit_many(designs[1::2])]
    assert whole[::2] == halves[0] and whole[1::2] == halves[1]
    alone = [_bits(fit_many([d])[0]) for d in designs[:40]]
    assert whole[:40] == alone
