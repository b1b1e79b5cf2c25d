"""Seeded Bradley-Terry designs for the lme4 reference (run from this directory).

Case "six": 6 systems, 10 of the 15 matchups, 25 pairs per matchup, 5 readers per pair
from a pool of 12, true strengths (1.2, 0.6, 0.2, -0.3, -0.7, -1.0), pair sd 0.5, reader sd 0.4.
Case "ties_unbalanced": 4 systems, all 6 matchups, 12-30 pairs, 2-6 readers per pair, 15% ties
(left out of the fit, as the toolkit does).
Writes <case>.csv: pair_id, reader_id, focal, other, y (1 focal, 0 other, empty = tie).
"""

import itertools

import numpy as np
import pandas as pd

rng = np.random.default_rng(20261201)


def simulate(strengths, matchups, pairs_per, readers_per, n_pool, sd_pair, sd_reader, p_tie):
    names = [f"s{j}" for j in range(len(strengths))]
    reader_effect = rng.normal(0, sd_reader, n_pool)
    rows = []
    for m, (a, b) in enumerate(matchups):
        n_pairs = pairs_per if np.isscalar(pairs_per) else int(rng.integers(*pairs_per))
        for i in range(n_pairs):
            u = rng.normal(0, sd_pair)
            n_r = readers_per if np.isscalar(readers_per) else int(rng.integers(*readers_per))
            for r in rng.choice(n_pool, n_r, replace=False):
                eta = strengths[a] - strengths[b] + u + reader_effect[r]
                y = float(rng.random() < 1 / (1 + np.exp(-eta)))
                if rng.random() < p_tie:
                    y = np.nan
                rows.append(dict(pair_id=f"m{m}p{i:02d}", reader_id=f"r{r:02d}", focal=names[a], other=names[b], y=y))
    return pd.DataFrame(rows)


six = [1.2, 0.6, 0.2, -0.3, -0.7, -1.0]
all15 = list(itertools.combinations(range(6), 2))
chosen = [all15[k] for k in sorted(rng.choice(15, 10, replace=False))]
simulate(six, chosen, 25, 5, 12, 0.5, 0.4, 0.0).to_csv("six.csv", index=False)
simulate([0.8, 0.1, -0.2, -0.7], list(itertools.combinations(range(4), 2)), (12, 31), (2, 7), 9, 0.6, 0.5, 0.15).to_csv(
    "ties_unbalanced.csv", index=False
)
