"""Degenerate GLMM fits are flagged, and the decision never rests on them."""

import math

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.model.policy import TransferPolicy
from judge_transfer_audit.model.tie_rules import EVEN_SPLIT
from judge_transfer_audit.verdict.compare import compare_cell
from judge_transfer_audit.verdict.degenerate import degeneracy
from judge_transfer_audit.verdict.human_side import human_side, majority_plugin


def mt_bench_shape(seed: int = 5, n_pairs: int = 14) -> pd.DataFrame:
    """Our own seeded cell shaped like MT-Bench's gpt-3.5-turbo vs vicuna-13b: 3 readers, ~14 pairs,
    each read by 1-3 readers, nearly every pair unanimous (no data is read from the dataset)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_pairs):
        k = rng.choice([1, 2, 2, 2, 3])
        readers = rng.choice(3, k, replace=False)
        side = float(rng.random() < 0.6)
        for r in readers:
            y = side if (k < 3 or rng.random() < 0.85) else 1 - side
            rows.append({"pair_id": f"p{i:02d}", "reader_id": f"r{r}", "y": y})
    return pd.DataFrame(rows)


def test_the_mt_bench_shape_is_degenerate_and_says_why():
    votes = mt_bench_shape()
    h = human_side(votes)
    g = h.glmm
    assert g.sd_pair > 5 and g.estimate > 0.99  # the faithful Laplace fit: sd_pair ~ 20, expit(b0) ~ 100%
    assert 0.55 < h.rate < 0.75  # while the readers split
    assert g.degenerate
    assert "pair SD" in g.degenerate_reason and "outside the readers' own rates" in g.degenerate_reason


def test_the_decision_uses_the_vote_share_which_stays_near_the_raw_share():
    votes = mt_bench_shape()
    pairs = np.unique(votes["pair_id"])
    c = compare_cell(
        votes["pair_id"].to_numpy(),
        votes["reader_id"].to_numpy(),
        votes["y"].to_numpy(float),
        pairs,
        np.ones(pairs.size),
        tie_rule=EVEN_SPLIT,
        policy=TransferPolicy(n_boot=199, min_pairs=10),
        rng=np.random.default_rng(0),
    )
    raw = float(votes["y"].mean())
    assert abs(c.boot.estimate("vote_share") - raw) < 0.15


def test_each_rule():
    base = dict(
        estimate=0.6,
        ci_low=0.45,
        ci_high=0.72,
        se=0.3,
        sd_pair=0.5,
        sd_reader=0.3,
        separation=False,
        reader_rates=np.array([0.5, 0.7]),
        raw_share=0.6,
    )
    assert degeneracy(**base) == (False, "")
    assert degeneracy(**{**base, "sd_reader": 6.0})[0]
    assert degeneracy(**{**base, "estimate": 0.8})[1].startswith("expit(b0) 80.0% outside")
    assert "spans almost [0, 1]" in degeneracy(**{**base, "ci_low": 0.002, "ci_high": 0.977})[1]
    assert not degeneracy(
        **{
            **base,
            "ci_low": 0.01,
            "ci_high": 0.99,
            "raw_share": 0.97,
            "estimate": 0.9,
            "reader_rates": np.array([0.8, 0.99]),
        }
    )[0]  # not interior
    assert (
        "17 points from the raw share"
        in degeneracy(**{**base, "estimate": 0.43, "reader_rates": np.array([0.3, 0.7])})[1]
    )
    assert "not finite" in degeneracy(**{**base, "se": math.inf})[1]
    assert not degeneracy(**{**base, "se": math.inf, "separation": True})[0]  # separation has its own flag


def test_unanimous_readers_are_separated_not_degenerate():
    votes = pd.DataFrame([{"pair_id": f"p{i // 3}", "reader_id": f"r{i % 3}", "y": 1.0} for i in range(36)])
    g = human_side(votes).glmm
    assert g.separation and not g.degenerate


def test_majority_plugin():
    assert majority_plugin(0.5, 0.5) == pytest.approx(0.8413, abs=1e-4)
    assert majority_plugin(0.2, 0.0) == 1.0 and majority_plugin(-0.2, 0.0) == 0.0
    assert math.isnan(majority_plugin(float("nan"), 1.0))
