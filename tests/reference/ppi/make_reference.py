"""Reference values of ppi-python (``pip install ppi-python``; the ``ppi`` test extra) for the
prediction-powered estimators on independent designs (one vote per pair, one per reader).

Run from the repository root: ``python tests/reference/ppi/make_reference.py``. Writes
``mean_inputs.csv``, ``logistic_inputs.csv`` (our seeded generator) and ``reference.json``
(ppi_py's point estimates and intervals at full precision, with its version).
"""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).parent
LEVEL = 0.95


def mean_inputs(seed: int = 20240101) -> pd.DataFrame:
    """Binary human labels on n pairs, judge predictions (1, 0, 0.5) on n + N pairs."""
    rng = np.random.default_rng(seed)
    n, N = 150, 1500
    p = rng.uniform(0.2, 0.9, n + N)
    y = (rng.uniform(size=n + N) < p).astype(float)
    f = np.where(rng.uniform(size=n + N) < 0.75, y, 1.0 - y)
    f[rng.uniform(size=n + N) < 0.1] = 0.5
    return pd.DataFrame({"labelled": np.arange(n + N) < n, "y": np.where(np.arange(n + N) < n, y, np.nan), "f": f})


def logistic_inputs(seed: int = 20240102, k: int = 5) -> pd.DataFrame:
    """Bradley-Terry comparisons of k systems: labelled votes on n pairs, judge verdicts on all."""
    rng = np.random.default_rng(seed)
    n, N = 300, 3000
    strength = rng.normal(0.0, 0.8, k)
    a = rng.integers(0, k, n + N)
    b = (a + rng.integers(1, k, n + N)) % k
    p = 1.0 / (1.0 + np.exp(-(strength[a] - strength[b])))
    y = (rng.uniform(size=n + N) < p).astype(float)
    f = np.where(rng.uniform(size=n + N) < 0.8, y, 1.0 - y)
    lab = np.arange(n + N) < n
    return pd.DataFrame({"labelled": lab, "focal": a, "other": b, "y": np.where(lab, y, np.nan), "f": f})


def design(frame: pd.DataFrame, k: int) -> np.ndarray:
    X = np.zeros((len(frame), k))
    X[np.arange(len(frame)), frame["focal"].to_numpy()] += 1.0
    X[np.arange(len(frame)), frame["other"].to_numpy()] -= 1.0
    return X[:, 1:]


def main() -> None:
    import ppi_py
    from ppi_py.ppi import _calc_lam_glm, _logistic_get_stats

    out: dict = {"ppi_python": version("ppi-python"), "level": LEVEL}
    m = mean_inputs()
    m.to_csv(HERE / "mean_inputs.csv", index=False, float_format="%.17g")
    lab = m[m["labelled"]]
    unl = m[~m["labelled"]]
    Y, Yh, Yu = lab["y"].to_numpy(), lab["f"].to_numpy(), unl["f"].to_numpy()
    for lam in (None, 0.0, 1.0, 0.5):
        key = "tuned" if lam is None else f"lam_{lam:g}"
        lo, hi = ppi_py.ppi_mean_ci(Y, Yh, Yu, alpha=1 - LEVEL, lam=lam)
        est = ppi_py.ppi_mean_pointestimate(Y, Yh, Yu, lam=lam)
        out[f"mean_{key}"] = {"estimate": float(np.squeeze(est)), "ci_low": float(lo[0]), "ci_high": float(hi[0])}
    lg = logistic_inputs()
    lg.to_csv(HERE / "logistic_inputs.csv", index=False, float_format="%.17g")
    k = 5
    L, U = lg[lg["labelled"]], lg[~lg["labelled"]]
    X, Xu = design(L, k), design(U, k)
    y, f, fu = L["y"].to_numpy(), L["f"].to_numpy(), U["f"].to_numpy()
    coef = ppi_py.ppi_logistic_pointestimate(X, y, f, Xu, fu, lam=None, optimizer_options={"ftol": 1e-15})
    # the lam ppi_logistic_pointestimate tuned: at the lam = 1 fit, then refitted with it
    theta1 = ppi_py.ppi_logistic_pointestimate(X, y, f, Xu, fu, lam=1.0)
    lam = _calc_lam_glm(*_logistic_get_stats(theta1, X, y, f, Xu, fu, np.ones(len(y)), np.ones(len(fu))), clip=True)
    lo, hi = ppi_py.ppi_logistic_ci(X, y, f, Xu, fu, alpha=1 - LEVEL, lam=lam)
    coef_lam = ppi_py.ppi_logistic_pointestimate(X, y, f, Xu, fu, lam=lam)
    out["logistic_tuned"] = {
        "lam": float(lam),
        "coef": [float(c) for c in coef],
        "coef_at_lam": [float(c) for c in coef_lam],
        "ci_low": [float(c) for c in lo],
        "ci_high": [float(c) for c in hi],
    }
    (HERE / "reference.json").write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
