"""The run's task graph: steps in order or on one pool, ranks, farmed tasks, faults, timings."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from judge_transfer_audit.core.errors import WorkerLostError
from judge_transfer_audit.core.tasks import task_seed
from judge_transfer_audit.core.timings import RunTimings
from judge_transfer_audit.engine.parallel import open_runner
from judge_transfer_audit.engine.task_graph import Step, check_steps, ranks, run_steps


def _draw(key, n=3):
    return np.random.default_rng(task_seed(5, key)).random(n).tolist()


def _add(a, b=0):
    return a + b


def _sum_draws(keys):
    """A step that farms out one task per key through the run's runner (like the uncertainty section)."""
    with open_runner(2) as runner:
        return runner.map(_draw, list(keys), label="draws")


def _stamp(name, seconds):
    t0 = time.time()
    time.sleep(seconds)
    return name, t0, time.time()


def _die(*_, **__):
    os._exit(3)  # a worker killed mid-task: no exception, no result


def _raise(**_):
    raise KeyError("a bug in a step")


def _graph(callback=lambda v: v * 10):
    """Steps of every kind: a callback argument (does not pickle: reaches workers by fork), late
    arguments from earlier steps, a step here that farms out tasks, a step reading it."""
    return [
        Step("a", _add, dict(a=1, b=2), cost=1.0),
        Step("b", lambda x: callback(x), dict(x=4), cost=3.0),
        Step("c", _add, dict(a=100), after=("a", "b"), late=lambda r: {"b": r["a"] + r["b"]}, cost=1.0),
        Step("farm", _sum_draws, dict(keys=[("k", i) for i in range(7)]), after=("a",), here=True, cost=2.0),
        Step("d", _add, dict(b=0.5), after=("farm", "c"), late=lambda r: {"a": sum(map(sum, r["farm"])) + r["c"]}),
    ]


def test_ranks_are_the_longest_chain_of_costs_after_a_step():
    steps = _graph()
    assert ranks(steps) == {"a": 4.0, "b": 5.0, "c": 2.0, "farm": 3.0, "d": 1.0}


def test_by_default_a_rank_counts_the_steps_on_the_longest_chain_to_the_end():
    steps = [Step(name, _add, after=after) for name, after in (("a", ()), ("b", ("a",)), ("c", ("b",)), ("x", ()))]
    steps.append(Step("y", _add, after=("x", "a")))
    assert ranks(steps) == {"a": 3.0, "b": 2.0, "c": 1.0, "x": 2.0, "y": 1.0}


def test_a_step_must_come_after_what_it_reads_and_names_are_unique():
    with pytest.raises(ValueError, match="do not come before"):
        check_steps([Step("x", _add, after=("y",)), Step("y", _add)])
    with pytest.raises(ValueError, match="two steps"):
        check_steps([Step("x", _add), Step("x", _add)])


def test_the_pool_gives_the_results_in_order_gives_and_records_every_task():
    stages = []
    here = run_steps(_graph(), jobs=1, progress=stages.append)
    timings = RunTimings()
    pooled = run_steps(_graph(), jobs=2, timings=timings)
    assert pooled == here
    assert here["c"] == 100 + 3 + 40 and len(here["farm"]) == 7
    assert here["farm"] == [_draw(("k", i)) for i in range(7)]
    tasks = {t["task"]: t for t in timings.tasks}
    assert {"a", "b", "c", "farm", "d", "draws"} <= set(tasks)
    assert tasks["draws"]["n"] == 7 and tasks["farm"]["worker"] == "main"
    assert tasks["a"]["worker"].startswith("worker") and all(t["seconds"] >= 0 for t in timings.tasks)


def test_stage_messages_come_before_their_steps_in_order():
    seen = []
    steps = [
        Step("one", lambda: seen.append("one ran"), stage="first"),
        Step("two", lambda: seen.append("two ran"), stage="second"),
    ]
    run_steps(steps, jobs=1, progress=seen.append)
    assert seen == ["first", "one ran", "second", "two ran"]


def test_a_free_worker_takes_the_queued_step_of_highest_rank():
    steps = [
        Step("short", _stamp, dict(name="short", seconds=0.3), cost=1.0),
        Step("long", _stamp, dict(name="long", seconds=0.3), cost=5.0),
        Step("middle", _stamp, dict(name="middle", seconds=0.3), cost=3.0),
    ]
    done = run_steps(steps, jobs=2)
    _, short_start, _ = done["short"]
    # the two longest started first; the short one only when one of them was done
    assert short_start >= min(done["long"][2], done["middle"][2]) - 0.05


def _stamp_item(item):
    return _stamp(*item)


def _farm_stamps(names):
    with open_runner(2) as runner:
        return runner.map(_stamp_item, [(n, 0.2) for n in names], label="stamps")


@pytest.mark.parametrize("farm_first", [True, False])
def test_farmed_tasks_go_first_unless_their_step_keeps_its_own_rank(farm_first):
    """Two blockers hold both workers while a step here farms out two tasks and a step of rank 5
    waits: the farmed tasks go ahead of it, or (farm_first=False) take their step's rank of 1. The
    blockers end 0.5 s apart, so the first worker freed takes the queue's head alone (blockers ending
    together made two workers race for it: a start 20 us apart decided the test under load)."""
    steps = [
        Step("b1", _stamp, dict(name="b1", seconds=0.5), cost=100.0),
        Step("b2", _stamp, dict(name="b2", seconds=1.0), cost=100.0),
        Step("x", _stamp, dict(name="x", seconds=0.2), cost=5.0),
        Step("farm", _farm_stamps, dict(names=["f1", "f2"]), here=True, cost=1.0, farm_first=farm_first),
    ]
    done = run_steps(steps, jobs=2)
    farmed_start = min(start for _, start, _ in done["farm"])
    _, x_start, _ = done["x"]
    assert (farmed_start < x_start) == farm_first


