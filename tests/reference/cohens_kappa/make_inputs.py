"""Writes the label vectors compared by make_reference.R (criterion vs overall votes)."""

import numpy as np
import pandas as pd

rng = np.random.default_rng(7)
rows = []
for case in range(6):
    n = 30 + 10 * case
    a = rng.choice(["focal", "other", "tie"], n, p=[0.45, 0.45, 0.1] if case % 2 else [0.5, 0.5, 0.0])
    agree = rng.random(n) < 0.3 + 0.1 * case
    b = np.where(agree, a, rng.choice(["focal", "other"], n))
    rows += [dict(case=case, criterion=x, overall=y) for x, y in zip(a, b)]
pd.DataFrame(rows).to_csv("labels.csv", index=False)
