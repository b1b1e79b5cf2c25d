"""Seeded arena designs for the arena-rank reference (run from this directory).

Every pair is one random matchup read by one reader (the Chatbot-Arena shape), the reader drawn with
unequal weights so some readers cast many votes; ``logit P(a) = s_a - s_b + v_reader (+ gamma if a
shown first)``.

Case "plain": 8 systems, 3,000 votes, 150 readers, no ties, no reader effect.
Case "ties_readers": 12 systems, 6,000 votes, 400 readers (Zipf-like vote counts), reader sd 0.6,
  12% ties, 10 of the 66 matchups never played.
Case "position": 6 systems, 4,000 votes, 250 readers, position effect 0.3 for the system shown first,
  8% ties.
Writes <case>.csv: pair_id, reader_id, model_a, model_b, winner (model_a, model_b or tie), shown_first.
"""

import numpy as np
import pandas as pd

rng = np.random.default_rng(20261207)


def simulate(k, n_votes, n_readers, sd_reader, p_tie, gamma=0.0, n_missing=0):
    names = np.array([f"m{j:02d}" for j in range(k)])
    strength = rng.normal(0.0, 0.8, k)
    matchups = [(a, b) for a in range(k) for b in range(a + 1, k)]
    drop = set(rng.choice(len(matchups), n_missing, replace=False).tolist()) if n_missing else set()
    matchups = np.array([m for j, m in enumerate(matchups) if j not in drop])
    weight = 1.0 / np.arange(1, n_readers + 1) ** 0.8
    reader = rng.choice(n_readers, n_votes, p=weight / weight.sum())
    v = rng.normal(0.0, sd_reader, n_readers)
    m = matchups[rng.integers(0, len(matchups), n_votes)]
    swap = rng.random(n_votes) < 0.5
    a = np.where(swap, m[:, 1], m[:, 0])
    b = np.where(swap, m[:, 0], m[:, 1])
    a_first = rng.random(n_votes) < 0.5
    eta = strength[a] - strength[b] + v[reader] + gamma * np.where(a_first, 1.0, -1.0)
    a_wins = rng.random(n_votes) < 1.0 / (1.0 + np.exp(-eta))
    tie = rng.random(n_votes) < p_tie
    return pd.DataFrame(
        {
            "pair_id": [f"p{i:05d}" for i in range(n_votes)],
            "reader_id": [f"r{r:03d}" for r in reader],
            "model_a": names[a],
            "model_b": names[b],
            "winner": np.where(tie, "tie", np.where(a_wins, "model_a", "model_b")),
            "shown_first": np.where(a_first, names[a], names[b]),
        }
    )


simulate(8, 3_000, 150, 0.0, 0.0).to_csv("plain.csv", index=False)
simulate(12, 6_000, 400, 0.6, 0.12, n_missing=10).to_csv("ties_readers.csv", index=False)
simulate(6, 4_000, 250, 0.3, 0.08, gamma=0.3).to_csv("position.csv", index=False)
