"""Small synthetic vote frames for the reader analyses (built here, no data files)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

CRITERIA = ("authenticity", "empathy", "engagement", "emotion", "complexity")
MATCHUPS = (("R1", "V3"), ("G5", "G4"))


def make_votes(
    n_readers: int = 6,
    n_pairs: int = 24,
    *,
    seed: int = 0,
    weights: dict[str, dict[str, float]] | None = None,
    separated_reader: str | None = None,
    tie_share: float = 0.0,
    optional: bool = True,
    fast_reader: str | None = None,
) -> pd.DataFrame:
    """Votes in the normalised AuditData.votes layout.

    Readers r0.. are split in two clusters: the first half weighs authenticity and
    engagement, the second half empathy and emotion (unless ``weights`` overrides).
    ``separated_reader`` copies their empathy vote into overall (perfect separation).
    """
    rng = np.random.default_rng(seed)
    readers = [f"r{i}" for i in range(n_readers)]
    if weights is None:
        weights = {}
        for i, r in enumerate(readers):
            if i < n_readers / 2:
                weights[r] = {"authenticity": 1.0, "engagement": 1.0, "empathy": 0.1, "emotion": 0.1, "complexity": 0.2}
            else:
                weights[r] = {"authenticity": 0.1, "engagement": 0.1, "empathy": 1.0, "emotion": 1.0, "complexity": 0.2}
    rows = []
    order = 0
    pair_quality = rng.normal(0.3, 1.0, n_pairs)
    pair_order = {r: rng.permutation(n_pairs) for r in readers}
    for r in readers:
        base_time = 60.0 if r == fast_reader else 250.0
        for pos, p in enumerate(pair_order[r]):
            focal, other = MATCHUPS[p % len(MATCHUPS)]
            matchup = f"{focal} vs {other}"
            votes = {c: float(rng.random() < 1 / (1 + np.exp(-pair_quality[p] - rng.normal(0, 0.8)))) for c in CRITERIA}
            eta = sum(weights[r][c] * (2 * votes[c] - 1) for c in CRITERIA) - 0.2
            overall = float(rng.random() < 1 / (1 + np.exp(-eta)))
            if r == separated_reader:
                overall = votes["empathy"]
            votes["overall"] = overall
            seconds = float(max(20.0, rng.normal(base_time, 40.0)))
            if r == "r1" and pos == 0:
                seconds = 900.0  # one capped time
            shown = focal if rng.random() < 0.5 else other
            comment = f"{r} on pair {p}: liked the ending" if rng.random() < 0.1 else ""
            for c in (*CRITERIA, "overall"):
                y = votes[c]
                if tie_share and rng.random() < tie_share and c != "overall":
                    y = np.nan
                choice = "tie" if np.isnan(y) else (focal if y == 1 else other)
                rows.append(
                    dict(
                        pair_id=f"p{p:02d}",
                        reader_id=r,
                        criterion=c,
                        matchup=matchup,
                        focal=focal,
                        other=other,
                        choice=choice,
                        y=y,
                        seconds=seconds,
                        comment=comment,
                        shown_first=shown,
                        reader_group="expert" if int(r[1:]) % 2 == 0 else "enthusiast",
                        order=order,
                        line=order + 2,
                    )
                )
                order += 1
    frame = pd.DataFrame(rows)
    if not optional:
        frame["seconds"] = np.nan
        frame["comment"] = ""
        frame["shown_first"] = ""
        frame["reader_group"] = ""
    return frame


def make_judge_credits(
    votes: pd.DataFrame, *, judges=("ens", "cfg1"), seed: int = 1, lean: float = 0.9
) -> pd.DataFrame:
    """Judge credits leaning to the focal system (probability ``lean``), with a few ties."""
    rng = np.random.default_rng(seed)
    pairs = votes[["pair_id", "matchup"]].drop_duplicates()
    rows = []
    for p, m in pairs.itertuples(index=False):
        for c in CRITERIA:
            base = 1.0 if rng.random() < lean else 0.0
            for j in judges:
                credit = base if rng.random() < 0.9 else 0.5
                rows.append(dict(pair_id=p, matchup=m, criterion=c, judge=j, credit=credit))
        for j in judges:
            rows.append(dict(pair_id=p, matchup=m, criterion="aggregate", judge=j, credit=1.0))
    return pd.DataFrame(rows)


@pytest.fixture
def votes() -> pd.DataFrame:
    return make_votes()


@pytest.fixture
def judge_credits(votes) -> pd.DataFrame:
    return make_judge_credits(votes)
