"""The steps' estimated costs: what ranks them on a pool (audit.step_costs)."""

from __future__ import annotations

import dataclasses

import pytest

from audit.step_costs import COSTS, RunShape, estimate
from tests.audit.synthetic import make_audit_data

#: arena-100k (5k pairs of 20 votes) and the Chatbot-Arena shape (100k pairs of one vote): the same
#: votes and cells, the pairs apart (`python benchmarks/parallel_bound.py -- STUDY`)
PANEL = RunShape(votes=100_000, cells=190, ranked_votes=100_000.0, pairs=5_000)
ONE_VOTE_PER_PAIR = dataclasses.replace(PANEL, pairs=100_000)


def test_an_estimate_is_its_terms_times_their_coefficients():
    shape = RunShape(votes=6300, cells=18, judges=4, texts=300, dev_rows=2000, pairs=900)
    for step, terms in COSTS.items():
        assert estimate(step, shape) == pytest.approx(sum(c * shape.term(t) for t, c in terms.items()))
    assert shape.term("judge_cells") == 72 and shape.term("fixed") == 1 and shape.term("ranked") == 0


def test_the_pairs_count_where_the_bootstraps_resample_pairs():
    # measured in-order (CPU-s, panel -> one vote per pair): verdict 5.6 -> 10.7, judge
    # configurations 2.8 -> 9.6, judge agreement 5.8 -> 34; the leaderboard's refits follow the votes
    grows = {s for s in COSTS if estimate(s, ONE_VOTE_PER_PAIR) > estimate(s, PANEL)}
    assert grows == {"verdict", "judge_configurations", "judge_agreement"}
    assert estimate("judge_agreement", ONE_VOTE_PER_PAIR) > 5 * estimate("judge_agreement", PANEL)


def test_the_run_shape_counts_the_pairs_times_the_criteria():
    from audit.pipeline import _run_shape

    data = make_audit_data(n_pairs=7, matchups=("a vs b", "c vs d"))
    shape = _run_shape(data, parts=[object()] * 6, configurations={})
    assert shape.pairs == 14 * len(data.criteria) and shape.votes == len(data.votes) and shape.cells == 6


def _fixture_ranks(shape: RunShape) -> list[str]:
    """The fixture's steps by rank (estimate plus the longest chain after it), highest first."""
    e = {s: estimate(s, shape) for s in COSTS}
    rank = {
        # the other configurations decided inside the verdict's step, then the judge configurations'
        "verdict": e["verdict"] + e["configurations"] + e["judge_configurations"],
        "human GLMMs": e["glmm"] + max(e["uncertainty"], e["readers"]),
        **{s: e[s] for s in ("uncertainty", "readers", "surface", "dev", "judge_agreement", "judge_position")},
        "provenance": e["provenance"],
    }
    return sorted(rank, key=rank.get, reverse=True)


def test_the_pairs_term_keeps_the_fixtures_steps_in_their_order():
    # the README fixture: 6,300 votes, 18 cells, 4 other configurations, 300 texts, 2,000 dev rows,
    # 150 pairs x 6 criteria; its 1.6x on two workers was measured with this order
    fixture = RunShape(votes=6300, cells=18, judges=4, texts=300, dev_rows=2000, pairs=900)
    assert _fixture_ranks(fixture) == _fixture_ranks(dataclasses.replace(fixture, pairs=0))
