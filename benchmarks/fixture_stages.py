"""CPU seconds of README's fixture audit per stage, one process, ``--jobs 1``.

    python benchmarks/fixture_stages.py                          # this interpreter, 3 runs
    python benchmarks/fixture_stages.py --pythons BASE_VENV/bin/python VENV/bin/python --repeats 3   # alternating

Each run is a fresh process of one of the interpreters, on this tree's fixture. Each interpreter imports its own
installed copy of the package (an editable install's import name maps to its tree whatever ``PYTHONPATH`` says),
so versions are compared through their environments: for another revision, ``git worktree add DIR REV && python
-m venv --system-site-packages V && V/bin/pip install --no-deps -e DIR``, then ``--pythons V/bin/python ...``.
It times, with ``time.process_time`` (CPU: the machine's load inflates it far less than wall time): the imports
the command needs (``judge_transfer_audit.cli``, the loader, the pipeline, the outputs), loading the fixture, every
stage of ``run_audit`` (from the pipeline's own stage messages: a stage runs to the next message, so the last one,
"judge configurations", also holds the dev set, judge agreement, position, leaderboard and label
budget sections) and writing every output (report included). Printed: which package each interpreter imported
(the columns are named by its folder), then per stage the least CPU time over the runs, per interpreter, and the
total of the runs' totals' least.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from compared_pythons import column_labels, legend, package_location

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, sys, tempfile, time
c0 = time.process_time()
import judge_transfer_audit.cli  # noqa: F401
from judge_transfer_audit.inputs.load import load_audit_data
from judge_transfer_audit.reports.outputs import write_outputs_detail
from judge_transfer_audit.engine.pipeline import run_audit
from judge_transfer_audit.model.policy import load_policy
from judge_transfer_audit.model.spec import AuditSpec
rows = [("imports", time.process_time() - c0)]
F = sys.argv[1] + "/fixtures/"
marks = [("loading inputs", time.process_time())]
data = load_audit_data(
    F + "deployment/judge.csv", F + "deployment/humans.csv", pairs=F + "deployment/pairs.csv",
    stories=F + "deployment/stories.csv", dev_judge=F + "dev/judge.csv", dev_humans=F + "dev/humans.csv",
)
spec = AuditSpec(policy=load_policy(None), jobs=1, progress=lambda m: marks.append((m, time.process_time())))
result = run_audit(data, spec)
marks.append(("writing outputs", time.process_time()))
with tempfile.TemporaryDirectory() as out:
    write_outputs_detail(result, out, html=True)
marks.append(("end", time.process_time()))
rows += [(a[0], b[1] - a[1]) for a, b in zip(marks, marks[1:])]
print(json.dumps([rows, judge_transfer_audit.__file__]))
"""


def run_once(python: str) -> tuple[list[tuple[str, float]], str]:
    """(CPU seconds per stage, the imported package's file) of one run of ``python``."""
    out = subprocess.run([python, "-c", _CHILD, str(ROOT)], capture_output=True, text=True, check=True)
    rows, package = json.loads(out.stdout.strip().splitlines()[-1])
    return [tuple(r) for r in rows], package


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pythons", nargs="+", default=[sys.executable], help="interpreters to compare")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    pythons = list(args.pythons)
    runs: dict[str, list] = {p: [] for p in pythons}
    for _ in range(args.repeats):
        for p in pythons:  # alternating, so that a change of load hits every interpreter alike
            runs[p].append(run_once(p))
    locations = [package_location(runs[p][0][1]) for p in pythons]
    stages = [name for name, _ in runs[pythons[0]][0][0]]
    print(legend(pythons, locations))
    print(f"load at the end: {os.getloadavg()[0]:.1f}; least CPU seconds of {args.repeats} runs per stage")
    print(f"{'stage':<32}" + "".join(f"{label[:14]:>16}" for label in column_labels(locations)))
    for k, name in enumerate(stages):
        print(f"{name[:32]:<32}" + "".join(f"{min(r[0][k][1] for r in runs[p]):>16.2f}" for p in pythons))
    print(
        f"{'total (least of the runs)':<32}"
        + "".join(f"{min(sum(s for _, s in r[0]) for r in runs[p]):>16.2f}" for p in pythons)
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
