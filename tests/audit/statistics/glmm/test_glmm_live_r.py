"""Live comparison with lme4::glmer through Rscript (marker ``r``; CI installs R)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.statistics.glmm import fit_crossed_glmm
from judge_transfer_audit.statistics.glmm.rscript import rscript_available, run_glmer

pytestmark = [pytest.mark.r, pytest.mark.skipif(not rscript_available(), reason="Rscript with lme4 not available")]


@pytest.mark.parametrize("seed", [11, 12])
def test_native_matches_glmer_live(seed):
    rng = np.random.default_rng(seed)
    n_pair, n_reader = 40, 6
    pair = np.repeat(np.arange(n_pair), n_reader)
    reader = np.tile(np.arange(n_reader), n_pair)
    x = rng.normal(size=pair.size)
    eta = 0.3 + 0.5 * x + rng.normal(0, 0.8, n_pair)[pair] + rng.normal(0, 0.5, n_reader)[reader]
    y = (rng.random(pair.size) < 1 / (1 + np.exp(-eta))).astype(int)
    frame = pd.DataFrame({"y": y, "x": x, "pair": [f"p{i}" for i in pair], "reader": [f"r{j}" for j in reader]})
    out = run_glmer(frame, "y ~ x + (1|pair) + (1|reader)", profile=False)
    res = fit_crossed_glmm(
        y,
        {"pair": frame["pair"], "reader": frame["reader"]},
        np.column_stack([np.ones(len(x)), x]),
        ["(Intercept)", "x"],
    )
    np.testing.assert_allclose(res.b, out["fixef"], atol=2e-3)
    np.testing.assert_allclose(res.se, out["se"], atol=5e-3)
    assert res.sd["pair"] == pytest.approx(out["sd"]["pair"], abs=1e-2)
    assert res.sd["reader"] == pytest.approx(out["sd"]["reader"], abs=1e-2)
    assert res.loglik >= out["loglik"] - 1e-6


def test_iterative_path_matches_glmer_live():
    """The iterative path (forced) on a 6,000-vote cell against glmer run now (tolerances of
    docs/glmm.md: b within 0.02 SE, SE and sds within 1%, logLik within 0.5)."""
    rng = np.random.default_rng(21)
    n_pair, per, n_reader = 300, 20, 250
    reader = np.concatenate([rng.choice(n_reader, per, replace=False) for _ in range(n_pair)])
    pair = np.repeat(np.arange(n_pair), per)
    eta = 0.3 + rng.normal(0, 0.8, n_pair)[pair] + rng.normal(0, 0.5, n_reader)[reader]
    y = (rng.random(pair.size) < 1 / (1 + np.exp(-eta))).astype(int)
    frame = pd.DataFrame({"y": y, "pair": [f"p{i}" for i in pair], "reader": [f"r{j}" for j in reader]})
    out = run_glmer(frame, "y ~ 1 + (1|pair) + (1|reader)", profile=False, tol_pwrss=1e-10)
    res = fit_crossed_glmm(y, {"pair": frame["pair"], "reader": frame["reader"]}, factorization="iterative")
    assert res.factorization == "iterative"
    fixef = out["fixef"] if isinstance(out["fixef"], list) else [out["fixef"]]
    se = out["se"] if isinstance(out["se"], list) else [out["se"]]
    assert abs(res.b[0] - fixef[0]) < 0.02 * se[0]
    assert res.se[0] == pytest.approx(se[0], rel=0.01)
    assert res.sd["pair"] == pytest.approx(out["sd"]["pair"], rel=0.01)
    assert res.sd["reader"] == pytest.approx(out["sd"]["reader"], rel=0.01)
    assert abs(res.loglik - out["loglik"]) < 0.5
