"""Perplexity from an OpenAI-compatible ``/v1/completions`` server (vLLM and the like).

The request asks the server to echo the prompt with its token log-probabilities::

    POST {url}/v1/completions
    {"model": M, "prompt": [text, ...], "echo": true, "logprobs": 1, "max_tokens": 1,
     "temperature": 0}

``max_tokens`` is 1 because vLLM rejects 0; the one generated token is dropped using
``text_offset`` (a token starting at or after the end of the prompt was generated), or,
when the server gives no offsets, by dropping the last entry. The first prompt token's
log-probability is null (no left context) and is not scored, as in the local backend.
"""

from __future__ import annotations

import time
import urllib.parse
from typing import Any

import numpy as np
import pandas as pd

from judge_transfer_audit.core.errors import ProviderError
from judge_transfer_audit.detectors.base import Detector
from judge_transfer_audit.detectors.perplexity.config import PerplexityConfig
from judge_transfer_audit.detectors.perplexity.local import perplexity_from_logprobs


def prompt_logprobs(choice: dict, prompt: str) -> list[float]:
    """Log-probabilities of the prompt tokens in one completions ``choice`` (nulls removed)."""
    logprobs = choice.get("logprobs") or {}
    values = logprobs.get("token_logprobs") if isinstance(logprobs, dict) else None
    if not isinstance(values, list):
        raise ProviderError("the server returned no token_logprobs; it must support echo=true with logprobs")
    offsets = logprobs.get("text_offset")
    try:
        if isinstance(offsets, list) and len(offsets) == len(values):
            kept = [v for v, off in zip(values, offsets) if off < len(prompt)]
        else:
            kept = list(values[:-1])
        return [float(v) for v in kept if v is not None]
    except (TypeError, ValueError) as exc:
        raise ProviderError(f"the server's token_logprobs or text_offset are not numbers ({exc})") from None


def server_base_url(url: str) -> str:
    """The ``/v1`` root of a completions server given as ``http://host:8000`` or
    ``http://host:8000/v1`` (a query string, e.g. a gateway's key, stays at the end)."""
    parts = urllib.parse.urlsplit(url.strip())
    path = parts.path.rstrip("/")
    if not path.endswith("/v1"):
        path += "/v1"
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


class ServerPerplexity(Detector):
    """Perplexity ``exp(-mean prompt-token log-probability)`` reported by a completions server.

    Validated against a local test server returning known log-probabilities
    (tests/detectors/test_perplexity_server.py). The cache key holds the server model name
    and the ``revision`` label you give, not the URL: the same weights served elsewhere
    reuse the cache; different weights under one name need a different ``revision``.
    """

    name = "perplexity"
    version = "1"
    features = ("perplexity",)

    def __init__(self, config: PerplexityConfig):
        if not config.url or not config.server_model:
            raise ValueError("ServerPerplexity needs config.url and config.server_model")
        self.config = config
        self.reported_model = ""
        self._provider = None
        self.tokens_scored = 0
        self.seconds = 0.0

    def params(self) -> dict[str, Any]:
        return {
            "backend": "openai-completions",
            "model": self.config.server_model,
            "request": "echo=true logprobs=1 max_tokens=1 temperature=0",
        }

    def revision(self) -> str:
        return self.config.revision or ""

    def _client(self):
        """The project's one LLM HTTP client (:mod:`judge_transfer_audit.generation.providers.http_client` through
        the OpenAI-compatible provider): retries, ``Retry-After``, a deadline, a size cap, no
        redirect to another origin, key redaction, no proxy for localhost."""
        if self._provider is None:
            from judge_transfer_audit.generation.providers.openai_compat import OpenAICompatProvider

            # A 5xx, a timeout, a dropped connection or a body that is not JSON is retried twice.
            self._provider = OpenAICompatProvider(
                model=self.config.server_model,
                base_url=server_base_url(self.config.url),
                api_key_env=self.config.api_key_env or None,
                timeout_s=self.config.timeout,
                max_retries=2,
                backoff_base_s=0.5,
                max_concurrency=1,
            )
        return self._provider

    def _post(self, prompts: list[str]) -> dict:
        return self._client().completions(prompts, echo=True, logprobs=1, max_tokens=1, temperature=0)

    def compute(self, texts: list[str]) -> pd.DataFrame:
        start = time.perf_counter()
        out = np.full(len(texts), np.nan)
        bs = max(1, int(self.config.batch_size))
        for k in range(0, len(texts), bs):
            prompts = list(texts[k : k + bs])
            reply = self._post(prompts)
            choices = reply.get("choices") or []
            if not isinstance(choices, list) or len(choices) != len(prompts):
                n = len(choices) if isinstance(choices, list) else "no list of"
                raise ProviderError(f"the server returned {n} choices for {len(prompts)} prompts")
            if not all(isinstance(c, dict) for c in choices):
                raise ProviderError("the server's choices are not JSON objects")
            self.reported_model = str(reply.get("model", self.reported_model))
            for pos, choice in enumerate(sorted(choices, key=lambda c: c.get("index", 0))):
                values = prompt_logprobs(choice, prompts[pos])
                self.tokens_scored += len(values)
                out[k + pos] = perplexity_from_logprobs(values)
        self.seconds += time.perf_counter() - start
        return pd.DataFrame({"perplexity": out})
