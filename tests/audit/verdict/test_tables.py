"""The compared pairs: the same pairs and the same tie rule for both sides, row order irrelevant."""

import numpy as np
import pytest

from audit.verdict.tables import comparison_table, human_credits

PAIRS = np.array(["p1", "p1", "p1", "p2", "p2", "p3", "p3", "p4"])
READERS = np.array(["a", "b", "c", "a", "b", "a", "c", "b"])
Y = np.array([1, 0, np.nan, 1, 1, np.nan, np.nan, 0], float)


def _table(rule="even-split", judge_pairs=("p1", "p2", "p3", "p4"), judge=(1.0, 0.5, 0.0, 1.0), order=None):
    idx = np.arange(len(PAIRS)) if order is None else order
    return comparison_table(
        PAIRS[idx],
        READERS[idx],
        Y[idx],
        np.array(judge_pairs),
        np.array(judge, float),
        tie_rule=rule,
        rng=np.random.default_rng(0),
    )


def test_human_ties_are_credited_by_the_run_tie_rule():
    assert list(human_credits(np.array([1.0, 0.0, np.nan]), "even-split", np.random.default_rng(0))) == [1, 0, 0.5]
    assert list(human_credits(np.array([np.nan]), "strict", np.random.default_rng(0))) == [0.0]
    assert np.isnan(human_credits(np.array([np.nan]), "decisive", np.random.default_rng(0))[0])


def test_even_split_counts_ties_half_on_every_pair():
    t = _table()
    assert t.pairs == ("p1", "p2", "p3", "p4") and t.readers == ("a", "b", "c")
    c, _, n = t.pair_sums()
    assert list(c / n) == [0.5, 1.0, 0.5, 0.0]
    assert (t.n_votes, t.n_ties) == (8, 3)


def test_decisive_drops_tie_only_pairs_from_both_sides():
    t = _table("decisive")
    assert t.pairs == ("p1", "p2", "p4")  # p3 had only ties: not compared, for the judge either
    assert list(t.judge) == [1.0, 0.5, 1.0]
    assert t.n_judge_missing == 1


def test_pairs_without_a_valid_judge_output_are_not_compared():
    t = _table(judge=(1.0, np.nan, 0.0, 1.0))
    assert t.pairs == ("p1", "p3", "p4") and t.n_judge_missing == 1
    t = _table(judge_pairs=("p1", "p2"), judge=(1.0, 0.0))
    assert t.pairs == ("p1", "p2") and t.n_human_pairs == 4


def test_row_order_does_not_matter():
    a = _table()
    b = _table(order=np.random.default_rng(5).permutation(len(PAIRS)))
    assert a.pairs == b.pairs and a.readers == b.readers
    assert (a.C != b.C).nnz == 0 and (a.N != b.N).nnz == 0 and np.array_equal(a.judge, b.judge)


def test_one_judge_row_per_pair():
    with pytest.raises(ValueError):
        _table(judge_pairs=("p1", "p1"), judge=(1.0, 0.0))
