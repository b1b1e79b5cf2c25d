"""Any OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama, llama.cpp, ...).

HTTP goes through :mod:`judge_transfer_audit.generation.providers.http_client` (httpx: retries with backoff and
``Retry-After``, a per-step ``timeout_s``, an overall ``deadline_s``, ``max_response_mb``,
no redirect to another origin). This module builds the requests and reads the answers:

* at most ``max_concurrency`` requests in flight per provider object (a semaphore), so
  generation and scoring can use a thread pool without flooding the server;
* every failure ends as :class:`judge_transfer_audit.core.errors.ProviderError`;
* the API key is read from the environment variable *named* by ``api_key_env`` at
  construction time; it is sent only in its header, only to ``base_url``'s origin, and is
  redacted from every message, log line and repr;
* message content given as a list of parts (``[{"type": "text", "text": ...}]``) is joined
  as text.
"""

from __future__ import annotations

import os
import threading
import urllib.parse
from typing import Any, Sequence

from judge_transfer_audit.core.errors import InputError, InputProblem, ProviderError
from judge_transfer_audit.generation.protocol import non_finite
from judge_transfer_audit.generation.providers.base import PROVIDERS, ChatMessage, Completion
from judge_transfer_audit.generation.providers.http_client import (
    HttpLimits,
    LLMHttpClient,
    check_limits,
    public_url,
    retry_after_seconds,
)

# Kept importable under their former names.
_public_url = public_url
_retry_after = retry_after_seconds


