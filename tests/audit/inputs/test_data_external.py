"""The real datasets of ../shared/datasets through load_audit_data (marker ``external``).

Counts are those stated in ../shared/datasets/README.md ("Known facts worth a test").
Nothing from, or derived from, those datasets is written inside the repository: the
conversion runs into pytest's tmp directory.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from judge_transfer_audit.inputs import load_audit_data

pytestmark = pytest.mark.external


@pytest.fixture(scope="module")
def converted(converted_datasets) -> Path:
    return converted_datasets


def test_pds_scalar_ratings_become_274_pairs_and_6850_votes(converted):
    d = converted / "pds"
    data = load_audit_data(d / "judge.csv", d / "humans.csv", stories=d / "stories.csv", scale=(1, 5))
    assert data.human_shape == "scalar"
    # 274 same-premise pairs and 6,850 votes, of which 16 pairs (400 votes) compare two stories
    # of the same system: self-matchups, left out and noted
    assert len(data.pairs) == 274 - 16
    assert len(data.votes) == 6850 - 400
    assert any("16 pair(s) compare two outputs of the same system" in n and "400 vote(s)" in n for n in data.notes)
    assert int((data.votes["choice"] == "tie").sum()) == 1447  # of the 1,552 ties, 105 were in self-matchups
    assert all(r.read == r.used + r.n_excluded for r in data.rows)
    assert data.votes["reader_id"].nunique() == 5 and len(data.criteria) == 5
    assert data.judges == ("gpt-4o", "gpt-3.5", "llama3-70b", "llama3-8b")
    assert data.judge_scores["score"].notna().all()
    assert data.stories["item_id"].nunique() == 97
    assert data.exclusions == ()


def test_summeval_144000_votes_76529_ties(converted):
    d = converted / "summeval"
    data = load_audit_data(d / "judge.csv", d / "humans.csv")
    assert len(data.votes) == 144_000
    assert int((data.votes["choice"] == "tie").sum()) == 76_529
    assert len(data.pairs) == 100 * 16 * 15 // 2 and data.pairs["matchup"].nunique() == 16 * 15 // 2


def test_mtbench_native_pairwise_votes_with_a_b_choices(converted):
    import pandas as pd

    d = converted / "mtbench"
    raw = pd.read_csv(d / "humans.csv")
    data = load_audit_data(d / "judge.csv", d / "humans.csv", pairs=d / "pairs.csv")
    assert len(data.votes) == len(raw)
    assert int((data.votes["choice"] == "tie").sum()) == int((raw["choice"] == "tie").sum())
    assert set(data.votes["choice"]) - {"tie"} <= set(data.pairs["system_a"]) | set(data.pairs["system_b"])
    assert data.judge_verdicts is not None and len(data.judges) == 6
    # gpt-3.5-turbo is in every pair: focal everywhere (in code-point order it was focal in some
    # matchups and not others, and the pooled figures averaged opposite directions)
    assert set(data.pairs["focal"]) == {"gpt-3.5-turbo"} and data.focal_source == "automatic"
    assert list(data.pooling_scopes()) == ["(all matchups)"]
    n_invalid = int((data.judge_verdicts["choice"] == "invalid").sum())
    counted = sum(e.n_rows for e in data.exclusions if e.role == "judge")
    assert counted == n_invalid
