"""Benchmark: the whole `audit report RESULT.json --output FILE` command, as a user runs it.

For each saved result: the median wall and CPU time (user + system of the child process) of N fresh
`python -m judge_transfer_audit report` processes, the sizes of result.json and of the report, the Letter pages
Chromium prints it on (headless, print-to-PDF; skipped when Chromium is missing) and the heavy
packages the command imported (it must import none of SciPy, statsmodels, scikit-learn, spaCy,
matplotlib, torch). With ``--baseline DIR`` (a checkout of another commit, e.g. made by
``git archive COMMIT | tar -x -C DIR``) the same command from that tree runs alternately with this
one, in one run, so the two timings share the machine's load; the load average is printed.

Python's bytecode cache is used as an installed package uses it (one untimed run first compiles
and caches every module): ``PYTHONDONTWRITEBYTECODE`` is removed from the child's environment.
``--no-bytecode-cache`` sets it instead, so every run compiles each module from source (~0.5 s
more; how a shell with ``PYTHONDONTWRITEBYTECODE=1`` exported runs the command).

    python benchmarks/report_command.py audit-out/result.json
    python benchmarks/report_command.py /tmp/100k/out/result.json /tmp/1m/out/result.json --repeats 5
    python benchmarks/report_command.py audit-out/result.json --baseline /tmp/base   # before / after
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

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("scipy", "statsmodels", "sklearn", "spacy", "matplotlib", "torch")
PROBE = """
import json, sys
from judge_transfer_audit.cli import main
status = main(["report", sys.argv[1], "--output", sys.argv[2]])
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(sys.argv[3])))))
"""


def child_env(tree: Path, bytecode_cache: bool) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    if bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def one_run(tree: Path, result: Path, html: Path, bytecode_cache: bool = True) -> tuple[float, float]:
    """Wall and CPU seconds of one fresh `python -m judge_transfer_audit report` process run from ``tree``."""
    env = child_env(tree, bytecode_cache)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "judge_transfer_audit", "report", str(result), "--output", str(html)],
        check=True,
        capture_output=True,
        cwd=tree,
        env=env,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def heavy_imports(tree: Path, result: Path, html: Path) -> list[str]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(result), str(html), json.dumps(HEAVY)],
        check=True,
        capture_output=True,
        text=True,
        cwd=tree,
        env=env,
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
    parser.add_argument("--baseline", type=Path, help="another source tree to time alternately with this one")
    parser.add_argument("--no-pdf", action="store_true")
    parser.add_argument("--no-bytecode-cache", action="store_true", help="compile every module from source in each run")
    args = parser.parse_args(argv)
    for result in args.results:
        if not result.is_file():
            parser.error(f"{result}: no such file")
    trees = [("this tree", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    cache = not args.no_bytecode_cache
    print(f"load average at start: {os.getloadavg()[0]:.1f}; bytecode cache: {'used' if cache else 'off'}")
    print("| result | tree | wall, median | CPU, median | result.json | report | Letter pages | heavy imports |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for k, result in enumerate(args.results):
            times: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in trees}
            result = result.resolve()  # each run's working directory is its tree
            for _name, tree in trees:  # untimed: fills the bytecode cache (and the page cache)
                one_run(tree, result, work / f"warm-{k}.html", cache)
            for _ in range(args.repeats):
                for name, tree in trees:  # alternate, so both see the same load
                    times[name].append(one_run(tree, result, work / f"r{k}-{len(times[name])}.html", cache))
            for j, (name, tree) in enumerate(trees):
                html = work / f"report-{k}-{j}.html"
                heavy = heavy_imports(tree, result, html)
                pages = None if args.no_pdf else letter_pages(html, work)
                wall = statistics.median(t[0] for t in times[name])
                cpu = statistics.median(t[1] for t in times[name])
                print(
                    f"| {result} | {name} | {wall:.2f} s | {cpu:.2f} s | {result.stat().st_size / 1e6:.2f} MB "
                    f"| {html.stat().st_size / 1e6:.2f} MB | {pages if pages is not None else 'n/a'} "
                    f"| {', '.join(heavy) or 'none'} |"
                )
    print(f"load average at end: {os.getloadavg()[0]:.1f} (n = {args.repeats} runs per tree)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