@PROVIDERS.register("openai")
class OpenAICompatProvider:
    """Client for ``POST {base_url}/chat/completions`` (and the legacy ``/completions``).

    Parameters
    ----------
    model : str
        Model name sent in every request.
    base_url : str
        Server root including the version prefix, e.g. ``https://api.openai.com/v1`` or
        ``http://127.0.0.1:8000/v1`` (vLLM) or ``http://localhost:11434/v1`` (Ollama). A
        query string (``?api-version=...``) is kept after every path and masked in records.
    api_key_env : str | None
        NAME of the environment variable holding the key (e.g. ``"OPENAI_API_KEY"``).
        ``None``/"" sends no key (local servers). Named but unset is an input error.
    timeout_s : float
        Longest wait for one network step (connecting, the next bytes of the answer), in (0, 3600].
    deadline_s : float
        Longest wall time of one request, sending to last byte, in (0, 86400]; a server
        trickling its answer is cut there (and the request retried).
    transfer_s : float
        Longest time from the answer's first byte to its last, in (0, 86400]; a server answers
        once it has generated, so a slower answer is a trickle, cut there (and retried).
    max_response_mb : float
        Largest answer read, in MiB, in (0, 4096]; a larger one fails at once.
    max_retries : int
        Retries after the first request (so at most ``max_retries + 1`` requests), in [0, 100].
    backoff_base_s, max_backoff_s : float
        Backoff before retry k (0-based) is uniform in ``[0, min(max, base * 2**k)]``,
        raised to the server's ``Retry-After`` when given (itself capped at ``max_backoff_s``).
        In [0, 600] and [0, 3600].
    max_concurrency : int
        Requests in flight at once through this object, in [1, 1024].
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
        deadline_s: float = 600.0,
        max_response_mb: float = 32.0,
        transfer_s: float = 60.0,
    ):
        problems = []
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            problems.append(
                InputProblem(
                    "provider",
                    "base_url must start with http:// or https://",
                    value=str(base_url),
                    column="base_url",
                    fix='e.g. base_url = "http://127.0.0.1:8000/v1"',
                )
            )
        elif "@" in urllib.parse.urlsplit(base_url).netloc:
            # Credentials belong in api_key_env, never in a URL that ends up in logs; say so
            # and never echo the password.
            problems.append(
                InputProblem(
                    "provider",
                    "base_url must not contain user:password@ credentials",
                    value=public_url(base_url),
                    column="base_url",
                    fix="put the key in an environment variable named by api_key_env",
                )
            )
        numbers = {
            "timeout_s": timeout_s,
            "deadline_s": deadline_s,
            "transfer_s": transfer_s,
            "max_response_mb": max_response_mb,
            "backoff_base_s": backoff_base_s,
            "max_backoff_s": max_backoff_s,
            "max_retries": max_retries,
            "max_concurrency": max_concurrency,
        }
        problems += check_limits(numbers)
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            problems.append(InputProblem("provider", "seed must be an integer", column="seed", value=repr(seed)))
        for key, table in (("extra_body", extra_body), ("headers", headers)):
            if table is not None and not isinstance(table, dict):
                problems.append(InputProblem("provider", f"{key} must be a table", column=key, value=repr(table)))
        if isinstance(extra_body, dict):
            problems += [
                InputProblem(
                    "provider",
                    "NaN or infinity cannot be sent as JSON",
                    column=f"extra_body.{key}",
                    value=repr(value),
                    fix="give a finite number",
                )
                for key, value in non_finite(extra_body)
            ]
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
        self.base_url = base_url.rstrip("/")
        self._public_url = public_url(self.base_url)
        self.api_key_env = api_key_env or None
        self.limits = HttpLimits(
            timeout_s=float(timeout_s),
            deadline_s=float(deadline_s),
            transfer_s=float(transfer_s),
            max_response_mb=float(max_response_mb),
            max_retries=int(max_retries),
            backoff_base_s=float(backoff_base_s),
            max_backoff_s=float(max_backoff_s),
        )
        self.timeout_s = self.limits.timeout_s
        self.max_retries = self.limits.max_retries
        self.max_concurrency = int(max_concurrency)
        self.extra_body = dict(extra_body or {})
        self.headers = {str(k): str(v) for k, v in (headers or {}).items()}
        self.seed = seed
        self.api_key_header = str(api_key_header)
        self._semaphore = threading.BoundedSemaphore(self.max_concurrency)
        secret: dict[str, str] = {}
        if self._key:
            if self.api_key_header.lower() == "authorization":
                secret["Authorization"] = f"Bearer {self._key}"
            else:
                secret[self.api_key_header] = self._key
        self._http = LLMHttpClient(
            self.base_url,
            self.limits,
            secret_headers=secret,
            headers=self.headers,
            describe=f"(model {self.model})",
            seed=seed,
        )

    # -- public -----------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        return {
            "provider": self.name,
            "model": self.model,
            "base_url": self._public_url,
            "api_key_env": self.api_key_env,
            "timeout_s": self.limits.timeout_s,
            "deadline_s": self.limits.deadline_s,
            "transfer_s": self.limits.transfer_s,
            "max_response_mb": self.limits.max_response_mb,
            "max_retries": self.limits.max_retries,
            "max_concurrency": self.max_concurrency,
            "extra_body": self.extra_body,
        }

    def __repr__(self) -> str:
        return (
            f"OpenAICompatProvider(model={self.model!r}, base_url={self._public_url!r}, "
            f"api_key_env={self.api_key_env!r})"
        )

    def chat(self, messages: Sequence[ChatMessage], **sampling: Any) -> Completion:
        """Send one chat-completions request (with retries); return the first choice."""
        body = {"model": self.model, "messages": [m.as_dict() for m in messages]}
        body.update(self.extra_body)
        body.update({k: v for k, v in sampling.items() if v is not None})
        answer = self._post("/chat/completions", body)
        payload = answer.payload
        choices = payload.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices else None
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            raise ProviderError(f"{self._http.where('/chat/completions')}: the answer has no choices[0].message")
        usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
        return Completion(
            text=message_text(message.get("content")),
            model=str(payload.get("model") or self.model),
            finish_reason=str(choice.get("finish_reason") or ""),
            reasoning=message_text(message.get("reasoning_content") or message.get("reasoning")),
            prompt_tokens=_count(usage.get("prompt_tokens")),
            completion_tokens=_count(usage.get("completion_tokens")),
            n_http_attempts=answer.n_attempts,
            elapsed_s=answer.elapsed_s,
            extra={"n_replaced_characters": answer.n_replaced_characters} if answer.n_replaced_characters else {},
        )

    def completions(self, prompt: str | list[str], **params: Any) -> dict[str, Any]:
        """``POST /completions`` (legacy endpoint; e.g. ``echo=True, logprobs=1,
        max_tokens=0`` for prompt-token log-probabilities). Returns the parsed JSON."""
        body = {"model": self.model, "prompt": prompt}
        body.update(params)
        return self._post("/completions", body).payload

    def close(self) -> None:
        self._http.close()

    # -- HTTP ---------------------------------------------------------------------------
    def _post(self, path: str, body: dict[str, Any]):
        with self._semaphore:
            return self._http.post_json(path, body)


def message_text(content: Any) -> str:
    """The text of a message's ``content``: a string as is; a list of parts joined.

    Parts may be strings or objects with a ``text`` field (``{"type": "text", "text": ...}``,
    also ``output_text``); parts without text (images, refusals without text...) add nothing.
    ``None`` is "".
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        pieces = []
        for part in content:
            if isinstance(part, str):
                pieces.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                pieces.append(part["text"])
        return "".join(pieces)
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        return content["text"]
    return str(content)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
