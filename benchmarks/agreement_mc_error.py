"""The agreement decision's Monte Carlo standard error against the p-value's spread over seeds.

usage: python benchmarks/agreement_mc_error.py [--seeds 30] [--margin -0.0487]

One matchup of seven readers x 40 pairs and a judge that votes like one more reader
(``judge_transfer_audit.verdict.agreement_calibration.simulate_study``, seed 11). The cell's decision is made
at the seeds 0 .. N-1 with 199, 796 and 3,184 replicates, the sequential re-runs turned off so that
every p-value comes from the count named; prints the standard deviation of the FAIL p-value over the
seeds beside the mean and median of its jackknife standard error (``p_fail_mc_se``). The default
margin puts the p-value near alpha, where the error matters. Nothing is written.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import judge_transfer_audit.verdict.assess as assess
from judge_transfer_audit.verdict.agreement_calibration import simulate_study
from judge_transfer_audit.verdict.agreement_decision import agreement_decision


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--margin", type=float, default=-0.0487)
    args = parser.parse_args(argv)
    if args.seeds < 2:
        parser.error("--seeds must be >= 2")
    assess.SEQUENTIAL_ROUNDS = 0  # every p from the replicates named
    votes, choices = simulate_study(7, 40, np.random.default_rng(11))
    one = votes[votes["matchup"] == "m0"]
    judge = choices["reader-like"]
    judge = judge[judge["pair_id"].isin(one["pair_id"])]
    print(f"{'replicates':>10}  {'p mean':>7}  {'SD over seeds':>13}  {'mean MC SE':>10}  {'median MC SE':>12}")
    for n_boot in (199, 796, 3184):
        rows = [
            agreement_decision(one, judge, margin=args.margin, n_boot=n_boot, rng=s).row("m0/overall")
            for s in range(args.seeds)
        ]
        p = np.array([r.p_fail for r in rows])
        se = np.array([r.p_fail_mc_se for r in rows])
        print(f"{n_boot:>10}  {p.mean():>7.4f}  {p.std(ddof=1):>13.4f}  {se.mean():>10.4f}  {np.median(se):>12.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
