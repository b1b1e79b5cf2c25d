"""How to reach a language model for perplexity (a local transformers model or a server)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PerplexityConfig:
    """Settings of the perplexity detector. Set ``model`` *or* ``url`` + ``server_model``.

    Attributes
    ----------
    model : str | None
        A transformers causal LM: a Hugging Face hub name or a local directory.
    revision : str | None
        Hub revision (branch, tag or commit) to load; for a server, a label you choose for
        the weights it serves (it becomes part of the cache key).
    allow_download : bool
        Let transformers download ``model`` from the hub. Off by default: the model is loaded
        with ``local_files_only=True``, so a run (and CI) never downloads silently.
    device : str
        "auto" (cuda, else mps, else cpu), or a torch device string.
    dtype : str
        "auto" (float32 on cpu/mps; bfloat16 on cuda when supported, else float16), or
        "float32", "float16", "bfloat16".
    batch_size : int
        Windows per forward pass (local) or prompts per request (server).
    max_length : int | None
        Window length in tokens; default the model's context length.
    stride : int | None
        Tokens the window advances for texts longer than ``max_length``; default half of it.
        Every token after the first window is scored with at least ``max_length - stride``
        tokens of context.
    url : str | None
        Base URL of an OpenAI-compatible server (e.g. vLLM), e.g. ``http://host:8000``.
    server_model : str | None
        The ``model`` field sent to the server.
    api_key_env : str | None
        NAME of the environment variable holding the server's API key (sent as a Bearer
        token; redacted from every message). None (default) sends no key: a key is never
        read from the environment unless you name its variable, so an OpenAI key cannot
        reach a third-party server by accident. Named but unset is an input error.
    timeout : float
        Seconds per HTTP request.
    """

    model: str | None = None
    revision: str | None = None
    allow_download: bool = False
    device: str = "auto"
    dtype: str = "auto"
    batch_size: int = 8
    max_length: int | None = None
    stride: int | None = None
    url: str | None = None
    server_model: str | None = None
    api_key_env: str | None = None
    timeout: float = 120.0

    @property
    def configured(self) -> bool:
        return bool(self.model) or bool(self.url)
