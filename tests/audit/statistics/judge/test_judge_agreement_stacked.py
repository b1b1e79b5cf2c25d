"""judge_transfer_audit.statistics.judge.agreement's stacked cells and vectorised intervals: the same numbers, bit for
bit, as each cell computed on its own scope and as the scalar two-way correction."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import judge_transfer_audit.statistics.judge.agreement as ja
import judge_transfer_audit.statistics.judge.agreement_stats as jas
from judge_transfer_audit.statistics.judge.agreement import judge_agreement, replicate_variances, two_way_variances
from judge_transfer_audit.statistics.uncertainty.two_way import correct_two_way


def _study(seed: int, shapes=((6, 3), (6, 3), (12, 9), (5, 1), (2, 4)), n_criteria: int = 3, unanimous: bool = True):
    """One matchup per (pairs, readers) shape, ``n_criteria`` criteria: cells of several shapes (fewer and
    more than 8 units and readers, one reader), ties, missing votes, judge ties and missing verdicts,
    and a criterion where every vote and verdict goes one way."""
    rng = np.random.default_rng(seed)
    votes, judge = [], []
    for m, (n_pairs, n_readers) in enumerate(shapes):
        for i in range(n_pairs):
            truth = rng.random() < rng.uniform(0.2, 0.8)
            for k in range(n_criteria):
                criterion = f"c{k}"
                one_way = unanimous and k == n_criteria - 1 and m == 0
                for r in range(n_readers):
                    if rng.random() < 0.1 and not one_way:
                        continue
                    y = float(truth if rng.random() < 0.7 else not truth)
                    y = 1.0 if one_way else (np.nan if rng.random() < 0.1 else y)
                    votes.append(
                        dict(pair_id=f"m{m}p{i}", reader_id=f"r{r}", criterion=criterion, matchup=f"m{m}", y=y)
                    )
                roll = rng.random()
                yj = np.nan if roll < 0.08 else (0.5 if roll < 0.15 else float(rng.random() < 0.6))
                yj = 1.0 if one_way else yj
                judge.append(dict(pair_id=f"m{m}p{i}", criterion=criterion, y_judge=yj))
    return pd.DataFrame(votes), pd.DataFrame(judge)


def _one_by_one(monkeypatch, *args, **kwargs):
    with monkeypatch.context() as m:
        m.setattr(ja, "_STACKED_MAX", 0)  # no cell is stacked
        return judge_agreement(*args, **kwargs)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("n_boot", [0, 1, 300])
def test_stacked_cells_equal_each_cell_on_its_own_bit_for_bit(monkeypatch, seed, n_boot):
    """Every row, interval and reader kappa of the stacked cells equals the per-scope computation
    exactly (cells of 2-12 units and 1-9 readers, ties, missing verdicts, one-way cells)."""
    votes, judge = _study(seed)
    stacked = []
    original = jas.stacked_cells

    def spy(*args, **kwargs):
        out = original(*args, **kwargs)
        stacked.append(out.n_cells)
        return out

    monkeypatch.setattr(ja, "stacked_cells", spy)
    got = judge_agreement(votes, judge, n_boot=n_boot, rng=seed)
    assert sum(stacked) == 15  # every cell went through the stacked path
    want = _one_by_one(monkeypatch, votes, judge, n_boot=n_boot, rng=seed)
    pd.testing.assert_frame_equal(got.to_frame(), want.to_frame(), check_exact=True)
    pd.testing.assert_frame_equal(got.readers, want.readers, check_exact=True)
    frame = got.to_frame()
    assert set(frame["scheme"]) == ({"none"} if n_boot == 0 else {"two-way", "pairs"})
    assert frame["kappa_majority"].isna().any() and frame["kappa_majority"].notna().any()
    if n_boot > 1:
        assert frame["alpha_difference_ci_low"].notna().any()


def test_stacked_cells_in_small_chunks_equal_one_chunk(monkeypatch):
    """Cells computed a few at a time (the memory bound) give the same numbers as all at once."""
    votes, judge = _study(4, shapes=((6, 3),) * 4, n_criteria=5)
    whole = judge_agreement(votes, judge, n_boot=200, rng=4)
    monkeypatch.setattr(ja, "_STACKED_CHUNK", 1)  # one cell per chunk
    pieces = judge_agreement(votes, judge, n_boot=200, rng=4)
    pd.testing.assert_frame_equal(whole.to_frame(), pieces.to_frame(), check_exact=True)
    pd.testing.assert_frame_equal(whole.readers, pieces.readers, check_exact=True)


def test_a_changed_vote_changes_the_stacked_cell():
    """The control: the comparison above would see a cell computed from another cell's votes."""
    votes, judge = _study(5)
    a = judge_agreement(votes, judge, n_boot=50, rng=5).to_frame().set_index("scope")
    flipped = votes.copy()
    first = flipped.index[(flipped.matchup == "m2") & (flipped.criterion == "c0") & flipped.y.notna()][:3]
    flipped.loc[first, "y"] = 1.0 - flipped.loc[first, "y"]
    b = judge_agreement(flipped, judge, n_boot=50, rng=5).to_frame().set_index("scope")
    assert a.loc["m2/c0", "raw_human"] != b.loc["m2/c0", "raw_human"]
    pd.testing.assert_series_equal(a.loc["m3/c1"], b.loc["m3/c1"])  # the other cells are untouched


