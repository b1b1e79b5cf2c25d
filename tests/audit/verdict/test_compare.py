"""One cell before the decision: INSUFFICIENT, ERROR, or assessed with its tests."""

import numpy as np
import pytest

from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.model.policy import TransferPolicy
from judge_transfer_audit.model.tie_rules import DECISIVE, EVEN_SPLIT
from judge_transfer_audit.verdict.compare import compare_cell
from judge_transfer_audit.verdict.simulate import CellDesign, simulate_cell

POLICY = TransferPolicy(n_boot=199)


def _cell(design=CellDesign(0.0, 0.5, 0.2), n_pairs=30, n_readers=5, seed=0):
    return simulate_cell(design, n_pairs, n_readers, np.random.default_rng(seed))


def _compare(cell, credit, *, judge_pairs=None, policy=POLICY, y=None, rule=EVEN_SPLIT):
    return compare_cell(
        cell.pair_id,
        cell.reader_id,
        cell.y if y is None else y,
        cell.pairs if judge_pairs is None else judge_pairs,
        credit,
        tie_rule=rule,
        policy=policy,
        rng=np.random.default_rng(1),
    )


def test_no_judge_is_insufficient_but_the_humans_are_still_estimated():
    cell = _cell()
    c = compare_cell(
        cell.pair_id,
        cell.reader_id,
        cell.y,
        None,
        None,
        tie_rule=EVEN_SPLIT,
        policy=POLICY,
        rng=np.random.default_rng(0),
    )
    assert c.status is Status.INSUFFICIENT and "no outputs" in c.reason
    assert c.boot is not None and 0.3 < c.boot.estimate("vote_share") < 0.7


def test_too_few_pairs_or_readers_is_insufficient():
    small = _cell(n_pairs=8)
    c = _compare(small, np.ones(8))
    assert c.status is Status.INSUFFICIENT and "8 pair(s)" in c.reason and "at least 10 pairs" in c.reason
    two_readers = _cell(n_readers=2)
    assert _compare(two_readers, np.ones(30)).status is Status.INSUFFICIENT
    # invalid judge outputs count against the minimum
    cell = _cell(n_pairs=12)
    credit = np.ones(12)
    credit[:4] = np.nan
    assert _compare(cell, credit).status is Status.INSUFFICIENT


def test_all_ties_is_an_error():
    cell = _cell()
    c = _compare(cell, np.ones(30), y=np.full(cell.y.size, np.nan))
    assert c.status is Status.ERROR and "tie" in c.reason
    # under the decisive rule too (it is not "too few pairs": the readers said nothing)
    assert _compare(cell, np.ones(30), y=np.full(cell.y.size, np.nan), rule=DECISIVE).status is Status.ERROR


def _one_vote_cell(judge: str, n: int = 700, b0: float = 0.6, seed: int = 0):
    """One vote per pair from a pool of readers (Chatbot-Arena style) and a judge of the given kind."""
    from scipy.special import expit

    rng = np.random.default_rng(seed)
    u, v = rng.normal(0.0, 1.0, n), rng.normal(0.0, 0.3, 200)
    who = rng.integers(0, 200, n)
    pairs = np.array([f"p{i:04d}" for i in range(n)])
    readers = np.array([f"r{r:03d}" for r in who])
    y = (rng.random(n) < expit(b0 + u + v[who])).astype(float)
    credit = {
        "wrong-side": np.where(b0 + u > 0, 0.0, 1.0),
        "reader-like": (rng.random(n) < expit(b0 + u)).astype(float),
        "coin": (rng.random(n) < 0.5).astype(float),
    }[judge]
    return compare_cell(
        pairs, readers, y, pairs, credit, tie_rule=EVEN_SPLIT, policy=POLICY, rng=np.random.default_rng(seed + 1)
    )


def test_single_vote_pairs_leave_the_majority_rate_unestimable_and_decide_on_the_vote_share():
    c = _one_vote_cell("reader-like")
    assert c.assessed and c.vote_share_only
    assert not np.isfinite(c.boot.estimate("majority_rate"))
    assert c.distance() == pytest.approx(c.boot.estimate("difference_vote_share"))
    low, high = c.band_interval(0.05)
    assert low < c.distance() < high
    assert c.p_outside() > 0.05  # a reader-like judge is not less decisive than the readers


def test_a_wrong_side_judge_fails_on_one_vote_per_pair_and_a_coin_is_less_decisive():
    wrong = _one_vote_cell("wrong-side")
    assert wrong.vote_share_only and wrong.p_conflict() < 1e-3 and wrong.p_outside() < 1e-3
    coin = _one_vote_cell("coin")  # at 50%, the readers at ~60%: on no side, and less decisive by ~10 points
    assert coin.vote_share_only and coin.p_conflict() == 1.0
    # the readers' share is decisive; the outside test is the larger of its two one-sided p-values
    dv, v = coin.boot["difference_vote_share"], coin.boot["vote_share"]
    assert coin.p_outside() == pytest.approx(max(dv.p_less(-POLICY.margin), v.p_greater(0.5)))


def test_too_few_pairs_read_once_stay_insufficient():
    rng = np.random.default_rng(0)
    pairs = np.array([f"p{i:02d}" for i in range(4)])
    readers = np.array([f"r{i}" for i in range(4)])
    y = (rng.random(4) < 0.6).astype(float)
    policy = TransferPolicy(min_pairs=10)
    c = compare_cell(pairs, readers, y, pairs, np.ones(4), tie_rule=EVEN_SPLIT, policy=policy, rng=rng)
    assert c.status is Status.INSUFFICIENT


def test_an_assessed_cell_has_consistent_tests():
    cell = _cell(CellDesign(-0.8, 0.6, 0.2), n_pairs=60, n_readers=7)
    skewed = np.where(np.random.default_rng(3).random(60) < 0.95, 1.0, 0.0)
    c = _compare(cell, skewed)
    assert c.assessed
    low, high = c.band_interval(0.05)
    assert low > POLICY.margin  # far above the band
    assert c.p_outside() < 0.05 and not c.pass_holds()
    assert c.p_conflict() < 0.05  # judge decisive for focal, readers decisive for the other
    assert c.distance() == pytest.approx(c.boot.estimate("d_hi"))


def test_the_equivalence_p_values_are_the_dual_of_the_pass_interval():
    """p_lower / p_upper are alpha exactly at the interval's ends, and below alpha exactly when the end is inside."""
    from dataclasses import replace

    cell = _cell(n_pairs=40, n_readers=6)
    credit = (np.random.default_rng(4).random(cell.pairs.size) < 0.5).astype(float)
    c = _compare(cell, credit, policy=TransferPolicy(n_boot=999))  # the default: the anchor at 20 / 1000
    assert c.assessed
    alpha = POLICY.alpha
    d_lo, d_hi = c.boot["d_lo"], c.boot["d_hi"]
    assert d_lo.tail(alpha) >= d_lo.p_anchor and d_hi.tail(alpha) >= d_hi.p_anchor  # the dense region
    low_end, high_end = d_lo.lower(alpha), d_hi.upper(alpha)
    assert replace(c, margin=-low_end).p_equivalence_sides()["lower"][0] == pytest.approx(alpha, rel=1e-6)
    assert replace(c, margin=high_end).p_equivalence_sides()["upper"][0] == pytest.approx(alpha, rel=1e-6)
    for margin in np.linspace(0.02, 0.4, 39):
        m = replace(c, margin=float(margin))
        low, high = m.band_interval(alpha)
        p, se = m.p_equivalence_with_se()
        assert (p < alpha) == (low > -margin and high < margin), margin
        assert se > 0
