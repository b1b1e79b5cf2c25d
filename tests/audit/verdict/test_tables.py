"""The compared pairs: the same pairs and the same tie rule for both sides, row order irrelevant."""

import numpy as np
import pytest

from judge_transfer_audit.model.tie_rules import DECISIVE, EVEN_SPLIT, STRICT
from judge_transfer_audit.verdict.tables import comparison_table, human_credits

PAIRS = np.array(["p1", "p1", "p1", "p2", "p2", "p3", "p3", "p4"])
READERS = np.array(["a", "b", "c", "a", "b", "a", "c", "b"])
Y = np.array([1, 0, np.nan, 1, 1, np.nan, np.nan, 0], float)


def _table(rule=EVEN_SPLIT, judge_pairs=("p1", "p2", "p3", "p4"), judge=(1.0, 0.5, 0.0, 1.0), order=None):
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
    assert list(human_credits(np.array([1.0, 0.0, np.nan]), EVEN_SPLIT, np.random.default_rng(0))) == [1, 0, 0.5]
    assert list(human_credits(np.array([np.nan]), STRICT, np.random.default_rng(0))) == [0.0]
    assert np.isnan(human_credits(np.array([np.nan]), DECISIVE, np.random.default_rng(0))[0])


def test_even_split_counts_ties_half_on_every_pair():
    t = _table()
    assert t.pairs == ("p1", "p2", "p3", "p4") and t.readers == ("a", "b", "c")
    c, _, n = t.pair_sums()
    assert list(c / n) == [0.5, 1.0, 0.5, 0.0]
    assert (t.n_votes, t.n_ties) == (8, 3)


def test_decisive_drops_tie_only_pairs_from_both_sides():
    t = _table(DECISIVE)
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


def _sparse_sums(t):
    return tuple(np.asarray(m.sum(1)).ravel() for m in (t.C, t.Q, t.N))


def _random_cell(rng, repeats: bool):
    n_pairs, n_readers = int(rng.integers(2, 12)), int(rng.integers(1, 9))
    pair = rng.integers(0, n_pairs, 40).astype(str)
    reader = rng.integers(0, n_readers, 40).astype(str)
    if not repeats:  # one vote per reader and pair
        _, first = np.unique(np.char.add(pair, np.char.add("|", reader)), return_index=True)
        pair, reader = pair[first], reader[first]
    y = rng.choice([0.0, 1.0, np.nan], pair.size, p=[0.4, 0.4, 0.2])
    judged = np.unique(pair)
    credit = rng.choice([0.0, 0.5, 1.0, np.nan], judged.size)
    return pair, reader, y, judged, credit


@pytest.mark.parametrize("repeats", [False, True])
@pytest.mark.parametrize("rule", [EVEN_SPLIT, DECISIVE, STRICT])
def test_sums_and_dense_tables_are_the_sparse_tables(rule, repeats):
    from scipy import sparse

    from judge_transfer_audit.verdict.tables import ComparisonTable

    rng = np.random.default_rng(len(rule.name) + 10 * repeats)
    for _ in range(30):
        pair, reader, y, judged, credit = _random_cell(rng, repeats)
        t = comparison_table(pair, reader, y, judged, credit, tie_rule=rule, rng=rng)
        for got, want in zip(t.pair_sums(), _sparse_sums(t)):
            assert np.array_equal(got, want)
        c, n = t.dense()
        assert np.array_equal(c, t.C.toarray()) and np.array_equal(n, t.N.toarray())
        if t.n_pairs:
            assert t.readers_per_pair() == float(_sparse_sums(t)[2].mean())
    # credits that are not sums of halves: the sums still follow scipy's order (np.add.reduceat per row)
    pi = np.repeat(np.arange(5), 40)
    ri = np.tile(np.arange(40), 5)
    t = ComparisonTable(
        tuple("abcde"), tuple(str(r) for r in range(40)), pi, ri, rng.random(200) / 3, np.full(5, 0.5), 200, 0, 5, 0
    )
    assert t.one_vote_per_reader
    assert all(np.array_equal(a, b) for a, b in zip(t.pair_sums(), _sparse_sums(t)))
    assert isinstance(t.C, sparse.csr_matrix)


def test_common_votes_are_the_votes_on_validly_judged_pairs():
    from judge_transfer_audit.verdict.tables import compared_votes

    rng = np.random.default_rng(5)
    for _ in range(40):
        pair, reader, y, judged, credit = _random_cell(rng, True)
        keep = rng.random(judged.size) < 0.8  # some pairs without a judge row
        _, common = compared_votes(pair, reader, y, judged[keep], credit[keep], tie_rule=DECISIVE, rng=rng)
        on = np.isin(pair, judged[keep][np.isfinite(credit[keep])])
        assert common.n_pairs == np.unique(pair[on]).size and common.n_readers == np.unique(reader[on]).size
        assert common.all_ties == bool(on.any() and np.isnan(y[on]).all())
