"""Run independent, individually seeded tasks: in-process, on a local process pool, or on Dask.

The audit's long statistics (bootstrap replicate chunks, GLMM refits) are lists of independent
tasks: a module-level function applied to one picklable item each. A :class:`TaskRunner` maps
the function over the items and returns the results in item order, whatever ran them:

* ``jobs=1``: in this process, one task after the other;
* ``jobs=N > 1``: a local process pool of N workers (``fork`` where the platform has it, so a
  worker starts with the parent's imports and data);
* ``scheduler="tcp://HOST:PORT"``: a Dask distributed cluster (optional extra ``dask``).

Results are byte-identical across the three, because nothing random depends on who runs a
task: every task carries its own seed, derived from the run's seed and the task's key
(:func:`judge_transfer_audit.core.tasks.task_seed`), never from a worker, and every task runs with BLAS on one thread (a
multi-threaded BLAS may sum in another order). Faults never hang: a worker that dies raises
:class:`~judge_transfer_audit.core.errors.WorkerLostError` (its own exit status on the command line); a scheduler
that does not answer within ``connect_timeout`` seconds raises
:class:`~judge_transfer_audit.core.errors.InputError` naming the address.
"""

from __future__ import annotations

import os
import uuid
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from contextvars import ContextVar
from typing import Any, Callable, Sequence

import numpy as np

from judge_transfer_audit.core.errors import InputError, InputProblem, WorkerLostError
from judge_transfer_audit.core.progress import ProgressFactory
from judge_transfer_audit.core.tasks import TaskRunner as TaskRunner
from judge_transfer_audit.core.tasks import _run_one as _run_one
from judge_transfer_audit.core.tasks import stable_digest as stable_digest
from judge_transfer_audit.core.tasks import task_seed as task_seed

#: seconds to wait for a Dask scheduler before giving up (exit status 2)
DEFAULT_CONNECT_TIMEOUT = 10.0


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity where the platform reports it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _worker_init() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle


class LocalPool(TaskRunner):
    """A pool of ``jobs`` worker processes, started on the first map of more than one task."""

    def __init__(self, jobs: int, progress: ProgressFactory | None = None):
        super().__init__(progress)
        self.jobs = int(jobs)
        self.where = f"local pool of {self.jobs}"
        self._pool: ProcessPoolExecutor | None = None

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            import multiprocessing as mp

            method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
            self._pool = ProcessPoolExecutor(
                max_workers=self.jobs, mp_context=mp.get_context(method), initializer=_worker_init
            )
        return self._pool

    def map(self, fn, items, *, label="tasks"):
        if len(items) <= 1:
            return super().map(fn, items, label=label)
        bar = self.progress(label, len(items))
        try:
            pool = self._executor()
            futures = {pool.submit(_run_one, fn, item): i for i, item in enumerate(items)}
            results: list[Any] = [None] * len(items)
            for future in as_completed(futures):
                results[futures[future]] = future.result()
                bar.advance()
            return results
        except BrokenProcessPool as exc:
            self.close()
            raise WorkerLostError(
                f"a worker process of the local pool ({self.jobs} workers) died while running {label} "
                "(killed, out of memory or crashed); rerun with fewer --jobs or --jobs 1"
            ) from exc
        finally:
            bar.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class DaskCluster(TaskRunner):
    """Tasks on a running Dask distributed scheduler (``pip install 'judge-transfer-audit[dask]'``)."""

    def __init__(
        self, address: str, progress: ProgressFactory | None = None, connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    ):
        super().__init__(progress)
        self.client = connect(address, connect_timeout)
        self.address = address
        self.where = address
        workers = self.client.scheduler_info().get("workers", {})
        self.jobs = max(1, sum(int(w.get("nthreads", 1)) for w in workers.values()))

    def map(self, fn, items, *, label="tasks"):
        from distributed import as_completed as dask_completed

        if not items:
            return []
        bar = self.progress(label, len(items))
        run = uuid.uuid4().hex
        keys = [f"judge-audit-{label.replace(' ', '-')}-{run}-{i}" for i in range(len(items))]
        try:
            futures = self.client.map(_run_one, [fn] * len(items), items, key=keys, pure=False)
            for _ in dask_completed(futures, loop=self.client.loop):
                bar.advance()
            return self.client.gather(futures)
        except _cluster_faults() as exc:
            raise WorkerLostError(
                f"the Dask cluster at {self.address} lost a worker or the connection while running "
                f"{label} ({type(exc).__name__}: {exc}); check the cluster, or rerun without --scheduler"
            ) from exc
        finally:
            bar.close()

    def close(self) -> None:
        self.client.close()


