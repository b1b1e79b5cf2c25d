"""The LLM HTTP client against hostile servers: deadline, size cap, redirects, odd answers.

Each test is a regression case of the hardening issue: the case, the outcome (a
ProviderError naming the limit, or an InputError naming the key) and how long it took.
"""

from __future__ import annotations

import json
import math
import sys
import time

import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.core.errors import InputError, MissingDependencyError, ProviderError
from judge_transfer_audit.generation.providers import ChatMessage, OpenAICompatProvider
from judge_transfer_audit.generation.providers.http_client import join_url, public_url, replace_lone_surrogates
from tests.generation.conftest import FAST
from tests.support.openai_server import Message, Oversized, Redirect, Reply, ScriptedServer, Trickle, story

HELLO = [ChatMessage("user", "hello")]
SECRET = "sk-redirect-test-4b1d9e-DO-NOT-FORWARD"


def make(server, **over):
    options = dict(FAST)
    options.update(over)
    return OpenAICompatProvider(model="m", base_url=server.url, **options)


@pytest.mark.parametrize("phase", ["body", "headers"])
def test_a_trickling_server_is_cut_at_the_deadline(server, phase):
    """One byte every 0.3 s never trips timeout_s = 1, but deadline_s = 1.5 ends the request."""
    server.push("m", Trickle(Reply("never finished"), interval_s=0.3, phase=phase))
    provider = make(server, timeout_s=1.0, deadline_s=1.5, max_retries=0)
    start = time.monotonic()
    with pytest.raises(ProviderError, match=r"deadline_s=1\.5s") as info:
        provider.chat(HELLO)
    elapsed = time.monotonic() - start
    assert 1.4 < elapsed < 4.0, elapsed  # timeout_s alone would let it run for minutes
    assert "gave up after 1 request" in str(info.value)


def test_the_deadline_is_retried_like_a_timeout(server):
    server.push("m", Trickle(Reply("slow"), interval_s=0.2), Reply("quick"))
    completion = make(server, timeout_s=1.0, deadline_s=0.5, max_retries=1).chat(HELLO)
    assert completion.text == "quick" and completion.n_http_attempts == 2


@pytest.mark.parametrize("declare_length", [True, False])
def test_an_oversized_answer_is_refused_without_being_read(server, declare_length):
    server.push("m", Oversized(50 * 1024 * 1024, declare_length=declare_length), Reply("never asked"))
    provider = make(server, max_response_mb=1, max_retries=3)
    with pytest.raises(ProviderError, match=r"exceeds max_response_mb=1 \(1,048,576 bytes\)") as info:
        provider.chat(HELLO)
    assert len(server.chat_requests()) == 1  # not retried: the same request would get the same answer
    assert ("announced 52,428,800 bytes" in str(info.value)) == declare_length
    if not declare_length:
        time.sleep(0.2)
        assert server.bytes_sent < 20 * 1024 * 1024  # the client stopped reading early


def test_a_redirect_to_another_port_never_carries_the_key(monkeypatch):
    """A 302 (or 307) to localhost:OTHERPORT is refused: the other server gets no request at all."""
    monkeypatch.setenv("JA_REDIRECT_KEY", SECRET)
    with ScriptedServer() as home, ScriptedServer() as elsewhere:
        for code in (302, 307, 308):
            home.push("m", Redirect(elsewhere.url.replace("127.0.0.1", "localhost") + "/chat/completions", code=code))
            provider = make(home, api_key_env="JA_REDIRECT_KEY")
            with pytest.raises(ProviderError, match="redirect to another origin .* refused") as info:
                provider.chat(HELLO)
            assert SECRET not in str(info.value)
        assert elsewhere.requests == []
        assert {r.headers.get("Authorization") for r in home.chat_requests()} == {f"Bearer {SECRET}"}


def test_a_redirect_to_another_scheme_or_host_is_refused(server):
    server.push("m", Redirect(server.url.replace("http://", "https://") + "/chat/completions", code=307))
    with pytest.raises(ProviderError, match="another origin"):
        make(server).chat(HELLO)


def test_a_same_origin_307_is_followed_with_the_key(server, monkeypatch):
    monkeypatch.setenv("JA_REDIRECT_KEY", SECRET)
    server.push("m", Redirect("/v1/chat/completions", code=307), Reply("moved but fine"))
    completion = make(server, api_key_env="JA_REDIRECT_KEY").chat(HELLO)
    assert completion.text == "moved but fine"
    requests = server.chat_requests()
    assert len(requests) == 2 and requests[1].body["messages"] == [{"role": "user", "content": "hello"}]
    assert requests[1].headers.get("Authorization") == f"Bearer {SECRET}"


