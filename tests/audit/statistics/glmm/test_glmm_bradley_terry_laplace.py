"""The weighted Bradley-Terry reader-intercept deviance against the general Laplace deviance on the votes
repeated by their weights, its gradient against differences, its optimum against the general refit."""

from __future__ import annotations

import numpy as np
import pytest

from judge_transfer_audit.statistics.glmm import bradley_terry_laplace
from judge_transfer_audit.statistics.glmm.bradley_terry_laplace import (
    BradleyTerryLaplace,
    _softplus_and_mean,
    bradley_terry_reader_estimates,
)
from judge_transfer_audit.statistics.glmm.laplace import LaplaceDeviance
from judge_transfer_audit.statistics.leaderboard.bootstrap import codes_design


def _votes(seed=1, n=2_000, k=6, m=120):
    """One vote per row: a random matchup, a reader out of ``m``, strengths and reader effects normal."""
    rng = np.random.default_rng(seed)
    focal = rng.integers(0, k, n)
    other = (focal + rng.integers(1, k, n)) % k
    readers = rng.integers(0, m, n)
    eta = rng.normal(0, 0.5, k)[focal] - rng.normal(0, 0.5, k)[other] + rng.normal(0, 0.7, m)[readers]
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    weight = np.bincount(rng.integers(0, n, n), minlength=n).astype(float)  # a bootstrap's draws
    return y, focal, other, readers, weight, k, m


@pytest.mark.parametrize("theta, shift", [(0.6, 0.0), (0.05, 0.3), (1.7, -0.8), (0.0, 0.2)])
def test_deviance_and_gradient_equal_the_general_deviance_on_repeated_votes(theta, shift):
    y, focal, other, readers, weight, k, m = _votes()
    rows = np.repeat(np.arange(len(y)), weight.astype(int))
    general = LaplaceDeviance(y[rows], codes_design(focal, other, k)[rows], [readers[rows]], [m])
    keep = weight > 0
    ours = BradleyTerryLaplace(y[keep], focal[keep], other[keep], readers[keep], weight[keep], k, m)
    beta = shift + np.linspace(-0.5, 0.5, k - 1)
    expected = general(np.array([theta]), beta)
    assert ours(np.array([theta]), beta) == pytest.approx(expected, rel=1e-12)
    np.testing.assert_allclose(ours.gradient(), general.gradient(), rtol=1e-9, atol=1e-8)


def test_softplus_and_mean_equal_their_definitions_bit_for_bit():
    """The mean without a choice by sign equals ``exp(-|eta|) / (1 + exp(-|eta|))`` or ``1 / (1 + exp(-|eta|))``
    as the sign picks, to the last bit, at signed zeros, infinities and extremes too."""
    eta = np.concatenate(
        [np.random.default_rng(0).normal(0, 8, 10_000), [0.0, -0.0, np.inf, -np.inf, 700.0, -700.0, 1e-300, -1e-300]]
    )
    e = np.exp(-np.abs(eta))
    inv = 1.0 / (1.0 + e)
    softplus, mu = _softplus_and_mean(eta)
    np.testing.assert_array_equal(mu, np.where(eta >= 0.0, inv, e * inv))
    np.testing.assert_array_equal(softplus, np.maximum(eta, 0.0) + np.log1p(e))


def test_deviance_and_gradient_do_not_depend_on_the_block_size(monkeypatch):
    """Votes evaluated a block at a time, or all at once: the same deviance and gradient to the last bit."""
    y, focal, other, readers, weight, k, m = _votes(seed=2)
    x = np.concatenate([[0.9], np.linspace(-0.4, 0.6, k - 1)])
    out = []
    for block in (len(y), 7, 256):
        monkeypatch.setattr(bradley_terry_laplace, "BLOCK", block)
        lap = BradleyTerryLaplace(y, focal, other, readers, weight, k, m)
        out.append([lap.fun_grad(z) for z in (x, x + 0.05, x - 0.3)])
    for other_blocks in out[1:]:
        for (f0, g0), (f1, g1) in zip(out[0], other_blocks):
            assert f1 == f0
            np.testing.assert_array_equal(g1, g0)


def test_gradient_matches_central_differences():
    y, focal, other, readers, weight, k, m = _votes(seed=3)
    lap = BradleyTerryLaplace(y, focal, other, readers, weight, k, m)
    x = np.concatenate([[0.8], np.linspace(-0.4, 0.6, k - 1)])
    lap.fun_grad(x)
    analytic = lap.gradient()
    h = 1e-5
    numeric = np.array([(lap.fun_grad(x + h * e)[0] - lap.fun_grad(x - h * e)[0]) / (2 * h) for e in np.eye(x.size)])
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-4)


def test_the_modes_do_not_depend_on_where_their_search_starts():
    """Warm-started from the previous call's modes or from zero: the same deviance."""
    y, focal, other, readers, weight, k, m = _votes(seed=4)
    x = np.concatenate([[0.7], np.linspace(-0.3, 0.3, k - 1)])
    warm = BradleyTerryLaplace(y, focal, other, readers, weight, k, m)
    warm(np.array([1.5]), np.zeros(k - 1))
    cold = BradleyTerryLaplace(y, focal, other, readers, weight, k, m)
    assert warm(x[:1], x[1:]) == pytest.approx(cold(x[:1], x[1:]), rel=1e-13)


def test_optimum_equals_the_general_fit_of_the_repeated_votes():
    """The estimates of the same optimiser from the same start: the general GLMM engine on the repeated
    votes (:func:`judge_transfer_audit.statistics.glmm.fit.native_estimates`) and this deviance on the weighted ones."""
    from judge_transfer_audit.statistics.glmm.design import build_design
    from judge_transfer_audit.statistics.glmm.fit import native_estimates

    y, focal, other, readers, weight, k, m = _votes(seed=5, n=3_000)
    rows = np.repeat(np.arange(len(y)), weight.astype(int))
    names = [f"s{j}" for j in range(1, k)]
    design = build_design(y[rows], {"reader": readers[rows]}, codes_design(focal, other, k)[rows], names)
    start = {"theta": [0.5], "beta": np.zeros(k - 1)}
    general = native_estimates(design, start=start)
    keep = weight > 0
    lap = BradleyTerryLaplace(y[keep], focal[keep], other[keep], readers[keep], weight[keep], k, m)
    x = bradley_terry_reader_estimates(lap, np.concatenate([[0.5], np.zeros(k - 1)]))
    np.testing.assert_allclose(x[1:], general.b, atol=1e-8)
    assert x[0] == pytest.approx(general.sd["reader"], abs=1e-8)
