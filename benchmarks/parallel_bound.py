"""What limits `--jobs N`: the statistics' serial CPU and the run's task graph scheduled on N workers.

    python benchmarks/parallel_bound.py [--workers 2]                       # README's fixture audit
    python benchmarks/parallel_bound.py -- JUDGE HUMANS [audit run options]   # any study

Runs the audit once in this process in order (``--jobs 1``; report and outputs not written) and
measures the CPU time (``time.process_time``) of the whole statistics
(:func:`judge_transfer_audit.engine.pipeline.run_audit`),
of every step of its task graph (:mod:`judge_transfer_audit.engine.task_graph`) and of every task the uncertainty step
farms out (bootstrap blocks, leave-one-reader-out fits). It prints each step's CPU, then replays
the graph on ``--workers`` idle cores with these CPU times: the pool's own rule (a free worker takes
the queued work of highest rank, the number of steps on the longest chain from it to the end; a step
is queued when what it reads is done; the steps marked ``here`` run in the main process, their
farmed tasks join the queue, and one with ``farm_first=False`` waits in the queue at its rank), the
same rule with each step's measured CPU as its weight (what estimating each step's cost could gain
at most), and the best any schedule could do (the total over the workers, or the longest chain,
whichever is longer).
Speed-ups are the statistics' CPU over the serial remainder plus the replayed span (no process
start, pickling or memory bandwidth counted: the measured wall-time ratio is the real figure, and
needs an idle machine; CPU time is inflated far less by other processes than wall time).
"""

from __future__ import annotations

import argparse
import dataclasses
import heapq
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def fixture_args() -> list[str]:
    f, d = ROOT / "fixtures" / "deployment", ROOT / "fixtures" / "dev"
    return [
        str(f / "judge.csv"),
        str(f / "humans.csv"),
        "--pairs",
        str(f / "pairs.csv"),
        "--stories",
        str(f / "stories.csv"),
        "--dev-judge",
        str(d / "judge.csv"),
        "--dev-humans",
        str(d / "humans.csv"),
    ]


def farmed_cpu(farmed: dict, name: str) -> float:
    """The CPU seconds of every task the step ``name`` farmed out (all its batches)."""
    return sum(sum(batch) for batch in farmed.get(name, []))


def replay(steps, cpu: dict, farmed: dict, workers: int) -> float:
    """The span of the graph on ``workers`` cores under the pool's rule, with measured CPU times.

    ``cpu``: step -> seconds (a ``here`` step: its own CPU in the main process, spread evenly before
    and after its batches); ``farmed``: step -> its batches of farmed tasks in order, each a list of
    seconds. As on the pool, a ``here`` step computing holds one of the workers."""
    from judge_transfer_audit.engine.task_graph import ranks

    rank = ranks(steps)
    top = max(rank.values())
    by_name = {s.name: s for s in steps}
    waiting = {s.name: len(set(s.after)) for s in steps}
    readers = {s.name: [r.name for r in steps if s.name in r.after] for s in steps}
    order = iter(range(10**9))
    events: list = []  # (time, seq, kind, payload)
    ready: list = []  # (-rank, seq, (step, seconds, farmed?))
    running = 0
    computing: set[str] = set()
    batches: dict[str, list] = {}
    open_tasks: dict[str, int] = {}

    def glue(name):
        return cpu.get(name, 0.0) / (len(farmed.get(name, [])) + 1)

    def start_here(name, t):
        batches[name] = [b for b in farmed.get(name, []) if b]
        computing.add(name)
        heapq.heappush(events, (t + glue(name), next(order), "glued", name))

    def launch(name, t):
        if by_name[name].here and by_name[name].farm_first:
            start_here(name, t)
        else:  # a worker step, or a step here nothing waits for (queued at its rank, as on the pool)
            heapq.heappush(ready, (-rank[name], next(order), (name, cpu.get(name, 0.0), False)))

    for s in steps:
        if not s.after:
            launch(s.name, 0.0)
    clock, done = 0.0, 0
    while done < len(steps):
        while ready and running + bool(computing) < workers:
            _, _, (name, seconds, is_farmed) = heapq.heappop(ready)
            if not is_farmed and by_name[name].here:
                start_here(name, clock)
                continue
            running += 1
            heapq.heappush(events, (clock + seconds, next(order), "worker", (name, is_farmed)))
        clock, _, kind, payload = heapq.heappop(events)
        if kind == "worker":
            running -= 1
            name, is_farmed = payload
            if not is_farmed:
                kind, payload = "done", name
            else:
                open_tasks[name] -= 1
                if open_tasks[name]:
                    continue
                computing.add(name)  # its batch is back: it computes again
                heapq.heappush(events, (clock + glue(name), next(order), "glued", name))
                continue
        if kind == "glued":
            name = payload
            if batches[name]:
                batch = batches[name].pop(0)
                computing.discard(name)
                open_tasks[name] = len(batch)
                # as on the pool: ahead of every step, or at the step's own rank (farm_first=False)
                first = top if by_name[name].farm_first else 0.0
                for seconds in batch:
                    heapq.heappush(ready, (-rank[name] - first, next(order), (name, seconds, True)))
                continue
            computing.discard(name)
            kind = "done"
        if kind == "done":
            done += 1
            for r in readers[payload]:
                waiting[r] -= 1
                if waiting[r] == 0:
                    launch(r, clock)
    return clock


