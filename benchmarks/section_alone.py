"""CPU seconds of chosen sections alone on a large study, one fresh process per run, interpreters alternating.

    python benchmarks/section_alone.py --study DIR --sections leaderboard readers \
        --pythons BASE_VENV/bin/python VENV/bin/python --repeats 3

``DIR`` holds judge.csv and humans.csv. Each interpreter imports its own installed copy of the package (an editable
install's import name maps to its tree whatever ``PYTHONPATH`` says), so versions are compared through their
environments: for another revision, ``git worktree add DIR REV && python -m venv --system-site-packages V &&
V/bin/pip install --no-deps -e DIR``, then ``--pythons V/bin/python ...``; without ``--pythons``, this
interpreter. Each run loads the study once, makes what the sections read as ``run_audit`` does (the judge's
outcomes and choices, the primary judge, the judges' credits) and calls each section's ``compute`` alone, with the
seed of its slot in the section table: no other task runs, so a section can be timed on a study whose whole audit
is too long to repeat (the Chatbot-Arena shape at 1M votes). The readers section reads the cells only for their
human GLMM estimates, which it copies into its heat map; here they are placeholders (0.5 in [0.4, 0.6]) rather
than the 190 matchups' fits, so its output is not the audit's, but the same in every version. Printed: which
package each interpreter imported (the columns are named by its folder), then per section the CPU seconds
(``time.process_time``) of each run and their median, per interpreter, and a hash of each section's JSON form from
each interpreter's first run, so two versions of the code can be checked to give the same sections; then the
largest resident set of each interpreter's runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from compared_pythons import column_labels, legend, package_location

_CHILD = r"""
import hashlib, json, resource, sys, time, types
import numpy as np
import judge_transfer_audit
import judge_transfer_audit.cli  # noqa: F401
import judge_transfer_audit.engine.pipeline as P
import judge_transfer_audit.engine.steps as S
from judge_transfer_audit import sections
from judge_transfer_audit.core.serialize import to_jsonable
from judge_transfer_audit.inputs.load import load_audit_data
from judge_transfer_audit.model.policy import load_policy
from judge_transfer_audit.model.spec import AuditSpec
from judge_transfer_audit.sections import registry
from dataclasses import replace

study, names = sys.argv[1], sys.argv[2].split(",")
data = load_audit_data(study + "/judge.csv", study + "/humans.csv")
spec = replace(AuditSpec(policy=load_policy(None), jobs=1), runner_opener=P.open_runner)
rng, seed = P.resolve_rng(spec.seed)
root = np.random.SeedSequence(seed if seed is not None else int(rng.integers(2**32)))
tie_rng = np.random.default_rng(S.seed_of(root, registry.RUN_SEEDS["judge ties"]))
outcomes = P.judge_pair_outcomes(data, spec.tie_rule, tie_rng)
primary = P.choose_primary_judge(data.judges, spec.judge)
choices = P.judge_choices(outcomes, primary, data.criteria)
inputs = {
    "choices": lambda: choices,
    "primary": lambda: primary,
    "judge_credits": lambda: sections.judge_credits(outcomes),
    "primary_credits": lambda: sections.primary_credits(choices, data.pairs, primary),
}
glmm = types.SimpleNamespace(estimate=0.5, ci_low=0.4, ci_high=0.6)
cells = [
    types.SimpleNamespace(matchup=m, criterion=c, human=types.SimpleNamespace(glmm=glmm))
    for (m, c), _ in data.votes.groupby(["matchup", "criterion"], sort=True)
]
entries = {e.name: e for e in registry.entries()}
out = {}
for name in names:
    entry = entries[name]
    kwargs = {r: inputs[r]() for r in entry.step.reads}
    if entry.step.after is not None:
        kwargs["cells"] = cells
    kwargs["seed"] = S.seed_of(root, entry.seed)
    start = time.process_time()
    section = entry.step.compute(data, spec, **kwargs)
    cpu = time.process_time() - start
    text = json.dumps(to_jsonable(section), sort_keys=True, default=str)
    out[name] = [cpu, hashlib.sha256(text.encode()).hexdigest()[:12]]
out["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
out["package"] = judge_transfer_audit.__file__
print(json.dumps(out))
"""


def run_once(python: str, study: str, names: list[str]) -> dict:
    """Per section [CPU seconds, digest], the peak RSS and the imported package's file of one run of ``python``."""
    out = subprocess.run([python, "-c", _CHILD, study, ",".join(names)], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--study", required=True, help="a folder with judge.csv and humans.csv")
    parser.add_argument("--sections", nargs="+", default=["leaderboard", "readers"])
    parser.add_argument("--pythons", nargs="+", default=[sys.executable], help="interpreters to compare")
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args(argv)
    pythons = list(args.pythons)
    study = str(Path(args.study).resolve())
    runs: dict[str, list] = {p: [] for p in pythons}
    for _ in range(args.repeats):
        for p in pythons:  # alternating, so that a change of load hits every interpreter alike
            runs[p].append(run_once(p, study, args.sections))
    locations = [package_location(runs[p][0]["package"]) for p in pythons]
    print(legend(pythons, locations))
    print(f"load at the end: {os.getloadavg()[0]:.1f}; CPU seconds of {args.repeats} run(s) per section (median)")
    print(f"{'section':<16}" + "".join(f"{label[:28]:>30}" for label in column_labels(locations)))
    for name in args.sections:
        cells = []
        for p in pythons:
            cpu = [r[name][0] for r in runs[p]]
            cells.append(" ".join(f"{c:.1f}" for c in cpu) + f" ({statistics.median(cpu):.1f})")
        print(f"{name:<16}" + "".join(f"{c:>30}" for c in cells))
    for name in args.sections:
        row = [runs[p][0][name][1] for p in pythons]
        same = "" if len(set(row)) == 1 else "   DIFFERENT"
        print(f"{name + ' digest':<16}" + "".join(f"{d:>30}" for d in row) + same)
    print(f"{'peak RSS MB':<16}" + "".join(f"{max(r['maxrss_mb'] for r in runs[p]):>30.0f}" for p in pythons))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
