"""Writes the two synthetic reader frames used by make_reference.R (run once, then R)."""

import numpy as np
import pandas as pd

rng = np.random.default_rng(20261130)
n = 40
c1 = rng.choice([-1, 1], n)
c2 = rng.choice([-1, 0, 1], n, p=[0.45, 0.1, 0.45])
c3 = rng.choice([-1, 1], n)
overall = (c1 > 0).astype(int)  # c1 separates the overall vote completely
pd.DataFrame(dict(c1=c1, c2=c2, c3=c3, overall=overall)).to_csv("reader_separated.csv", index=False)
eta = 0.3 + 1.2 * c1 + 0.6 * c2 - 0.2 * c3
overall2 = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(int)
pd.DataFrame(dict(c1=c1, c2=c2, c3=c3, overall=overall2)).to_csv("reader_overlap.csv", index=False)