@pytest.mark.parametrize("farm_first", [True, False])
def test_a_step_here_that_nothing_waits_for_starts_at_its_own_rank(farm_first):
    """A step here holds one of the jobs while it computes. With farm_first=False (nothing reads
    it: the leaderboard) it waits in the queue until no queued work outranks it, so two worker
    steps of higher rank take both jobs first; otherwise it starts with the run."""
    steps = [
        Step("low", _stamp, dict(name="low", seconds=0.05), here=True, cost=0.0, farm_first=farm_first),
        Step("w1", _stamp, dict(name="w1", seconds=0.6), cost=5.0),
        Step("w2", _stamp, dict(name="w2", seconds=0.6), cost=4.0),
    ]
    done = run_steps(steps, jobs=2)
    first_free = min(done["w1"][2], done["w2"][2])
    _, low_start, _ = done["low"]
    if farm_first:
        assert low_start < first_free - 0.3
    else:
        assert low_start >= first_free - 0.05
        assert max(done["w1"][1], done["w2"][1]) < low_start  # both worker steps had started


def test_an_exception_in_a_step_propagates_from_the_pool():
    steps = [Step("ok", _add, dict(a=1)), Step("bad", _raise, after=("ok",))]
    with pytest.raises(KeyError, match="a bug"):
        run_steps(steps, jobs=2)


def _raise_after(seconds):
    time.sleep(seconds)
    raise KeyError("a bug in a step")


def test_a_failure_while_a_step_here_waits_in_the_queue_stops_the_run_at_once():
    """Both jobs busy, the leaderboard-like step still queued, then a worker step raises: the run
    fails with that error (no hang waiting for the queued step, which never starts)."""
    seen = []
    steps = [
        Step("bad", _raise_after, dict(seconds=0.2), cost=10.0),
        Step("long", _stamp, dict(name="long", seconds=1.0), cost=9.0),
        Step("low", lambda: seen.append("low ran"), here=True, cost=0.0, farm_first=False),
    ]
    started = time.perf_counter()
    with pytest.raises(KeyError, match="a bug"):
        run_steps(steps, jobs=2)
    assert time.perf_counter() - started < 10 and seen == []


@pytest.mark.parametrize("where", ["step", "farmed task"])
def test_a_worker_that_dies_is_a_lost_worker_not_a_hang(where):
    started = time.perf_counter()
    if where == "step":
        steps = [Step("slow", _stamp, dict(name="slow", seconds=0.2)), Step("dies", _die)]
    else:
        steps = [Step("farm", lambda: open_runner(2).map(_die, [1, 2, 3]), here=True), Step("x", _add, dict(a=1))]
    with pytest.raises(WorkerLostError, match="died"):
        run_steps(steps, jobs=2)
    assert time.perf_counter() - started < 20


def test_a_step_here_that_raises_stops_the_run():
    def bad():
        raise ValueError("glue failed")

    with pytest.raises(ValueError, match="glue failed"):
        run_steps([Step("x", _stamp, dict(name="x", seconds=0.1)), Step("glue", bad, here=True)], jobs=2)


def test_open_runner_outside_a_step_owns_its_pool():
    from judge_transfer_audit.core.tasks import TaskRunner
    from judge_transfer_audit.engine.parallel import LocalPool

    assert type(open_runner(1)) is TaskRunner
    with open_runner(2) as runner:
        assert isinstance(runner, LocalPool)


class _Recorder:
    """A progress factory keeping every bar it made: description, total (grown), units done."""

    def __init__(self):
        self.bars = []

    def __call__(self, description, total):
        bar = {"description": description, "total": total, "done": 0, "closed": False}
        self.bars.append(bar)
        recorder = self

        class Bar:
            def advance(self, n=1):
                bar["done"] += n

            def grow(self, n):
                bar["total"] += n

            def close(self):
                bar["closed"] = True

        recorder.last = bar
        return Bar()


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_run_bar_counts_every_step_and_farmed_task_to_its_total(jobs):
    bars = _Recorder()
    run_steps(_graph(), jobs=jobs, bar=bars)
    run_bar = bars.bars[0]
    assert run_bar["description"] == "statistics" and run_bar["closed"]
    # in order the farmed tasks run inside their step (the step's own runner has its bar); on a
    # pool the run's bar counts them: 5 steps + 7 draws
    assert run_bar["done"] == run_bar["total"] == (5 if jobs == 1 else 12)
    if jobs == 2:
        assert len(bars.bars) == 1  # the step's tasks draw no bar of their own beside the run's


def _blas_threads():
    from threadpoolctl import threadpool_info

    return sorted({pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"})


def test_steps_in_order_run_with_blas_on_one_thread_as_the_pool_runs_them():
    pytest.importorskip("threadpoolctl")
    steps = [Step("threads", _blas_threads)]
    assert run_steps(steps, jobs=1)["threads"] == [1]
    assert run_steps(steps, jobs=2)["threads"] == [1]
