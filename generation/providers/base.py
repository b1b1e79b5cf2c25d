"""The provider interface: anything that answers a chat (an HTTP server or a local model).

A provider is built by name from a configuration table (``provider = "openai"`` plus its
options) through :data:`PROVIDERS`; an unknown name lists the registered ones. Every
backend translates its own failures into :class:`judge_transfer_audit.core.errors.ProviderError`, so callers
handle one exception type.
"""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

from judge_transfer_audit.core.errors import InputError, InputProblem
from judge_transfer_audit.core.registry import Registry


@dataclass(frozen=True)
class ChatMessage:
    """One chat message: ``role`` is ``"system"``, ``"user"`` or ``"assistant"``."""

    role: str
    content: str

    def as_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class Completion:
    """What a provider answered.

    Attributes
    ----------
    text : str
        The message content exactly as returned (reasoning blocks NOT stripped here: the
        generation protocol decides what to strip).
    model : str
        The model that answered, as reported by the backend.
    finish_reason : str
        ``"stop"``, ``"length"``, ... ("" when the backend does not say).
    reasoning : str
        Separate reasoning text some servers return next to the content
        (``reasoning_content``); "" when absent.
    prompt_tokens, completion_tokens : int | None
        Token usage when the backend reports it.
    n_http_attempts : int
        How many requests it took (1 = no retry); 1 for local models.
    elapsed_s : float
        Wall time of the call including retries.
    """

    text: str
    model: str = ""
    finish_reason: str = ""
    reasoning: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    n_http_attempts: int = 1
    elapsed_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Provider(Protocol):
    """What generation and scoring need from a backend.

    ``chat`` must be safe to call from several threads at once; each backend bounds its
    own concurrency. ``sampling`` holds settings such as ``temperature``, ``top_p``,
    ``max_tokens`` or ``seed``; a backend ignores the ones it cannot honour and says which
    in :attr:`ignored_sampling_keys`.
    """

    name: str
    max_concurrency: int

    def chat(self, messages: Sequence[ChatMessage], **sampling: Any) -> Completion: ...

    def describe(self) -> dict[str, Any]:
        """Non-secret description of the configuration (recorded in the attempts log)."""
        ...


PROVIDERS: Registry[type] = Registry("provider")


def build_provider(config: Mapping[str, Any], *, where: str = "provider") -> Provider:
    """Build a provider from a configuration table.

    Parameters
    ----------
    config : mapping
        ``{"provider": NAME, **options}``; options are the keyword arguments of the
        backend's constructor (see docs/generation.md for each backend's keys).
    where : str
        Name of the table in the user's file, used in error messages.

    Raises
    ------
    InputError
        Unknown provider name, unknown or missing option.
    """
    options = dict(config)
    name = options.pop("provider", None)
    if not name:
        raise InputError(
            InputProblem(
                file=where,
                message="no provider named",
                fix=f"add provider = one of {', '.join(PROVIDERS.names())}",
            )
        )
    cls = PROVIDERS.get(str(name))
    params = inspect.signature(cls.__init__).parameters
    accepted = [p for p in params if p != "self"]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise InputError(
            [
                InputProblem(
                    file=where,
                    column=key,
                    message=f"unknown option for provider '{name}'",
                    fix=f"use one of: {', '.join(accepted)}",
                )
                for key in unknown
            ]
        )
    missing = [
        p for p, spec in params.items() if p != "self" and spec.default is inspect.Parameter.empty and p not in options
    ]
    if missing:
        raise InputError(
            [
                InputProblem(
                    file=where, column=key, message=f"provider '{name}' needs this option", fix=f"add {key} = ..."
                )
                for key in missing
            ]
        )
    try:
        return cls(**options)
    except InputError as exc:
        # Backends name their table "provider"; say which table of which file it is.
        raise InputError(
            [dataclasses.replace(p, file=where) if p.file == "provider" else p for p in exc.problems]
        ) from None
