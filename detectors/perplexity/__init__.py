"""Perplexity under a causal language model: local transformers model or completions server.

Perplexity of a text is ``exp(mean NLL)`` over its tokens that have a left context: the
first token (after any BOS the tokenizer adds) is not scored, which is also what an
OpenAI-compatible server reports (its first prompt-token log-probability is null).
"""

from __future__ import annotations

from judge_transfer_audit.detectors.base import DETECTORS, Detector
from judge_transfer_audit.detectors.perplexity.config import PerplexityConfig
from judge_transfer_audit.detectors.perplexity.local import TransformersPerplexity
from judge_transfer_audit.detectors.perplexity.server import ServerPerplexity

DETECTORS.add("perplexity", TransformersPerplexity)


def make_perplexity_detector(config: PerplexityConfig) -> Detector:
    """The detector for ``config``: the server backend when ``url`` is set, else transformers."""
    if config.url:
        return ServerPerplexity(config)
    return TransformersPerplexity(config)


__all__ = ["PerplexityConfig", "TransformersPerplexity", "ServerPerplexity", "make_perplexity_detector"]
