"""Write the seeded input matrices (rows = targets, columns = raters) for the R references."""

import numpy as np
import pandas as pd

rng = np.random.default_rng(20261130)
inputs = {
    # Shrout & Fleiss (1979), Table 2: 6 targets x 4 judges (published ICCs .17 .29 .71 .44 .62 .91)
    "shrout_fleiss": np.array(
        [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], float
    ),
}
for name, (n, k, sd_t, sd_j, sd_e, likert) in {
    "likert_20x5": (20, 5, 0.8, 0.3, 1.0, True),
    "likert_8x16": (8, 16, 1.0, 0.5, 0.9, True),
    "continuous_40x3": (40, 3, 1.0, 0.2, 0.5, False),
    "weak_12x7": (12, 7, 0.1, 0.4, 1.0, True),
}.items():
    x = (
        3
        + rng.normal(scale=sd_t, size=(n, 1))
        + rng.normal(scale=sd_j, size=(1, k))
        + rng.normal(scale=sd_e, size=(n, k))
    )
    if likert:
        x = np.clip(np.round(x), 1, 5)
    inputs[name] = x
for name, x in inputs.items():
    pd.DataFrame(x, columns=[f"r{j + 1}" for j in range(x.shape[1])]).to_csv(f"input_{name}.csv", index=False)
