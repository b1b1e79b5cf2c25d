"""One task graph per run: every step of the audit starts as soon as the steps it reads are done.

A run's statistics are a list of :class:`Step` s: a function, its arguments known when the run
starts, the steps whose results it reads (``after``) and how it reads them (``late``: more
arguments built from those results). :func:`run_steps` executes them in one of two ways, with the
same results (every step seeds itself from the run's seed, never from who runs it or when):

* **in order** (``jobs=1``): one step after the other in this process, in list order (which must
  put a step after every step it reads), each stage message printed before its step;
* **on a local pool** of ``jobs`` worker processes, forked once for the whole run after the
  imports its steps need (``preload``), so that they inherit the run's data and the steps'
  arguments without pickling them (only ``late`` arguments and results travel, pickled). A step is
  queued when the steps it reads are done, and a free worker takes the queued work of highest
  *rank*: the number of steps on the longest chain from it to the end of the run (each step
  counts one, its ``cost``), so the longest chains start first and the others fill the gaps; among
  equal ranks, the steps in list order.
  Steps marked ``here`` run in this process, each in a thread beside the scheduling loop, and
  hold one of the ``jobs`` while they compute; the tasks such a step hands to
  :func:`judge_transfer_audit.engine.parallel.open_runner` (the uncertainty section's and the leaderboard's bootstrap
  blocks and refits) join the same queue (:class:`GraphRunner`) ahead of every step (the step waits for them, they are
  short, and its job is theirs meanwhile). A step that sets ``farm_first=False`` (the
  leaderboard: nothing reads it, and its bootstrap blocks are long enough to delay the chains
  that end the run) waits in the queue at its own rank, itself and then its tasks: it starts
  when a job is free and no queued work outranks it, not ahead of the run's longest chains. (The
  steps computing here share one job between them: they share this process's interpreter.)

Faults never hang: a worker that dies raises :class:`~judge_transfer_audit.core.errors.WorkerLostError`, every step
and task still queued or waiting fails with it, and the pool is shut down; an exception raised by
a step stops the run the same way and propagates.
"""

from __future__ import annotations

import gc
import heapq
import itertools
import os
import queue
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from judge_transfer_audit.core.errors import WorkerLostError
from judge_transfer_audit.core.progress import ProgressFactory, grow, no_progress
from judge_transfer_audit.core.tasks import TaskRunner
from judge_transfer_audit.engine.parallel import RUN_RUNNER, _worker_init


@dataclass(frozen=True)
class Step:
    """One step of a run.

    Attributes
    ----------
    name : str
        Unique in the run; its result is ``run_steps(...)[name]``.
    fn : callable
        Called as ``fn(**kwargs, **late(results))``.
    kwargs : mapping
        Arguments known before the run starts (on a pool they reach the workers by fork: they need
        not pickle).
    after : tuple of str
        The steps whose results ``late`` reads (they run first).
    late : callable, optional
        ``late(results) -> more kwargs``, from the results of ``after`` (pickled to a worker).
    here : bool
        Run in this process (on a pool: in a thread beside the scheduling loop). For the glue
        between steps and for a step that farms out its own tasks.
    cost : float
        The step's weight in its rank on a pool (default 1: a rank counts the steps on the longest
        chain from a step to the end of the run; the audit's steps all keep it).
    stage : str, optional
        Progress message printed before the step when the steps run in order.
    farm_first : bool
        For a ``here`` step: it starts as soon as what it reads is done and its farmed tasks go
        ahead of every queued step (True), or it is queued at its own rank, and so are its
        farmed tasks (False: for a step nothing waits for).
    """

    name: str
    fn: Callable[..., Any]
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    after: tuple[str, ...] = ()
    late: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None
    here: bool = False
    cost: float = 1.0
    stage: str | None = None
    farm_first: bool = True

    def arguments(self, results: Mapping[str, Any]) -> dict[str, Any]:
        """The step's late arguments from the results so far."""
        return dict(self.late(results)) if self.late is not None else {}


