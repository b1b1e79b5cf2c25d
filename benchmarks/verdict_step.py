"""CPU seconds and peak memory of the primary verdict's step alone, per interpreter, one fresh process per run.

    python benchmarks/verdict_step.py DIR --pythons MAIN_VENV/bin/python VENV/bin/python --repeats 2

``DIR`` holds judge.csv and humans.csv; each interpreter imports its own installed copy of the package (an
editable install's import name maps to its tree whatever ``PYTHONPATH`` says, so versions are compared
through their environments). Each run loads the study, makes the verdict's inputs as
``run_audit`` does (the judges' verdicts, the cells, the other configurations) and runs only the verdict's
step(s) (:func:`judge_transfer_audit.engine.steps.verdict_steps`) in-process, on one BLAS thread as a worker of
the run's pool runs it. Printed per interpreter and run: the step's CPU seconds (``time.process_time``), the
process's peak RSS during the step above its RSS before it (VmHWM, reset before the step through
``/proc/self/clear_refs``) and a hash of the verdict's JSON form, so that two versions of the code can be
checked to give the same transfers; first, the folder each interpreter imported the package from. Interpreters
alternate, so that a change of load hits each alike. An environment for another revision: ``git worktree add DIR
REV && python -m venv --system-site-packages V && V/bin/pip install --no-deps -e DIR``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from compared_pythons import imported_package, legend, package_location

_CHILD = r"""
import hashlib, json, sys, time
import numpy as np
import judge_transfer_audit.engine.pipeline as P
import judge_transfer_audit.engine.steps as S
from judge_transfer_audit.core.serialize import to_jsonable
from judge_transfer_audit.core.threads import single_threaded_blas
from judge_transfer_audit.inputs.load import load_audit_data
from judge_transfer_audit.model.policy import load_policy
from judge_transfer_audit.model.spec import AuditSpec
from judge_transfer_audit.sections import registry

def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) / 1024.0 for line in f if line.startswith(key))

study = sys.argv[1]
data = load_audit_data(study + "/judge.csv", study + "/humans.csv")
spec = AuditSpec(policy=load_policy(None), jobs=1)
rng, seed = P.resolve_rng(spec.seed)
root = np.random.SeedSequence(seed if seed is not None else int(rng.integers(2**32)))
tie_seed = S.seed_of(root, registry.RUN_SEEDS["judge ties"])
verdict_seed = int(S.seed_of(root, registry.RUN_SEEDS["verdict"]).generate_state(1)[0])
outcomes = P.judge_pair_outcomes(data, spec.tie_rule, np.random.default_rng(tie_seed))
choices_by_judge = {j: P.judge_choices(outcomes, j, data.criteria) for j in data.judges}
primary = P.choose_primary_judge(data.judges, spec.judge)
parts = P._cell_parts(data, spec, outcomes, primary)
configurations = P._configuration_inputs(data, parts, choices_by_judge, primary)
cells = [(p.matchup, p.criterion, p.votes, p.credits) for p in parts]
decision = dict(tie_rule=spec.tie_rule, policy=spec.policy.transfer, seed=verdict_seed)
import judge_transfer_audit.verdict.assess  # noqa: F401  (imported before the step, as a worker has it)
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # VmHWM := VmRSS
rss = status("VmRSS")
c0 = time.process_time()
with single_threaded_blas():
    results = {}
    for step in S.verdict_steps(cells, configurations, decision=decision):
        results[step.name] = step.fn(**step.kwargs, **step.arguments(results))
cpu = time.process_time() - c0
rise = status("VmHWM") - rss
text = json.dumps(to_jsonable(results["verdict"]), sort_keys=True, default=str)
print(json.dumps([cpu, rise, hashlib.sha256(text.encode()).hexdigest()[:16]]))
"""


def run_once(python: str, study: str) -> tuple[float, float, str]:
    out = subprocess.run([python, "-c", _CHILD, study], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    cpu, rise, digest = json.loads(out.stdout.strip().splitlines()[-1])
    return cpu, rise, digest


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("study", help="a folder with judge.csv and humans.csv")
    parser.add_argument("--pythons", nargs="+", default=[sys.executable], help="interpreters to compare")
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args(argv)
    trees = list(args.pythons)
    study = str(Path(args.study).resolve())
    print(legend(trees, [package_location(imported_package(t)) for t in trees]))
    runs: dict[str, list] = {t: [] for t in trees}
    for _ in range(args.repeats):
        for t in trees:
            runs[t].append(run_once(t, study))
            cpu, rise, digest = runs[t][-1]
            print(f"{t[-40:]:<40} verdict {cpu:8.2f} CPU-s  peak {rise:8.0f} MiB above its start  {digest}")
    print(f"medians of {args.repeats} run(s); load at the end {os.getloadavg()[0]:.1f}")
    for t in trees:
        cpu = statistics.median(r[0] for r in runs[t])
        rise = statistics.median(r[1] for r in runs[t])
        same = len({r[2] for rs in runs.values() for r in rs}) == 1
        verdicts = "same" if same else "DIFFERENT"
        print(f"{t[-40:]:<40} verdict {cpu:8.2f} CPU-s  peak {rise:8.0f} MiB  {verdicts} verdicts")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
