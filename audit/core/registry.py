"""Name-based registries for pluggable families (detectors, GLMM backends, providers, tie rules)."""

from __future__ import annotations

from typing import Callable, Generic, Iterator, TypeVar

from judge_transfer_audit.core.errors import InputError, InputProblem, did_you_mean

T = TypeVar("T")


class Registry(Generic[T]):
    """A mapping from a stable name to an implementation. Unknown names list the known ones."""

    def __init__(self, kind: str):
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def decorator(obj: T) -> T:
            if name in self._items:
                raise ValueError(f"{self.kind} '{name}' is registered twice")
            self._items[name] = obj
            return obj

        return decorator

    def add(self, name: str, obj: T) -> None:
        self.register(name)(obj)

    def get(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            known = ", ".join(sorted(self._items)) or "(none)"
            raise InputError(
                InputProblem(
                    file="options",
                    message=f"unknown {self.kind} '{name}'{did_you_mean(name, self._items)}",
                    fix=f"use one of: {known}",
                )
            ) from None

    def names(self) -> list[str]:
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())
