"""The three outcomes of an optional section: :class:`Computed`, :class:`Skipped`, :class:`Failed`.

Every optional section of :class:`~judge_transfer_audit.results.result.AuditResult` is a ``Section[P]``, ``P`` the
section's typed result (``Section[DevValidity]``, ``Section[ReaderAnalysis]``, ...), and is one
of three frozen variants:

* ``Computed(payload)``: the section ran; ``payload`` is its typed result (status PASS);
* ``Skipped(reason)``: an input it needs was not given, or it was not requested (SKIPPED);
* ``Failed(reason, error)``: it raised an :class:`~judge_transfer_audit.core.errors.AuditError` (ERROR); ``error``
  names the exception's type, ``reason`` says what happened (provider secrets redacted).

Each variant has ``status``, ``reason`` and ``payload`` (``None`` unless computed), the three
fields result.json has always written for a section, in that order, so the JSON is unchanged;
``Failed`` adds ``error`` (schema 2.3, docs/audit.md). A leaf module: it imports the status only.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any, Callable, Generic, TypeVar

import pandas as pd

from judge_transfer_audit.model.checks import Status

P = TypeVar("P")


class Section(Generic[P]):
    """An optional part of the audit; one of :class:`Computed`, :class:`Skipped`, :class:`Failed`."""

    status: Status
    reason: str
    payload: P | None

    @property
    def computed(self) -> bool:
        """True when the section ran and holds its result."""
        return isinstance(self, Computed)

    def to_frame(self) -> pd.DataFrame:
        """The section's main table (its payload's ``to_frame()``); empty when not computed."""
        to_frame = getattr(self.payload, "to_frame", None)
        return to_frame() if callable(to_frame) else pd.DataFrame()

    def _repr_html_(self) -> str:
        head = f"<p><b>{html.escape(self.status.value)}</b>{': ' + html.escape(self.reason) if self.reason else ''}</p>"
        frame = self.to_frame()
        return head + (frame.head(20).to_html(escape=True, index=False) if len(frame) else "")

    @staticmethod
    def __from_jsonable__(args: tuple, data: Any, load: Callable[[Any, Any], Any]) -> Section:
        """The variant ``data`` (a section as result.json writes it) describes; ``args`` holds the
        payload type (``Section[DevValidity]`` -> ``(DevValidity,)``), ``load`` reads the payload."""
        if not isinstance(data, dict):
            raise TypeError(f"a section is an object with status, reason and payload, got {type(data).__name__}")
        status = Status(data.get("status"))
        reason = data.get("reason", "")
        if not isinstance(reason, str):
            raise TypeError(f"a section's reason is a string, got {reason!r}")
        if status is Status.SKIPPED:
            return Skipped(reason)
        if status is Status.ERROR:
            error = data.get("error", "")  # schema 2.2 wrote no error type
            if not isinstance(error, str):
                raise TypeError(f"a failed section's error is a string, got {error!r}")
            return Failed(reason, error)
        if status is not Status.PASS or data.get("payload") is None:
            raise ValueError(f"a section with status {status.value} must be computed and hold its payload")
        return Computed(load(args[0] if args else Any, data["payload"]))


@dataclass(frozen=True)
class Computed(Section[P]):
    """The section ran: ``payload`` is its typed result."""

    status: Status = field(default=Status.PASS, init=False)
    reason: str = field(default="", init=False)
    payload: P = None  # type: ignore[assignment]  (always given: Computed(payload))

    def __post_init__(self) -> None:
        if self.payload is None:
            raise ValueError("a computed section holds its result: Computed(payload) with a payload")


@dataclass(frozen=True)
class Skipped(Section[Any]):
    """The section did not run: an input it needs is missing, or it was not requested (``reason``)."""

    status: Status = field(default=Status.SKIPPED, init=False)
    reason: str = "not computed"
    payload: None = field(default=None, init=False)


@dataclass(frozen=True)
class Failed(Section[Any]):
    """The section raised: ``reason`` says what happened, ``error`` names the exception's type."""

    status: Status = field(default=Status.ERROR, init=False)
    reason: str = ""
    payload: None = field(default=None, init=False)
    error: str = ""


__all__ = ["Section", "Computed", "Skipped", "Failed"]
