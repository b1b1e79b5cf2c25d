"""Writes votes.csv and judge.csv for the judge-agreement references (seeded; run from this directory).

Three cases: 5 readers with ties and a few missing votes; 3 readers, unbalanced, judge ties
and missing verdicts; 7 readers, forced choice. Categories: 0 other, 1 focal, 2 tie.
"""

import numpy as np
import pandas as pd

rng = np.random.default_rng(20261201)
votes, judge = [], []
for case, (n_units, n_readers, p_tie, p_missing) in enumerate(
    [(60, 5, 0.1, 0.15), (45, 3, 0.15, 0.3), (80, 7, 0.0, 0.0)]
):
    truth = rng.random(n_units) < 0.6
    for u in range(n_units):
        for r in range(n_readers):
            if rng.random() < p_missing:
                continue
            if rng.random() < p_tie:
                cat = 2
            else:
                cat = int(truth[u]) if rng.random() < 0.75 else int(not truth[u])
            votes.append(dict(case=case, unit=f"u{u:03d}", reader=f"r{r}", category=cat))
        roll = rng.random()
        jcat = (
            -1
            if (case == 1 and roll < 0.08)
            else (2 if (case == 1 and roll < 0.16) else (int(truth[u]) if rng.random() < 0.7 else int(not truth[u])))
        )
        judge.append(dict(case=case, unit=f"u{u:03d}", judge=jcat))
pd.DataFrame(votes).to_csv("votes.csv", index=False)
pd.DataFrame(judge).to_csv("judge.csv", index=False)
