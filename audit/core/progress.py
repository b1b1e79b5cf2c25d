"""The progress interface long computations report through (no printing from statistics).

A statistics module never prints. Long work (bootstrap chunks, GLMM refits) runs as tasks
through :mod:`judge_transfer_audit.engine.parallel`; the task runner asks a *progress factory* for a bar per batch
of tasks and advances it as tasks finish, and the run's task graph (:mod:`judge_transfer_audit.engine.task_graph`)
asks for one bar over all its steps and tasks, whose total grows as steps farm out tasks.
The command line supplies a factory that draws a bar with counts and an ETA on stderr
(:func:`terminal_bars`; ``judge_transfer_audit.cli.options.Progress.bar``); everything else gets
:func:`no_progress`.
"""

from __future__ import annotations

from typing import Callable, Protocol


class ProgressBar(Protocol):
    """One bar: ``advance`` after each finished unit of work, ``close`` at the end. A bar may
    also have ``grow(n)`` (``n`` more units to do); callers check with ``getattr``."""

    def advance(self, n: int = 1) -> None: ...

    def close(self) -> None: ...


#: ``factory(description, total) -> ProgressBar``
ProgressFactory = Callable[[str, int], ProgressBar]


class _SilentBar:
    def advance(self, n: int = 1) -> None:
        pass

    def grow(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def no_progress(description: str, total: int) -> ProgressBar:
    """A bar that shows nothing."""
    return _SilentBar()


class TqdmBar:
    """A tqdm bar (counts, rate, elapsed time and ETA) on ``stream``, cleared when closed."""

    def __init__(self, description: str, total: int, stream, unit: str = "task"):
        from tqdm import tqdm

        self._bar = tqdm(
            total=total, desc=description, file=stream, unit=unit, leave=False, dynamic_ncols=True, mininterval=0.5
        )

    @property
    def n(self) -> int:
        return int(self._bar.n)

    @property
    def total(self) -> int:
        return int(self._bar.total)

    def advance(self, n: int = 1) -> None:
        self._bar.update(n)

    def grow(self, n: int) -> None:
        self._bar.total += n
        self._bar.refresh()

    def close(self) -> None:
        self._bar.close()


def terminal_bars(stream=None) -> ProgressFactory:
    """A progress factory drawing :class:`TqdmBar` bars on ``stream`` (default: ``sys.stderr``),
    whether or not it is a terminal (the caller decides that)."""
    import sys

    def factory(description: str, total: int) -> ProgressBar:
        if total < 1:
            return no_progress(description, total)
        return TqdmBar(description, total, stream if stream is not None else sys.stderr)

    return factory


def grow(bar: ProgressBar, n: int) -> None:
    """``bar.grow(n)`` when the bar has it (a factory's bars need not)."""
    method = getattr(bar, "grow", None)
    if method is not None:
        method(n)
