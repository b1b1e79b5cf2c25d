"""judge_transfer_audit.engine.steps: the primary verdict in chunks of cells (verdict_steps) gives the cells of the
one-call verdict, in order and on a pool, bit for bit; decided_cells' counts and systems are pandas' own."""

from __future__ import annotations

import pandas as pd
import pytest

from judge_transfer_audit.engine import steps as pipeline_steps
from judge_transfer_audit.engine.pipeline import run_audit
from judge_transfer_audit.engine.task_graph import fork_available
from judge_transfer_audit.model.spec import AuditSpec
from judge_transfer_audit.model.tie_rules import EVEN_SPLIT
from judge_transfer_audit.verdict import chunked
from tests.audit.synthetic import make_audit_data

MATCHUPS = ("a vs b", "c vs d", "e vs f", "g vs h", "i vs j")


def _cells(jobs: int) -> list[str]:
    data = make_audit_data(n_pairs=12, n_readers=4, human_p=0.6, judge_p=0.7, matchups=MATCHUPS, ties_every=5)
    spec = AuditSpec(uncertainty=False, readers=False, surface=False, jobs=jobs, seed=3)
    return [repr(c) for c in run_audit(data, spec).cells]


@pytest.fixture(scope="module")
def whole() -> list[str]:
    return _cells(1)


@pytest.mark.parametrize("jobs", [1, 2])
def test_chunked_verdict_gives_the_one_call_cells(monkeypatch, whole, jobs):
    if jobs > 1 and not fork_available():
        pytest.skip("no fork")
    calls = []
    compared = pipeline_steps.compared_chunk

    def counted(cells, **kw):
        calls.append(len(cells))
        return compared(cells, **kw)

    monkeypatch.setattr(chunked, "CHUNK_CELLS", 4)
    monkeypatch.setattr(pipeline_steps, "compared_chunk", counted)
    got = _cells(jobs)
    assert len(whole) >= 12
    assert got == whole
    if jobs == 1:  # the steps ran here: every chunk was compared apart
        assert len(calls) == len(chunked.chunks(len(whole))) >= 3 and sum(calls) == len(whole)


def test_distinct_counts_as_nunique():
    frames = [
        pd.Series(["p1", "p2", "p1", "p3"]),
        pd.Series(["p1", None, "p1"], dtype="string[pyarrow]"),
        pd.Series(["r1", pd.NA, "r2"], dtype="string"),
        pd.Series([1.0, float("nan"), 1.0, 2.0]),
        pd.Series([], dtype=object),
    ]
    for s in frames:
        assert pipeline_steps._distinct(s) == s.nunique()


def test_systems_read_as_loc_does():
    meta = pd.DataFrame({"focal": ["a", "c"], "other": ["b", "d"]}, index=["a vs b", "c vs d"])
    assert pipeline_steps._systems(meta, ["c vs d", "a vs b", "c vs d"]) == {"c vs d": ("c", "d"), "a vs b": ("a", "b")}
    with pytest.raises(KeyError):
        pipeline_steps._systems(meta, ["x vs y"])
    assert pipeline_steps._systems(pd.concat([meta, meta]), ["a vs b"]) is None


def test_verdict_steps_chunk_only_many_cells_without_configurations(monkeypatch):
    monkeypatch.setattr(chunked, "CHUNK_CELLS", 2)
    decision = dict(tie_rule=EVEN_SPLIT, policy=None, seed=0)
    cells = [("m", f"c{k}", None, None) for k in range(5)]
    one = pipeline_steps.verdict_steps(cells[:3], {}, decision=decision)
    assert [s.name for s in one] == ["verdict"] and one[0].fn is pipeline_steps.primary_verdict
    shared = pipeline_steps.verdict_steps(cells, {"other": []}, decision=decision)
    assert [s.name for s in shared] == ["verdict"] and shared[0].kwargs["configurations"] == {"other": []}
    steps = pipeline_steps.verdict_steps(cells, {}, decision=decision)
    assert [s.name for s in steps] == ["verdict cells 1", "verdict cells 2", "verdict"]
    assert [len(s.kwargs["cells"]) for s in steps[:2]] == [2, 3]
    last = steps[-1]
    assert last.here and last.after == ("verdict cells 1", "verdict cells 2")
    assert last.arguments({"verdict cells 1": "a", "verdict cells 2": "b"}) == {"compared": ["a", "b"]}
