"""The iterative Laplace path (audit/statistics/glmm/iterative.py): the same deviance, gradient and fit as
the exact path to documented tolerances, and the cost rule that chooses it."""

from __future__ import annotations

import numpy as np
import pytest

from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.statistics.glmm import fit_crossed_glmm
from judge_transfer_audit.statistics.glmm.iterative import ITERATIVE_MIN_LEVELS, IterativeLaplace, use_iterative
from judge_transfer_audit.statistics.glmm.laplace import LaplaceDeviance


def _cell(n_votes, n_pair, n_reader, seed, n_other=0):
    """Each pair read by n_votes / n_pair distinct readers; sd 0.8 (pair), 0.5 (reader)."""
    rng = np.random.default_rng(seed)
    per = n_votes // n_pair
    reader = np.concatenate([rng.choice(n_reader, per, replace=False) for _ in range(n_pair)])
    pair = np.repeat(np.arange(n_pair), per)
    eta = 0.3 + rng.normal(0, 0.8, n_pair)[pair] + rng.normal(0, 0.5, n_reader)[reader]
    codes = [pair, reader]
    if n_other:
        other = rng.integers(0, n_other, pair.size)
        eta = eta + rng.normal(0, 0.3, n_other)[other]
        codes.append(other)
    y = (rng.random(pair.size) < 1 / (1 + np.exp(-eta))).astype(float)
    codes = [np.unique(c, return_inverse=True)[1] for c in codes]
    return y, codes, [int(c.max()) + 1 for c in codes]


# a third factor with 12 levels of ~500 votes each couples every reader: its trace estimates are
# noisier at the default probe count, so the formula is checked there with more probes
@pytest.mark.parametrize("n_other, n_probes", [(0, 48), (12, 400)])
@pytest.mark.slow
def test_deviance_modes_and_gradient_match_the_exact_path(n_other, n_probes):
    y, codes, levels = _cell(6000, 300, 200, seed=1, n_other=n_other)
    X = np.column_stack([np.ones(y.size), np.random.default_rng(2).normal(size=y.size)])
    theta, beta = np.array([0.8, 0.5, 0.3][: len(codes)]), np.array([0.3, 0.1])
    exact = LaplaceDeviance(y, X, codes, levels, factorization="dense")
    it = IterativeLaplace(y, X, codes, levels, n_probes=n_probes)
    d_exact, d_it = exact(theta, beta), it(theta, beta)
    # the modes solve the same equations (CG to 1e-10)
    np.testing.assert_allclose(it.state["u"], exact.state["u"], atol=1e-7)
    # the only approximation is the SLQ log-determinant of the reader block
    assert it.exact_logdet_check() == pytest.approx(exact.state["factor"]["logdet"], abs=1e-6)
    assert abs(d_it - d_exact) < 0.5
    g_exact, g_it = exact.gradient(), it.gradient()
    np.testing.assert_allclose(g_it, g_exact, rtol=0.02, atol=0.3)


def test_objective_is_deterministic_with_common_random_numbers():
    y, codes, levels = _cell(4000, 200, 150, seed=3)
    X = np.ones((y.size, 1))
    a, b = IterativeLaplace(y, X, codes, levels), IterativeLaplace(y, X, codes, levels)
    assert a([0.7, 0.4], [0.2]) == b([0.7, 0.4], [0.2])
    # smooth in theta: a central second difference is small (no probe redraw between calls)
    h = 1e-4
    f0, fp, fm = a([0.7, 0.4], [0.2]), a([0.7 + h, 0.4], [0.2]), a([0.7 - h, 0.4], [0.2])
    assert abs(fp - 2 * f0 + fm) / h**2 < 1e4
    c = IterativeLaplace(y, X, codes, levels, seed=99)
    assert c([0.7, 0.4], [0.2]) != a([0.7, 0.4], [0.2])


