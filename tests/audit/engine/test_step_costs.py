"""The steps' estimated costs: what ranks them on a pool (judge_transfer_audit.engine.step_costs)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from judge_transfer_audit.engine.step_costs import COSTS, RunShape, estimate
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
    from judge_transfer_audit.engine.pipeline import _run_shape

    data = make_audit_data(n_pairs=7, matchups=("a vs b", "c vs d"))
    shape = _run_shape(data, parts=[object()] * 6, configurations={})
    assert shape.pairs == 14 * len(data.criteria) and shape.votes == len(data.votes) and shape.cells == 6


class _Graph(Exception):
    """Stops the run once its task graph is built."""


def _fixture_order(monkeypatch, without_pairs: bool) -> list[str]:
    """The README fixture's queued steps of a two-worker run, by rank (judge_transfer_audit.engine.task_graph.ranks),
    highest first."""
    import judge_transfer_audit as audit
    from judge_transfer_audit.engine import pipeline
    from judge_transfer_audit.engine.task_graph import ranks

    costs = {
        step: {t: c for t, c in terms.items() if not (without_pairs and t == "pairs")} for step, terms in COSTS.items()
    }
    monkeypatch.setattr("judge_transfer_audit.engine.step_costs.COSTS", costs)
    monkeypatch.setattr(pipeline, "_section_jobs", lambda spec: 2)
    monkeypatch.setattr(pipeline, "fork_available", lambda: True)

    def captured(steps, **_):
        # the steps that wait in the queue (a step here that farms first starts at once: its rank
        # only ranks its tasks, and those go ahead of every step)
        queued = {s.name for s in steps if not (s.here and s.farm_first)}
        raise _Graph({name: r for name, r in ranks(steps).items() if name in queued})

    monkeypatch.setattr(pipeline, "run_steps", captured)
    root = Path(__file__).resolve().parents[3] / "fixtures"
    with pytest.raises(_Graph) as graph:
        audit.run(
            root / "deployment" / "judge.csv",
            root / "deployment" / "humans.csv",
            pairs=root / "deployment" / "pairs.csv",
            stories=root / "deployment" / "stories.csv",
            dev_judge=root / "dev" / "judge.csv",
            dev_humans=root / "dev" / "humans.csv",
        )
    rank = graph.value.args[0]
    return sorted(rank, key=lambda name: (-rank[name], name))


def test_the_pairs_term_keeps_the_fixtures_steps_in_their_order(monkeypatch):
    # the README fixture (150 pairs x 6 criteria): its 1.6x on two workers was measured in this order
    with monkeypatch.context() as m:
        before = _fixture_order(m, without_pairs=True)
    assert _fixture_order(monkeypatch, without_pairs=False) == before
