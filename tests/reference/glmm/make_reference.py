"""Simulate the GLMM reference inputs (seeded) and fit each with lme4::glmer via Rscript.

Run from the repository root:  python tests/reference/glmm/make_reference.py [case ...]

Writes ``inputs/<case>.csv`` (simulated here, seed per case), ``outputs/<case>.json`` (glmer with
default control) and ``outputs/<case>.tight.json`` (``tolPwrss = 1e-10``: the Laplace deviance
solved accurately), both written by ``audit/statistics/glmm/fit_glmer.R`` (the one glmer script: the
package's glmer runs use it too), ``cases.json`` (formula per case) and
``sessionInfo.txt``. Tests read only the stored files; they never need R.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
SCRIPT = ROOT / "audit" / "statistics" / "glmm" / "fit_glmer.R"
INTERCEPT = "y ~ 1 + (1|pair) + (1|reader)"


def _expit(x):
    return 1.0 / (1.0 + np.exp(-x))


def _crossed(rng, n_pair, n_reader, b0, sd_pair, sd_reader, keep=1.0, extra=None):
    pair = np.repeat(np.arange(n_pair), n_reader)
    reader = np.tile(np.arange(n_reader), n_pair)
    if keep < 1.0:
        mask = rng.random(pair.size) < keep
        pair, reader = pair[mask], reader[mask]
    eta = b0 + rng.normal(0, sd_pair, n_pair)[pair] + rng.normal(0, sd_reader, n_reader)[reader]
    frame = pd.DataFrame({"pair": [f"p{i:05d}" for i in pair], "reader": [f"r{j:04d}" for j in reader]})
    if extra is not None:
        eta = eta + extra(frame, rng)
    frame.insert(0, "y", (rng.random(eta.size) < _expit(eta)).astype(int))
    return frame


def _with_covariates(frame, rng):
    frame["x"] = rng.normal(0.0, 1.0, len(frame))
    frame["z"] = (rng.random(len(frame)) < 0.4).astype(int)
    return 0.7 * frame["x"].to_numpy() - 0.5 * frame["z"].to_numpy()


def _unbalanced(rng):
    # readers see very different numbers of pairs; some pairs have a single vote
    n_pair, n_reader = 60, 7
    rows = []
    keep = np.array([0.95, 0.9, 0.7, 0.5, 0.35, 0.2, 0.12])
    for i in range(n_pair):
        for j in range(n_reader):
            if rng.random() < keep[j] or (i % 15 == 0 and j == 0):
                rows.append((i, j))
    pair, reader = map(np.array, zip(*rows))
    eta = -0.3 + rng.normal(0, 1.0, n_pair)[pair] + rng.normal(0, 0.7, n_reader)[reader]
    return pd.DataFrame(
        {
            "y": (rng.random(eta.size) < _expit(eta)).astype(int),
            "pair": [f"p{i:05d}" for i in pair],
            "reader": [f"r{j:04d}" for j in reader],
        }
    )


def _large(rng, n_pair=2500, n_reader=100, per_pair=20):
    pair = np.repeat(np.arange(n_pair), per_pair)
    reader = np.concatenate([rng.choice(n_reader, per_pair, replace=False) for _ in range(n_pair)])
    eta = 0.3 + rng.normal(0, 0.8, n_pair)[pair] + rng.normal(0, 0.5, n_reader)[reader]
    return pd.DataFrame(
        {
            "y": (rng.random(eta.size) < _expit(eta)).astype(int),
            "pair": [f"p{i:05d}" for i in pair],
            "reader": [f"r{j:04d}" for j in reader],
        }
    )


def _separated(rng):
    frame = _crossed(rng, 20, 7, 0.0, 0.5, 0.3)
    frame["x"] = rng.normal(0.0, 1.0, len(frame))
    frame["y"] = (frame["x"] > 0).astype(int)  # complete separation by x
    return frame


def _batch_effect(frame, rng):
    batch = rng.integers(0, 5, len(frame))
    frame["batch"] = [f"b{i}" for i in batch]
    return rng.normal(0, 0.9, 5)[batch]


def _extreme(rng):
    frame = _crossed(rng, 20, 7, 0.0, 0.5, 0.5).assign(y=1)
    frame.loc[17, "y"] = 0  # one dissenting vote: nearly, but not, separated
    return frame


def _false_boundary(rng):
    # 7 readers x 20-60 pairs with a modest pair variance (b0, sds drawn as in the simulation of
    # benchmarks/glmm.py --boundary): seed 206 is a cell with a saddle at sd_pair = sd_reader =
    # 4e-22 (the deviance decreases as sd_pair grows from 0); an optimiser that stops there
    # reports a singular fit with logLik 2.8 below glmer's and an SE 27% too small.
    n_pair, n_reader = int(rng.integers(20, 61)), 7
    b0, sd_pair, sd_reader = rng.uniform(0.2, 0.4), rng.uniform(0.3, 0.45), rng.uniform(0.0, 0.3)
    u, v = rng.normal(0, sd_pair, n_pair), rng.normal(0, sd_reader, n_reader)
    pair, reader = np.repeat(np.arange(n_pair), n_reader), np.tile(np.arange(n_reader), n_pair)
    eta = b0 + u[pair] + v[reader]
    return pd.DataFrame(
        {
            "y": (rng.random(eta.size) < _expit(eta)).astype(int),
            "pair": [f"p{i:05d}" for i in pair],
            "reader": [f"r{j:04d}" for j in reader],
        }
    )


def _arena(rng, n_votes=20_000, n_pair=10_000, n_reader=3_000):
    # crowd-shaped: two votes per pair, reader activity heavy-tailed (weight 1 / (rank + 20)),
    # so ~2,700 readers vote and the reader block is large but its factor sparse (the native
    # engine takes its sparse path here)
    weight = 1.0 / (np.arange(n_reader) + 20.0)
    reader = rng.choice(n_reader, n_votes, p=weight / weight.sum())
    pair = np.repeat(np.arange(n_pair), n_votes // n_pair)
    eta = 0.3 + rng.normal(0, 0.8, n_pair)[pair] + rng.normal(0, 0.5, n_reader)[reader]
    return pd.DataFrame(
        {
            "y": (rng.random(eta.size) < _expit(eta)).astype(int),
            "pair": [f"p{i:05d}" for i in pair],
            "reader": [f"r{j:04d}" for j in reader],
        }
    )


def _one_reader_per_pair(rng, n_pair=3_000, n_reader=400):
    # Chatbot-Arena-shaped: each pair (battle) read by a single reader, reader activity
    # heavy-tailed, a covariate (a length difference): the reader block is diagonal once the
    # pairs are eliminated (the native engine's diagonal path)
    weight = 1.0 / (np.arange(n_reader) + 10.0)
    reader = rng.choice(n_reader, n_pair, p=weight / weight.sum())
    pair = np.arange(n_pair)
    x = rng.normal(0.0, 1.0, n_pair)
    eta = 0.2 + 0.6 * x + rng.normal(0, 0.8, n_pair)[pair] + rng.normal(0, 0.7, n_reader)[reader]
    return pd.DataFrame(
        {
            "y": (rng.random(eta.size) < _expit(eta)).astype(int),
            "pair": [f"p{i:05d}" for i in pair],
            "reader": [f"r{j:04d}" for j in reader],
            "x": x,
        }
    )


CASES = {
    # name: (seed, builder, formula, profile)
    "balanced_60x7": (101, lambda r: _crossed(r, 60, 7, 0.4, 0.9, 0.6), INTERCEPT, True),
    "cell_20x7": (102, lambda r: _crossed(r, 20, 7, 0.5, 0.7, 0.5), INTERCEPT, True),
    "unbalanced": (103, _unbalanced, INTERCEPT, True),
    "three_readers": (104, lambda r: _crossed(r, 40, 3, -0.4, 0.8, 0.6), INTERCEPT, True),
    "singular": (105, lambda r: _crossed(r, 30, 7, 0.3, 0.0, 0.0), INTERCEPT, True),
    "separated": (106, _separated, "y ~ x + (1|pair) + (1|reader)", False),
    "covariate": (
        112,
        lambda r: _crossed(r, 60, 7, 0.2, 0.8, 0.5, extra=_with_covariates),
        "y ~ x + z + (1|pair) + (1|reader)",
        True,
    ),
    "covariate_suboptimal": (
        107,
        lambda r: _crossed(r, 60, 7, 0.2, 0.8, 0.5, extra=_with_covariates),
        "y ~ x + z + (1|pair) + (1|reader)",
        True,
    ),
    "extreme_139of140": (111, _extreme, INTERCEPT, True),
    "three_factors": (
        108,
        lambda r: _crossed(r, 50, 7, 0.2, 0.8, 0.5, extra=_batch_effect),
        "y ~ 1 + (1|pair) + (1|reader) + (1|batch)",
        True,
    ),
    "constant": (109, lambda r: _crossed(r, 20, 7, 0.0, 0.5, 0.5).assign(y=1), INTERCEPT, False),
    "large_50k": (110, _large, INTERCEPT, True),
    "false_boundary": (206, _false_boundary, INTERCEPT, True),
    "arena_3k_readers": (113, _arena, INTERCEPT, False),
    "one_reader_per_pair": (114, _one_reader_per_pair, "y ~ x + (1|pair) + (1|reader)", True),
}


def main(names: list[str]) -> None:
    (HERE / "inputs").mkdir(exist_ok=True)
    (HERE / "outputs").mkdir(exist_ok=True)
    manifest = {}
    for name, (seed, build, formula, profile) in CASES.items():
        manifest[name] = {"seed": seed, "formula": formula, "profile": profile}
        if names and name not in names:
            continue
        frame = build(np.random.default_rng(seed))
        path = HERE / "inputs" / f"{name}.csv"
        frame.to_csv(path, index=False, float_format="%.17g")
        for suffix, tol in (("", "1e-7"), (".tight", "1e-10")):
            out = HERE / "outputs" / f"{name}{suffix}.json"
            print(f"{name}{suffix}: {len(frame)} rows, fitting with glmer (tolPwrss={tol}) ...", flush=True)
            subprocess.run(
                ["Rscript", str(SCRIPT), str(path), str(out), formula, "1" if profile else "0", tol],
                check=True,
            )
    (HERE / "cases.json").write_text(json.dumps(manifest, indent=2) + "\n")
    info = subprocess.run(
        ["Rscript", "-e", "suppressMessages(library(lme4)); library(jsonlite); sessionInfo()"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (HERE / "sessionInfo.txt").write_text(info)


if __name__ == "__main__":
    main(sys.argv[1:])
