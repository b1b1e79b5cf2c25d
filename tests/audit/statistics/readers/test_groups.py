"""Reader groups: every cell split, groups compared by permutation over readers."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.statistics.readers._common import ALL_MATCHUPS, check_votes
from judge_transfer_audit.statistics.readers.groups import permutation_test, reader_groups

from .conftest import make_votes


def test_exact_permutation_matches_brute_force():
    rates = np.array([0.9, 0.8, 0.85, 0.3, 0.4, 0.35, 0.5])
    labels = np.array(["x", "x", "x", "y", "y", "y", "y"], dtype=object)
    stat, p, n_perm, exact = permutation_test(rates, labels, ["x", "y"], np.random.default_rng(0), 10000)
    obs = rates[:3].mean() - rates[3:].mean()
    brute = [
        abs(rates[list(c)].mean() - np.delete(rates, list(c)).mean()) >= abs(obs) - 1e-12
        for c in itertools.combinations(range(7), 3)
    ]
    assert exact and n_perm == 35
    assert stat == pytest.approx(obs)
    assert p == pytest.approx(np.mean(brute))


def test_sampled_permutation_is_reproducible_and_close_to_exact():
    rng_rates = np.random.default_rng(1).random(12)
    labels = np.array(["x"] * 6 + ["y"] * 6, dtype=object)
    _, p_exact, _, _ = permutation_test(rng_rates, labels, ["x", "y"], np.random.default_rng(0), 10000)
    _, p1, n1, exact1 = permutation_test(rng_rates, labels, ["x", "y"], np.random.default_rng(5), 500)
    _, p2, _, _ = permutation_test(rng_rates, labels, ["x", "y"], np.random.default_rng(5), 500)
    assert not exact1 and n1 == 500 and p1 == p2
    assert abs(p1 - p_exact) < 0.08


def test_three_groups_use_the_range():
    rates = np.array([0.1, 0.2, 0.5, 0.6, 0.9, 1.0])
    labels = np.array(["a", "a", "b", "b", "c", "c"], dtype=object)
    stat, p, n_perm, exact = permutation_test(rates, labels, ["a", "b", "c"], np.random.default_rng(0), 10000)
    assert stat == pytest.approx(0.8) and exact and n_perm == 90
    assert p == pytest.approx(6 / 90)  # only the 3! relabellings of the observed blocks are as extreme


def test_reader_groups_by_hand():
    votes = check_votes(make_votes(4, 10, seed=2))
    res = reader_groups(votes, rng=0)
    assert res.status is Status.PASS
    assert res.groups == ("enthusiast", "expert") and res.readers_per_group == {"enthusiast": 2, "expert": 2}
    cell = votes[votes["criterion"] == "empathy"]
    reader_rate = cell.assign(c=cell["y"].fillna(0.5)).groupby("reader_id")["c"].mean()
    bg = res.by_group.set_index(["matchup", "criterion", "group"])
    assert bg.loc[(ALL_MATCHUPS, "empathy", "expert"), "mean_reader_rate"] == pytest.approx(
        reader_rate[["r0", "r2"]].mean()
    )
    cmp_ = res.comparison.set_index(["matchup", "criterion"]).loc[(ALL_MATCHUPS, "empathy")]
    assert cmp_["statistic"] == pytest.approx(reader_rate[["r1", "r3"]].mean() - reader_rate[["r0", "r2"]].mean())
    assert bool(cmp_["exact"]) and cmp_["n_permutations"] == 6
    assert res.seed is None  # every test exact


def test_a_reader_in_two_groups_is_an_input_error():
    votes = check_votes(make_votes(3, 4))
    votes.loc[votes.index[0], "reader_group"] = "other"
    with pytest.raises(InputError, match="single reader_group"):
        reader_groups(votes)


def test_skips_and_ungrouped_readers():
    assert reader_groups(check_votes(make_votes(3, 4, optional=False))).status is Status.SKIPPED
    votes = check_votes(make_votes(4, 4))
    votes.loc[votes["reader_id"] == "r3", "reader_group"] = ""
    res = reader_groups(votes)
    assert res.n_ungrouped_readers == 1 and res.readers_per_group == {"enthusiast": 1, "expert": 2}
    one_group = votes.assign(reader_group="expert")
    assert "found 1" in reader_groups(one_group).reason
