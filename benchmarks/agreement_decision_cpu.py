"""CPU seconds of the agreement decision alone on a study, against another source tree in the same run.

    python benchmarks/agreement_decision_cpu.py --study DIR --trees /path/to/baseline . --repeats 3

DIR holds judge.csv and humans.csv (e.g. ``python benchmarks/scale_data.py DIR --preset chatbot-arena-100k``).
The study is read once, by the first tree in a child process, into a scratch file of the decision's inputs as
``audit run`` makes them (the votes, the primary judge's verdicts, the section's settings and seed); each
repeat then runs ``agreement_decision`` on them in a fresh process per tree, the trees alternating, and
records its CPU seconds (``time.process_time``), the process's peak RSS and a hash of the result's JSON form.
Printed: per tree the median and range of the CPU seconds, the ratio of the medians to the first tree's, the
largest peak RSS, and whether every tree gives the same result.
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

ROOT = Path(__file__).resolve().parents[1]

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
print(json.dumps({
    "cpu": cpu, "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "digest": hashlib.sha256(text.encode()).hexdigest()[:16],
    "re_run": sum(r.n_boot > settings["n_boot"] for r in result.rows), "scopes": len(result.rows),
}))
"""


def _child(tree: Path, code: str, *args: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, cwd=tree)
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    return out.stdout


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--study", required=True, help="a folder with judge.csv and humans.csv")
    parser.add_argument("--trees", nargs="+", type=Path, default=[ROOT], help="source trees, the baseline first")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    trees = [t.resolve() for t in args.trees]
    runs: dict[Path, list[dict]] = {t: [] for t in trees}
    with tempfile.TemporaryDirectory() as scratch:
        inputs = str(Path(scratch) / "inputs.pickle")
        _child(trees[0], _INPUTS, str(Path(args.study).resolve()), inputs)
        for _ in range(args.repeats):
            for t in trees:  # alternating, so that a change of load hits every tree alike
                runs[t].append(json.loads(_child(t, _RUN, inputs).strip().splitlines()[-1]))
    first = statistics.median(r["cpu"] for r in runs[trees[0]])
    print(f"agreement decision alone, {args.repeats} run(s) per tree; load at the end {os.getloadavg()[0]:.1f}")
    print(f"{'tree':<24}{'median CPU-s':>14}{'range':>20}{'ratio':>8}{'peak RSS MiB':>14}  result")
    for t in trees:
        cpu = [r["cpu"] for r in runs[t]]
        median = statistics.median(cpu)
        print(
            f"{str(t)[-24:]:<24}{median:>14.1f}{f'{min(cpu):.1f}-{max(cpu):.1f}':>20}{median / first:>8.2f}"
            f"{max(r['rss_mib'] for r in runs[t]):>14.0f}  {runs[t][0]['digest']} "
            f"({runs[t][0]['re_run']} of {runs[t][0]['scopes']} scopes re-run)"
        )
    digests = {r["digest"] for t in trees for r in runs[t]}
    print("every run gives the same result" if len(digests) == 1 else f"DIFFERENT results: {sorted(digests)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
