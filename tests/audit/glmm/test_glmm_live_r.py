"""Live comparison with lme4::glmer through Rscript (marker ``r``; CI installs R)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from audit.glmm import fit_crossed_glmm
from audit.glmm.rscript import rscript_available, run_glmer

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
