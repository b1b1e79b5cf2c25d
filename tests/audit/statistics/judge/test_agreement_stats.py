"""judge_transfer_audit.statistics.judge.agreement_stats: the by-judge sums of a scope with many strata."""

from __future__ import annotations

import numpy as np
import pytest

from judge_transfer_audit.statistics.judge import agreement_stats
from judge_transfer_audit.statistics.judge.agreement_stats import agreement_statistics, scope_votes


def _scope(rng, n_units: int, n_readers: int, n_strata: int):
    """Three votes per unit from random readers, random judge verdicts (some missing), units in random strata."""
    unit = np.repeat(np.arange(n_units), 3)
    reader = np.concatenate([rng.choice(n_readers, 3, replace=False) for _ in range(n_units)])
    category = rng.integers(0, 3, unit.size)
    judge = rng.integers(-1, 3, n_units)
    stratum = rng.integers(0, n_strata, n_units)
    return scope_votes(unit, reader, category, judge, stratum, n_readers=n_readers)


@pytest.mark.parametrize("n_strata", [2, 5, 12])
def test_by_judge_from_one_sparse_product_equals_the_masked_products(n_strata, monkeypatch):
    """Beyond the dense indicator's size, the three categories' sums come from one sparse product: the same
    numbers, bit for bit, and the same memory layout (later sums over strata add in the layout's order) as
    one masked product per category."""
    monkeypatch.setattr(agreement_stats, "_JUDGE_STRATUM_MAX", 0)
    rng = np.random.default_rng(n_strata)
    sv = _scope(rng, 300, 9, n_strata)
    assert sv._t["judge_stratum_t"] is not None
    x = rng.multinomial(300, np.full(300, 1 / 300), 40).astype(float) * rng.integers(0, 4, 300)
    got = sv.by_judge(x)
    want = [agreement_stats._right(x * (sv.judge == c)[None, :], sv._t["stratum"]) for c in range(3)]
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.strides == w.strides
        assert g.tobytes() == w.tobytes()
        assert g.sum(axis=-1).tobytes() == w.sum(axis=-1).tobytes()


def test_the_statistics_do_not_depend_on_how_the_by_judge_sums_are_formed(monkeypatch):
    """Every statistic of a many-strata scope under resampled units and readers, with the by-judge sums from the
    one sparse product and from one masked product per category: the same bits."""
    rng = np.random.default_rng(3)
    wu = rng.multinomial(200, np.full(200, 1 / 200), 30).astype(float)
    wr = rng.multinomial(7, np.full(7, 1 / 7), 30).astype(float)
    monkeypatch.setattr(agreement_stats, "_JUDGE_STRATUM_MAX", 0)
    sv_sparse = _scope(np.random.default_rng(3), 200, 7, 10)
    sv_masked = _scope(np.random.default_rng(3), 200, 7, 10)
    sv_masked._t["judge_stratum_t"] = None
    assert sv_sparse._t["judge_stratum_t"] is not None
    for u, r in ((wu, np.ones((1, 7))), (wu, wr)):
        sparse_stats = agreement_statistics(sv_sparse, u, r)
        masked = agreement_statistics(sv_masked, u, r)
        for name, value in sparse_stats.items():
            assert value.tobytes() == masked[name].tobytes(), name
            assert np.isfinite(value).any(), name


@pytest.mark.parametrize("by_judge", ["dense", "one sparse product", "masked products"])
@pytest.mark.parametrize("n_strata", [3, 8, 25])
def test_unit_weights_alone_from_one_product_equal_the_element_wise_path(n_strata, by_judge, monkeypatch):
    """Readers not resampled: the weighted sums come from one product of the unit weights with fixed features,
    laid out as the element-wise path lays out its sums; every statistic equals that path's (the same counts
    given once per replicate), bit for bit, with few and many strata and each way of forming the by-judge
    sums."""
    if by_judge != "dense":
        monkeypatch.setattr(agreement_stats, "_JUDGE_STRATUM_MAX", 0)
    rng = np.random.default_rng(n_strata)
    sv = _scope(rng, 240, 6, n_strata)
    if by_judge == "masked products":
        sv._t["judge_stratum_t"] = None
    assert (sv._t["judge_stratum"] is not None) is (by_judge == "dense")
    n_boot = 50
    ones_r = np.ones((1, 6))
    n, s = sv.reader_counts(ones_r)
    every_row = ([np.repeat(x, n_boot, axis=0) for x in n], [np.repeat(x, n_boot, axis=0) for x in s])
    for wu in (rng.multinomial(240, np.full(240, 1 / 240), n_boot).astype(float), np.ones((1, 240))):
        got = agreement_statistics(sv, wu, ones_r, (n, s))
        want = agreement_statistics(sv, wu, ones_r, tuple([x[: wu.shape[0]] for x in xs] for xs in every_row))
        for name, value in want.items():
            assert got[name].tobytes() == value.tobytes(), name
            assert np.isfinite(value).any(), name


@pytest.mark.parametrize("by_judge", ["dense", "one sparse product", "masked products"])
def test_sums_from_one_product_take_the_layout_of_the_element_wise_sums(by_judge, monkeypatch):
    """``in_strat_layout`` gives the sums of ``weighted_sums`` the values and the memory layout (strides) of
    ``strat`` and ``by_judge`` on the weighted features: later sums over 8 or more strata add in an order
    that follows the layout."""
    if by_judge != "dense":
        monkeypatch.setattr(agreement_stats, "_JUDGE_STRATUM_MAX", 0)
    rng = np.random.default_rng(30)
    sv = _scope(rng, 240, 6, 12)
    if by_judge == "masked products":
        sv._t["judge_stratum_t"] = None
    wu = rng.multinomial(240, np.full(240, 1 / 240), 40).astype(float)
    feature = rng.integers(0, 3, (1, 240)).astype(float)
    sums, judge_sums = sv.in_strat_layout(
        sv.weighted_sums(wu, [feature])[:1], sv.weighted_sums(wu, [feature * (sv.judge == c) for c in range(3)])
    )
    want = sv.strat(wu * feature)
    assert sums[0].strides == want.strides and sums[0].tobytes() == want.tobytes()
    for got, want in zip(judge_sums, sv.by_judge(wu * feature)):
        assert got.strides == want.strides
        np.testing.assert_array_equal(got, want)