def ranks(steps: Sequence[Step]) -> dict[str, float]:
    """Each step's cost plus the longest chain of costs of the steps that read it, directly or not."""
    readers: dict[str, list[str]] = {s.name: [] for s in steps}
    for s in steps:
        for name in s.after:
            readers[name].append(s.name)
    cost = {s.name: s.cost for s in steps}
    out: dict[str, float] = {}

    def rank(name: str) -> float:
        if name not in out:
            out[name] = cost[name] + max((rank(r) for r in readers[name]), default=0.0)
        return out[name]

    for s in steps:
        rank(s.name)
    return out


def check_steps(steps: Sequence[Step]) -> None:
    """:class:`ValueError` unless names are unique and every step comes after the steps it reads."""
    seen: set[str] = set()
    for s in steps:
        if s.name in seen:
            raise ValueError(f"two steps are named {s.name!r}")
        missing = [a for a in s.after if a not in seen]
        if missing:
            raise ValueError(f"step {s.name!r} reads {missing}, which do not come before it")
        seen.add(s.name)


def fork_available() -> bool:
    import multiprocessing as mp

    return "fork" in mp.get_all_start_methods()


def run_steps(
    steps: Sequence[Step],
    *,
    jobs: int = 1,
    progress: Callable[[str], None] | None = None,
    preload: Sequence[str] = (),
    timings: Any = None,
    bar: ProgressFactory | None = None,
    label: str = "statistics",
) -> dict[str, Any]:
    """Every step's result by name: in order here (``jobs=1``, or no ``fork``), else on a local
    pool of ``jobs`` forked workers (module docstring). ``timings``: an
    :class:`judge_transfer_audit.core.timings.RunTimings` that receives every task's figures (None: not recorded).
    ``bar``: a progress factory (:mod:`judge_transfer_audit.core.progress`) asked for one bar, ``label``, over the
    steps and, on a pool, the tasks they farm out (its total grows as they are farmed)."""
    steps = list(steps)
    check_steps(steps)
    run_bar = (bar or no_progress)(label, len(steps))
    try:
        if jobs <= 1 or not fork_available():
            return _run_in_order(steps, progress or (lambda message: None), timings, run_bar)
        return _PoolRun(steps, int(jobs), preload, timings, run_bar).run()
    finally:
        run_bar.close()


def _run_in_order(steps: list[Step], progress: Callable[[str], None], timings, bar=None) -> dict[str, Any]:
    """Every step in this process, one after the other, each with BLAS on one thread as the pool runs
    them: a product split between BLAS threads may add its terms in another order, so the last bits of a
    result would depend on ``--jobs``."""
    from judge_transfer_audit.core.threads import single_threaded_blas

    results: dict[str, Any] = {}
    began = time.perf_counter()
    for s in steps:
        if s.stage:
            progress(s.stage)
        c0, t0 = time.process_time(), time.perf_counter()
        with single_threaded_blas():
            results[s.name] = s.fn(**s.kwargs, **s.arguments(results))
        if timings is not None:
            timings.task(s.name, "main", t0 - began, time.perf_counter() - t0, time.process_time() - c0)
        if bar is not None:
            bar.advance()
    return results


# --- the local pool -------------------------------------------------------------------------------

#: the steps of the run under way (forked workers inherit them: never pickled)
_FORKED: list[Step] = []


def _timed(fn: Callable[[], Any]) -> tuple[Any, tuple[int, float, float, float]]:
    """``fn()`` with BLAS on one thread (as every runner runs a task), and where, when and how
    long it ran: (pid, start on the monotonic clock, wall seconds, CPU seconds)."""
    from judge_transfer_audit.core.threads import single_threaded_blas

    c0, t0 = time.process_time(), time.perf_counter()
    with single_threaded_blas():
        value = fn()
    return value, (os.getpid(), t0, time.perf_counter() - t0, time.process_time() - c0)


