"""The agreement decision on MT-Bench (../shared/datasets), per judge: the figures of docs/agreement.md.

usage: python benchmarks/agreement_decision_mtbench.py [--seed 0] [--seeds N] [--n-boot 999]

Converts the datasets into a temporary folder (../shared/datasets/convert.py; JUDGE_AUDIT_DATASETS
names another folder), reads MT-Bench through the data contract and decides each of its six judges
with the default policy (margin 0.05, alpha 0.05, Holm; the judge's verdicts credited by the
even-split rule). Prints per judge the study's status, the judge's and a reader's agreement with
the other readers' votes, the advantage with its 90% interval, the pooled and the closed test's
adjusted p-value of FAIL and the matchups per status. With ``--seeds N`` it decides every judge
again at the seeds 0 .. N-1 and prints how often the study FAILs and the range of its adjusted p:
how much the decision depends on the bootstrap's draws, and at how many seeds the sequential Monte
Carlo re-ran the study on more replicates or left it borderline. Nothing is written in the repository.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from judge_transfer_audit.engine.pipeline import judge_choices  # noqa: E402
from judge_transfer_audit.inputs import load_audit_data  # noqa: E402
from judge_transfer_audit.model.tie_rules import EVEN_SPLIT  # noqa: E402
from judge_transfer_audit.verdict.agreement_decision import agreement_decision  # noqa: E402
from judge_transfer_audit.verdict.judge_side import judge_pair_outcomes  # noqa: E402

SHARED = Path(os.environ.get("JUDGE_AUDIT_DATASETS") or ROOT.parent / "shared" / "datasets")


def _statuses(rows) -> str:
    counts = Counter(r.status for r in rows)
    return ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0, help="the decision's seed for the main lines")
    parser.add_argument("--seeds", type=int, default=0, help="also decide at the seeds 0 .. N-1")
    parser.add_argument("--n-boot", type=int, default=999)
    args = parser.parse_args(argv)
    if not (SHARED / "convert.py").exists():
        print(f"{SHARED} is absent (set JUDGE_AUDIT_DATASETS to the datasets folder)", file=sys.stderr)
        return 2
    if args.seeds < 0 or args.n_boot < 1:
        parser.error("--seeds must be >= 0 and --n-boot >= 1")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        subprocess.run([sys.executable, str(SHARED / "convert.py"), str(out)], check=True, capture_output=True)
        d = out / "mtbench"
        data = load_audit_data(d / "judge.csv", d / "humans.csv", pairs=d / "pairs.csv")
    outcomes = judge_pair_outcomes(data, EVEN_SPLIT, np.random.default_rng(0))
    for judge in data.judges:
        choices = judge_choices(outcomes, judge, data.criteria)
        res = agreement_decision(data.votes, choices, n_boot=args.n_boot, rng=args.seed)
        s, a = res.row("all/all"), res.row("all/all").advantage
        print(
            f"{judge}: study {s.status}; {s.n_pairs} pairs, {s.n_votes} scored votes of {s.n_readers} readers; "
            f"judge {100 * s.judge_agreement:.1f}%, a reader {100 * s.reader_agreement:.1f}%; advantage "
            f"{a.estimate:.3f} [{a.ci_low:.3f}, {a.ci_high:.3f}]; pooled p {s.p_fail:.3f}, adjusted p "
            f"{s.p_fail_adjusted:.3f}; matchups {_statuses(res.level('matchup'))}"
        )
        if args.seeds:
            fails, padj, borderline, rerun = 0, [], 0, 0
            for seed in range(args.seeds):
                row = agreement_decision(data.votes, choices, n_boot=args.n_boot, rng=seed).row("all/all")
                fails += row.status == "FAIL"
                padj.append(row.p_fail_adjusted)
                borderline += row.monte_carlo_borderline
                rerun += row.n_boot > args.n_boot
            print(
                f"    seeds 0-{args.seeds - 1}: study FAIL at {fails}/{args.seeds}; adjusted p median "
                f"{np.median(padj):.3f}, range [{min(padj):.3f}, {max(padj):.3f}]; the study re-run on more "
                f"replicates at {rerun}, still Monte Carlo borderline at {borderline}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
