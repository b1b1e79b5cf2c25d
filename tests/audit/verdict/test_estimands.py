"""J, V and M from per-pair sums: definitions, limits, replicate shapes, and the truth of a large sample."""

import numpy as np
import pytest
from scipy import stats

from judge_transfer_audit.model.tie_rules import EVEN_SPLIT
from judge_transfer_audit.statistics.estimands import beta_upper_tail, estimands
from judge_transfer_audit.verdict.simulate import CellDesign, simulate_cell, true_majority_rate, true_vote_share
from judge_transfer_audit.verdict.tables import comparison_table


def test_beta_upper_tail_matches_scipy_and_its_limits():
    mu, tau2 = 0.6, 0.02
    k = mu * (1 - mu) / tau2 - 1
    assert beta_upper_tail(mu, tau2) == pytest.approx(stats.beta(mu * k, (1 - mu) * k).sf(0.5), abs=1e-12)
    # no between-pair variance: every pair's majority is the overall one
    assert list(beta_upper_tail(np.array([0.6, 0.4, 0.5]), 0.0)) == [1.0, 0.0, 0.5]
    # every pair unanimous (variance at its maximum): M is the share of focal pairs
    assert beta_upper_tail(0.3, 0.3 * 0.7) == pytest.approx(0.3)
    assert np.isnan(beta_upper_tail(np.nan, 0.01))


def _sums(shares_per_pair):
    """Per-pair sums of binary votes given as lists of 0/1."""
    c = np.array([sum(v) for v in shares_per_pair], float)
    n = np.array([len(v) for v in shares_per_pair], float)
    return c, c.copy(), n  # binary credits: squared credit = credit


def test_vote_share_is_pair_weighted_and_judge_rate_uses_the_same_pairs():
    c, q, n = _sums([[1, 1, 1, 1], [0, 1], [0, 0, 0]])
    e = estimands(c, q, n, np.ones(3), np.array([1.0, 1.0, 0.0]))
    assert float(e.vote_share) == pytest.approx((1.0 + 0.5 + 0.0) / 3)  # not 5/9, the vote-weighted share
    assert float(e.judge_rate) == pytest.approx(2 / 3)


def test_between_pair_variance_is_the_anova_moment_estimator():
    # balanced: tau^2 = (MS_between - MS_within) / n
    votes = [[1, 1, 0, 1], [0, 0, 1, 0], [1, 1, 1, 1], [0, 1, 0, 1], [1, 0, 1, 1]]
    c, q, n = _sums(votes)
    e = estimands(c, q, n, np.ones(5), np.zeros(5))
    y = np.array(votes, float)
    ms_between = 4 * y.mean(1).var(ddof=1)
    ms_within = ((y - y.mean(1, keepdims=True)) ** 2).sum() / (5 * 3)
    assert float(e.between_pair_var) == pytest.approx(max((ms_between - ms_within) / 4, 0.0), abs=1e-12)
    assert float(e.majority_rate) == pytest.approx(float(beta_upper_tail(e.vote_share, e.between_pair_var)))


def test_single_vote_pairs_do_not_enter_the_between_pair_variance():
    c, q, n = _sums([[1, 1, 0], [0, 0, 1], [1, 1, 1]])
    with_singles = _sums([[1, 1, 0], [0, 0, 1], [1, 1, 1], [1], [0], [1]])
    e = estimands(c, q, n, np.ones(3), np.zeros(3))
    e2 = estimands(*with_singles, np.ones(6), np.zeros(6))
    assert float(e2.between_pair_var) == pytest.approx(float(e.between_pair_var))
    assert float(e2.vote_share) == pytest.approx((2 / 3 + 1 / 3 + 1 + 1 + 0 + 1) / 6)  # V still uses every pair


