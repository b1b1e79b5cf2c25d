"""CPU seconds of each section of ``run_audit`` (``--jobs 1``), one fresh process per run, interpreters alternating.

    python benchmarks/section_cpu.py --study fixture --pythons BASE_VENV/bin/python VENV/bin/python --repeats 3
    python benchmarks/section_cpu.py --study DIR --pythons BASE_VENV/bin/python VENV/bin/python --digest
    python benchmarks/section_cpu.py --study fixture --profile judge_agreement  # cProfile of one section

``DIR`` holds judge.csv and humans.csv; ``fixture`` is this tree's README fixture. Each interpreter imports its own
installed copy of the package (an editable install's import name maps to its tree whatever ``PYTHONPATH`` says), so
versions are compared through their environments: for another revision, ``git worktree add DIR REV && python -m
venv --system-site-packages V && V/bin/pip install --no-deps -e DIR``, then ``--pythons V/bin/python ...``; without
``--pythons``, this interpreter. Each run loads the study and runs ``run_audit`` in-process with every section's
``compute`` (and the agreement table, the reader baseline and the cells) wrapped so that its CPU time
(``time.process_time``) is recorded. Printed: which package each interpreter imported (the columns are named by
its folder), then per section the least CPU seconds over the runs, per interpreter; ``--digest`` also prints a
hash of each section's JSON form (``judge_transfer_audit.core.serialize.to_jsonable``) from each interpreter's
first run, so two versions of the code can be checked to give the same sections.
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
import cProfile, hashlib, io, json, pstats, sys, time
import judge_transfer_audit
import judge_transfer_audit.cli  # noqa: F401
import judge_transfer_audit.engine.pipeline as P
import judge_transfer_audit.engine.steps as S
from judge_transfer_audit.inputs.load import load_audit_data
from judge_transfer_audit.model.policy import load_policy
from judge_transfer_audit.core.serialize import to_jsonable
from judge_transfer_audit.model.spec import AuditSpec

study, profile = sys.argv[1], sys.argv[2]
times, digests = {}, {}
profiler = cProfile.Profile()

def wrap(owner, attr, name, digest=True):
    fn = getattr(owner, attr)
    def timed(*args, **kwargs):
        if name == profile:
            profiler.enable()
        start = time.process_time()
        value = fn(*args, **kwargs)
        times[name] = times.get(name, 0.0) + time.process_time() - start
        if name == profile:
            profiler.disable()
        if not digest:  # a part of the section (its digest is the whole's)
            return value
        text = json.dumps(to_jsonable(value), sort_keys=True, default=str)
        digests[name] = hashlib.sha256(text.encode()).hexdigest()[:12]
        return value
    setattr(owner, attr, timed)

wrap(P, "agreement_table", "agreement table")
wrap(P, "reader_baseline", "reader baseline")
wrap(S, "human_sides_of", "GLMM fits")
wrap(S, "primary_verdict", "verdict")
for attr in ("compared_chunk", "chunked_verdict"):  # the verdict in chunks of cells (versions since verdict9)
    if hasattr(S, attr):
        wrap(S, attr, "verdict", digest=attr == "chunked_verdict")
if hasattr(S, "configuration_decisions"):  # a step of its own; else in the verdict or judge_configurations rows
    wrap(S, "configuration_decisions", "configurations (verdicts)")
try:  # the section table: each entry's compute wrapped
    import dataclasses, types
    import judge_transfer_audit.sections.registry as R
except ImportError:  # a version from before the table: the section modules the steps name
    for part in ("uncertainty", "readers", "surface", "configurations", "dev", "judge_agreement", "position",
                 "leaderboard", "budget"):
        module = getattr(S, part + "_part", None) or getattr(P, part + "_part")
        wrap(module, "compute", module.NAME if hasattr(module, "NAME") else part)
else:
    def _timed_entry(e):
        holder = types.SimpleNamespace(compute=e.step.compute)
        wrap(holder, "compute", e.name)
        return dataclasses.replace(e, step=dataclasses.replace(e.step, compute=holder.compute))
    R.BUILTIN = tuple(_timed_entry(e) for e in R.BUILTIN)

if study == "fixture":
    F = "fixtures/"
    data = load_audit_data(
        F + "deployment/judge.csv", F + "deployment/humans.csv", pairs=F + "deployment/pairs.csv",
        stories=F + "deployment/stories.csv", dev_judge=F + "dev/judge.csv", dev_humans=F + "dev/humans.csv",
    )
else:
    data = load_audit_data(study + "/judge.csv", study + "/humans.csv")
spec = AuditSpec(policy=load_policy(None), jobs=1)
start = time.process_time()
P.run_audit(data, spec)
times["run_audit (total)"] = time.process_time() - start
if profile != "-":
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(45)
    print(out.getvalue(), file=sys.stderr)
print(json.dumps([times, digests, judge_transfer_audit.__file__]))
"""


def run_once(python: str, study: str, profile: str) -> tuple[dict, dict, str]:
    """(CPU seconds per section, digest per section, the imported package's file) of one run of ``python``."""
    out = subprocess.run([python, "-c", _CHILD, study, profile], capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    if profile != "-":
        print(out.stderr)
    times, digests, package = json.loads(out.stdout.strip().splitlines()[-1])
    return times, digests, package


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--study", default="fixture", help="'fixture' or a folder with judge.csv and humans.csv")
    parser.add_argument("--pythons", nargs="+", default=[sys.executable], help="interpreters to compare")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--digest", action="store_true", help="print a hash of each section per interpreter")
    parser.add_argument("--profile", default="-", help="a section to run under cProfile (printed)")
    args = parser.parse_args(argv)
    pythons = list(args.pythons)
    study = args.study if args.study == "fixture" else str(Path(args.study).resolve())
    runs: dict[str, list] = {p: [] for p in pythons}
    for _ in range(args.repeats):
        for p in pythons:  # alternating, so that a change of load hits every interpreter alike
            runs[p].append(run_once(p, study, args.profile))
    locations = [package_location(runs[p][0][2]) for p in pythons]
    names = list(runs[pythons[0]][0][0])
    print(legend(pythons, locations))
    print(f"load at the end: {os.getloadavg()[0]:.1f}; least CPU seconds of {args.repeats} run(s) per section")
    print(f"{'section':<28}" + "".join(f"{label[:14]:>16}" for label in column_labels(locations)))
    for name in names:
        print(
            f"{name[:28]:<28}"
            + "".join(f"{min(r[0].get(name, float('nan')) for r in runs[p]):>16.2f}" for p in pythons)
        )
    if args.digest:
        print("digests (first run of each interpreter)")
        for name in runs[pythons[0]][0][1]:
            row = [runs[p][0][1].get(name, "-") for p in pythons]
            same = "" if len(set(row)) == 1 else "   DIFFERENT"
            print(f"{name[:28]:<28}" + "".join(f"{d:>16}" for d in row) + same)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
