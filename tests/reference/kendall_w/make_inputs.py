"""Write seeded objects x judges score matrices (with and without ties) for the R reference."""

import numpy as np
import pandas as pd

rng = np.random.default_rng(20261202)
for name, (n, m, likert) in {
    "continuous_10x4": (10, 4, False),
    "continuous_25x7": (25, 7, False),
    "likert_ties_15x5": (15, 5, True),
    "likert_ties_8x16": (8, 16, True),
}.items():
    x = rng.normal(size=(n, 1)) + rng.normal(scale=1.0, size=(n, m))
    if likert:
        x = np.clip(np.round(3 + x), 1, 5)
    pd.DataFrame(x, columns=[f"j{j + 1}" for j in range(m)]).to_csv(f"input_{name}.csv", index=False)
