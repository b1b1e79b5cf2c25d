"""judge_transfer_audit.statistics.leaderboard.diagnostics: each diagnostic on a seeded design built to show it (and
one built not to): tied neighbours, the position effect, heavy readers, intransitive triples, the tie convention."""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_transfer_audit.statistics.leaderboard.diagnostics import intransitive_triples, leaderboard_diagnostics
from judge_transfer_audit.statistics.leaderboard.fit import bradley_terry_leaderboard


def _arena(truth, n_votes, seed, *, gamma=0.0, n_readers=300, first=None, reader_of=None, p_tie=0.0):
    """One vote per pair, random matchups; ``first[i]``: the system shown first (default: at random)."""
    rng = np.random.default_rng(seed)
    k = len(truth)
    names = np.array([f"s{j:02d}" for j in range(k)])
    a = rng.integers(0, k, n_votes)
    b = (a + rng.integers(1, k, n_votes)) % k
    a_first = rng.random(n_votes) < 0.5 if first is None else first(a, b)
    eta = truth[a] - truth[b] + gamma * np.where(a_first, 1.0, -1.0)
    y = (rng.random(n_votes) < 1 / (1 + np.exp(-eta))).astype(float)
    y[rng.random(n_votes) < p_tie] = np.nan
    reader = rng.integers(0, n_readers, n_votes) if reader_of is None else reader_of(rng, n_votes)
    return pd.DataFrame(
        {
            "pair_id": [f"p{i}" for i in range(n_votes)],
            "reader_id": [f"r{r}" for r in reader],
            "criterion": "overall",
            "focal": names[a],
            "other": names[b],
            "y": y,
            "shown_first": np.where(a_first, names[a], names[b]),
        }
    )


def _diag(votes):
    return bradley_terry_leaderboard(votes, n_boot=0, rng=0).diagnostics


def _by_system(diag):
    return {s.system: s for s in diag.systems}


def test_tied_neighbours_are_the_equal_systems():
    """Strengths 2, 1, 1, 0, -1 (far apart but for the two equal ones): only s01 and s02 are tied and
    their rank intervals are 2-3; the others are pinned."""
    votes = _arena(np.array([2.0, 1.0, 1.0, 0.0, -1.0]), 6000, 1)
    diag = _diag(votes)
    assert {frozenset(p) for p in diag.tied_neighbours} == {frozenset({"s01", "s02"})}
    assert "1 of 4 neighbouring pairs are statistically tied at 95%" in str(diag)
    ranks = _by_system(diag)
    assert (ranks["s01"].rank_low, ranks["s01"].rank_high) == (2, 3)
    assert (ranks["s02"].rank_low, ranks["s02"].rank_high) == (2, 3)
    assert (ranks["s00"].rank_low, ranks["s00"].rank_high) == (1, 1)
    assert (ranks["s04"].rank_low, ranks["s04"].rank_high) == (5, 5)


def test_position_effect_is_estimated_and_moves_a_confounded_order():
    """s00 (strength 0.1) is always shown first and gains 0.8 from it: unadjusted it leads, with the
    position term s01 (0.3) leads again; the estimated effect covers 0.8."""
    truth = np.array([0.1, 0.3, -0.5, -1.0])

    def first(a, b):  # s00 always shown first; otherwise at random by parity
        return np.where(a == 0, True, np.where(b == 0, False, (a + b) % 2 == 0))

    diag = _diag(_arena(truth, 8000, 2, gamma=0.8, first=first))
    assert diag.position.ci_low < 0.8 < diag.position.ci_high and diag.position.ci_low > 0.5
    ranks = _by_system(diag)
    assert ranks["s00"].rank_vote_level == 1 and ranks["s00"].rank_position_adjusted == 2
    assert ranks["s01"].rank_position_adjusted == 1
    assert set(diag.position_moved) == {"s00", "s01"} and diag.position_tau < 1


def test_without_shown_first_there_is_no_position_diagnostic():
    votes = _arena(np.array([1.0, 0.0, -1.0]), 1500, 3).drop(columns="shown_first")
    diag = _diag(votes)
    assert diag.n_position_votes == 0 and diag.position is None and diag.position_tau is None
    assert all(s.rank_position_adjusted is None for s in diag.systems)
    assert not any(line.startswith("position") for line in diag.summary_lines())


def test_a_heavy_reader_who_favours_one_system_carries_the_order():
    """Four readers cast 40% of the votes and always prefer s03 (true strength last): the reader-clustered
    intervals are wider than the vote-level ones, and without those readers s03 falls back to last."""
    truth = np.array([0.6, 0.3, 0.0, -0.3])
    rng = np.random.default_rng(4)
    votes = _arena(truth, 4000, 4, n_readers=400)
    heavy = rng.random(len(votes)) < 0.4
    votes.loc[heavy, "reader_id"] = [f"h{j}" for j in rng.integers(0, 4, heavy.sum())]
    has3 = (votes.focal == "s03") | (votes.other == "s03")
    votes.loc[heavy & has3, "y"] = (votes.focal[heavy & has3] == "s03").astype(float)
    diag = _diag(votes)
    ranks = _by_system(diag)
    assert 1 <= diag.heavy_readers <= 4
    assert diag.max_reader_share > 0.08 and diag.effective_readers < 40
    assert ranks["s03"].rank_vote_level < 4 and ranks["s03"].rank_without_heavy_readers == 4
    assert "s03" in diag.heavy_moved
    assert ranks["s03"].se_readers > 2 * ranks["s03"].se_votes and diag.design_effect > 2


