"""LLM providers for generation and scoring, registered by name (see :mod:`.base`)."""

from generation.providers.base import (
    PROVIDERS,
    ChatMessage,
    Completion,
    Provider,
    build_provider,
)
from generation.providers.openai_compat import OpenAICompatProvider
from generation.providers.transformers_local import TransformersProvider

__all__ = [
    "PROVIDERS",
    "ChatMessage",
    "Completion",
    "Provider",
    "build_provider",
    "OpenAICompatProvider",
    "TransformersProvider",
]
