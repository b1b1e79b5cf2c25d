"""CPU seconds of README's fixture audit per stage, one process, ``--jobs 1``.

    python benchmarks/fixture_stages.py                          # this tree, 3 runs
    python benchmarks/fixture_stages.py --trees /tmp/main . --repeats 3   # two trees, runs alternating

Each run is a fresh ``python`` process with the tree first on ``PYTHONPATH`` (so a ``git archive`` of
main beside a branch compares two versions on the same inputs, in one run). It times, with
``time.process_time`` (CPU: the machine's load inflates it far less than wall time): the imports the
command needs (``judge_transfer_audit.cli``, the loader, the pipeline, the outputs), loading the fixture, every stage of
``run_audit`` (from the pipeline's own stage messages: a stage runs to the next message, so the last one,
"judge configurations", also holds the dev set, judge agreement, position, leaderboard and label
budget sections) and writing every output (report included). Printed: per stage the least CPU time over
the runs, per tree, and the total of the runs' totals' least.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

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
print(json.dumps(rows))
"""


def run_once(tree: Path) -> list[tuple[str, float]]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(ROOT)], env=env, capture_output=True, text=True, check=True, cwd=tree
    )
    return [tuple(r) for r in json.loads(out.stdout.strip().splitlines()[-1])]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trees", nargs="+", type=Path, default=[ROOT], help="source trees to compare")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    trees = [t.resolve() for t in args.trees]
    runs: dict[Path, list] = {t: [] for t in trees}
    for _ in range(args.repeats):
        for t in trees:  # alternating, so that a change of load hits every tree alike
            runs[t].append(run_once(t))
    stages = [name for name, _ in runs[trees[0]][0]]
    print(f"load at the end: {os.getloadavg()[0]:.1f}; least CPU seconds of {args.repeats} runs per stage")
    print(f"{'stage':<32}" + "".join(f"{t.name[:14]:>16}" for t in trees))
    for k, name in enumerate(stages):
        print(f"{name[:32]:<32}" + "".join(f"{min(r[k][1] for r in runs[t]):>16.2f}" for t in trees))
    print(
        f"{'total (least of the runs)':<32}"
        + "".join(f"{min(sum(s for _, s in r) for r in runs[t]):>16.2f}" for t in trees)
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
