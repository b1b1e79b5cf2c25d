"""Small simulated vote frames shaped like the deployment fixture (pairs x readers per cell)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest


def make_votes(
    seed: int = 0,
    *,
    n_matchups: int = 1,
    n_criteria: int = 1,
    n_pairs: int = 20,
    n_readers: int = 7,
    b0: float = 0.3,
    sd_pair: float = 0.4,
    sd_reader: float = 0.6,
    tie_prob: float = 0.0,
) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    v = rng.normal(0, sd_reader, n_readers)
    for m in range(n_matchups):
        u = rng.normal(0, sd_pair, n_pairs)
        for c in range(n_criteria):
            p = 1 / (1 + np.exp(-(b0 + u[:, None] + v[None, :])))
            y = (rng.random(p.shape) < p).astype(float)
            y[rng.random(p.shape) < tie_prob] = np.nan
            for i in range(n_pairs):
                for r in range(n_readers):
                    rows.append(
                        {
                            "pair_id": f"m{m}-p{i:02d}",
                            "reader_id": f"r{r}",
                            "matchup": f"m{m}",
                            "criterion": f"c{c}",
                            "focal": "F",
                            "other": "O",
                            "choice": "tie" if np.isnan(y[i, r]) else ("F" if y[i, r] else "O"),
                            "y": y[i, r],
                        }
                    )
    return pd.DataFrame(rows)


@pytest.fixture
def votes_small() -> pd.DataFrame:
    return make_votes(3, n_pairs=8, n_readers=5)


@pytest.fixture
def votes_grid() -> pd.DataFrame:
    return make_votes(5, n_matchups=2, n_criteria=3, n_pairs=12, n_readers=6, tie_prob=0.05)