def test_replicate_weights_and_several_judges_broadcast():
    c, q, n = _sums([[1, 1, 0], [0, 0, 1], [1, 1, 1], [0, 1, 1]])
    w = np.array([[1, 1, 1, 1], [2, 0, 1, 1], [0, 0, 4, 0]], float)
    judges = np.array([[1, 0, 1, 1], [0, 0, 0, 1]], float)
    e = estimands(c, q, n, w, judges)
    assert e.judge_rate.shape == (3, 2) and e.vote_share.shape == (3,)
    assert e.judge_rate[1, 0] == pytest.approx((2 * 1 + 1 + 1) / 4)
    stats_ = e.statistics()
    assert stats_["d_lo"].shape == (3, 2)
    single = estimands(c, q, n, w, judges[0])
    assert np.allclose(single.judge_rate, e.judge_rate[:, 0]) and np.allclose(single.vote_share, e.vote_share)


def test_duplicated_readers_use_the_effective_number_of_votes():
    # a pair read by readers (a, b) with weights (2, 0) has two identical votes: no within variance
    c = np.array([2.0, 1.0, 2.0])
    n = np.array([2.0, 2.0, 2.0])
    n2 = np.array([4.0, 2.0, 4.0])  # sum of squared reader weights
    e = estimands(c, c, n, np.ones(3), np.zeros(3), nsum2=n2)
    assert float(e.df_within) == pytest.approx(1.0)  # only the middle pair has two distinct votes


def test_large_sample_recovers_the_truth():
    design = CellDesign(b0=0.6, sd_pair=0.8, sd_reader=0.2, tie=0.3)
    cell = simulate_cell(design, 3000, 15, np.random.default_rng(3))
    table = comparison_table(
        cell.pair_id,
        cell.reader_id,
        cell.y,
        cell.pairs,
        np.full(3000, 0.5),
        tie_rule=EVEN_SPLIT,
        rng=np.random.default_rng(0),
    )
    c, q, n = table.pair_sums()
    e = estimands(c, q, n, np.ones_like(c), table.judge)
    assert float(e.vote_share) == pytest.approx(true_vote_share(design), abs=0.015)
    assert float(e.majority_rate) == pytest.approx(true_majority_rate(design), abs=0.03)


@pytest.mark.parametrize("stacked", [False, True])
def test_shifted_and_plain_are_the_two_calls(stacked):
    """One evaluation for the shifted and the plain replicates gives both calls' numbers, bit for bit
    (a cell without a shift, stacked among others, keeps its unclipped vote share)."""
    from dataclasses import fields

    from judge_transfer_audit.statistics.estimands import shifted_and_plain

    rng = np.random.default_rng(4)
    n_cells, n_boot, n_pairs = (5, 300, 9) if stacked else (2, 300, 9)
    n = rng.integers(1, 5, (n_cells, 1, n_pairs)).astype(float)
    c = np.minimum(np.round(rng.random(n.shape) * n * 2) / 2, n)
    q = c * np.minimum(1.0, c / n + 0.1)
    w = rng.multinomial(n_pairs, np.full(n_pairs, 1 / n_pairs), (n_cells, n_boot)).astype(float)
    judge = rng.choice([0.0, 0.5, 1.0], (n_cells, 2, n_pairs))
    shift = rng.normal(0, 0.2, (n_cells, n_boot))
    shift[0] = 0.0  # no reader component in this cell
    major = 1.7 * shift
    if not stacked:
        c, q, n, w, judge, shift, major = c[0, 0], q[0, 0], n[0, 0], w[0], judge[0], shift[1], major[1]
    got = shifted_and_plain(c, q, n, w, judge, shift, major)
    want = (
        estimands(c, q, n, w, judge, shift=shift, majority_shift=major, majority=False),
        estimands(c, q, n, w, judge, majority=False),
    )
    for a, b in zip(got, want):
        for f in fields(a):
            assert np.array_equal(np.asarray(getattr(a, f.name)), np.asarray(getattr(b, f.name)), equal_nan=True), (
                f.name
            )
