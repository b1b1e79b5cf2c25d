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
