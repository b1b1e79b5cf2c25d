"""Seeded inputs for the alternative-annotator-test reference (run: python make_inputs.py).

Three cases in AltTest's own format (``{annotator: {instance: label}}`` and ``{judge:
{instance: label}}``): pairwise verdicts (model_a / model_b / tie) from 4 readers with missing
labels, scored by accuracy; 1-5 ratings from 3 readers, scored by negative RMSE; a small case
where some readers fall under AltTest's 30-instance minimum.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent


def pairwise(rng: np.random.Generator, n: int, readers: int, missing: float) -> tuple[dict, dict]:
    labels = np.array(["model_a", "model_b", "tie"])
    truth = rng.choice(3, size=n, p=[0.45, 0.4, 0.15])
    humans: dict = {}
    for r in range(readers):
        noisy = np.where(rng.random(n) < 0.25 + 0.05 * r, rng.choice(3, size=n), truth)
        keep = rng.random(n) >= missing
        humans[f"h{r}"] = {f"q{i}": str(labels[noisy[i]]) for i in range(n) if keep[i]}
    judges = {}
    for name, noise in (("close", 0.15), ("middle", 0.3), ("noisy", 0.5), ("coin", 1.0)):
        pred = np.where(rng.random(n) < noise, rng.choice(3, size=n), truth)
        judges[name] = {f"q{i}": str(labels[pred[i]]) for i in range(n)}
    return humans, judges


def ratings(rng: np.random.Generator, n: int, readers: int) -> tuple[dict, dict]:
    truth = rng.integers(1, 6, size=n)
    humans = {
        f"e{r}": {f"d{i}": int(np.clip(truth[i] + rng.integers(-1, 2), 1, 5)) for i in range(n)} for r in range(readers)
    }
    judges = {
        "close": {f"d{i}": int(np.clip(truth[i] + rng.integers(-1, 2), 1, 5)) for i in range(n)},
        "far": {f"d{i}": int(rng.integers(1, 6)) for i in range(n)},
    }
    return humans, judges


def main() -> None:
    rng = np.random.default_rng(20261207)
    cases = {
        "pairwise": (*pairwise(rng, 120, 4, 0.2), "accuracy", 0.2),
        "ratings": (*ratings(rng, 200, 3), "neg_rmse", 0.2),
        "small": (*pairwise(rng, 50, 5, 0.35), "accuracy", 0.1),
    }
    out = {name: {"humans": h, "judges": j, "scoring": s, "epsilon": e} for name, (h, j, s, e) in cases.items()}
    (HERE / "inputs.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