def test_even_readers_leave_the_intervals_alone():
    """Many readers, no reader effect: clustered and vote-level variances agree (design effect near 1)."""
    diag = _diag(_arena(np.linspace(1, -1, 6), 6000, 5, n_readers=2000))
    assert 0.8 < diag.design_effect < 1.2 and diag.heavy_tau > 0.7


def test_a_planted_circle_is_found_and_a_transitive_arena_has_none():
    """s00 > s01 > s02 > s00 at 75% each (200 votes a matchup), the rest a Bradley-Terry arena."""
    rng = np.random.default_rng(6)
    votes = _arena(np.array([0.5, 0.4, 0.3, -1.0, -1.5]), 3000, 6)
    rows = []
    for i, (a, b) in enumerate((("s00", "s01"), ("s01", "s02"), ("s02", "s00"))):
        for j in range(200):
            rows.append((f"c{i}-{j}", f"r{j % 50}", "overall", a, b, float(rng.random() < 0.75), a))
    circle = pd.DataFrame(rows, columns=votes.columns)
    keep = ~(votes.focal.isin(["s00", "s01", "s02"]) & votes.other.isin(["s00", "s01", "s02"]))
    diag = _diag(pd.concat([votes[keep], circle], ignore_index=True))
    assert diag.n_triples == 10 and diag.n_significant_cycles == 1
    (c,) = diag.cycles
    assert set(c.systems) == {"s00", "s01", "s02"} and min(c.win_rates) > 0.6 and c.p_value < 0.005
    clean = _diag(_arena(np.linspace(1.5, -1.5, 8), 8000, 7))
    assert clean.n_significant_cycles == 0 and clean.n_triples == 56


def test_intransitive_triples_counts_each_circle_once():
    wins = np.array([[0, 30, 10], [10, 0, 30], [30, 10, 0]], float)  # 0>1>2>0 at 75%
    n_triples, n_cycles, n_sig, cycles = intransitive_triples(wins, ["a", "b", "c"], 0.95)
    assert (n_triples, n_cycles, n_sig) == (1, 1, 1)
    assert cycles[0].systems == ("a", "b", "c") and cycles[0].win_rates == (0.75, 0.75, 0.75)
    assert cycles[0].n_votes == (40, 40, 40)
    wins[2, 0], wins[0, 2] = 10, 30  # 0 beats 2: transitive
    assert intransitive_triples(wins, ["a", "b", "c"], 0.95)[1] == 0


def test_ties_as_half_a_win_reorder_systems_that_tie_often():
    """s01 wins 75% of its decisive votes against s02 but ties 80% of the time; s00 wins 60% against s02
    and never ties: left out, the ties put s01 first; as half a win each, s00."""
    rows = []

    def add(a, b, wins, losses, ties):
        for y in [1.0] * wins + [0.0] * losses + [np.nan] * ties:
            rows.append((f"p{len(rows)}", f"r{len(rows) % 40}", "overall", a, b, y, ""))

    add("s00", "s02", 60, 40, 0)
    add("s01", "s02", 15, 5, 80)
    add("s00", "s01", 50, 50, 0)
    votes = pd.DataFrame(rows, columns=["pair_id", "reader_id", "criterion", "focal", "other", "y", "shown_first"])
    diag = _diag(votes)
    ranks = _by_system(diag)
    assert diag.n_ties == 80
    assert ranks["s01"].rank_vote_level == 1 and ranks["s00"].rank_ties_half == 1
    assert set(diag.tie_moved) == {"s00", "s01"}


def test_diagnostics_take_the_leaderboard_strengths_directly():
    """Called on their own with the GLMM strengths and covariance: the rank intervals follow them."""
    votes = _arena(np.array([1.0, 0.0, -1.0]), 1500, 8)
    cov = np.diag([1e-4] * 3)
    diag = leaderboard_diagnostics(votes, ["s00", "s01", "s02"], np.array([1.0, 0.0, -1.0]), cov)
    assert not diag.tied_neighbours and [s.rank for s in diag.systems] == [1, 2, 3]
    wide = leaderboard_diagnostics(votes, ["s00", "s01", "s02"], np.array([1.0, 0.0, -1.0]), cov * 1e4)
    assert len(wide.tied_neighbours) == 2 and all((s.rank_low, s.rank_high) == (1, 3) for s in wide.systems)


def test_a_system_that_wins_every_vote_is_named():
    rng = np.random.default_rng(9)
    rows = []
    for i in range(300):
        a, b = rng.choice(["s0", "s1", "s2", "s3"], 2, replace=False)
        y = 1.0 if a == "s0" else (0.0 if b == "s0" else float(rng.random() < 0.5))
        rows.append((f"p{i}", f"r{i % 20}", "overall", a, b, y, ""))
    votes = pd.DataFrame(rows, columns=["pair_id", "reader_id", "criterion", "focal", "other", "y", "shown_first"])
    diag = _diag(votes)
    assert any(note.startswith("s0 win(s) or lose(s) every decisive vote") for note in diag.notes)
    assert diag.systems[0].system == "s0" and diag.systems[0].rank_vote_level == 1
