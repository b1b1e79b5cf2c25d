"""Option parsing and progress display shared by the subcommands."""

from __future__ import annotations

import sys
import time

import click


def parse_scale(ctx, param, value: str | None) -> tuple[float, float] | None:
    if value is None:
        return None
    try:
        low, high = (float(v) for v in value.split(","))
    except ValueError:
        raise click.BadParameter(f"expected LO,HI such as 1,5, got {value!r}") from None
    if not low < high:
        raise click.BadParameter(f"LO must be below HI, got {value!r}")
    return low, high


def jobs_option(function):
    """``--jobs N``: tasks at once on a local process pool (default: every available core)."""
    return click.option(
        "--jobs", type=click.IntRange(min=1), default=None,
        help="Run the long statistics (bootstrap chunks, GLMM refits) on N local processes; 1 runs them in "
             "this process. Default: every available core. The results do not depend on it.")(function)


def scheduler_option(function):
    """``--scheduler tcp://HOST:PORT``: run the tasks on a Dask distributed cluster."""
    return click.option(
        "--scheduler", metavar="tcp://HOST:PORT",
        help="Run the long statistics on the Dask distributed cluster at this address instead of local "
             "processes (pip install 'judge-transfer-audit[dask]'; see docs/uncertainty.md). Same results as --jobs 1.")(function)


class _TqdmBar:
    def __init__(self, description: str, total: int, stream):
        from tqdm import tqdm

        self._bar = tqdm(total=total, desc=description, file=stream, unit="task", leave=False, dynamic_ncols=True,
                         mininterval=0.5)

    def advance(self, n: int = 1) -> None:
        self._bar.update(n)

    def close(self) -> None:
        self._bar.close()


class Progress:
    """Stage messages on stderr with elapsed time; silent when disabled (``--quiet``).

    With ``timings`` (an :class:`audit.timings.RunTimings`), every stage is also timed
    there, quiet or not. :meth:`bar` is the progress factory of :mod:`audit.progress`: a bar
    with an ETA for long batches of tasks, drawn only when enabled and stderr is a terminal (no
    bar in CI logs).
    """

    def __init__(self, enabled: bool = True, stream=None, timings=None):
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.started = time.perf_counter()
        self.timings = timings

    @property
    def bars(self) -> bool:
        isatty = getattr(self.stream, "isatty", None)
        return bool(self.enabled and isatty is not None and isatty())

    def bar(self, description: str, total: int):
        from audit.progress import no_progress

        if not self.bars or total < 2:
            return no_progress(description, total)
        return _TqdmBar(description, total, self.stream)

    def __call__(self, message: str) -> None:
        if self.timings is not None:
            self.timings.stage(message)
        if self.enabled:
            elapsed = time.perf_counter() - self.started
            print(f"[{elapsed:5.1f}s] {message}...", file=self.stream, flush=True)

    def done(self) -> None:
        pass
