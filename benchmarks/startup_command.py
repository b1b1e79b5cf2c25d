"""Benchmark: how long `audit --help`, `audit run --help` and `audit report RESULT.json` take to start.

Each command runs as a fresh `python -m judge_transfer_audit` process from this tree and from ``--baseline DIR`` (a
checkout of another commit, e.g. ``git archive COMMIT | tar -x -C DIR``), the two trees alternating so both share the
machine's load; one untimed round first fills the bytecode cache. Prints the median wall and CPU (user +
system of the child) per command and tree, and the load average.

    python benchmarks/startup_command.py --baseline /tmp/base --result audit-out/result.json --repeats 9
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one_run(tree: Path, args: list[str]) -> tuple[float, float]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "judge_transfer_audit", *args], check=True, capture_output=True, cwd=tree, env=env
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", type=Path, help="another tree to time alternately with this one")
    parser.add_argument("--result", type=Path, help="a saved result.json: also time `audit report` on it")
    parser.add_argument("--repeats", type=int, default=9)
    opts = parser.parse_args(argv)
    trees = {"this tree": ROOT, **({"baseline": opts.baseline.resolve()} if opts.baseline else {})}
    with tempfile.TemporaryDirectory() as tmp:
        commands = {"audit --help": ["--help"], "audit run --help": ["run", "--help"]}
        if opts.result:
            html = str(Path(tmp) / "report.html")
            commands["audit report RESULT"] = ["report", str(opts.result.resolve()), "--output", html]
        print(f"load average at start: {os.getloadavg()[0]:.1f}")
        print("| command | tree | wall, median | CPU, median |\n|---|---|---|---|")
        for label, args in commands.items():
            times: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
            for round_ in range(opts.repeats + 1):
                for name, tree in trees.items():
                    measured = one_run(tree, args)
                    if round_:  # round 0 fills the bytecode cache
                        times[name].append(measured)
            for name in trees:
                wall = statistics.median(w for w, _ in times[name])
                cpu = statistics.median(c for _, c in times[name])
                print(f"| `{label}` | {name} | {wall:.3f} s | {cpu:.3f} s |")
        print(f"load average at end: {os.getloadavg()[0]:.1f} (n = {opts.repeats} runs per tree)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
