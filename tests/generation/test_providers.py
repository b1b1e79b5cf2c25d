"""The OpenAI-compatible provider against the scripted server; the provider registry."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from judge_transfer_audit.core.errors import InputError, ProviderError
from judge_transfer_audit.generation.providers import ChatMessage, OpenAICompatProvider, build_provider
from judge_transfer_audit.generation.providers.openai_compat import _retry_after
from tests.generation.conftest import FAST
from tests.support.openai_server import Hang, RawBody, Reply, ScriptedServer, Slow, Status, story

HELLO = [ChatMessage("user", "hello")]


def make(server, **over):
    options = dict(FAST)
    options.update(over)
    return OpenAICompatProvider(model="m", base_url=server.url, **options)


def test_plain_answer_and_request_shape(server):
    server.push("m", Reply("Once upon a time.", reasoning_content="thinking"))
    completion = make(server).chat(HELLO, temperature=0.7, top_p=None)
    assert completion.text == "Once upon a time."
    assert completion.reasoning == "thinking"
    assert completion.finish_reason == "stop"
    assert completion.n_http_attempts == 1
    body = server.chat_requests()[0].body
    assert body["model"] == "m" and body["temperature"] == 0.7
    assert "top_p" not in body  # None means "server default", not null
    assert body["messages"] == [{"role": "user", "content": "hello"}]


def test_429_is_retried_after_retry_after(server):
    server.push("m", Status(429, retry_after=0.3), Reply("ok"))
    start = time.monotonic()
    completion = make(server, max_backoff_s=1.0).chat(HELLO)
    elapsed = time.monotonic() - start
    assert completion.text == "ok" and completion.n_http_attempts == 2
    assert elapsed >= 0.3  # the jittered backoff alone is at most 0.005 s
    assert len(server.chat_requests()) == 2


def test_5xx_then_success_and_backoff_grows(server):
    server.push("m", Status(503), Status(502), Status(500), Reply("fine"))
    provider = make(server, max_retries=3)
    assert provider.chat(HELLO).n_http_attempts == 4


def test_timeout_is_retried_then_provider_error(server):
    server.push("m", Hang(3), Hang(3), Hang(3))
    provider = make(server, timeout_s=0.2, max_retries=2)
    start = time.monotonic()
    with pytest.raises(ProviderError, match="gave up after 3 request"):
        provider.chat(HELLO)
    assert time.monotonic() - start < 2.0
    assert len(server.chat_requests()) == 3


def test_timeout_then_answer(server):
    server.push("m", Hang(3), Reply("late but fine"))
    assert make(server, timeout_s=0.2).chat(HELLO).text == "late but fine"


def test_unreadable_body_is_retried(server):
    server.push("m", RawBody(b"<html>gateway</html>"), Reply("ok"))
    assert make(server).chat(HELLO).n_http_attempts == 2


def test_client_error_is_not_retried(server):
    server.push("m", Status(400, message="bad model"), Reply("never"))
    with pytest.raises(ProviderError, match="HTTP 400.*bad model"):
        make(server).chat(HELLO)
    assert len(server.chat_requests()) == 1


def test_unreachable_server_is_provider_error():
    provider = OpenAICompatProvider(model="m", base_url="http://127.0.0.1:9/v1", **FAST)
    with pytest.raises(ProviderError, match="connection failed"):
        provider.chat(HELLO)


def test_concurrency_limit(server):
    for _ in range(8):
        server.push("m", Slow(Reply("x"), 0.15))
    provider = make(server, max_concurrency=2)
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda _: provider.chat(HELLO), range(8)))
    assert server.max_in_flight == 2


def test_completions_echo_logprobs(server):
    payload = make(server).completions("The cat sat", echo=True, logprobs=1, max_tokens=0)
    logprobs = payload["choices"][0]["logprobs"]
    assert payload["choices"][0]["text"] == "The cat sat"
    assert logprobs["tokens"] == ["The", " cat", " sat"]
    assert logprobs["token_logprobs"][0] is None
    assert logprobs["token_logprobs"][1:] == [-(1.0 + 0.25 * 3)] * 2


def test_scripted_logprob_mode():
    with ScriptedServer(logprob_fn=lambda token, i: -float(i)) as srv:
        payload = make(srv).completions("a b c d", echo=True, logprobs=0, max_tokens=0)
    assert payload["choices"][0]["logprobs"]["token_logprobs"] == [None, -1.0, -2.0, -3.0]


def test_server_is_bounded():
    with ScriptedServer(max_requests=1) as srv:
        provider = make(srv, max_retries=0)
        provider.chat(HELLO)
        with pytest.raises(ProviderError, match="503"):
            provider.chat(HELLO)
        assert srv.url.startswith("http://127.0.0.1:")


def test_retry_after_parsing():
    assert _retry_after("2") == 2.0
    assert _retry_after(None) is None
    assert _retry_after("garbage") is None
    assert 0.0 <= _retry_after("Wed, 21 Oct 2015 07:28:00 GMT") <= 0.0 + 1e-9  # past date -> 0


def test_missing_key_variable_is_input_error(server, monkeypatch):
    monkeypatch.delenv("JA_TEST_UNSET_KEY", raising=False)
    with pytest.raises(InputError, match="JA_TEST_UNSET_KEY"):
        make(server, api_key_env="JA_TEST_UNSET_KEY")


def test_registry_and_options(server):
    provider = build_provider({"provider": "openai", "model": "m", "base_url": server.url})
    assert isinstance(provider, OpenAICompatProvider)
    with pytest.raises(InputError, match="unknown provider 'nope'.*openai, transformers"):
        build_provider({"provider": "nope"})
    with pytest.raises(InputError, match="unknown option"):
        build_provider({"provider": "openai", "model": "m", "tempreature": 1})
    with pytest.raises(InputError, match="needs this option"):
        build_provider({"provider": "openai"})
    with pytest.raises(InputError, match="base_url"):
        build_provider({"provider": "openai", "model": "m", "base_url": "localhost:8000"})


def test_story_helper_counts():
    from judge_transfer_audit.generation.generate import count_words

    assert count_words(story(437)) == 437
