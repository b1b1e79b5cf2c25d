"""Result objects round-trip through judge_transfer_audit.core.serialize; the journal survives kills, not edits."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from judge_transfer_audit.core.errors import InputError, ProviderError
from judge_transfer_audit.core.serialize import from_jsonable, to_jsonable
from judge_transfer_audit.generation.generate import GenerationResult
from judge_transfer_audit.generation.journal import Journal, read_journal
from judge_transfer_audit.generation.labelstudio import HumansImport, TaskExport
from judge_transfer_audit.generation.providers import OpenAICompatProvider
from judge_transfer_audit.generation.score import ScoreResult, load_rubric, score_stories
from tests.generation.conftest import FAST
from tests.support.openai_server import Reply, Status


def _round_trip(cls, value):
    return from_jsonable(cls, json.loads(json.dumps(to_jsonable(value))))


def test_results_round_trip():
    frame = pd.DataFrame({"pair_id": ["p"], "score": [float("nan")], "n": [3]})
    generation = GenerationResult(frame, frame, frame, 7, 2, 1, 1, 3, 0, 1)
    back = _round_trip(GenerationResult, generation)
    assert back.seed == 7 and back.n_incomplete_lines == 1
    pd.testing.assert_frame_equal(back.stories, frame)
    assert "blinding seed 7" in str(back) and back.to_frame().equals(frame)
    score = ScoreResult(frame, "j", 1, 2, 3, 4, 5, {"empathy": 5})
    assert _round_trip(ScoreResult, score).invalid_by_criterion == {"empathy": 5}
    humans = HumansImport(pd.DataFrame({"reader_id": ["r"]}), 1, 2, 3, 4, 5, 6)
    assert _round_trip(HumansImport, humans).n_tasks_without_annotation == 6
    tasks = TaskExport(({"data": {"pair_id": "p"}},), "t.json", "c.xml", 1)
    assert _round_trip(TaskExport, tasks) == tasks


def test_journal_tolerates_a_cut_line_only_at_a_run_boundary(tmp_path):
    path = tmp_path / "j.jsonl"
    journal = Journal(path)
    journal.write({"type": "run"})
    journal.write({"type": "attempt", "n": 1})
    with open(path, "a") as fh:
        fh.write('{"type": "attempt", "n"')  # killed mid-write
    Journal(path).write({"type": "run"})  # the next run starts on a fresh line
    records, cut = read_journal(path)
    assert cut == 1 and [r["type"] for r in records] == ["run", "attempt", "run"]
    with open(path, "a") as fh:
        fh.write("garbage\n")
    Journal(path).write({"type": "attempt", "n": 2})
    with pytest.raises(InputError, match="line 5"):
        read_journal(path)


def test_score_failure_keeps_answers_and_resumes(server, tmp_path):
    answer = json.dumps(
        {c: 4 for c in ("authenticity", "empathy", "engagement", "emotion_provocation", "narrative_complexity")}
    )
    server.responder = lambda body: Reply(answer)
    server.push("judge", Reply(answer), Reply(answer), Status(403, message="quota"))
    stories = pd.DataFrame({"pair_id": ["p1", "p1"], "system": ["a", "b"], "text": ["one", "two"]})
    config = load_rubric(overrides={"concurrency": 1})
    provider = OpenAICompatProvider(model="judge", base_url=server.url, **FAST)
    with pytest.raises(ProviderError, match="rerun to resume"):
        score_stories(stories, config, tmp_path / "judge.csv", provider=provider)
    assert not (tmp_path / "judge.csv").exists()  # no partial judge.csv
    assert len(server.chat_requests()) == 3  # nothing is sent after the failing (third) request
    result = score_stories(stories, config, tmp_path / "judge.csv", provider=provider)
    assert result.n_resumed == 2 and result.n_requests_now == 4
    assert len(server.chat_requests()) == 7  # 6 answers + the refused request, nothing asked twice
    assert pd.read_csv(tmp_path / "judge.csv")["score"].eq(4).all()
