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

import json
import os
import time
import urllib.error
import urllib.request
from typing import Any

import numpy as np
import pandas as pd

from audit.errors import ProviderError
from detectors.base import Detector
from detectors.perplexity.config import PerplexityConfig
from detectors.perplexity.local import perplexity_from_logprobs


def prompt_logprobs(choice: dict, prompt: str) -> list[float]:
    """Log-probabilities of the prompt tokens in one completions ``choice`` (nulls removed)."""
    logprobs = choice.get("logprobs") or {}
    values = logprobs.get("token_logprobs")
    if values is None:
        raise ProviderError("the server returned no token_logprobs; it must support echo=true with logprobs")
    offsets = logprobs.get("text_offset")
    if offsets is not None and len(offsets) == len(values):
        kept = [v for v, off in zip(values, offsets) if off < len(prompt)]
    else:
        kept = list(values[:-1])
    return [float(v) for v in kept if v is not None]


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
        self.tokens_scored = 0
        self.seconds = 0.0

    def params(self) -> dict[str, Any]:
        return {"backend": "openai-completions", "model": self.config.server_model,
                "request": "echo=true logprobs=1 max_tokens=1 temperature=0"}

    def revision(self) -> str:
        return self.config.revision or ""

    def _post(self, payload: dict) -> dict:
        url = self.config.url.rstrip("/")
        if not url.endswith("/v1"):
            url += "/v1"
        request = urllib.request.Request(url + "/completions", data=json.dumps(payload).encode("utf-8"),
                                         headers={"Content-Type": "application/json"}, method="POST")
        key = os.environ.get(self.config.api_key_env, "")
        if key:
            request.add_header("Authorization", f"Bearer {key}")
        last: Exception | None = None
        for attempt in range(3):
            try:
                with urllib.request.urlopen(request, timeout=self.config.timeout) as response:
                    return json.loads(response.read().decode("utf-8"))
            except urllib.error.HTTPError as exc:
                body = exc.read().decode("utf-8", "replace")[:300]
                if exc.code < 500:
                    raise ProviderError(f"{url}/completions answered {exc.code}: {body}") from exc
                last = exc
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                last = exc
            time.sleep(0.5 * 2**attempt)
        raise ProviderError(f"{url}/completions failed after 3 attempts: {last}")

    def compute(self, texts: list[str]) -> pd.DataFrame:
        start = time.perf_counter()
        out = np.full(len(texts), np.nan)
        bs = max(1, int(self.config.batch_size))
        for k in range(0, len(texts), bs):
            prompts = list(texts[k:k + bs])
            reply = self._post({"model": self.config.server_model, "prompt": prompts, "echo": True,
                                "logprobs": 1, "max_tokens": 1, "temperature": 0})
            choices = reply.get("choices") or []
            if len(choices) != len(prompts):
                raise ProviderError(f"the server returned {len(choices)} choices for {len(prompts)} prompts")
            self.reported_model = str(reply.get("model", self.reported_model))
            for pos, choice in enumerate(sorted(choices, key=lambda c: c.get("index", 0))):
                values = prompt_logprobs(choice, prompts[pos])
                self.tokens_scored += len(values)
                out[k + pos] = perplexity_from_logprobs(values)
        self.seconds += time.perf_counter() - start
        return pd.DataFrame({"perplexity": out})
