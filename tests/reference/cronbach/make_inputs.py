"""Write seeded observation x variable matrices (one with missing cells) for the R reference."""

import numpy as np
import pandas as pd

rng = np.random.default_rng(20261201)
for name, (n, p, load, miss) in {
    "questionnaire_16x15": (16, 15, 0.7, 0.0),
    "questionnaire_5x15": (5, 15, 0.9, 0.0),
    "scale_60x6": (60, 6, 0.6, 0.0),
    "scale_missing_50x5": (50, 5, 0.8, 0.08),
    "weak_30x4": (30, 4, 0.15, 0.0),
}.items():
    f = rng.normal(size=(n, 1))
    x = np.clip(np.round(3 + load * f + rng.normal(scale=0.9, size=(n, p))), 1, 5)
    x[rng.random(x.shape) < miss] = np.nan
    pd.DataFrame(x, columns=[f"q{j + 1}" for j in range(p)]).to_csv(f"input_{name}.csv", index=False)
