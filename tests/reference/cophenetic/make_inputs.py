"""Inputs for the clustering reference (run: python make_inputs.py; seeded).

Two reader x criterion profiles (weights-like and kappa-like) for 7 readers sharing a
built-in structure plus noise, and a 9-reader pair with weaker structure.
"""

import numpy as np
import pandas as pd

rng = np.random.default_rng(20261130)
criteria = ["authenticity", "empathy", "engagement", "emotion", "complexity"]
for name, n, noise in (("seven", 7, 0.4), ("nine", 9, 0.9)):
    base = np.where(np.arange(n)[:, None] < n // 2, [2.0, 1.5, 0.2, 0.3, 0.4], [0.2, 0.4, 1.8, 1.5, 1.6])
    readers = [f"reader{i + 1}" for i in range(n)]
    weights = base + rng.normal(scale=noise, size=base.shape)
    kappas = 0.25 * base + rng.normal(scale=noise / 4, size=base.shape)
    pd.DataFrame(weights, index=readers, columns=criteria).to_csv(f"input_{name}_weights.csv", float_format="%.17g")
    pd.DataFrame(kappas, index=readers, columns=criteria).to_csv(f"input_{name}_kappas.csv", float_format="%.17g")
