"""What limits `--jobs 2` on the fixture: the statistics' serial CPU and the 2-worker schedule of its tasks (issue 15).

    python benchmarks/parallel_bound.py [--workers 2]

Runs the README's fixture audit once in this process (report and outputs not written), the
runs' parallel batches executed here one task after the other, and measures the CPU time
(``time.process_time``) of the whole statistics (:func:`audit.pipeline.run_audit`) and of every
task of every batch that ``--jobs N`` hands to workers: the sections after the cells and the
cells' GLMM fits beside the verdict (:func:`audit.parallel.run_calls`), the bootstrap blocks
and leave-one-reader-out fits (:class:`audit.parallel.TaskRunner`, sized for ``--workers``).
It prints each batch's tasks, the serial remainder, and the speed-up an idle machine with
``--workers`` cores could reach at best with these tasks: the total over the serial remainder
plus each batch's longest-processing-time schedule on the workers (no process start,
pickling or memory bandwidth counted; the measured wall-time ratio is the real figure, and
needs an idle machine). CPU time is inflated far less by other processes than wall time.
"""

from __future__ import annotations

import argparse
import heapq
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def lpt(tasks: list[float], workers: int) -> float:
    """The makespan of the longest-processing-time-first schedule of ``tasks`` on ``workers``."""
    loads = [0.0] * workers
    for t in sorted(tasks, reverse=True):
        heapq.heapreplace(loads, loads[0] + t)
    return max(loads)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)

    import audit.parallel as parallel
    import audit.pipeline as pipeline
    import audit.sections.uncertainty as uncertainty_section

    batches: list[tuple[str, list[float], list[str]]] = []

    def timed_calls(calls, jobs, *, label="sections", preload=()):
        out, times = [], []
        for fn, kwargs in calls:
            t0 = time.process_time()
            out.append(fn(**kwargs))
            times.append(time.process_time() - t0)
        named = [kwargs.get("fn", fn) for fn, kwargs in calls]  # a section on a worker is wrapped by _recording
        names = [f"{fn.__module__.rsplit('.', 1)[-1]}.{fn.__name__}" for fn in named]
        batches.append((label, times, names))
        return out

    class TimedRunner(parallel.TaskRunner):
        jobs = args.workers

        def map(self, fn, items, *, label="tasks"):
            out, times = [], []
            for item in items:
                t0 = time.process_time()
                out.append(parallel._run_one(fn, item))
                times.append(time.process_time() - t0)
            batches.append((label, times, []))
            return out

    pipeline.run_calls = timed_calls
    pipeline._section_jobs = lambda spec: args.workers
    uncertainty_section.task_runner = lambda spec: TimedRunner()
    total = {}
    real_run = pipeline.run_audit

    def run_audit(data, spec):
        t0 = time.process_time()
        try:
            return real_run(data, spec)
        finally:
            total["cpu"] = time.process_time() - t0

    pipeline.run_audit = run_audit  # audit.cli.run imports it from the module when it runs
    from audit.cli import main as cli_main

    f, d = ROOT / "fixtures" / "deployment", ROOT / "fixtures" / "dev"
    with tempfile.TemporaryDirectory() as tmp:
        cli_main(
            [
                "run",
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
                "--out",
                tmp,
                "--jobs",
                "1",
                "-q",
            ]
        )
    pipeline.run_audit = real_run
    if "cpu" not in total:
        raise SystemExit("the statistics were not timed (audit run did not reach audit.pipeline.run_audit)")
    w = args.workers
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {w} workers")
    print(f"{'batch':48} {'tasks':>5} {'cpu s':>7} {'longest':>8} {'on ' + str(w):>7}")
    in_batches = bound = 0.0
    for label, times, names in batches:
        span = lpt(times, w)
        in_batches += sum(times)
        bound += span
        print(f"{label[:48]:48} {len(times):5d} {sum(times):7.2f} {max(times, default=0):8.2f} {span:7.2f}")
        for name, t in zip(names, times):
            print(f"  {name[:46]:46} {'':5} {t:7.2f}")
    serial = total["cpu"] - in_batches
    print(f"statistics CPU {total['cpu']:.2f} s: in batches {in_batches:.2f} s, serial {serial:.2f} s")
    print(f"best speed-up on {w} idle cores with these tasks: {total['cpu'] / (serial + bound):.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
