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


class Progress:
    """Stage messages on stderr with elapsed time; silent when disabled (``--quiet``).

    With ``timings`` (an :class:`audit.timings.RunTimings`), every stage is also timed
    there, quiet or not.
    """

    def __init__(self, enabled: bool = True, stream=None, timings=None):
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.started = time.perf_counter()
        self.timings = timings

    def __call__(self, message: str) -> None:
        if self.timings is not None:
            self.timings.stage(message)
        if self.enabled:
            elapsed = time.perf_counter() - self.started
            print(f"[{elapsed:5.1f}s] {message}...", file=self.stream, flush=True)

    def done(self) -> None:
        pass