def _forked_step(index: int, late: dict) -> tuple[Any, tuple]:
    step = _FORKED[index]
    return _timed(lambda: step.fn(**step.kwargs, **late))


def _farmed_task(fn: Callable[[Any], Any], item: Any) -> tuple[Any, tuple]:
    return _timed(lambda: fn(item))


def _started() -> int:
    return os.getpid()


@dataclass(eq=False)
class _Work:
    """A unit of the queue: a worker step (``step``) or one task a ``here`` step farmed out."""

    rank: float
    step: Step | None = None
    index: int = -1
    late: dict | None = None
    fn: Callable[[Any], Any] | None = None
    item: Any = None
    future: Future | None = None  #: a farmed task's, answered by the loop
    label: str = ""
    owner: str = ""  #: the ``here`` step that farmed it


class GraphRunner(TaskRunner):
    """The :class:`~judge_transfer_audit.core.tasks.TaskRunner` a ``here`` step gets from
    :func:`judge_transfer_audit.engine.parallel.open_runner` while the run's graph runs: its tasks join the run's queue
    with the step's rank and run on the run's workers (it owns no pool: closing it does nothing)."""

    def __init__(self, run: _PoolRun, step: str, rank: float, progress: ProgressFactory | None = None):
        super().__init__(progress)
        self._run, self.step, self.rank = run, step, rank
        self.jobs = run.jobs
        self.where = f"local pool of {run.jobs}"

    def sharing(self, progress: ProgressFactory | None) -> GraphRunner:
        """This runner for a step that asked for bars drawn with ``progress``: none of its own, as
        the run's bar counts its tasks."""
        return GraphRunner(self._run, self.step, self.rank, None)

    def map(self, fn, items, *, label="tasks"):
        items = list(items)
        if not items:
            return []
        futures = self._run.farm_out(self.step, fn, items, self.rank, label)
        bar = self.progress(label, len(items))
        try:
            for future in as_completed(futures):
                future.result()  # the first failure stops the batch
                bar.advance()
            return [f.result() for f in futures]
        finally:
            bar.close()


