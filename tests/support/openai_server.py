"""A scripted OpenAI-compatible HTTP server for tests (loopback only, bounded, self-stopping).

Endpoints: ``POST /v1/chat/completions``, ``POST /v1/completions`` (with ``echo`` and
``logprobs`` for prompt tokens, for perplexity code) and ``GET /v1/models``.

Answers are scripted with actions, taken in order from a per-model queue
(``script={"model-a": [...], "*": [...]}``), else from ``responder(request_body)``, else a
default 500-word story:

* :class:`Reply` -- a normal answer (optionally with a ``<think>`` block or
  ``reasoning_content``);
* :class:`Status` -- an HTTP error such as 429 with ``Retry-After``;
* :class:`Hang` -- no answer for ``seconds`` (to trigger the client timeout);
* :class:`RawBody` -- a body that is not JSON;
* :class:`Message` -- an answer whose ``choices[0].message`` is given as is (content as a
  list of parts, say);
* :class:`Redirect` -- a 3xx to another URL (another port, to test that keys stay home);
* :class:`Trickle` -- a valid answer sent one byte every ``interval_s`` (in the headers or
  the body), to test the overall deadline;
* :class:`Oversized` -- an answer of ``n_bytes`` (with or without ``Content-Length``), to
  test the size cap.

``/v1/completions`` computes its answer from the prompt unless the ``COMPLETIONS`` queue
holds a :class:`Status` or :class:`RawBody` to send instead.

Every request is recorded in :attr:`ScriptedServer.requests`. The server binds
127.0.0.1 only, answers at most ``max_requests`` requests (503 afterwards) and stops by
itself after ``lifetime_s`` seconds.

Usage::

    with ScriptedServer(script={"*": [Status(429, retry_after=0.01), Reply(story(480))]}) as srv:
        provider = OpenAICompatProvider(model="m", base_url=srv.url)
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

#: Script key of the ``/v1/completions`` queue: ``script={COMPLETIONS: [RawBody(), Status(503)]}``.
COMPLETIONS = "/v1/completions"


@dataclass(frozen=True)
class Reply:
    text: str
    reasoning_content: str | None = None
    finish_reason: str = "stop"


@dataclass(frozen=True)
class Status:
    code: int
    retry_after: float | str | None = None
    message: str = "scripted error"


@dataclass(frozen=True)
class Hang:
    seconds: float = 5.0


@dataclass(frozen=True)
class Slow:
    """A normal reply sent after ``seconds`` (to observe concurrency)."""

    reply: Reply
    seconds: float = 0.1


@dataclass(frozen=True)
class RawBody:
    body: bytes = b"{not json"
    code: int = 200


@dataclass(frozen=True)
class Message:
    """An answer whose ``choices[0].message`` is exactly ``message``."""

    message: dict[str, Any]


@dataclass(frozen=True)
class Redirect:
    """``code`` with ``Location: location`` (absolute, or a path on this server)."""

    location: str
    code: int = 302


@dataclass(frozen=True)
class Trickle:
    """A normal reply whose bytes are sent one at a time, ``interval_s`` apart, in the
    ``"body"`` (after complete headers) or already in the ``"headers"``."""

    reply: Reply
    interval_s: float = 0.8
    phase: str = "body"


@dataclass(frozen=True)
class Oversized:
    """``n_bytes`` of a JSON string; ``declare_length`` sends ``Content-Length`` (else chunked)."""

    n_bytes: int
    declare_length: bool = True


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    time: float = field(default_factory=time.monotonic)
    query: str = ""  #: the query string of the request line, without "?"

    @property
    def model(self) -> str:
        return str((self.body or {}).get("model", ""))

    @property
    def user_text(self) -> str:
        messages = (self.body or {}).get("messages") or []
        return "\n".join(m.get("content", "") for m in messages if m.get("role") == "user")


def story(n_words: int, word: str = "river") -> str:
    """A text of exactly ``n_words`` words (sentences of ten words)."""
    words = [word] * n_words
    sentences = [" ".join(words[i : i + 10]).capitalize() + "." for i in range(0, n_words, 10)]
    return " ".join(sentences)


def default_logprob(token: str, index: int) -> float:
    """Scripted log-probability: longer tokens are less likely (deterministic)."""
    return -(1.0 + 0.25 * len(token.strip()))


class ScriptedServer:
    def __init__(
        self,
        script: dict[str, list[Any]] | None = None,
        responder: Callable[[dict[str, Any]], Any] | None = None,
        *,
        lifetime_s: float = 30.0,
        max_requests: int = 500,
        logprob_fn: Callable[[str, int], float] = default_logprob,
    ):
        self._queues = {model: deque(actions) for model, actions in (script or {}).items()}
        self.responder = responder
        self.lifetime_s = lifetime_s
        self.max_requests = max_requests
        self.logprob_fn = logprob_fn
        self.requests: list[RecordedRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0  #: most chat requests being answered at the same time
        self.bytes_sent = 0  #: body bytes written by :class:`Oversized` answers
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None

    # -- lifecycle ----------------------------------------------------------------------
    def start(self) -> "ScriptedServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/") == "/v1/models":
                    self._send(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = None
                path, _, query = self.path.partition("?")
                path = path.rstrip("/")
                with server._lock:
                    server.requests.append(RecordedRequest(path, dict(self.headers), body, query=query))
                    over_budget = len(server.requests) > server.max_requests
                if over_budget:
                    self._send(503, {"error": {"message": "scripted server: request budget exhausted"}})
                    return
                if body is None:
                    self._send(400, {"error": {"message": "request body is not JSON"}})
                elif path == "/v1/chat/completions":
                    self._chat(body)
                elif path == "/v1/completions":
                    action = server._next_completions_action()
                    if isinstance(action, RawBody):
                        self._send_bytes(action.code, action.body, {})
                    elif isinstance(action, Status):
                        headers = {} if action.retry_after is None else {"Retry-After": str(action.retry_after)}
                        self._send(action.code, {"error": {"message": action.message, "code": action.code}}, headers)
                    else:
                        self._send(200, server._completions(body))
                else:
                    self._send(404, {"error": {"message": f"no route {path}"}})

            def _chat(self, body: dict[str, Any]) -> None:
                with server._lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    self._chat_answer(body)
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _chat_answer(self, body: dict[str, Any]) -> None:
                action = server._next_action(body)
                if isinstance(action, Hang):
                    server._stop.wait(action.seconds)
                    try:
                        self._send(200, _chat_payload(body, Reply("late answer")))
                    except OSError:
                        pass  # the client gave up, as intended
                elif isinstance(action, Status):
                    headers = {}
                    if action.retry_after is not None:
                        headers["Retry-After"] = str(action.retry_after)
                    self._send(action.code, {"error": {"message": action.message, "code": action.code}}, headers)
                elif isinstance(action, Slow):
                    server._stop.wait(action.seconds)
                    self._send(200, _chat_payload(body, action.reply))
                elif isinstance(action, RawBody):
                    self._send_bytes(action.code, action.body, {})
                elif isinstance(action, Message):
                    self._send(200, _chat_payload(body, Reply(""), message=action.message))
                elif isinstance(action, Redirect):
                    self._send(action.code, {"error": {"message": "moved"}}, {"Location": action.location})
                elif isinstance(action, Trickle):
                    self._trickle(json.dumps(_chat_payload(body, action.reply)).encode(), action)
                elif isinstance(action, Oversized):
                    self._oversized(action)
                else:
                    self._send(200, _chat_payload(body, action))

            def _trickle(self, data: bytes, action: Trickle) -> None:
                head = (
                    f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
                ).encode()
                if action.phase == "body":
                    self.wfile.write(head)
                    slow = data
                else:
                    slow = head + data
                try:
                    for i in range(len(slow)):
                        if server._stop.wait(action.interval_s):
                            return
                        self.wfile.write(slow[i : i + 1])
                except OSError:
                    pass  # the client gave up, as intended
                self.close_connection = True

            def _oversized(self, action: Oversized) -> None:
                block = b"x" * 65536
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    if action.declare_length:
                        self.send_header("Content-Length", str(action.n_bytes))
                    else:
                        self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    sent = 0
                    while sent < action.n_bytes and not server._stop.is_set():
                        piece = block[: action.n_bytes - sent]
                        if action.declare_length:
                            self.wfile.write(piece)
                        else:
                            self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                        sent += len(piece)
                        with server._lock:
                            server.bytes_sent += len(piece)
                    if not action.declare_length:
                        self.wfile.write(b"0\r\n\r\n")
                except OSError:
                    pass  # the client stopped reading, as intended
                self.close_connection = True

            def _send(self, code: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                self._send_bytes(code, json.dumps(payload).encode(), headers or {})

            def _send_bytes(self, code: int, data: bytes, headers: dict[str, str]) -> None:
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        timer = threading.Timer(self.lifetime_s, self.stop)
        timer.daemon = True
        timer.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()

    def __enter__(self) -> "ScriptedServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    # -- scripting ----------------------------------------------------------------------
    def push(self, model: str, *actions: Any) -> None:
        with self._lock:
            self._queues.setdefault(model, deque()).extend(actions)

    def _next_action(self, body: dict[str, Any]) -> Any:
        with self._lock:
            for key in (str(body.get("model", "")), "*"):
                queue = self._queues.get(key)
                if queue:
                    return queue.popleft()
        if self.responder is not None:
            action = self.responder(body)
            if action is not None:
                return action
        return Reply(story(500))

    def _next_completions_action(self) -> Any:
        """A scripted :class:`Status` or :class:`RawBody` for ``/v1/completions`` (queue
        ``COMPLETIONS``), else ``None`` (the computed echo + logprobs answer)."""
        with self._lock:
            queue = self._queues.get(COMPLETIONS)
            return queue.popleft() if queue else None

    def chat_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path == "/v1/chat/completions"]

    def _completions(self, body: dict[str, Any]) -> dict[str, Any]:
        prompts = body.get("prompt", "")
        prompts = prompts if isinstance(prompts, list) else [prompts]
        choices = []
        n_tokens = 0
        for index, prompt in enumerate(prompts):
            tokens, offsets = [], []
            for match in re.finditer(r"\s*\S+", str(prompt)):
                tokens.append(match.group())
                offsets.append(match.start())
            n_tokens += len(tokens)
            logprobs = None
            if body.get("logprobs") is not None:
                values = [None] + [self.logprob_fn(t, i) for i, t in enumerate(tokens) if i > 0]
                logprobs = {
                    "tokens": tokens,
                    "token_logprobs": values[: len(tokens)],
                    "top_logprobs": [None] + [{t: v} for t, v in zip(tokens[1:], values[1:])],
                    "text_offset": offsets,
                }
            choices.append(
                {
                    "index": index,
                    "text": str(prompt) if body.get("echo") else "",
                    "logprobs": logprobs,
                    "finish_reason": "length",
                }
            )
        return {
            "id": "cmpl-scripted",
            "object": "text_completion",
            "model": body.get("model", ""),
            "choices": choices,
            "usage": {"prompt_tokens": n_tokens, "completion_tokens": 0, "total_tokens": n_tokens},
        }


def _chat_payload(body: dict[str, Any], reply: Reply, message: dict[str, Any] | None = None) -> dict[str, Any]:
    if message is None:
        message = {"role": "assistant", "content": reply.text}
        if reply.reasoning_content is not None:
            message["reasoning_content"] = reply.reasoning_content
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "model": body.get("model", ""),
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
        "usage": {
            "prompt_tokens": 10,
            "completion_tokens": len(reply.text.split()),
            "total_tokens": 10 + len(reply.text.split()),
        },
    }
