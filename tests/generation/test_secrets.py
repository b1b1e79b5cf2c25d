"""The API key reaches the server's Authorization header and nothing else."""

from __future__ import annotations

import logging

import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.generation.protocol import load_protocol
from judge_transfer_audit.generation.providers import OpenAICompatProvider
from tests.generation.conftest import FAST, protocol_toml
from tests.support.openai_server import Reply, Status

SECRET = "sk-test-7f3a9c1e5b2d4068-DO-NOT-LEAK"


def test_key_never_leaks(server, tmp_path, premises, monkeypatch, caplog, capsys):
    monkeypatch.setenv("JA_TEST_KEY", SECRET)
    caplog.set_level(logging.DEBUG)
    logging.getLogger("judge_transfer_audit.generation.providers.openai").setLevel(logging.DEBUG)
    (tmp_path / "p.toml").write_text(protocol_toml(server.url, api_key_env="JA_TEST_KEY"))
    premises.to_csv(tmp_path / "premises.csv", index=False)
    # the server misbehaves first: a 429 whose body echoes the key, then a refusal echoing it
    server.push("alpha", Status(429, retry_after=0.0, message=f"rate limited for key {SECRET}"))
    assert (
        main(
            [
                "generate",
                str(tmp_path / "premises.csv"),
                "--protocol",
                str(tmp_path / "p.toml"),
                "--out",
                str(tmp_path / "out"),
                "--seed",
                "1",
            ]
        )
        == 0
    )
    rubric = tmp_path / "r.toml"
    options = "\n".join(f"{k} = {v}" for k, v in FAST.items())
    rubric.write_text(
        f'[judge.provider]\nprovider = "openai"\nmodel = "judge"\nbase_url = "{server.url}"\napi_key_env = '
        f'"JA_TEST_KEY"\n{options}\n'
    )
    server.responder = lambda body: (
        Reply('{"authenticity": 3, "empathy": 3, "engagement": 3, "emotion_provocation": 3, "narrative_complexity": 3}')
        if body["model"] == "judge"
        else None
    )
    assert (
        main(
            ["score", str(tmp_path / "out" / "stories.csv"), "--rubric", str(rubric), "-o", str(tmp_path / "judge.csv")]
        )
        == 0
    )
    assert (
        main(
            [
                "labelstudio",
                "export",
                str(tmp_path / "out" / "pairs.csv"),
                str(tmp_path / "out" / "stories.csv"),
                "-o",
                str(tmp_path / "tasks.json"),
            ]
        )
        == 0
    )
    server.push("judge", Status(401, message=f"invalid key {SECRET}"))
    assert (
        main(
            [
                "score",
                str(tmp_path / "out" / "stories.csv"),
                "--rubric",
                str(rubric),
                "-o",
                str(tmp_path / "judge2.csv"),
            ]
        )
        == 5
    )
    # the key was used...
    auth = {r.headers.get("Authorization") for r in server.chat_requests()}
    assert auth == {f"Bearer {SECRET}"}
    # ...and is nowhere else
    captured = capsys.readouterr()
    assert "REDACTED" in captured.err  # the 401 message was shown, redacted
    assert "REDACTED" in caplog.text  # the 429 retry was logged, redacted
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) >= 8
    for path in written:
        assert SECRET not in path.read_text(encoding="utf-8", errors="replace"), path
    assert SECRET not in caplog.text and SECRET not in captured.out and SECRET not in captured.err
    provider = OpenAICompatProvider(model="m", base_url=server.url, api_key_env="JA_TEST_KEY", **FAST)
    assert SECRET not in repr(provider) and SECRET not in str(provider.describe())
    assert SECRET not in str(load_protocol(tmp_path / "p.toml"))


def test_key_absent_means_no_header(server):
    OpenAICompatProvider(model="m", base_url=server.url, **FAST).chat([])
    assert "Authorization" not in server.chat_requests()[0].headers


@pytest.mark.parametrize("name", ["", None])
def test_empty_key_name_means_no_key(server, name):
    provider = OpenAICompatProvider(model="m", base_url=server.url, api_key_env=name, **FAST)
    assert provider.describe()["api_key_env"] is None


def test_custom_key_header(server, monkeypatch):
    monkeypatch.setenv("JA_TEST_KEY", SECRET)
    OpenAICompatProvider(
        model="m", base_url=server.url, api_key_env="JA_TEST_KEY", api_key_header="api-key", **FAST
    ).chat([])
    headers = {k.lower(): v for k, v in server.chat_requests()[0].headers.items()}
    assert headers["api-key"] == SECRET and "authorization" not in headers


def test_credentials_in_base_url_are_refused_without_echoing_them(server):
    """user:password@ in base_url cannot be sent by urllib: an input error that masks the password."""
    from judge_transfer_audit.core.errors import InputError

    host = server.url.split("//", 1)[1]
    with pytest.raises(InputError) as info:
        OpenAICompatProvider(model="m", base_url=f"http://bob:hunter2@{host}", **FAST)
    assert "user:password@" in str(info.value) and "hunter2" not in str(info.value) and "***@" in str(info.value)


def test_query_string_of_base_url_is_masked_in_records(server):
    provider = OpenAICompatProvider(model="m", base_url=server.url + "?token=hunter3", **FAST)
    for text in (repr(provider), str(provider.describe())):
        assert "hunter3" not in text and "?***" in text