def test_fit_matches_the_exact_fit_within_the_documented_tolerance():
    # docs/glmm.md "Accuracy of the iterative path": |delta b| < 0.02 SE, sds and SE within 1%
    y, codes, _ = _cell(20000, 1000, 500, seed=20261)
    factors = {"pair": codes[0], "reader": codes[1]}
    exact = fit_crossed_glmm(y, factors, factorization="dense")
    it = fit_crossed_glmm(y, factors, factorization="iterative")
    assert it.factorization == "iterative" and exact.factorization == "dense"
    assert any(n.startswith("iterative path") for n in it.notes)
    assert it.converged
    assert abs(it.b[0] - exact.b[0]) < 0.02 * exact.se[0]
    assert it.se[0] == pytest.approx(exact.se[0], rel=0.01)
    for name in ("pair", "reader"):
        assert it.sd[name] == pytest.approx(exact.sd[name], rel=0.01)
    assert abs(it.loglik - exact.loglik) < 0.5


def test_cost_rule():
    from judge_transfer_audit.statistics.glmm.sparse import sksparse_available

    # 100k votes, each of 5k pairs read by 20 of 4k readers: every reader coupled with ~240 others
    _, codes, levels = _cell(100_000, 5_000, 4_000, seed=4)
    choice = use_iterative(codes, levels, "auto")
    assert choice is not None and choice.path == "iterative" and choice.m == 4000
    assert "coupled readers per reader" in choice.reason
    assert use_iterative(codes, levels, "dense") is None
    assert use_iterative(codes, levels, "sparse") is None
    # the same votes over 1k readers: an exact factorisation is cheaper
    _, codes1k, levels1k = _cell(100_000, 5_000, 1_000, seed=4)
    assert use_iterative(codes1k, levels1k, "auto") is None
    assert use_iterative(codes1k, levels1k, "iterative").reason == "forced"
    # crowd shape, two votes per pair: a sparse factor, left to the exact rule when CHOLMOD is there
    _, crowd, crowd_levels = _cell(20_000, 10_000, 3_000, seed=5)
    choice = use_iterative(crowd, crowd_levels, "auto")
    assert (choice is None) == sksparse_available()
    assert use_iterative(codes[:1], levels[:1], "iterative") is None  # one factor: nothing to iterate on
    assert ITERATIVE_MIN_LEVELS == 1500


def test_unknown_factorization_is_an_input_error():
    with pytest.raises(InputError, match="iterative"):
        fit_crossed_glmm([0, 1, 1, 0], {"pair": [0, 0, 1, 1], "reader": [0, 1, 0, 1]}, factorization="cg")


@pytest.mark.slow
def test_profile_interval_matches_the_exact_path():
    y, codes, _ = _cell(6000, 300, 200, seed=1)
    factors = {"pair": codes[0], "reader": codes[1]}
    exact = fit_crossed_glmm(y, factors, profile=True, factorization="dense")
    it = fit_crossed_glmm(y, factors, profile=True, factorization="iterative")
    tol = 0.02 * exact.se[0]
    assert abs(it.profile_low[0] - exact.profile_low[0]) < tol
    assert abs(it.profile_high[0] - exact.profile_high[0]) < tol


def test_cost_rule_second_stage_after_the_exact_analysis():
    from judge_transfer_audit.statistics.glmm.iterative import ITERATIVE_WORK, iterative_after_exact_rule
    from judge_transfer_audit.statistics.glmm.sparse import PathChoice

    n = 100_000
    # 20k pairs x 5 of 8k readers: a sparse pattern whose factor is 66% dense (benchmarks/glmm.py --fill)
    dense_choice = PathChoice("dense", "dense is cheaper", 8000, 21_111_639, 9.0e10, 8000**3 / 3)
    choice = iterative_after_exact_rule(dense_choice, n, "auto")
    assert choice.path == "iterative" and "66% dense" in choice.reason
    assert iterative_after_exact_rule(dense_choice, n, "dense") is None
    # a crowd-shaped block whose sparse factor is cheap stays exact
    cheap = PathChoice("sparse", "2% of dense", 2699, 80_399, 1.5e7, 2699**3 / 3)
    assert 10 * cheap.sparse_flops < ITERATIVE_WORK * 20_000
    assert iterative_after_exact_rule(cheap, 20_000, "auto") is None
    assert iterative_after_exact_rule(None, n, "auto") is None
