"""Benchmark: the whole `audit report RESULT.json --output FILE` command, as a user runs it.

For each saved result: the median wall and CPU time (user + system of the child process) of N fresh
`python -m judge_transfer_audit report` processes, the sizes of result.json and of the report, the Letter pages
Chromium prints it on (headless, print-to-PDF; skipped when Chromium is missing) and the heavy
packages the command imported (it must import none of SciPy, statsmodels, scikit-learn, spaCy,
matplotlib, torch). With ``--pythons PY [PY ...]`` the same command runs with each interpreter in turn,
alternating, so the timings share the machine's load; the load average is printed. Each interpreter imports its
own installed copy of the package (an editable install's import name maps to its tree whatever ``PYTHONPATH``
says), so versions are compared through their environments: for another revision, ``git worktree add DIR REV &&
python -m venv --system-site-packages V && V/bin/pip install --no-deps -e DIR``, then ``--pythons V/bin/python
...``; without ``--pythons``, this interpreter. The rows are named by the folder holding the package each
interpreter imports (printed first).

Python's bytecode cache is used as an installed package uses it (one untimed run first compiles
and caches every module): ``PYTHONDONTWRITEBYTECODE`` is removed from the child's environment.
``--no-bytecode-cache`` sets it instead, so every run compiles each module from source (~0.5 s
more; how a shell with ``PYTHONDONTWRITEBYTECODE=1`` exported runs the command).

    python benchmarks/report_command.py audit-out/result.json
    python benchmarks/report_command.py /tmp/100k/out/result.json /tmp/1m/out/result.json --repeats 5
    python benchmarks/report_command.py audit-out/result.json --pythons BASE_VENV/bin/python VENV/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compared_pythons import column_labels, imported_package, legend, package_location

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("scipy", "statsmodels", "sklearn", "spacy", "matplotlib", "torch")
PROBE = """
import json, sys
from judge_transfer_audit.cli import main
status = main(["report", sys.argv[1], "--output", sys.argv[2]])
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(sys.argv[3])))))
"""


def child_env(bytecode_cache: bool) -> dict[str, str]:
    env = dict(os.environ)
    if bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def one_run(python: str, result: Path, html: Path, bytecode_cache: bool = True) -> tuple[float, float]:
    """Wall and CPU seconds of one fresh `python -m judge_transfer_audit report` process of ``python``."""
    env = child_env(bytecode_cache)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [python, "-m", "judge_transfer_audit", "report", str(result), "--output", str(html)],
        check=True,
        capture_output=True,
        env=env,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def heavy_imports(python: str, result: Path, html: Path) -> list[str]:
    out = subprocess.run(
        [python, "-c", PROBE, str(result), str(html), json.dumps(HEAVY)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def letter_pages(html: Path, workdir: Path) -> int | None:
    if shutil.which("chromium") is None and not Path("/usr/bin/chromium").exists():
        return None
    sys.path.insert(0, str(ROOT))
    from tests.reports.browser import pdf_pages

    return pdf_pages(html, workdir)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", type=Path, help="saved result.json files")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--pythons", nargs="+", default=[sys.executable], help="interpreters to compare")
    parser.add_argument("--no-pdf", action="store_true")
    parser.add_argument("--no-bytecode-cache", action="store_true", help="compile every module from source in each run")
    args = parser.parse_args(argv)
    for result in args.results:
        if not result.is_file():
            parser.error(f"{result}: no such file")
    pythons = list(args.pythons)
    locations = [package_location(imported_package(p, child_env(True))) for p in pythons]
    labels = column_labels(locations)
    cache = not args.no_bytecode_cache
    print(legend(pythons, locations))
    print(f"load average at start: {os.getloadavg()[0]:.1f}; bytecode cache: {'used' if cache else 'off'}")
    print("| result | package | wall, median | CPU, median | result.json | report | Letter pages | heavy imports |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for k, result in enumerate(args.results):
            times: dict[str, list[tuple[float, float]]] = {p: [] for p in pythons}
            result = result.resolve()
            for p in pythons:  # untimed: fills the bytecode cache (and the page cache)
                one_run(p, result, work / f"warm-{k}.html", cache)
            for _ in range(args.repeats):
                for p in pythons:  # alternate, so all see the same load
                    times[p].append(one_run(p, result, work / f"r{k}-{len(times[p])}.html", cache))
            for j, (p, name) in enumerate(zip(pythons, labels)):
                html = work / f"report-{k}-{j}.html"
                heavy = heavy_imports(p, result, html)
                pages = None if args.no_pdf else letter_pages(html, work)
                wall = statistics.median(t[0] for t in times[p])
                cpu = statistics.median(t[1] for t in times[p])
                print(
                    f"| {result} | {name} | {wall:.2f} s | {cpu:.2f} s | {result.stat().st_size / 1e6:.2f} MB "
                    f"| {html.stat().st_size / 1e6:.2f} MB | {pages if pages is not None else 'n/a'} "
                    f"| {', '.join(heavy) or 'none'} |"
                )
    print(f"load average at end: {os.getloadavg()[0]:.1f} (n = {args.repeats} runs per interpreter)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
