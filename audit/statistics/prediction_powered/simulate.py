"""Seeded crossed designs for the prediction-powered estimates' validation (tests, benchmarks).

Per matchup: ``n_total`` pairs with a latent preference ``p_i = expit(b0 + u_i)``; a random
``fraction`` of them get votes from ``readers_per_pair`` of ``n_readers`` readers, each vote
``P(focal) = expit(b0 + u_i + v_r)``; the judge sees every pair and reports the readers'
majority side with probability ``quality`` (1: always, 0.5 useless) on the logit of ``p_i``
plus noise, else a coin. Returns the long votes and judge frames of the data contract.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def crossed_study(
    *,
    n_voted: int,
    fraction: float,
    n_readers: int,
    readers_per_pair: int,
    quality: float,
    b0: float = 0.4,
    sd_pair: float = 1.0,
    sd_reader: float = 0.3,
    matchups: tuple[tuple[str, str], ...] = (("alpha", "beta"),),
    criterion: str = "overall",
    rng: int | np.random.Generator | None = 0,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict[str, float]]:
    """(votes, judge, pairs, truth): pairs ``pair_id, system_a, system_b, focal``; votes
    ``pair_id, reader_id, criterion, choice``; judge verdicts
    ``pair_id, criterion, judge, choice``; truth per matchup: the population vote share V
    (the mean of ``expit(b0 + u + v)`` over pairs and readers, by quadrature)."""
    rng = np.random.default_rng(rng)
    n_total = int(round(n_voted / fraction))
    vrows, jrows, prows, truth = [], [], [], {}
    reader_effect = rng.normal(0.0, sd_reader, n_readers)
    for m, (focal, other) in enumerate(matchups):
        u = rng.normal(0.0, sd_pair, n_total)
        voted = rng.permutation(n_total)[:n_voted]
        for i in range(n_total):
            pid = f"m{m}p{i}"
            # the judge: the sign of a noisy view of the pair's preference, with probability quality
            sees = rng.uniform() < 2.0 * quality - 1.0
            lean = b0 + u[i] + rng.normal(0.0, 0.5)
            pick = focal if (lean > 0 if sees else rng.uniform() < 0.5) else other
            jrows.append((pid, criterion, "judge", pick))
            prows.append((pid, focal, other, focal))
        for i in voted:
            pid = f"m{m}p{i}"
            for r in rng.choice(n_readers, size=min(readers_per_pair, n_readers), replace=False):
                p = 1.0 / (1.0 + np.exp(-(b0 + u[i] + reader_effect[r])))
                vrows.append((pid, f"r{r}", criterion, focal if rng.uniform() < p else other))
        x, w = np.polynomial.hermite_e.hermegauss(60)
        w = w / w.sum()
        tot = np.sqrt(sd_pair**2 + sd_reader**2)
        truth[f"{focal} vs {other}"] = float(np.sum(w / (1.0 + np.exp(-(b0 + tot * x)))))
    votes = pd.DataFrame(vrows, columns=["pair_id", "reader_id", "criterion", "choice"])
    judge = pd.DataFrame(jrows, columns=["pair_id", "criterion", "judge", "choice"])
    pairs = pd.DataFrame(prows, columns=["pair_id", "system_a", "system_b", "focal"])
    return votes, judge, pairs, truth
