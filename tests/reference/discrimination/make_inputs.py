"""Inputs for the discrimination reference (run: python make_inputs.py; seeded).

Each file: category, score, one row per item; unequal group sizes and variances so
Welch's and the classical ANOVA differ.
"""

import numpy as np
import pandas as pd

rng = np.random.default_rng(20261130)
cases = {
    "three_unequal": [("human", 12, 3.4, 0.4), ("llm", 9, 3.0, 0.9), ("classic", 15, 3.9, 0.6)],
    "four_small": [("a", 5, 2.0, 0.3), ("b", 6, 2.4, 1.1), ("c", 4, 2.2, 0.5), ("d", 7, 3.1, 0.8)],
    "two_likert": [("x", 20, 3.0, 1.0), ("y", 25, 3.5, 1.2)],
}
for name, groups in cases.items():
    rows = []
    for cat, n, mean, sd in groups:
        values = rng.normal(mean, sd, n)
        if name == "two_likert":
            values = np.clip(np.round(values), 1, 5)
        rows += [(cat, float(v)) for v in values]
    pd.DataFrame(rows, columns=["category", "score"]).to_csv(f"input_{name}.csv", index=False, float_format="%.17g")
