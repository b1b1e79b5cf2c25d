"""CPU seconds of the agreement decision alone on a study, against another version of the code in the same run.

    python benchmarks/agreement_decision_cpu.py --study DIR --pythons BASE_VENV/bin/python VENV/bin/python --repeats 3

DIR holds judge.csv and humans.csv (e.g. ``python benchmarks/scale_data.py DIR --preset chatbot-arena-100k``).
Each version is an interpreter whose environment has it installed (``git worktree add DIR REV && python -m
venv --system-site-packages V && V/bin/pip install --no-deps -e DIR``; benchmarks/compared_pythons.py says why
``PYTHONPATH`` cannot do this); without ``--pythons``, this interpreter. The study is read once, by the first
interpreter in a child process, into a scratch file of the decision's inputs as ``audit run`` makes them (the
votes, the primary judge's verdicts, the section's settings and seed); each repeat then runs
``agreement_decision`` on them in a fresh process per interpreter, alternating, and records its CPU seconds
(``time.process_time``), the process's peak RSS and a hash of the result's JSON form. Printed: which code each
interpreter imports, then per version the median and range of the CPU seconds, the ratio of the medians to the
first's, the largest peak RSS, and whether every version gives the same result.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from compared_pythons import column_labels, legend, package_location

_INPUTS = r"""
import pickle, sys
import numpy as np
from judge_transfer_audit.core.rng import resolve_rng
from judge_transfer_audit.engine import steps
from judge_transfer_audit.engine.pipeline import choose_primary_judge, judge_choices
from judge_transfer_audit.inputs.load import load_audit_data
from judge_transfer_audit.model.policy import load_policy
from judge_transfer_audit.model.spec import AuditSpec
from judge_transfer_audit.sections import registry
from judge_transfer_audit.sections._guard import int_seed
from judge_transfer_audit.sections.agreement_decision.compute import N_BOOT, NAME
from judge_transfer_audit.verdict.judge_side import judge_pair_outcomes

study, out = sys.argv[1], sys.argv[2]
data = load_audit_data(study + "/judge.csv", study + "/humans.csv")
spec = AuditSpec(policy=load_policy(None), jobs=1)
rng, seed = resolve_rng(spec.seed)  # as run_audit seeds its streams
root = np.random.SeedSequence(seed if seed is not None else int(rng.integers(2**32)))
tie_seed = steps.seed_of(root, registry.RUN_SEEDS["judge ties"])
outcomes = judge_pair_outcomes(data, spec.tie_rule, np.random.default_rng(tie_seed))
choices = judge_choices(outcomes, choose_primary_judge(data.judges, spec.judge), data.criteria)
entry = next(e for e in registry.BUILTIN if e.name == NAME)
t = spec.policy.transfer
settings = dict(
    ties_counted=spec.tie_rule.counts_ties, margin=spec.policy.agreement.margin, alpha=t.alpha, adjust=t.adjust,
    min_pairs=t.min_pairs, min_readers=t.min_readers,
    n_boot=min(spec.n_boot if spec.n_boot is not None else t.n_boot, N_BOOT),
    rng=int_seed(steps.seed_of(root, entry.seed)),
)
with open(out, "wb") as f:
    pickle.dump((data.votes, choices, settings), f, protocol=5)
"""

_RUN = r"""
import hashlib, json, pickle, resource, sys, time
from judge_transfer_audit.core.serialize import to_jsonable
from judge_transfer_audit.verdict.agreement_decision import agreement_decision
import scipy.sparse, judge_transfer_audit.statistics.distributions  # imported before the clock starts

with open(sys.argv[1], "rb") as f:
    votes, choices, settings = pickle.load(f)
start = time.process_time()
result = agreement_decision(votes, choices, **settings)
cpu = time.process_time() - start
text = json.dumps(to_jsonable(result), sort_keys=True, default=str)
import judge_transfer_audit
print(json.dumps({
    "package": judge_transfer_audit.__file__, "cpu": cpu,
    "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "digest": hashlib.sha256(text.encode()).hexdigest()[:16],
    "re_run": sum(r.n_boot > settings["n_boot"] for r in result.rows), "scopes": len(result.rows),
}))
"""


def _child(python: str, code: str, *args: str) -> str:
    out = subprocess.run([python, "-c", code, *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    return out.stdout


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--study", required=True, help="a folder with judge.csv and humans.csv")
    parser.add_argument(
        "--pythons", nargs="+", default=[sys.executable], help="interpreters to compare, the baseline first"
    )
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    pythons = list(dict.fromkeys(args.pythons))
    runs: dict[str, list[dict]] = {p: [] for p in pythons}
    with tempfile.TemporaryDirectory() as scratch:
        inputs = str(Path(scratch) / "inputs.pickle")
        _child(pythons[0], _INPUTS, str(Path(args.study).resolve()), inputs)
        for _ in range(args.repeats):
            for p in pythons:  # alternating, so that a change of load hits every version alike
                runs[p].append(json.loads(_child(p, _RUN, inputs).strip().splitlines()[-1]))
    locations = [package_location(runs[p][0]["package"]) for p in pythons]
    print(legend(pythons, locations))
    first = statistics.median(r["cpu"] for r in runs[pythons[0]])
    print(f"agreement decision alone, {args.repeats} run(s) per version; load at the end {os.getloadavg()[0]:.1f}")
    print(f"{'version':<24}{'median CPU-s':>14}{'range':>20}{'ratio':>8}{'peak RSS MiB':>14}  result")
    for p, label in zip(pythons, column_labels(locations)):
        cpu = [r["cpu"] for r in runs[p]]
        median = statistics.median(cpu)
        print(
            f"{label[:24]:<24}{median:>14.1f}{f'{min(cpu):.1f}-{max(cpu):.1f}':>20}{median / first:>8.2f}"
            f"{max(r['rss_mib'] for r in runs[p]):>14.0f}  {runs[p][0]['digest']} "
            f"({runs[p][0]['re_run']} of {runs[p][0]['scopes']} scopes re-run)"
        )
    digests = {r["digest"] for p in pythons for r in runs[p]}
    print("every run gives the same result" if len(digests) == 1 else f"DIFFERENT results: {sorted(digests)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
