"""CPU seconds of the large-cell pieces of the audit, one process, on a seeded scale study.

    python benchmarks/scale_sections.py --preset 100k
    python benchmarks/scale_sections.py --preset 1m --result OUT/result.json   # also re-write a saved result.json
    python benchmarks/scale_sections.py --preset 100k --digest --pythons BASE_VENV/bin/python VENV/bin/python

Times, on the study of ``benchmarks/scale_data.py``: the judge agreement with the section's replicates
(500, every scope) and the configuration ranking's (200, pooled), the CSV of the judge pairs, the
bootstrap's resampling counts of one chunk of pairs, and (``--result``) the text of a saved result.json.
It first prints the folder holding the ``judge_transfer_audit`` it imported. With ``--pythons PY [PY ...]`` the
script runs once with each interpreter in turn, on the same seeded study; each interpreter imports its own
installed copy of the package (an editable install's import name maps to its tree whatever ``PYTHONPATH`` says),
so versions are compared through their environments: for another revision, ``git worktree add DIR REV && python
-m venv --system-site-packages V && V/bin/pip install --no-deps -e DIR``, then ``--pythons V/bin/python ...``.
``--digest`` prints a hash of every output so the runs can be checked to give the same answers.
"""

from __future__ import annotations

import argparse
import hashlib
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from compared_pythons import package_location  # noqa: E402
from scale_data import PRESETS, write_study  # noqa: E402


def _timed(label: str, fn, digests: dict, repeat: int = 1):
    """Run ``fn`` ``repeat`` times; print the least CPU time (the load inflates CPU time too)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        value = fn()
        best = min(best, time.process_time() - start)
    digests[label] = hashlib.sha256(pickle.dumps(value)).hexdigest()[:12]
    print(f"{label:<44} {best:8.2f} s CPU" + (f" (least of {repeat})" if repeat > 1 else ""))
    return value


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="100k", choices=sorted(PRESETS))
    parser.add_argument("--result", type=Path, default=None, help="a saved result.json to write again")
    parser.add_argument("--digest", action="store_true", help="print a hash of each output")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each timed piece (the least is printed)")
    parser.add_argument("--pythons", nargs="+", help="interpreters to compare: the script runs with each in turn")
    args = parser.parse_args(argv)
    if args.pythons:
        options = ["--preset", args.preset, "--repeat", str(args.repeat)]
        options += ["--result", str(args.result.resolve())] if args.result is not None else []
        options += ["--digest"] if args.digest else []
        for python in args.pythons:
            print(f"== {python}", flush=True)
            subprocess.run([python, str(Path(__file__).resolve()), *options], check=True)
        return 0

    import judge_transfer_audit
    import judge_transfer_audit.core.threads  # noqa: F401  (imports SciPy's statistics: not part of any timed piece)
    from judge_transfer_audit.core.output_files import csv_text
    from judge_transfer_audit.core.serialize import to_jsonable
    from judge_transfer_audit.engine.pipeline import choose_primary_judge, judge_choices
    from judge_transfer_audit.inputs.load import load_audit_data
    from judge_transfer_audit.model.tie_rules import EVEN_SPLIT
    from judge_transfer_audit.statistics.judge.agreement import judge_agreement
    from judge_transfer_audit.statistics.uncertainty.resampling import cluster_weights
    from judge_transfer_audit.verdict.judge_side import judge_pair_outcomes

    print(f"judge_transfer_audit from {package_location(judge_transfer_audit.__file__)}")
    digests: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        judge, humans = write_study(Path(tmp) / args.preset, PRESETS[args.preset])
        data = _timed("load the study", lambda: load_audit_data(judge, humans), {})
    outcomes = judge_pair_outcomes(data, EVEN_SPLIT, np.random.default_rng(1))
    primary = choose_primary_judge(data.judges, None)
    choices = judge_choices(outcomes, primary, data.criteria)
    for n_boot, pooled in ((500, False), (200, True)):
        _timed(
            f"judge agreement, {n_boot} replicates{', pooled' if pooled else ''}",
            lambda n_boot=n_boot, pooled=pooled: to_jsonable(
                judge_agreement(data.votes, choices, judge=primary, n_boot=n_boot, rng=7, pooled_only=pooled)
            ),
            digests,
            args.repeat,
        )
    _timed("judge_pairs.csv text", lambda: csv_text(outcomes.reset_index(drop=True)), digests, args.repeat)
    pairs = tuple(str(p) for p in data.votes["pair_id"].unique())
    _timed(
        f"resampling counts, 250 x {len(pairs)} pairs",
        lambda: cluster_weights(3, "pair", pairs, 250, 0),
        digests,
        args.repeat,
    )
    if args.result is not None:
        from judge_transfer_audit.results.result import result_from_json, result_to_json

        result = result_from_json(args.result.read_text(encoding="utf-8"))
        _timed("result.json text", lambda: result_to_json(result), digests, args.repeat)
    if args.digest:
        for label, digest in digests.items():
            print(f"  {digest}  {label}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