def test_a_same_origin_302_to_a_post_is_refused_with_where_it_pointed(server):
    server.push("m", Redirect("/elsewhere", code=302))
    with pytest.raises(ProviderError, match=r"HTTP 302 redirect to http://127\.0\.0\.1:\d+/elsewhere .*set base_url"):
        make(server).chat(HELLO)


def test_content_as_a_list_of_parts_is_joined_as_text(server):
    parts = [
        {"type": "text", "text": "Once upon "},
        {"type": "image_url", "image_url": {"url": "x"}},
        {"type": "text", "text": "a time."},
    ]
    server.push(
        "m", Message({"role": "assistant", "content": parts, "reasoning_content": [{"type": "text", "text": "hmm"}]})
    )
    completion = make(server).chat(HELLO)
    assert completion.text == "Once upon a time." and completion.reasoning == "hmm"


def test_a_lone_surrogate_is_replaced_and_counted(server):
    server.push("m", Message({"role": "assistant", "content": "broken \ud800 text, fine \U0001f600"}))
    completion = make(server).chat(HELLO)
    assert completion.text == "broken \ufffd text, fine \U0001f600"
    assert completion.extra == {"n_replaced_characters": 1}
    completion.text.encode("utf-8")  # storable
    assert replace_lone_surrogates({"a\udc00": ["\ud800x", 3]}) == ({"a\ufffd": ["\ufffdx", 3]}, 2)


@pytest.mark.parametrize(
    "key, value",
    [
        ("timeout_s", math.nan),
        ("timeout_s", 0),
        ("deadline_s", math.inf),
        ("backoff_base_s", math.nan),
        ("max_backoff_s", math.inf),
        ("max_backoff_s", -1),
        ("max_response_mb", 0),
        ("max_retries", 10**9),
        ("max_retries", True),
        ("max_concurrency", 0),
    ],
)
def test_every_numeric_option_is_bounded(server, key, value):
    with pytest.raises(InputError) as info:
        make(server, **{key: value})
    message = str(info.value)
    assert f"column '{key}'" in message and " in [" in message or " in (" in message
    assert "must be" in message and "Fix:" in message


def test_non_finite_extra_body_is_an_input_error(server):
    with pytest.raises(InputError, match=r"extra_body\.top_p.*NaN or infinity"):
        make(server, extra_body={"top_p": math.nan})


def test_a_query_string_stays_after_the_path(server):
    assert join_url("http://h:8000/v1?key=x", "/completions") == "http://h:8000/v1/completions?key=x"
    assert join_url("http://h:8000/v1/", "chat/completions") == "http://h:8000/v1/chat/completions"
    provider = OpenAICompatProvider(model="m", base_url=server.url + "?api-version=2024", **FAST)
    provider.chat(HELLO)
    request = server.chat_requests()[0]
    assert request.path == "/v1/chat/completions" and request.query == "api-version=2024"
    assert public_url(server.url + "?key=sk-1") == server.url + "?***"


def test_missing_httpx_is_a_missing_dependency(server, monkeypatch):
    monkeypatch.setitem(sys.modules, "httpx", None)  # import httpx -> ImportError
    with pytest.raises(MissingDependencyError, match=r"judge-transfer-audit\[http\]"):
        make(server)


def test_missing_httpx_exits_4_from_generate(server, tmp_path, premises, monkeypatch, capsys):
    from tests.generation.conftest import protocol_toml

    monkeypatch.setitem(sys.modules, "httpx", None)
    (tmp_path / "p.toml").write_text(protocol_toml(server.url))
    premises.to_csv(tmp_path / "premises.csv", index=False)
    code = main(
        [
            "generate",
            str(tmp_path / "premises.csv"),
            "--protocol",
            str(tmp_path / "p.toml"),
            "--out",
            str(tmp_path / "o"),
            "-q",
        ]
    )
    assert code == 4 and "judge-transfer-audit[http]" in capsys.readouterr().err


def test_a_story_answer_still_round_trips(server):
    server.push("m", Reply(story(30)))
    assert make(server).chat(HELLO).text == story(30)
    assert json.loads(json.dumps(make(server).describe()))["deadline_s"] == 600.0
