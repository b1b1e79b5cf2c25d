"""Coverage of the judge-agreement intervals (judge_transfer_audit.statistics.judge.agreement) by simulation.

usage: python benchmarks/judge_agreement_coverage.py [N_DATASETS] [N_BOOT]

Design: one cell, P pairs x R readers, every reader votes on every pair; a pair's quality
q_i ~ N(0, 1), a reader's bias b_r ~ N(0, 0.5), vote = focal when q_i + b_r + e > 0 (e ~ N(0, 1.5));
the judge sees q_i + N(0, 1) (no reader bias). New pairs and new readers in every data set.
The target of an interval is the statistic's expectation at this design size (the mean of
the estimates over 4,000 data sets), so coverage measures the interval's width, not a bias.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from judge_transfer_audit.statistics.judge.agreement import judge_agreement

STATS = ("kappa_majority", "kappa_readers", "alpha_difference", "raw_difference")


def simulate(rng, n_pairs, n_readers):
    q = rng.normal(0, 1, n_pairs)
    b = rng.normal(0, 0.5, n_readers)
    y = (q[:, None] + b[None, :] + rng.normal(0, 1.5, (n_pairs, n_readers)) > 0).astype(float)
    pid = np.repeat([f"p{i}" for i in range(n_pairs)], n_readers)
    votes = pd.DataFrame(
        dict(
            pair_id=pid,
            reader_id=np.tile([f"r{r}" for r in range(n_readers)], n_pairs),
            criterion="overall",
            matchup="a vs b",
            y=y.ravel(),
        )
    )
    judge = pd.DataFrame(
        dict(
            pair_id=[f"p{i}" for i in range(n_pairs)],
            criterion="overall",
            y_judge=(q + rng.normal(0, 1, n_pairs) > 0).astype(float),
        )
    )
    return votes, judge


def main(n_sets=200, n_boot=300, designs=((40, 5), (80, 7))):
    rng = np.random.default_rng(20261201)
    print(
        f"{'design':>12} {'statistic':>18} {'target':>8} {'coverage':>9} {'mean width':>11}  ({n_sets} data sets, "
        f"{n_boot} replicates, nominal 95%)"
    )
    for n_pairs, n_readers in designs:
        target = {k: [] for k in STATS}
        for _ in range(4000):
            row = judge_agreement(*simulate(rng, n_pairs, n_readers), n_boot=0).row()
            for k in STATS:
                target[k].append(getattr(row, k).estimate)
        truth = {k: float(np.nanmean(v)) for k, v in target.items()}
        hits = {k: [] for k in STATS}
        widths = {k: [] for k in STATS}
        for i in range(n_sets):
            row = judge_agreement(*simulate(rng, n_pairs, n_readers), n_boot=n_boot, rng=i).row()
            for k in STATS:
                e = getattr(row, k)
                if np.isfinite(e.ci_low):
                    hits[k].append(e.ci_low <= truth[k] <= e.ci_high)
                    widths[k].append(e.ci_high - e.ci_low)
        for k in STATS:
            print(
                f"{n_pairs:>4}x{n_readers:<2} rdrs {k:>18} {truth[k]:8.3f} {np.mean(hits[k]):9.3f} "
                f"{np.mean(widths[k]):11.3f}"
            )


def cli(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n_datasets", nargs="?", type=int, default=200, help="simulated data sets per design")
    parser.add_argument("n_boot", nargs="?", type=int, default=300, help="bootstrap replicates per interval")
    args = parser.parse_args(argv)
    main(args.n_datasets, args.n_boot)


if __name__ == "__main__":
    cli()
