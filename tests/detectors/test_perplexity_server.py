"""Perplexity from an OpenAI-compatible /v1/completions server (a local test server)."""

import json
import math
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pandas as pd
import pytest

from judge_transfer_audit.detectors import PerplexityConfig, compute_features
from judge_transfer_audit.model.checks import Status


def fake_logprobs(prompt):
    """Whitespace tokens; logprob of token k is -(k % 5 + 1) / 4; the first is null."""
    tokens = [m.group(0) for m in re.finditer(r"\s*\S+", prompt)]
    offsets, pos = [], 0
    for t in tokens:
        offsets.append(pos)
        pos += len(t)
    values = [None] + [-((k % 5) + 1) / 4 for k in range(1, len(tokens))]
    return tokens, offsets, values


class Handler(BaseHTTPRequestHandler):
    mode = "offsets"
    failures_left = 0
    requests = []

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Handler.requests.append((self.path, body))
        if Handler.failures_left > 0:
            Handler.failures_left -= 1
            self.send_response(503)
            self.end_headers()
            return
        if Handler.mode == "reject":
            self.send_response(400)
            self.end_headers()
            self.wfile.write(b'{"error": "echo not supported"}')
            return
        choices = []
        for i, prompt in enumerate(body["prompt"]):
            tokens, offsets, values = fake_logprobs(prompt)
            # One generated token, as with max_tokens=1.
            tokens, offsets, values = tokens + [" gen"], offsets + [len(prompt)], values + [-9.0]
            logprobs = {"tokens": tokens, "token_logprobs": values}
            if Handler.mode == "offsets":
                logprobs["text_offset"] = offsets
            choices.append({"index": i, "text": prompt + " gen", "logprobs": logprobs, "finish_reason": "length"})
        payload = json.dumps({"model": body["model"], "choices": choices[::-1]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture()
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    Handler.mode, Handler.failures_left, Handler.requests = "offsets", 0, []
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


TEXTS = ["one two three four five six", "a b", "solo", "the cat sat on the mat again and again"]


def _expected(text):
    values = [v for v in fake_logprobs(text)[2] if v is not None]
    return math.exp(-sum(values) / len(values)) if values else math.nan


def _run(url, cache=None, **kw):
    stories = pd.DataFrame({"pair_id": [f"p{i}" for i in range(len(TEXTS))], "system": "a", "text": TEXTS})
    config = PerplexityConfig(url=url, server_model="served-llama", batch_size=3, **kw)
    return compute_features(stories, detectors=["perplexity"], perplexity=config, cache=cache)


@pytest.mark.parametrize("mode", ["offsets", "no-offsets"])
def test_server_perplexity_equals_exp_mean_prompt_nll(server, mode):
    Handler.mode = mode
    table = _run(server)
    run = table.detectors[0]
    assert run.status is Status.PASS and run.params["backend"] == "openai-completions"
    got = table.frame["perplexity"].tolist()
    for text, value in zip(TEXTS, got):
        if math.isnan(_expected(text)):
            assert math.isnan(value)
        else:
            assert value == pytest.approx(_expected(text), rel=1e-12)
    path, body = Handler.requests[0]
    assert path == "/v1/completions"
    assert body["echo"] is True and body["max_tokens"] == 1 and body["logprobs"] == 1
    assert body["model"] == "served-llama" and len(body["prompt"]) == 3  # batched


def test_server_errors_are_recorded_not_raised(server):
    Handler.mode = "reject"
    run = _run(server).detectors[0]
    assert run.status is Status.ERROR and "400" in run.reason


def test_server_retries_transient_failures(server):
    Handler.failures_left = 1
    assert _run(server).detectors[0].status is Status.PASS


def test_server_results_are_cached_by_model_and_revision(server, tmp_path):
    _run(server, cache=tmp_path, revision="v1")
    n = len(Handler.requests)
    again = _run(server, cache=tmp_path, revision="v1")
    assert len(Handler.requests) == n and again.detectors[0].n_cached == len(TEXTS)
    assert again.detectors[0].revision == "v1"
    other = _run(server, cache=tmp_path, revision="v2")  # other weights under the same name
    assert len(Handler.requests) > n and other.detectors[0].n_computed == len(TEXTS)


def test_shared_scripted_server_interoperates():
    """The project's scripted OpenAI-compatible server (tests/support) echoes prompt tokens only."""
    from tests.support.openai_server import ScriptedServer, default_logprob

    with ScriptedServer() as srv:
        table = compute_features(
            pd.DataFrame({"pair_id": ["p"], "system": ["a"], "text": ["The river ran over stones"]}),
            detectors=["perplexity"],
            perplexity=PerplexityConfig(url=srv.url, server_model="m"),
        )
    words = ["The", " river", " ran", " over", " stones"]
    expected = math.exp(-sum(default_logprob(t, i) for i, t in enumerate(words) if i) / 4)
    assert table.frame["perplexity"].iloc[0] == pytest.approx(expected, rel=1e-12)


def test_server_tokens_and_throughput_are_recorded(server):
    run = _run(server).detectors[0]
    expected = sum(sum(v is not None for v in fake_logprobs(t)[2]) for t in TEXTS)
    assert run.n_tokens == expected and run.tokens_per_second > 0
    assert "tokens/s" in str(_run(server))


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"[1, 2]",
        b'{"choices": [1, 2, 3]}',
        b'{"choices": [{"logprobs": {"token_logprobs": ["x", "y"]}}]}',
    ],
)
def test_server_malformed_answers_are_errors_not_crashes(body):
    """A body that is not JSON, or JSON of the wrong shape, ends as a recorded ERROR."""
    from tests.support.openai_server import COMPLETIONS, RawBody, ScriptedServer

    with ScriptedServer(script={COMPLETIONS: [RawBody(body)] * 3}) as srv:
        stories = pd.DataFrame({"pair_id": ["p"], "system": ["a"], "text": ["one two three"]})
        config = PerplexityConfig(url=srv.url, server_model="m", batch_size=1)
        run = compute_features(stories, detectors=["perplexity"], perplexity=config).detectors[0]
    assert run.status is Status.ERROR and "ProviderError" in run.reason


