"""What a real (local, 127.0.0.1) OpenAI-compatible server answers: no empty story is written, and a
server trickling its answer is cut well before the 600 s default deadline."""

from __future__ import annotations

import json
import time

import pandas as pd
import pytest

from judge_transfer_audit.core.errors import ProviderError
from judge_transfer_audit.generation.providers import ChatMessage, OpenAICompatProvider
from judge_transfer_audit.generation.providers.http_client import HttpLimits
from tests.generation.conftest import protocol_toml
from tests.hostile.conftest import run_cli
from tests.support.openai_server import Message, Reply, ScriptedServer, Trickle, story


@pytest.fixture
def server():
    with ScriptedServer(lifetime_s=60) as srv:
        yield srv


def _generate(server, tmp_path, capsys):
    pd.DataFrame({"premise_id": ["w1", "w2"], "premise": ["A lamp.", "A river."]}).to_csv(
        tmp_path / "premises.csv", index=False
    )
    (tmp_path / "p.toml").write_text(protocol_toml(server.url, max_attempts=3))
    argv = ["generate", str(tmp_path / "premises.csv"), "--protocol", str(tmp_path / "p.toml")]
    return run_cli([*argv, "--out", str(tmp_path / "out"), "--seed", "1"], capsys, protect=[tmp_path / "premises.csv"])


def test_content_null_in_every_attempt_is_a_provider_error_not_an_empty_story(server, tmp_path, capsys):
    server.responder = lambda body: Message({"role": "assistant", "content": None})
    status, _, err = _generate(server, tmp_path, capsys)
    assert status == 5, err
    assert "no text in all 3 attempt(s)" in err and "content null or empty" in err
    assert not (tmp_path / "out" / "stories.csv").exists()
    attempts = [json.loads(line) for line in (tmp_path / "out" / "attempts.jsonl").read_text().splitlines()]
    assert any(r.get("type") == "attempt" and r["words"] == 0 for r in attempts)  # recorded, not kept


def test_an_empty_attempt_is_never_the_kept_one(server, tmp_path, capsys):
    """An empty answer is no story even when the others miss the word window (it is not 'closest')."""
    answers = iter([Message({"role": "assistant", "content": None}), Reply(story(2000))] * 8)
    server.responder = lambda body: next(answers)
    status, _, err = _generate(server, tmp_path, capsys)
    assert status == 0, err
    stories = pd.read_csv(tmp_path / "out" / "stories.csv")
    assert stories["text"].str.len().gt(0).all()


HELLO = [ChatMessage("user", "hello")]


def test_the_transfer_limit_is_far_below_the_default_deadline():
    limits = HttpLimits()
    assert limits.deadline_s == 600.0 and limits.transfer_s == 60.0


@pytest.mark.parametrize("phase", ["body", "headers"])
def test_a_trickling_server_is_cut_at_the_transfer_limit_not_the_deadline(server, phase):
    """One byte every 0.2 s never trips timeout_s = 5, and the deadline stays the 600 s default:
    the answer is cut transfer_s = 1 after its first byte."""
    server.push("m", Trickle(Reply("never finished"), interval_s=0.2, phase=phase))
    provider = OpenAICompatProvider(model="m", base_url=server.url, timeout_s=5.0, transfer_s=1.0, max_retries=0)
    assert provider.limits.deadline_s == 600.0
    start = time.monotonic()
    with pytest.raises(ProviderError, match=r"transfer_s=1s after its first byte") as info:
        provider.chat(HELLO)
    assert 0.9 < time.monotonic() - start < 5.0
    assert "gave up after 1 request" in str(info.value)


def test_a_prompt_answer_is_not_cut(server):
    server.push("m", Reply("quick"))
    provider = OpenAICompatProvider(model="m", base_url=server.url, transfer_s=0.5, max_retries=0)
    assert provider.chat(HELLO).text == "quick"


def test_transfer_s_is_a_checked_protocol_key(server, tmp_path, capsys):
    pd.DataFrame({"premise_id": ["w1"], "premise": ["A lamp."]}).to_csv(tmp_path / "premises.csv", index=False)
    (tmp_path / "p.toml").write_text(
        protocol_toml(server.url).replace('model = "alpha"', 'model = "alpha"\ntransfer_s = -1')
    )
    argv = ["generate", str(tmp_path / "premises.csv"), "--protocol", str(tmp_path / "p.toml")]
    status, _, err = run_cli([*argv, "--out", str(tmp_path / "out")], capsys)
    assert status == 2 and "transfer_s" in err, err
