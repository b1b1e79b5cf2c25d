"""The progress interface long computations report through (no printing from statistics).

A statistics module never prints. Long work (bootstrap chunks, GLMM refits) runs as tasks
through :mod:`audit.parallel`; the task runner asks a *progress factory* for a bar per batch
of tasks and advances it as tasks finish. The command line supplies a factory that draws a
bar with an ETA on stderr (``audit.cli.options.Progress.bar``); everything else gets
:func:`no_progress`.
"""

from __future__ import annotations

from typing import Callable, Protocol


class ProgressBar(Protocol):
    """One bar: ``advance`` after each finished unit of work, ``close`` at the end."""

    def advance(self, n: int = 1) -> None: ...

    def close(self) -> None: ...


#: ``factory(description, total) -> ProgressBar``
ProgressFactory = Callable[[str, int], ProgressBar]


class _SilentBar:
    def advance(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def no_progress(description: str, total: int) -> ProgressBar:
    """A bar that shows nothing."""
    return _SilentBar()
