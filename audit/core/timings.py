"""Wall-clock figures of one run, kept out of the result: ``timings.json``.

``result.json`` and ``report.html`` must be byte-identical for the same inputs, options and
seed, so nothing that depends on the clock or on the state of a cache goes into them. What
a run wants to say about its own execution (seconds per stage; per detector the texts
computed vs read from the feature cache, seconds, tokens scored and tokens per second) is
collected here and written beside the result as ``timings.json``. With ``--jobs N`` the statistics
run as one task graph (:mod:`judge_transfer_audit.engine.task_graph`): its stages overlap, so beside the stage messages
the file lists every task (which process ran it, when it started, its wall and CPU seconds; the tasks a
step farms out are summed per batch).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Iterable


class RunTimings:
    """Collects stage and detector timings while one ``audit run`` executes.

    The one mutable object the pipeline is handed (through ``AuditSpec.timings``): it only
    ever receives figures, the computation never reads them.
    """

    def __init__(self, clock: Callable[[], float] = time.perf_counter):
        self._clock = clock
        self._started = clock()
        self._current: tuple[str, float] | None = None
        self.stages: list[dict[str, Any]] = []
        self.detectors: list[dict[str, Any]] = []
        self.tasks: list[dict[str, Any]] = []

    def stage(self, name: str) -> None:
        """A new stage starts (the previous one ends now)."""
        self._close()
        self._current = (name, self._clock())

    def detector_runs(self, runs: Iterable[Any]) -> None:
        """Record the execution figures of ``detectors.DetectorRun`` objects."""
        self.detectors.extend(run.execution() for run in runs)

    def task(self, name: str, worker: str, started: float, seconds: float, cpu_seconds: float, n: int = 1) -> None:
        """Record a task of the run's graph: ``started`` in seconds since the graph started,
        ``worker`` "main" or "worker k"; ``n`` tasks of one batch summed."""
        self.tasks.append(
            {
                "task": name,
                "worker": worker,
                "started": started,
                "seconds": seconds,
                "cpu_seconds": cpu_seconds,
                **({"n": n} if n != 1 else {}),
            }
        )

    def _close(self) -> None:
        if self._current is not None:
            name, began = self._current
            self.stages.append({"stage": name, "seconds": self._clock() - began})
            self._current = None

    def to_dict(self) -> dict[str, Any]:
        """The content of timings.json (the running stage is closed first)."""
        self._close()
        return {
            "total_seconds": self._clock() - self._started,
            "stages": list(self.stages),
            "detectors": list(self.detectors),
            "tasks": list(self.tasks),
        }


__all__ = ["RunTimings"]