def test_server_key_only_when_named_and_never_in_messages(server, monkeypatch):
    from judge_transfer_audit.core.errors import InputError

    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-must-not-leak")
    _run(server)
    assert all("sk-openai" not in json.dumps(b) for _, b in Handler.requests)
    seen = []
    original = Handler.do_POST

    def recording(self):
        seen.append(self.headers.get("Authorization"))
        original(self)

    monkeypatch.setattr(Handler, "do_POST", recording)
    _run(server)
    assert seen and set(seen) == {None}  # no key unless its variable is named
    monkeypatch.setenv("PPL_KEY", "sk-vllm-secret")
    Handler.mode, seen[:] = "reject", []
    run = _run(server, api_key_env="PPL_KEY").detectors[0]
    assert seen == ["Bearer sk-vllm-secret"] and run.status is Status.ERROR
    assert "sk-vllm-secret" not in str(run) and "sk-vllm-secret" not in run.reason
    with pytest.raises(InputError, match="NOT_SET_KEY"):
        _run(server, api_key_env="NOT_SET_KEY")


@pytest.mark.parametrize("suffix", ["", "/v1", "/v1/"])
def test_perplexity_url_with_a_query_string_keeps_it_after_the_path(suffix):
    """Regression (hardening): '?key=x' was followed by '/v1/completions' (a wrong URL)."""
    from judge_transfer_audit.detectors.perplexity.server import server_base_url
    from tests.support.openai_server import ScriptedServer

    with ScriptedServer() as srv:
        root = srv.url[: -len("/v1")]
        stories = pd.DataFrame({"pair_id": ["p"], "system": ["a"], "text": ["one two three"]})
        config = PerplexityConfig(url=f"{root}{suffix}?api_key=sk-in-query", server_model="m")
        run = compute_features(stories, detectors=["perplexity"], perplexity=config).detectors[0]
        assert run.status is Status.PASS, run.reason
        (request,) = srv.requests
    assert request.path == "/v1/completions" and request.query == "api_key=sk-in-query"
    assert server_base_url("http://h:8000/?k=1") == "http://h:8000/v1?k=1"


def test_redirect_to_another_port_is_a_recorded_error_without_the_key(monkeypatch):
    from tests.support.openai_server import COMPLETIONS, ScriptedServer

    class RedirectingHandler(Handler):
        target = ""

        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(307)
            self.send_header("Location", RedirectingHandler.target)
            self.send_header("Content-Length", "0")
            self.end_headers()

    monkeypatch.setenv("PPL_KEY", "sk-perplexity-stays-home")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), RedirectingHandler)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        with ScriptedServer(script={COMPLETIONS: []}) as elsewhere:
            RedirectingHandler.target = elsewhere.url + "/completions"
            stories = pd.DataFrame({"pair_id": ["p"], "system": ["a"], "text": ["one two three"]})
            config = PerplexityConfig(
                url=f"http://127.0.0.1:{httpd.server_address[1]}", server_model="m", api_key_env="PPL_KEY"
            )
            run = compute_features(stories, detectors=["perplexity"], perplexity=config).detectors[0]
            assert elsewhere.requests == []
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert run.status is Status.ERROR and "another origin" in run.reason and "sk-perplexity" not in run.reason
