"""judge_transfer_audit.statistics.judge.agreement_stats on one vote per pair (the arena shape): each reader's
kappa against a plain loop over (reader, matchup) combinations, the skipped alpha and raw comparisons against
the computation that runs them, and the agreement bootstrap's unit weights against a loop over matchups; every
comparison to the bits."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.statistics.judge import agreement_stats
from judge_transfer_audit.statistics.judge.agreement import _Weights, judge_agreement
from judge_transfer_audit.statistics.judge.agreement_stats import agreement_statistics, scope_votes


def _one_vote_scope(seed: int, n_units: int = 120, n_readers: int = 9, n_strata: int = 10):
    """One vote per unit; few readers over few strata, so most readers vote twice or more in some stratum
    (combinations of one vote and of several); some units without a judge verdict, some ties."""
    rng = np.random.default_rng(seed)
    unit = np.arange(n_units)
    reader = rng.integers(0, n_readers, n_units)
    category = rng.choice(3, n_units, p=[0.45, 0.45, 0.10])
    judge = np.where(rng.random(n_units) < 0.7, category, rng.integers(0, 3, n_units))
    judge[rng.random(n_units) < 0.1] = -1
    stratum = rng.integers(0, n_strata, n_units)
    return unit, reader, category, judge, stratum


def _reference_reader_kappas(unit, reader, category, judge, stratum, wu, n_readers):
    """Each reader's kappa (chance within each of its strata) by plain loops: per (reader, stratum)
    combination the weighted judge x reader counts, its chance agreement, then each reader's sums over
    its combinations in their order (reader, then stratum), one after the other."""
    strata = np.unique(stratum, return_inverse=True)[1]
    n_s = strata.max() + 1
    combos = sorted({(int(r), int(strata[u])) for u, r in zip(unit, reader)})
    n_b = wu.shape[0]
    kappa = np.full((n_b, n_readers), math.nan)
    n_used = np.zeros((n_b, n_readers))
    for b in range(n_b):
        sums = {r: [0.0, 0.0, 0.0] for r in range(n_readers)}
        for r, s in combos:
            n_k, diag, by_judge, by_vote = 0.0, 0.0, [0.0] * 3, [0.0] * 3
            for u, rr, c in zip(unit, reader, category):
                if rr != r or strata[u] != s or judge[u] < 0:
                    continue
                w = wu[b, u]
                n_k += w
                diag += w * (judge[u] == c)
                by_judge[judge[u]] += w
                by_vote[c] += w
            chance = 0.0
            if n_k > 0:
                for c in range(3):
                    chance = chance + by_judge[c] * by_vote[c] / n_k
            for i, x in enumerate((n_k, diag, chance)):
                sums[r][i] += x
        for r, (n_r, diag_r, chance_r) in sums.items():
            n_used[b, r] = n_r
            if n_r > 0:
                po, pe = diag_r / n_r, chance_r / n_r
                if pe < 1.0 - 1e-12:
                    kappa[b, r] = (po - pe) / (1.0 - pe)
    assert n_s >= 1
    return kappa, n_used


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reader_kappas_equal_a_loop_over_combinations_bit_for_bit(seed):
    unit, reader, category, judge, stratum = _one_vote_scope(seed)
    n_readers = int(reader.max()) + 1
    sv = scope_votes(unit, reader, category, judge, stratum, n_readers=n_readers)
    rng = np.random.default_rng(seed + 10)
    wu = np.vstack([np.ones(len(unit)), rng.multinomial(len(unit), np.full(len(unit), 1 / len(unit)), 6)])
    sizes = np.bincount(reader * 100 + stratum)
    assert (sizes == 1).any() and (sizes > 1).any()  # both kinds of combination are exercised
    got_kappa, got_n = sv.reader_kappas(wu.astype(float))
    want_kappa, want_n = _reference_reader_kappas(unit, reader, category, judge, stratum, wu, n_readers)
    np.testing.assert_array_equal(got_n, want_n)
    np.testing.assert_array_equal(got_kappa, want_kappa)


@pytest.mark.parametrize("dense_by_judge", [True, False])
@pytest.mark.parametrize("n_strata", [3, 10])
def test_one_vote_scope_equals_the_computation_with_a_paired_unit(n_strata, dense_by_judge, monkeypatch):
    """Without a unit of two votes the majority kappa's sums come from each vote's weights and the alpha and
    raw comparisons are skipped (NaN); both kappas are those of the full computation, which runs when one
    more unit carries two votes (of readers already voting in its stratum) but weight 0 in every replicate:
    the same sums, added in the same order (with 8 strata or more the order follows the arrays' layout,
    which differs when the by-judge sums are one dense product: both ways are run)."""
    if not dense_by_judge:
        monkeypatch.setattr(agreement_stats, "_JUDGE_STRATUM_MAX", 0)
    unit, reader, category, judge, stratum = _one_vote_scope(3, n_strata=n_strata)
    n_u, n_readers = len(unit), int(reader.max()) + 1
    one_vote = scope_votes(unit, reader, category, judge, stratum, n_readers=n_readers)
    # the extra unit: two votes by the first two readers of stratum 0
    r0 = np.unique(reader[stratum == 0])[:2]
    paired = scope_votes(
        np.concatenate([unit, [n_u, n_u]]),
        np.concatenate([reader, r0]),
        np.concatenate([category, [0, 1]]),
        np.concatenate([judge, [1]]),
        np.concatenate([stratum, [0]]),
        n_readers=n_readers,
    )
    assert one_vote.one_vote and not paired.one_vote
    assert (one_vote._t["judge_stratum"] is None) is (not dense_by_judge)
    rng = np.random.default_rng(4)
    wu = rng.multinomial(n_u, np.full(n_u, 1 / n_u), 5).astype(float)
    wr = rng.multinomial(n_readers, np.full(n_readers, 1 / n_readers), 5).astype(float)
    ones_u, ones_r = np.ones((1, n_u)), np.ones((1, n_readers))
    for u, r in ((wu, ones_r), (ones_u, wr), (wu, wr), (ones_u, ones_r)):
        got = agreement_statistics(one_vote, u, r)
        want = agreement_statistics(paired, np.hstack([u, np.zeros((u.shape[0], 1))]), r)
        for name in ("kappa_majority", "kappa_readers"):
            np.testing.assert_array_equal(got[name], want[name], err_msg=name)
            assert np.isfinite(got[name]).any()
        for name in ("alpha_judge_human", "alpha_human", "alpha_difference", "raw_judge_human", "raw_human"):
            assert got[name].shape == got["kappa_majority"].shape
            assert np.isnan(got[name]).all(), name


def test_unit_weights_equal_a_loop_over_matchups_bit_for_bit():
    """The weights of any layout of pairs (here a cells x units grid) are each matchup's draws, column by
    column, as a pass over the units of every matchup in turn gives them."""
    rng = np.random.default_rng(7)
    sizes = np.array([5, 9, 1, 14])
    pair_matchup = np.repeat(np.arange(4), sizes)
    position = np.concatenate([np.arange(n) for n in sizes])
    design = type(
        "D",
        (),
        {
            "unit_pair": np.arange(sizes.sum()),
            "pair_matchup": pair_matchup,
            "pair_position": position,
            "matchup_sizes": sizes,
            "reader_ids": np.arange(3),
        },
    )()
    weights = _Weights(rng, design, 40)
    unit_pair = rng.permutation(sizes.sum())[:24].reshape(4, 6)
    for seed, size in weights.blocks():
        got = weights.units(seed, size, unit_pair)
        want = np.empty((size, *unit_pair.shape))
        unit_m = pair_matchup[unit_pair]
        for m in np.unique(unit_m):
            w = weights._draw([seed, 1, int(m)], int(sizes[m]), size)
            cols = unit_m == m
            want[:, cols] = w[:, position[unit_pair[cols]]]
        np.testing.assert_array_equal(got, want)


def test_one_vote_study_reports_nan_alpha_and_finite_kappa_intervals():
    """A one-vote study through judge_agreement: every scope's alpha and raw comparisons NaN, kappa with an
    interval around it, and the same numbers from the same seed."""
    unit, reader, category, judge, stratum = _one_vote_scope(5, n_units=300, n_readers=30, n_strata=4)
    y = np.array([0.0, 1.0, np.nan])[category]
    votes = pd.DataFrame(
        {
            "pair_id": [f"p{u}" for u in unit],
            "reader_id": [f"r{r}" for r in reader],
            "criterion": "overall",
            "matchup": [f"m{s}" for s in stratum],
            "y": y,
        }
    )
    yj = np.array([0.0, 1.0, 0.5, np.nan])[judge]
    choices = pd.DataFrame({"pair_id": votes["pair_id"], "criterion": "overall", "y_judge": yj})
    first = judge_agreement(votes, choices, n_boot=60, rng=11).to_frame()
    again = judge_agreement(votes, choices, n_boot=60, rng=11).to_frame()
    pd.testing.assert_frame_equal(first, again)
    assert len(first) == 5  # four matchups and all
    assert first[["alpha_human", "alpha_judge_human", "raw_human", "raw_judge_human"]].isna().all().all()
    assert (first["kappa_majority_ci_low"] <= first["kappa_majority"]).all()
    assert (first["kappa_majority"] <= first["kappa_majority_ci_high"]).all()


def _one_vote_frames(seed, **shape):
    """The votes and the judge's choices of :func:`_one_vote_scope`'s scope, as the audit reads them."""
    unit, reader, category, judge, stratum = _one_vote_scope(seed, **shape)
    votes = pd.DataFrame(
        {
            "pair_id": [f"p{u}" for u in unit],
            "reader_id": [f"r{r}" for r in reader],
            "criterion": "overall",
            "matchup": [f"m{s}" for s in stratum],
            "y": np.array([0.0, 1.0, np.nan])[category],
        }
    )
    choices = pd.DataFrame(
        {"pair_id": votes["pair_id"], "criterion": "overall", "y_judge": np.array([0.0, 1.0, 0.5, np.nan])[judge]}
    )
    return votes, choices


@pytest.mark.parametrize("rows_per_chunk", [2, 3, 1])
def test_chunks_computed_a_block_at_a_time_equal_chunks_one_by_one(rows_per_chunk, monkeypatch):
    """A large scope's chunks of a few replicates (the memory bound's) are computed a block at a time; the
    figures are those of each chunk on its own to the last bit, lone replicates included (with 3 replicates
    per chunk a block of 16 leaves one)."""
    from judge_transfer_audit.statistics.judge import agreement

    votes, choices = _one_vote_frames(6, n_units=300, n_readers=30, n_strata=12)
    monkeypatch.setattr(agreement, "_BLOCK_MIN", 16)
    monkeypatch.setattr(agreement, "_BLOCK_MAX", 16)  # the same blocks (the same draws) both ways
    monkeypatch.setattr(agreement, "_CELLS", 300 * rows_per_chunk)
    together = judge_agreement(votes, choices, n_boot=60, rng=3)
    monkeypatch.setattr(agreement, "_computed_together", lambda sizes, block: sizes)
    one_by_one = judge_agreement(votes, choices, n_boot=60, rng=3)
    pd.testing.assert_frame_equal(together.to_frame(), one_by_one.to_frame(), check_exact=True)
    pd.testing.assert_frame_equal(together.readers, one_by_one.readers, check_exact=True)


def test_reader_weights_kept_or_drawn_again_give_the_same_figures(monkeypatch):
    from judge_transfer_audit.statistics.judge import agreement

    votes, choices = _one_vote_frames(8, n_units=200, n_readers=20, n_strata=5)
    kept = judge_agreement(votes, choices, n_boot=40, rng=5).to_frame()
    monkeypatch.setattr(agreement, "_READERS_KEPT_MAX", 0)
    monkeypatch.setattr(agreement, "_KEPT_MAX", 0)
    drawn_again = judge_agreement(votes, choices, n_boot=40, rng=5).to_frame()
    pd.testing.assert_frame_equal(kept, drawn_again, check_exact=True)


def test_chunk_sizes_join_pieces_and_keep_lone_replicates_alone():
    from judge_transfer_audit.statistics.judge.agreement import _chunk_sizes, _computed_together

    assert _chunk_sizes([16, 16, 4], 2) == [2] * 18
    assert _chunk_sizes([16, 16, 4], 3) == [3, 3, 3, 3, 3, 1, 3, 3, 3, 3, 3, 1, 3, 1]
    assert _chunk_sizes([16, 4], 40) == [20]
    assert _computed_together([2] * 18, 16) == [16, 16, 4]
    assert _computed_together([3, 3, 3, 3, 3, 1, 3, 3, 3, 3, 3, 1, 3, 1], 16) == [15, 1, 15, 1, 3, 1]
    assert _computed_together([20], 16) == [20]
