"""Benchmark: how long `audit --help`, `audit run --help` and `audit report RESULT.json` take to start.

Each command runs as a fresh `python -m judge_transfer_audit` process of each interpreter of ``--pythons`` (without
it, this interpreter), the interpreters alternating so all share the machine's load; one untimed round first fills
the bytecode cache. Each interpreter imports its own installed copy of the package (an editable install's import
name maps to its tree whatever ``PYTHONPATH`` says), so versions are compared through their environments: for
another revision, ``git worktree add DIR REV && python -m venv --system-site-packages V && V/bin/pip install
--no-deps -e DIR``, then ``--pythons V/bin/python ...``. Prints which package each interpreter imports (the rows
are named by its folder), the median wall and CPU (user + system of the child) per command and interpreter, and
the load average.

    python benchmarks/startup_command.py --pythons BASE_VENV/bin/python VENV/bin/python \
        --result audit-out/result.json --repeats 9
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

from compared_pythons import column_labels, imported_package, legend, package_location


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def one_run(python: str, args: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([python, "-m", "judge_transfer_audit", *args], check=True, capture_output=True, env=child_env())
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pythons", nargs="+", default=[sys.executable], help="interpreters to compare")
    parser.add_argument("--result", type=Path, help="a saved result.json: also time `audit report` on it")
    parser.add_argument("--repeats", type=int, default=9)
    opts = parser.parse_args(argv)
    locations = [package_location(imported_package(p, child_env())) for p in opts.pythons]
    pythons = dict(zip(column_labels(locations), opts.pythons))
    with tempfile.TemporaryDirectory() as tmp:
        commands = {"audit --help": ["--help"], "audit run --help": ["run", "--help"]}
        if opts.result:
            html = str(Path(tmp) / "report.html")
            commands["audit report RESULT"] = ["report", str(opts.result.resolve()), "--output", html]
        print(legend(opts.pythons, locations))
        print(f"load average at start: {os.getloadavg()[0]:.1f}")
        print("| command | package | wall, median | CPU, median |\n|---|---|---|---|")
        for label, args in commands.items():
            times: dict[str, list[tuple[float, float]]] = {name: [] for name in pythons}
            for round_ in range(opts.repeats + 1):
                for name, python in pythons.items():
                    measured = one_run(python, args)
                    if round_:  # round 0 fills the bytecode cache
                        times[name].append(measured)
            for name in pythons:
                wall = statistics.median(w for w, _ in times[name])
                cpu = statistics.median(c for _, c in times[name])
                print(f"| `{label}` | {name} | {wall:.3f} s | {cpu:.3f} s |")
        print(f"load average at end: {os.getloadavg()[0]:.1f} (n = {opts.repeats} runs per interpreter)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
