"""The project's exceptions and warnings.

One shallow hierarchy so that the CLI can turn any expected failure into a plain
message and an exit status, never a traceback.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` naming the candidate closest to a misspelled ``name``, or ``""``."""
    match = closest(name, candidates)
    return f" (did you mean '{match}'?)" if match is not None else ""


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to a misspelled ``name`` (None when none is close).

    Names are compared lower-cased without punctuation (``Reader ID``, ``reader-id`` and
    ``readerid`` are one name), by :func:`difflib.get_close_matches`.
    """
    by_key: dict[str, str] = {}
    for c in candidates:
        by_key.setdefault(_name_key(str(c)), str(c))
    match = difflib.get_close_matches(_name_key(str(name)), list(by_key), n=1, cutoff=0.6)
    return by_key[match[0]] if match else None


def _name_key(name: str) -> str:
    return re.sub(r"[^0-9a-z]+", "", name.lower())


class AuditError(Exception):
    """Base class of every error the toolkit raises on purpose."""


@dataclass(frozen=True)
class InputProblem:
    """One problem found in an input file.

    Attributes
    ----------
    file : str
        The file (path as given by the user) or a logical name such as ``"humans"``.
    line : int | None
        1-based line number in the file (header is line 1), when known.
    column : str | None
        The column involved, when one is.
    value : str | None
        The offending value, as found.
    message : str
        What is wrong.
    fix : str
        How to fix it.
    """

    file: str
    message: str
    fix: str = ""
    line: int | None = None
    column: str | None = None
    value: str | None = None

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f", line {self.line}"
        if self.column is not None:
            where += f", column '{self.column}'"
        text = f"{where}: {self.message}"
        if self.value is not None:
            text += f" (found {self.value!r})"
        if self.fix:
            text += f". Fix: {self.fix}"
        return text


class InputError(AuditError):
    """The user's input is invalid. Carries one :class:`InputProblem` per problem."""

    def __init__(self, problems: "list[InputProblem] | InputProblem | str"):
        if isinstance(problems, str):
            problems = [InputProblem(file="input", message=problems)]
        elif isinstance(problems, InputProblem):
            problems = [problems]
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class ConvergenceError(AuditError):
    """A numerical procedure could not produce a usable answer."""


class ProviderError(AuditError):
    """An LLM provider (HTTP server or local model) failed."""


class MissingDependencyError(AuditError):
    """An optional dependency is not installed; the message names the extra to install."""


class WorkerLostError(AuditError):
    """A worker process or the Dask cluster running the audit's tasks went away mid-run.

    Never turned into a section ERROR (the run cannot be trusted to be complete): the command
    line stops with its own exit status.
    """


class AuditWarning(UserWarning):
    """Base class of the toolkit's warnings."""


class SingularFitWarning(AuditWarning):
    """A variance component was estimated at zero."""


class SeparationWarning(AuditWarning):
    """Every observation of a cell falls on one side: the estimate is on the boundary."""


class DataWarning(AuditWarning):
    """Something in the data deserves attention but does not stop the run."""
