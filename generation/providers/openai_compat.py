"""Any OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama, llama.cpp, ...).

Standard library only (``urllib``), so the core install stays lean. Behaviour:

* one request per call, ``timeout_s`` per request;
* retries on HTTP 408/409/429/5xx, timeouts, dropped connections and unreadable bodies,
  with exponential backoff and full jitter (``backoff_base_s * 2**k``, capped at
  ``max_backoff_s``), never shorter than the server's ``Retry-After``;
* at most ``max_concurrency`` requests in flight per provider object (a semaphore), so
  generation and scoring can use a thread pool without flooding the server;
* every failure ends as :class:`audit.errors.ProviderError`;
* the API key is read from the environment variable *named* by ``api_key_env`` at
  construction time; it is sent only in the ``Authorization`` header and is redacted from
  every message, log line and repr.
"""

from __future__ import annotations

import email.utils
import json
import logging
import os
import random
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Sequence

from audit.errors import InputError, InputProblem, ProviderError
from generation.providers.base import PROVIDERS, ChatMessage, Completion

log = logging.getLogger("generation.providers.openai")

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


@PROVIDERS.register("openai")
class OpenAICompatProvider:
    """Client for ``POST {base_url}/chat/completions``.

    Parameters
    ----------
    model : str
        Model name sent in every request.
    base_url : str
        Server root including the version prefix, e.g. ``https://api.openai.com/v1`` or
        ``http://127.0.0.1:8000/v1`` (vLLM) or ``http://localhost:11434/v1`` (Ollama).
    api_key_env : str | None
        NAME of the environment variable holding the key (e.g. ``"OPENAI_API_KEY"``).
        ``None``/"" sends no key (local servers). Named but unset is an input error.
    timeout_s : float
        Per-request timeout in seconds.
    max_retries : int
        Retries after the first request (so at most ``max_retries + 1`` requests).
    backoff_base_s, max_backoff_s : float
        Backoff before retry k (0-based) is uniform in ``[0, min(max, base * 2**k)]``,
        raised to the server's ``Retry-After`` when given (itself capped at ``max_backoff_s``).
    max_concurrency : int
        Requests in flight at once through this object.
    extra_body : dict | None
        Fields added to every request body (e.g. ``{"reasoning_effort": "high"}``).
    headers : dict | None
        Extra non-secret headers.
    seed : int | None
        Seeds the jitter so a run's retry schedule is reproducible.
    api_key_header : str
        Header that carries the key: ``"Authorization"`` sends ``Bearer KEY``; any other
        name (e.g. ``"api-key"`` for Azure OpenAI) sends the key as is.
    """

    name = "openai"

    def __init__(
        self,
        model: str,
        base_url: str = "https://api.openai.com/v1",
        api_key_env: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 5,
        backoff_base_s: float = 1.0,
        max_backoff_s: float = 60.0,
        max_concurrency: int = 4,
        extra_body: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        seed: int | None = None,
        api_key_header: str = "Authorization",
    ):
        problems = []
        if not str(base_url).startswith(("http://", "https://")):
            problems.append(InputProblem("provider", "base_url must start with http:// or https://", value=str(base_url), column="base_url", fix="e.g. base_url = \"http://127.0.0.1:8000/v1\""))
        if "@" in urllib.parse.urlsplit(str(base_url)).netloc:
            # urllib cannot send user:password@ credentials; say so instead of failing to
            # connect, and never echo the password.
            problems.append(InputProblem("provider", "base_url must not contain user:password@ credentials",
                                         value=_public_url(str(base_url)), column="base_url",
                                         fix="put the key in an environment variable named by api_key_env"))
        for key, value, low in (("timeout_s", timeout_s, 0.0), ("backoff_base_s", backoff_base_s, 0.0), ("max_backoff_s", max_backoff_s, 0.0)):
            if not isinstance(value, (int, float)) or value < low or (key == "timeout_s" and value == 0):
                problems.append(InputProblem("provider", f"{key} must be a positive number", column=key, value=str(value), fix=f"set {key} to a number of seconds"))
        if not isinstance(max_retries, int) or max_retries < 0:
            problems.append(InputProblem("provider", "max_retries must be an integer >= 0", column="max_retries", value=str(max_retries)))
        if not isinstance(max_concurrency, int) or max_concurrency < 1:
            problems.append(InputProblem("provider", "max_concurrency must be an integer >= 1", column="max_concurrency", value=str(max_concurrency)))
        self._key: str | None = None
        if api_key_env:
            key = os.environ.get(api_key_env)
            if not key:
                problems.append(
                    InputProblem(
                        "provider",
                        f"the environment variable {api_key_env} (api_key_env) is not set",
                        column="api_key_env",
                        fix=f"export {api_key_env}=... before running, or remove api_key_env for a server without keys",
                    )
                )
            self._key = key or None
        if problems:
            raise InputError(problems)
        self.model = str(model)
        self.base_url = str(base_url).rstrip("/")
        self._public_url = _public_url(self.base_url)
        self.api_key_env = api_key_env or None
        self.timeout_s = float(timeout_s)
        self.max_retries = int(max_retries)
        self.backoff_base_s = float(backoff_base_s)
        self.max_backoff_s = float(max_backoff_s)
        self.max_concurrency = int(max_concurrency)
        self.extra_body = dict(extra_body or {})
        self.headers = dict(headers or {})
        self.seed = seed
        self.api_key_header = str(api_key_header)
        self._semaphore = threading.BoundedSemaphore(self.max_concurrency)
        host = urllib.parse.urlsplit(self.base_url).hostname or ""
        # A local server (vLLM, Ollama...) must not be reached through an HTTP(S)_PROXY.
        handlers = [urllib.request.ProxyHandler({})] if host in ("localhost", "127.0.0.1", "::1") else []
        self._opener = urllib.request.build_opener(*handlers)
        self._jitter = random.Random(seed)
        self._jitter_lock = threading.Lock()

    # -- public -----------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        return {
            "provider": self.name,
            "model": self.model,
            "base_url": self._public_url,
            "api_key_env": self.api_key_env,
            "timeout_s": self.timeout_s,
            "max_retries": self.max_retries,
            "max_concurrency": self.max_concurrency,
            "extra_body": self.extra_body,
        }

    def __repr__(self) -> str:
        return f"OpenAICompatProvider(model={self.model!r}, base_url={self._public_url!r}, api_key_env={self.api_key_env!r})"

    def chat(self, messages: Sequence[ChatMessage], **sampling: Any) -> Completion:
        """Send one chat-completions request (with retries); return the first choice."""
        body = {"model": self.model, "messages": [m.as_dict() for m in messages]}
        body.update(self.extra_body)
        body.update({k: v for k, v in sampling.items() if v is not None})
        payload, attempts, elapsed = self._post("/chat/completions", body)
        try:
            choice = payload["choices"][0]
            message = choice.get("message") or {}
            text = message.get("content") or ""
            reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise ProviderError(f"{self._where('/chat/completions')}: the answer has no choices[0].message ({type(exc).__name__})") from None
        usage = payload.get("usage") or {}
        return Completion(
            text=str(text),
            model=str(payload.get("model") or self.model),
            finish_reason=str(choice.get("finish_reason") or ""),
            reasoning=str(reasoning),
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            n_http_attempts=attempts,
            elapsed_s=elapsed,
        )

    def completions(self, prompt: str, **params: Any) -> dict[str, Any]:
        """``POST /completions`` (legacy endpoint; e.g. ``echo=True, logprobs=1,
        max_tokens=0`` for prompt-token log-probabilities). Returns the parsed JSON."""
        body = {"model": self.model, "prompt": prompt}
        body.update(params)
        payload, _, _ = self._post("/completions", body)
        return payload

    # -- HTTP with retries --------------------------------------------------------------
    def _where(self, path: str) -> str:
        return f"{self._public_url}{path} (model {self.model})"

    def _redact(self, text: str) -> str:
        if self._key:
            text = text.replace(self._key, "[REDACTED]")
        return text

    def _backoff(self, k: int, retry_after: float | None) -> float:
        cap = min(self.max_backoff_s, self.backoff_base_s * (2**k))
        with self._jitter_lock:
            delay = self._jitter.uniform(0.0, cap)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.max_backoff_s))
        return delay

    def _post(self, path: str, body: dict[str, Any]) -> tuple[dict[str, Any], int, float]:
        start = time.monotonic()
        data = json.dumps(body).encode("utf-8")
        last = ""
        for k in range(self.max_retries + 1):
            try:
                with self._semaphore:
                    payload = self._request_once(path, data)
                return payload, k + 1, time.monotonic() - start
            except _Retryable as exc:
                last = str(exc)
                if k == self.max_retries:
                    break
                delay = self._backoff(k, exc.retry_after)
                log.warning("%s: %s; retry %d/%d in %.2fs", self._where(path), last, k + 1, self.max_retries, delay)
                time.sleep(delay)
        raise ProviderError(
            f"{self._where(path)}: gave up after {self.max_retries + 1} request(s); last error: {last}. "
            "Check that the server is up, or raise timeout_s / max_retries."
        )

    def _request_once(self, path: str, data: bytes) -> dict[str, Any]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        headers.update(self.headers)
        if self._key:
            if self.api_key_header.lower() == "authorization":
                headers["Authorization"] = f"Bearer {self._key}"
            else:
                headers[self.api_key_header] = self._key
        request = urllib.request.Request(self.base_url + path, data=data, headers=headers, method="POST")
        try:
            with self._opener.open(request, timeout=self.timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            detail = self._redact(_error_detail(exc))
            if exc.code in RETRYABLE_STATUS:
                raise _Retryable(f"HTTP {exc.code} {detail}", _retry_after(exc.headers.get("Retry-After"))) from None
            raise ProviderError(f"{self._where(path)}: HTTP {exc.code} {detail}") from None
        except (TimeoutError, socket.timeout):
            raise _Retryable(f"no answer within timeout_s={self.timeout_s}s") from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, (TimeoutError, socket.timeout)):
                raise _Retryable(f"no answer within timeout_s={self.timeout_s}s") from None
            raise _Retryable(f"connection failed: {self._redact(str(reason))}") from None
        except (ConnectionError, OSError) as exc:
            # RemoteDisconnected, ConnectionResetError, http.client.IncompleteRead...
            raise _Retryable(f"connection failed: {type(exc).__name__}") from None
        try:
            payload = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise _Retryable(f"the server's answer is not JSON (first bytes: {self._redact(raw[:80].decode('utf-8', 'replace'))!r})") from None
        if not isinstance(payload, dict):
            raise _Retryable("the server's answer is not a JSON object")
        if "error" in payload and "choices" not in payload:
            raise ProviderError(f"{self._where(path)}: server error: {self._redact(str(payload['error'])[:300])}")
        return payload


def _public_url(url: str) -> str:
    """``url`` without credentials: ``user:password@`` and the query string (where some
    gateways put a key) are masked, so journals, logs and messages never carry them."""
    parts = urllib.parse.urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rsplit("@", 1)[1]
    query = "***" if parts.query else ""
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _error_detail(exc: urllib.error.HTTPError) -> str:
    try:
        body = exc.read()[:300].decode("utf-8", "replace")
    except Exception:  # a body we cannot read is not worth a second error
        body = ""
    return f"{exc.reason}: {body}".strip() if body else str(exc.reason)


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())