def _cluster_faults() -> tuple[type[BaseException], ...]:
    """Exceptions that mean the cluster, not the task, failed (a task's own error propagates)."""
    from distributed.scheduler import KilledWorker

    faults: list[type[BaseException]] = [KilledWorker, TimeoutError, ConnectionError]
    try:
        from distributed.comm.core import CommClosedError

        faults.append(CommClosedError)
    except ImportError:  # pragma: no cover - older distributed
        pass
    return tuple(faults)


def connect(address: str, timeout: float = DEFAULT_CONNECT_TIMEOUT):
    """A ``distributed.Client`` on ``address``; :class:`InputError` (exit 2) when nothing answers
    within ``timeout`` seconds, :class:`~judge_transfer_audit.core.errors.MissingDependencyError` without the extra."""
    from judge_transfer_audit.core.optional import import_optional

    distributed = import_optional("distributed", "running the audit on a Dask cluster (--scheduler)")
    if "://" not in address:
        raise InputError(
            InputProblem(
                "--scheduler",
                "a scheduler address needs a protocol and a port",
                "give it as tcp://HOST:PORT (e.g. tcp://10.0.0.5:8786)",
                value=address,
            )
        )
    try:
        return distributed.Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise InputError(
            InputProblem(
                "--scheduler",
                f"no Dask scheduler answered at {address} within {timeout:g} s ({type(exc).__name__})",
                "start one (`dask scheduler`, then `dask worker ADDRESS` on each machine) or check the host and port",
                value=address,
            )
        ) from None


#: the calls of the :func:`run_calls` batch under way (forked workers inherit them: never pickled)
_FORKED_CALLS: list[tuple[Callable[..., Any], dict]] = []


def _forked_call(index: int) -> Any:
    fn, kwargs = _FORKED_CALLS[index]
    return fn(**kwargs)


def run_calls(
    calls: Sequence[tuple[Callable[..., Any], dict]],
    jobs: int,
    *,
    label: str = "sections",
    preload: Sequence[str] = (),
) -> list[Any]:
    """``fn(**kwargs)`` of every call, results in call order: coarse independent tasks (whole sections).

    With ``jobs > 1`` and the ``fork`` start method, on a local pool of ``min(jobs, len(calls))``
    workers, longest first as given (a worker takes the next call when it is free); the calls and
    their arguments reach the workers by fork, so they need not pickle (a section's inputs hold
    callbacks); only the results come back pickled. Each call seeds itself (never from the
    worker), so the results equal the in-process ones, which is what ``jobs=1`` (or no fork) runs.
    ``preload``: modules the calls import on first use, imported here before the fork so that
    the workers inherit them (else every worker of every batch imports them again: SciPy's
    statistics alone cost about a CPU-second each time).
    """
    import multiprocessing as mp

    calls = list(calls)
    if jobs <= 1 or len(calls) < 2 or "fork" not in mp.get_all_start_methods():
        return [fn(**kwargs) for fn, kwargs in calls]
    import importlib

    for name in preload:
        importlib.import_module(name)
    global _FORKED_CALLS
    _FORKED_CALLS = calls
    try:
        with LocalPool(min(int(jobs), len(calls))) as pool:
            return pool.map(_forked_call, list(range(len(calls))), label=label)
    finally:
        _FORKED_CALLS = []


def check_jobs(jobs: int | None) -> int:
    """``jobs`` itself, or the available cores for None; :class:`ValueError` below 1."""
    if jobs is None:
        return available_cores()
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer (1 runs in-process), got {jobs!r}")
    return int(jobs)


#: the runner of the run's task graph while a step that farms out tasks runs beside it
#: (:mod:`judge_transfer_audit.engine.task_graph`): what :func:`open_runner` gives that step instead of a pool of its
#: own
RUN_RUNNER: ContextVar[Any] = ContextVar("audit_run_runner", default=None)


def open_runner(
    jobs: int | None = 1,
    scheduler: str | None = None,
    progress: ProgressFactory | None = None,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
) -> TaskRunner:
    """The runner for ``jobs`` / ``scheduler`` (use it as a context manager: it owns the pool or
    the client). ``jobs=None`` means every available core; ``scheduler`` wins over ``jobs``.

    Called from a step of a run's task graph on a local pool (:mod:`judge_transfer_audit.engine.task_graph`), it gives
    the run's own runner instead: the tasks join the run's queue and workers (closing it does
    nothing; the run owns the pool)."""
    if scheduler:
        return DaskCluster(scheduler, progress=progress, connect_timeout=connect_timeout)
    shared = RUN_RUNNER.get()
    if shared is not None:
        return shared.sharing(progress)
    n = check_jobs(jobs)
    return TaskRunner(progress) if n == 1 else LocalPool(n, progress)


__all__ = [
    "TaskRunner",
    "LocalPool",
    "DaskCluster",
    "open_runner",
    "run_calls",
    "task_seed",
    "stable_digest",
    "available_cores",
    "check_jobs",
    "connect",
    "DEFAULT_CONNECT_TIMEOUT",
]