def chain(steps, cpu: dict, farmed: dict) -> float:
    """The longest chain of measured seconds through the graph."""
    memo: dict[str, float] = {}
    by_name = {s.name: s for s in steps}

    def finish(name):
        if name not in memo:
            step = by_name[name]
            own = cpu.get(name, 0.0) + sum(max(b, default=0.0) for b in farmed.get(name, []))
            memo[name] = own + max((finish(a) for a in step.after), default=0.0)
        return memo[name]

    return max(finish(s.name) for s in steps)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "audit_args", nargs="*", help="after --: the audit run's inputs and options (default: the fixture)"
    )
    args = parser.parse_args(argv)

    import judge_transfer_audit.engine.parallel as parallel
    import judge_transfer_audit.engine.pipeline as pipeline
    import judge_transfer_audit.engine.task_graph as task_graph

    captured: dict = {}
    farmed: dict[str, list[list[float]]] = {}
    current = {"step": None}

    class TimedRunner(parallel.TaskRunner):
        jobs = args.workers

        def map(self, fn, items, *, label="tasks"):
            out, times = [], []
            for item in items:
                t0 = time.process_time()
                out.append(parallel._run_one(fn, item))
                times.append(time.process_time() - t0)
            farmed.setdefault(current["step"], []).append(times)
            return out

    real_open = parallel.open_runner
    parallel.open_runner = lambda *a, **k: TimedRunner()
    real_in_order = task_graph._run_in_order

    def in_order(steps, progress, timings, bar=None):
        results, cpu = {}, {}
        for s in steps:
            if s.stage:
                progress(s.stage)
            current["step"] = s.name
            c0 = time.process_time()
            results[s.name] = s.fn(**s.kwargs, **s.arguments(results))
            cpu[s.name] = time.process_time() - c0 - farmed_cpu(farmed, s.name)
        captured["steps"], captured["cpu"] = steps, cpu
        return results

    task_graph._run_in_order = in_order
    real_section_jobs = pipeline._section_jobs
    real_fork = pipeline.fork_available
    # build the graph a pool of --workers would run, run it in order
    pipeline._section_jobs = lambda spec: args.workers
    pipeline.fork_available = lambda: True
    real_run_steps = pipeline.run_steps
    pipeline.run_steps = lambda steps, *, jobs=1, progress=None, preload=(), timings=None, **kw: real_run_steps(
        steps, jobs=1, progress=progress, preload=preload, timings=timings
    )
    total = {}
    real_run = pipeline.run_audit

    def run_audit(data, spec):
        t0 = time.process_time()
        try:
            return real_run(data, spec)
        finally:
            total["cpu"] = time.process_time() - t0

    pipeline.run_audit = run_audit  # judge_transfer_audit.cli.run imports it from the module when it runs
    from judge_transfer_audit.cli import main as cli_main

    audit_args = args.audit_args or fixture_args()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            cli_main(["run", *audit_args, "--out", tmp, "--jobs", "1", "-q", "--no-html"])
    finally:
        pipeline.run_audit, pipeline.run_steps = real_run, real_run_steps
        pipeline._section_jobs, pipeline.fork_available = real_section_jobs, real_fork
        task_graph._run_in_order, parallel.open_runner = real_in_order, real_open
    if "cpu" not in total or "steps" not in captured:
        raise SystemExit(
            "the statistics were not timed (audit run did not reach judge_transfer_audit.engine.pipeline.run_audit)"
        )
    steps, cpu = captured["steps"], captured["cpu"]
    w = args.workers
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {w} workers")
    print(f"{'step':28} {'where':6} {'cpu s':>7} {'farmed':>7}  after")
    for s in steps:
        farm = farmed_cpu(farmed, s.name)
        where = "here" if s.here else "worker"
        print(f"{s.name[:28]:28} {where:6} {cpu[s.name]:7.2f} {farm:7.2f}  " + ", ".join(s.after))
    in_graph = sum(cpu.values()) + sum(farmed_cpu(farmed, name) for name in farmed)
    serial = total["cpu"] - in_graph
    span = replay(steps, cpu, farmed, w)
    best = max(in_graph / w, chain(steps, cpu, farmed))
    print(f"statistics CPU {total['cpu']:.2f} s: in the graph {in_graph:.2f} s, serial {serial:.2f} s")
    print(f"the graph on {w} idle cores: {span:.2f} s by the pool's rule, {best:.2f} s at best")
    # the same rule with perfect per-step costs: what estimating each step's cost could gain at most
    exact = [dataclasses.replace(s, cost=cpu[s.name] + farmed_cpu(farmed, s.name)) for s in steps]
    print(f"  by the pool's rule with each step's measured CPU as its weight: {replay(exact, cpu, farmed, w):.2f} s")
    print(
        f"speed-up on {w} idle cores with these steps: {total['cpu'] / (serial + span):.2f}x by the pool's rule, "
        f"{total['cpu'] / (serial + best):.2f}x at best"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