# ----------------------------------------------------------------------------- vectorised intervals
def _replicate_rows(rng: np.random.Generator, n: int, b: int) -> tuple[np.ndarray, ...]:
    base = rng.normal(0.3, 0.1, size=(n, 1))
    product = base + rng.normal(0, rng.uniform(0.01, 0.2, (n, 1)), (n, b))
    pairs = base + rng.normal(0, rng.uniform(0.01, 0.2, (n, 1)), (n, b))
    readers = base + rng.normal(0, rng.uniform(0.001, 0.2, (n, 1)), (n, b))
    for x in (product, pairs, readers):  # NaN replicates, rows of constants, rows with one usable replicate
        x[rng.random((n, b)) < 0.05] = np.nan
    product[:3] = 0.25
    pairs[:2] = 0.25
    readers[:1] = 0.25
    product[5, 1:] = np.nan
    return base[:, 0], product, pairs, readers


def test_two_way_variances_equal_correct_two_way_bit_for_bit():
    rng = np.random.default_rng(0)
    estimate, product, pairs, readers = _replicate_rows(rng, 400, 60)
    estimate[7] = np.nan
    n_pairs = rng.integers(1, 9, 400)
    n_readers = rng.integers(1, 9, 400)
    variance, df = two_way_variances(estimate, product, pairs, readers, n_pairs, n_readers)
    for i in range(400):
        want = correct_two_way(float(estimate[i]), product[i], pairs[i], readers[i], int(n_pairs[i]), int(n_readers[i]))
        np.testing.assert_array_equal([variance[i], df[i]], [want.variance, want.df], err_msg=str(i))
    assert np.isfinite(variance).sum() > 200 and np.isinf(df).any() and np.isnan(variance).any()


def test_replicate_variances_equal_the_finite_replicates_variance():
    rng = np.random.default_rng(1)
    _, product, _, _ = _replicate_rows(rng, 200, 40)
    got = replicate_variances(product)
    for i in range(200):
        reps = product[i][np.isfinite(product[i])]
        if reps.size >= 2:
            assert got[i] == float(reps.var(ddof=1)), i
        else:
            assert math.isnan(got[i]), i


def _scalar_interval(estimate, variance, df, level, statistic):
    """The scalar interval the vectorised one replaced (kept here as the reference)."""
    from scipy.special import ndtri, stdtrit

    if not (np.isfinite(estimate) and np.isfinite(variance)):
        return math.nan, math.nan
    q = float(stdtrit(df, 0.5 + level / 2.0)) if np.isfinite(df) and df > 0 else float(ndtri(0.5 + level / 2.0))
    half = q * math.sqrt(max(variance, 0.0))
    low, high = ja._RANGE.get(statistic, (-math.inf, math.inf))
    return float(max(estimate - half, low)), float(min(estimate + half, high))


@pytest.mark.parametrize("statistic", ["kappa_majority", "alpha_difference", "raw_human"])
def test_intervals_equal_the_scalar_interval(statistic):
    rng = np.random.default_rng(2)
    estimate = rng.uniform(-1.2, 1.2, 300)
    variance = rng.exponential(0.05, 300)
    df = rng.choice([math.inf, math.nan, 0.0, -1.0, 2.5, 40.0], 300)
    estimate[:5], variance[5:10] = np.nan, np.nan
    low, high = ja._intervals(estimate, variance, df, 0.9, statistic)
    for i in range(300):
        want = _scalar_interval(estimate[i], variance[i], df[i], 0.9, statistic)
        np.testing.assert_array_equal([low[i], high[i]], want, err_msg=str(i))


@pytest.mark.parametrize("n", [1, 2, 3, 6, 7, 8, 9, 50, 200])
def test_sum_last_equals_numpy_sum_bit_for_bit(n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((40, 30, n)) * 10 ** rng.uniform(-4, 4, (40, 30, n))
    for view in (x, np.asfortranarray(x), x[::2, 1::3], x.transpose(1, 0, 2)):
        np.testing.assert_array_equal(jas._sum_last(view), view.sum(axis=-1))
        np.testing.assert_array_equal(jas._sum_last(view, keepdims=True), view.sum(axis=-1, keepdims=True))
