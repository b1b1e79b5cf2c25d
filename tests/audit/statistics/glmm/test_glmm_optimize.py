"""The bounded optimiser: no false boundary, and fits independent of row order."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from judge_transfer_audit.statistics.glmm import fit_crossed_glmm
from judge_transfer_audit.statistics.glmm.optimize import NEAR_ZERO, minimize_bounded
from tests.audit.statistics.glmm.reference_cases import load_case, load_output


def _even_saddle(x):
    """Even in x[0]; a local maximum along x[0] at 0 and the minimum at |x[0]| = 0.6."""
    t, b = x
    f = (t * t - 0.36) ** 2 + (b - 1.0) ** 2
    return f, np.array([4.0 * t * (t * t - 0.36), 2.0 * (b - 1.0)])


def _even_two_minima(x):
    """Even in x[0]; a local minimum at 0, a local maximum at |x[0]| = 0.4 and the global
    minimum at |x[0]| = 1 (t^2 - 3.625 t^4 + 2.0833 t^6)."""
    t, b = x
    c, d = 3.625, 2.0 / 0.96
    f = t * t - c * t**4 + d * t**6 + (b - 1.0) ** 2
    return f, np.array([2 * t - 4 * c * t**3 + 6 * d * t**5, 2.0 * (b - 1.0)])


def test_a_theta_left_at_rounding_level_is_probed_and_leaves_the_saddle():
    # the gradient at theta = 1e-18 is ~1e-18: a plain projected BFGS stops there at once
    res = minimize_bounded(_even_saddle, np.array([1e-18, 0.0]), 1)
    assert res.x[0] == pytest.approx(0.6, abs=1e-5)
    assert res.fun == pytest.approx(0.0, abs=1e-9)
    assert any(ev.improved for ev in res.boundary_log)


def test_without_probes_the_saddle_is_where_it_stops():
    res = minimize_bounded(_even_saddle, np.array([1e-18, 0.0]), 1, probe=False)
    assert res.x[0] < NEAR_ZERO and res.fun > 0.1


def test_a_restart_from_the_interior_finds_a_lower_minimum_the_probes_miss():
    # at theta = 0.05 and 0.3 the objective is above its value at 0: only the interior restart helps
    for probe_at in (0.05, 0.3):
        assert _even_two_minima(np.array([probe_at, 1.0]))[0] > _even_two_minima(np.array([0.0, 1.0]))[0]
    res = minimize_bounded(_even_two_minima, np.array([0.0, 0.0]), 1)
    assert res.x[0] == pytest.approx(1.0, abs=1e-4) and res.fun == pytest.approx(1 - 3.625 + 2.0 / 0.96, abs=1e-8)
    assert [ev.kind for ev in res.boundary_log if ev.improved] == ["interior"]
    assert minimize_bounded(_even_two_minima, np.array([0.0, 0.0]), 1, restart=False).x[0] == 0.0


def test_a_true_boundary_is_kept_and_snapped_to_exactly_zero():
    def bowl(x):  # minimum at theta = 0 (the bound), b = 1
        return x[0] ** 2 + (x[1] - 1.0) ** 2, np.array([2.0 * x[0], 2.0 * (x[1] - 1.0)])

    res = minimize_bounded(bowl, np.array([2e-4, 0.0]), 1)
    assert res.x[0] == 0.0 and res.x[1] == pytest.approx(1.0, abs=1e-6)
    assert res.boundary_log and not any(ev.improved for ev in res.boundary_log)


def test_seeded_false_boundary_case_matches_glmer():
    """tests/reference/glmm: seed 206, 41 pairs x 7 readers, a cell with a saddle at sd_pair =
    sd_reader = 4e-22 (a fit that stops there reports singular (0, 0), logLik -194.011, SE 0.120);
    glmer and this engine find sd_pair 0.658, logLik -191.211, SE 0.164."""
    y, factors, _, _, _, _ = load_case("false_boundary")
    out = load_output("false_boundary", tight=True)
    for seed in range(4):  # several row orders, including the stored one
        perm = np.arange(y.size) if seed == 0 else np.random.default_rng(seed).permutation(y.size)
        res = fit_crossed_glmm(y[perm], {k: v[perm] for k, v in factors.items()})
        assert res.loglik == pytest.approx(out["loglik"], abs=1e-4)
        assert res.sd["pair"] == pytest.approx(out["sd"]["pair"], abs=1e-3)
        assert res.se[0] == pytest.approx(out["se"][0], abs=1e-3)  # glmer: 0.16370; at the saddle 0.120
        assert res.converged and res.sd["reader"] == 0.0


def _study(seed, n_pair, sd_pair, sd_reader, b0=0.3, n_reader=7):
    rng = np.random.default_rng(seed)
    pair = np.repeat(np.arange(n_pair), n_reader)
    reader = np.tile(np.arange(n_reader), n_pair)
    eta = b0 + rng.normal(0, sd_pair, n_pair)[pair] + rng.normal(0, sd_reader, n_reader)[reader]
    y = (rng.random(eta.size) < expit(eta)).astype(float)
    return y, {"pair": np.array([f"p{i}" for i in pair]), "reader": np.array([f"r{j}" for j in reader])}


STUDIES = [
    (11, 20, 0.4, 0.2),
    (12, 60, 0.3, 0.0),
    (13, 40, 0.45, 0.3),
    (14, 20, 0.8, 0.5),
    (15, 60, 0.35, 0.1),
    (206, 41, 0.0, 0.0),
]


@pytest.mark.parametrize("study", STUDIES)
def test_shuffled_and_relabelled_rows_give_the_same_fit(study):
    y, factors = _study(*study)
    res = fit_crossed_glmm(y, factors)
    rng = np.random.default_rng(study[0] + 1000)
    for _ in range(3):
        perm = rng.permutation(y.size)
        shuffled = fit_crossed_glmm(y[perm], {k: v[perm] for k, v in factors.items()})
        assert shuffled.b == res.b and shuffled.se == res.se and shuffled.sd == res.sd  # canonical order
        # relabelling permutes the level codes, so the sums run in another order: equal to 1e-6
        relabel = {k: dict(zip(np.unique(v), rng.permutation(np.unique(v)))) for k, v in factors.items()}
        other = fit_crossed_glmm(y[perm], {k: np.array([relabel[k][s] for s in v[perm]]) for k, v in factors.items()})
        assert other.b[0] == pytest.approx(res.b[0], abs=1e-6)
        assert other.se[0] == pytest.approx(res.se[0], abs=1e-6)
        for name in factors:
            assert other.sd[name] == pytest.approx(res.sd[name], abs=1e-5)
        assert other.loglik == pytest.approx(res.loglik, abs=1e-8)
        assert other.singular == res.singular


def _boundary_study_cell(seed):
    """Cell ``seed`` of ``benchmarks/glmm.py --boundary`` (same draws, same order of rows)."""
    rng = np.random.default_rng(seed)
    n_pair, n_reader = int(rng.integers(20, 61)), 7
    b0, sd_pair, sd_reader = rng.uniform(0.2, 0.4), rng.uniform(0.3, 0.45), rng.uniform(0.0, 0.3)
    u, v = rng.normal(0, sd_pair, n_pair), rng.normal(0, sd_reader, n_reader)
    pair, reader = np.repeat(np.arange(n_pair), n_reader), np.tile(np.arange(n_reader), n_pair)
    y = (rng.random(pair.size) < expit(b0 + u[pair] + v[reader])).astype(float)
    return y, {"pair": pair, "reader": reader}


def test_a_shallow_interior_optimum_next_to_zero_is_found():
    """Study cell 783: the optimum is sd_reader = 0.027, only 1.8e-4 of logLik above sd = 0, and
    the deviance at 0.05 is already above its value at 0, so only the probe at 0.01 sees it
    (before that probe the fit reported a singular (0, 0) fit)."""
    y, factors = _boundary_study_cell(783)
    res = fit_crossed_glmm(y, factors)
    at_opt = fit_crossed_glmm(y, factors, start={"theta": [1e-3, 0.027], "beta": [res.b[0]]})
    assert res.sd["reader"] == pytest.approx(0.027, abs=1e-3)
    assert res.loglik == pytest.approx(at_opt.loglik, abs=1e-8)
    assert any("false boundary" in n for n in res.notes)
