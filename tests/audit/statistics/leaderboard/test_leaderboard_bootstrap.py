"""judge_transfer_audit.statistics.leaderboard.bootstrap: copies of a resampled cluster are clusters of their own (and
why), the replicate's link check against the component search."""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_transfer_audit.statistics.leaderboard.bootstrap import all_linked, replicate_clusters
from judge_transfer_audit.statistics.leaderboard.fit import comparison_components


def test_replicate_clusters_make_each_copy_a_cluster():
    """Rows 0, 1 in cluster 0 (drawn twice), row 2 in cluster 1 (not drawn), row 3 in cluster 2 (once):
    the rows repeated are 0, 0, 1, 1, 3 and the two copies of cluster 0 are two clusters."""
    code, counts = np.array([0, 0, 1, 2]), np.array([2, 0, 1])
    assert np.repeat(np.arange(4), counts[code]).tolist() == [0, 0, 1, 1, 3]
    labels = replicate_clusters(code, counts)
    assert labels.tolist() == [0, 1, 0, 1, 4]  # copy 0 of cluster 0 holds rows 0 and 1, so does copy 1
    rng = np.random.default_rng(2)
    for _ in range(50):
        code = rng.integers(0, 30, 200)
        counts = np.bincount(rng.integers(0, 30, 30), minlength=30)
        labels = replicate_clusters(code, counts)
        rows = np.repeat(np.arange(200), counts[code])
        assert labels.size == rows.size
        # every cluster drawn c times gives c clusters of its own, each with all of the cluster's rows
        for c in np.intersect1d(np.flatnonzero(counts), code):
            mine = labels[code[rows] == c]
            assert len(set(mine.tolist())) == counts[c]
            assert all((mine == v).sum() == (code == c).sum() for v in set(mine.tolist()))
        assert len(set(labels.tolist())) == int(counts[np.unique(code)].sum())


def test_a_copied_cluster_keeps_the_cluster_variance():
    """Why copies are clusters of their own: every pair drawn twice and merged doubles each pair's votes,
    and the pair sd is overstated (1.48 -> 2.60 here); as copies it stays near the full fit's (1.49)."""
    from judge_transfer_audit.statistics.glmm import fit_crossed_glmm

    rng = np.random.default_rng(11)
    pairs, readers = 300, 12
    pair = np.repeat(np.arange(pairs), 3)
    reader = np.concatenate([rng.choice(readers, 3, replace=False) for _ in range(pairs)])
    eta = 0.3 + rng.normal(0, 1.5, pairs)[pair] + rng.normal(0, 0.3, readers)[reader]
    y = (rng.random(pair.size) < 1 / (1 + np.exp(-eta))).astype(float)
    full = fit_crossed_glmm(y, {"pair": pair, "reader": reader}).sd["pair"]
    code, counts = pair, np.full(pairs, 2)
    rows = np.repeat(np.arange(pair.size), counts[code])
    merged = fit_crossed_glmm(y[rows], {"pair": pair[rows], "reader": reader[rows]}).sd["pair"]
    copies = fit_crossed_glmm(y[rows], {"pair": replicate_clusters(code, counts), "reader": reader[rows]}).sd["pair"]
    assert abs(copies - full) < 0.1 * full
    assert merged > 1.4 * full


def test_all_linked_is_one_component_with_every_system():
    rng = np.random.default_rng(4)
    names = np.array([f"s{j}" for j in range(7)])
    for _ in range(300):
        n = int(rng.integers(1, 12))
        a, b = rng.integers(0, 7, n), rng.integers(0, 7, n)
        keep = a != b
        a, b = a[keep], b[keep]
        expected = len(comparison_components(names[a], names[b])) == 1 and len({*a.tolist(), *b.tolist()}) == 7
        assert all_linked(a, b, 7) == expected


def _one_vote_per_pair(n=3_000, k=8, readers=150, seed=6):
    rng = np.random.default_rng(seed)
    names = np.array([f"s{j}" for j in range(k)], dtype=object)
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    reader = rng.integers(0, readers, n)
    eta = np.linspace(1, -1, k)[a] - np.linspace(1, -1, k)[b] + rng.normal(0, 0.6, readers)[reader]
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    y[rng.random(n) < 0.1] = np.nan
    return pd.DataFrame(
        {
            "pair_id": [f"p{i}" for i in range(n)],
            "reader_id": [f"r{j}" for j in reader],
            "criterion": "overall",
            "focal": names[a],
            "other": names[b],
            "y": y,
        }
    )


def test_weighted_replicates_equal_the_repeated_votes_refits(monkeypatch):
    """One vote per pair (no cluster term): the replicates refitted from weighted votes give the leaderboard
    the general refits of the repeated votes give, figure for figure."""
    import judge_transfer_audit.statistics.leaderboard.bootstrap as bootstrap
    import judge_transfer_audit.statistics.leaderboard.fit as leaderboard
    from judge_transfer_audit.statistics.leaderboard.fit import bradley_terry_leaderboard

    votes = _one_vote_per_pair()
    calls = []
    weighted = bootstrap.weighted_human_strengths

    def counted(block, weight):
        calls.append(1)
        return weighted(block, weight)

    monkeypatch.setattr(bootstrap, "weighted_human_strengths", counted)
    fast = bradley_terry_leaderboard(votes, n_boot=12, rng=3)
    assert fast.cluster == "none" and len(calls) == 12
    monkeypatch.setattr(bootstrap, "weighted_refits", lambda block: False)
    monkeypatch.setattr(leaderboard, "weighted_refits", lambda block: False)
    general = bradley_terry_leaderboard(votes, n_boot=12, rng=3)
    assert len(calls) == 12
    pd.testing.assert_frame_equal(fast.to_frame(), general.to_frame())
    assert fast.n_boot_failed == general.n_boot_failed == 0