class _PoolRun:
    """The steps on a pool of forked workers, scheduled by rank (module docstring)."""

    def __init__(self, steps: list[Step], jobs: int, preload: Sequence[str], timings, bar=None):
        self.steps, self.jobs, self.preload, self.timings = steps, jobs, tuple(preload), timings
        self.bar = bar if bar is not None else no_progress("", 0)
        self.rank = ranks(steps)
        self.index = {s.name: i for i, s in enumerate(steps)}
        self.waiting = {s.name: len(set(s.after)) for s in steps}
        self.readers: dict[str, list[Step]] = {s.name: [] for s in steps}
        for s in steps:
            for name in set(s.after):
                self.readers[name].append(s)
        self.results: dict[str, Any] = {}
        self.events: queue.SimpleQueue = queue.SimpleQueue()
        self.ready: list[tuple[float, int, _Work]] = []
        self.order = itertools.count()
        self.running: dict[Future, _Work] = {}
        self.threads: dict[str, threading.Thread] = {}
        self.computing: set[str] = set()  #: ``here`` steps computing (not waiting for farmed tasks)
        self.outstanding: dict[str, int] = {}  #: a ``here`` step's farmed tasks not yet back
        self.lock = threading.Lock()
        self.closed = False
        self.failure: BaseException | None = None
        self.workers: dict[int, str] = {}
        self.farmed: dict[str, list[float]] = {}
        self.began = 0.0
        self.pool: ProcessPoolExecutor | None = None

    # -- the pool ---------------------------------------------------------------------------------
    def _fork(self) -> None:
        import importlib
        import multiprocessing as mp

        for name in self.preload:
            importlib.import_module(name)
        global _FORKED
        _FORKED = self.steps
        # the inherited objects leave the cyclic collector's generations: a worker's collections
        # would otherwise touch (and so copy) every page of them
        gc.freeze()
        self.pool = ProcessPoolExecutor(
            max_workers=self.jobs, mp_context=mp.get_context("fork"), initializer=_worker_init
        )
        # forks every worker now (fork start method), before any thread of this run starts
        self.pool.submit(_started).result()

    def run(self) -> dict[str, Any]:
        from judge_transfer_audit.core.threads import single_threaded_blas

        self.began = time.perf_counter()
        try:
            self._fork()
            # this process's BLAS on one thread too while the workers compute (the steps run here
            # would otherwise wake threads on cores the workers use)
            with single_threaded_blas():
                for s in self.steps:
                    if not s.after:
                        self._launch(s)
                self._loop()
            return self.results
        except BrokenProcessPool as exc:
            self.failure = self._lost("a step")
            raise self.failure from exc
        except BaseException as exc:
            self.failure = exc
            raise
        finally:
            self._close()

    def _lost(self, what: str) -> WorkerLostError:
        return WorkerLostError(
            f"a worker process of the local pool ({self.jobs} workers) died while running {what} "
            "(killed, out of memory or crashed); rerun with fewer --jobs or --jobs 1"
        )

    def _loop(self) -> None:
        while len(self.results) < len(self.steps):
            self._dispatch()
            try:
                event = self.events.get(timeout=0.5)
            except queue.Empty:
                continue
            kind = event[0]
            if kind == "done":
                self._finished(*event[1:])
            elif kind == "farm":  # a step here waits for these tasks: its job is theirs
                _, step_name, works = event
                self.computing.discard(step_name)
                self.outstanding[step_name] = self.outstanding.get(step_name, 0) + len(works)
                grow(self.bar, len(works))
                for work in works:
                    heapq.heappush(self.ready, (-work.rank, next(self.order), work))
            elif kind == "here":
                _, step, ok, value = event
                self.threads.pop(step.name, None)
                self.computing.discard(step.name)
                if not ok:
                    raise value
                self._complete(step, value)

    def _dispatch(self) -> None:
        # a step computing here holds one of the jobs (this process's core: its threads share one
        # interpreter lock), so that it never waits behind work of lower rank started meanwhile
        while self.ready and len(self.running) + bool(self.computing) < self.jobs:
            _, _, work = heapq.heappop(self.ready)
            if work.step is not None and work.step.here:
                self._start_here(work.step)
                continue
            if work.step is not None:
                future = self.pool.submit(_forked_step, work.index, work.late)
            else:
                future = self.pool.submit(_farmed_task, work.fn, work.item)
            self.running[future] = work
            future.add_done_callback(lambda f, work=work: self.events.put(("done", work, f)))

    def _finished(self, work: _Work, future: Future) -> None:
        self.running.pop(future, None)
        exc = future.exception()
        if isinstance(exc, BrokenProcessPool):
            lost = self._lost(work.step.name if work.step is not None else work.label)
            if work.future is not None:
                work.future.set_exception(lost)
            raise lost from exc
        if work.step is None:
            if exc is not None:
                work.future.set_exception(exc)
                return
            value, figures = future.result()
            self._record_farmed(work.label, figures)
            self.bar.advance()
            self.outstanding[work.owner] -= 1
            if not self.outstanding[work.owner]:
                # the step that farmed them computes again: its job before anything else starts
                self.computing.add(work.owner)
            work.future.set_result(value)
            return
        if exc is not None:
            raise exc
        value, (pid, t0, wall, cpu) = future.result()
        if self.timings is not None:
            self.timings.task(work.step.name, self._worker(pid), t0 - self.began, wall, cpu)
        self._complete(work.step, value)

    def _worker(self, pid: int) -> str:
        return self.workers.setdefault(pid, f"worker {len(self.workers) + 1}")

    def _record_farmed(self, label: str, figures: tuple) -> None:
        _, t0, wall, cpu = figures
        first, walls, cpus, n = self.farmed.get(label, (t0, 0.0, 0.0, 0))
        self.farmed[label] = (min(first, t0), walls + wall, cpus + cpu, n + 1)

    def _complete(self, step: Step, value: Any) -> None:
        self.results[step.name] = value
        self.bar.advance()
        for reader in self.readers[step.name]:
            self.waiting[reader.name] -= 1
            if self.waiting[reader.name] == 0:
                self._launch(reader)

    def _launch(self, step: Step) -> None:
        if step.here and step.farm_first:
            self._start_here(step)
            return
        # a worker step, or a step here that nothing waits for: queued at its rank (the latter
        # starts here when a job is free and no queued work outranks it)
        late = None if step.here else step.arguments(self.results)
        work = _Work(self.rank[step.name], step=step, index=self.index[step.name], late=late)
        heapq.heappush(self.ready, (-work.rank, next(self.order), work))

    def _start_here(self, step: Step) -> None:
        late = step.arguments(self.results)
        # its farmed tasks go before every queued step: the step waits for them, and they are
        # short pieces of its work; unless the step says otherwise (farm_first=False: long tasks
        # that nothing waits for, the leaderboard's), then they keep its own rank
        rank = self.rank[step.name] + (max(self.rank.values()) if step.farm_first else 0.0)
        runner = GraphRunner(self, step.name, rank)
        self.computing.add(step.name)

        def body() -> None:
            token = RUN_RUNNER.set(runner)
            c0, t0 = time.thread_time(), time.perf_counter()
            try:
                value = step.fn(**step.kwargs, **late)
            except BaseException as exc:  # noqa: BLE001 - handed to the loop, which raises it
                self.events.put(("here", step, False, exc))
                return
            finally:
                RUN_RUNNER.reset(token)
            if self.timings is not None:
                self.timings.task(step.name, "main", t0 - self.began, time.perf_counter() - t0, time.thread_time() - c0)
            self.events.put(("here", step, True, value))

        thread = threading.Thread(target=body, name=f"audit step {step.name}", daemon=True)
        self.threads[step.name] = thread
        thread.start()

    def farm_out(self, step: str, fn: Callable[[Any], Any], items: list, rank: float, label: str) -> list[Future]:
        """Queue ``fn(item)`` for every item (from the thread of the ``here`` step ``step``, which
        waits for them: its job is free meanwhile); their futures."""
        futures = [Future() for _ in items]
        with self.lock:
            if self.closed:
                raise self.failure or RuntimeError("the run's task graph is closed")
            works = [
                _Work(rank, fn=fn, item=item, future=future, label=label, owner=step)
                for item, future in zip(items, futures)
            ]
            self.events.put(("farm", step, works))
        return futures

    def _close(self) -> None:
        failure = self.failure
        if failure is not None and not isinstance(failure, WorkerLostError):
            failure = RuntimeError(f"the run's task graph stopped: {type(failure).__name__}: {failure}")
        with self.lock:
            self.closed, self.failure = True, failure
        if failure is not None:
            # every farmed task still queued or running fails, so that no step's thread waits forever
            pending = [w for _, _, w in self.ready] + list(self.running.values())
            while True:
                try:
                    event = self.events.get_nowait()
                except queue.Empty:
                    break
                if event[0] == "farm":
                    pending.extend(event[2])
                elif event[0] == "done":
                    pending.append(event[1])
            for work in pending:
                if work.future is not None and not work.future.done():
                    work.future.set_exception(failure)
        if self.pool is not None:
            if failure is not None:
                for process in list((getattr(self.pool, "_processes", None) or {}).values()):
                    process.terminate()
            self.pool.shutdown(wait=True, cancel_futures=True)
        for thread in list(self.threads.values()):
            thread.join(timeout=30)
        global _FORKED
        _FORKED = []
        gc.unfreeze()
        if self.timings is not None:
            for label, (first, walls, cpus, n) in self.farmed.items():
                self.timings.task(label, "workers", first - self.began, walls, cpus, n=n)


__all__ = ["Step", "run_steps", "ranks", "check_steps", "GraphRunner", "fork_available"]
