"""LLM providers for generation and scoring, registered by name (see :mod:`.base`).

Importing this package imports the built-in backends, which registers them in
:data:`PROVIDERS` (Python imports a package before any of its modules, so
``judge_transfer_audit.generation.providers.base`` never sees an empty registry). The backends import ``base``;
``base`` imports no backend: dependencies run one way.
"""

from judge_transfer_audit.generation.providers.base import (
    PROVIDERS,
    ChatMessage,
    Completion,
    Provider,
    build_provider,
)
from judge_transfer_audit.generation.providers.openai_compat import OpenAICompatProvider
from judge_transfer_audit.generation.providers.transformers_local import TransformersProvider

__all__ = [
    "PROVIDERS",
    "ChatMessage",
    "Completion",
    "Provider",
    "build_provider",
    "OpenAICompatProvider",
    "TransformersProvider",
]
