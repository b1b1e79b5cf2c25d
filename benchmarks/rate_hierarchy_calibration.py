"""The rate decision's calibration at cell, matchup and study level: the table in docs/audit.md 4.5.

Runs :mod:`judge_transfer_audit.verdict.hierarchy_study` (simulated studies whose criteria share pairs, and one vote per
pair) on every design x judge of the table and prints one row each: the share of studies whose study-level
test FAILs / PASSes, of matchups that FAIL, of the first matchup (the paper's R1 vs V3) that FAILs, of cells
that FAIL, ERROR cells, the share of the cells truly more than 30 points out that FAIL, and the share of
studies with any false FAIL (cell, matchup or study), each with its binomial standard error.

    python benchmarks/rate_hierarchy_calibration.py                  # the docs table (about 35 minutes at load 15)
    python benchmarks/rate_hierarchy_calibration.py --quick          # 10 studies per row
    python benchmarks/rate_hierarchy_calibration.py --no-pool        # the same with Holm over the cells

Studies per row are kept small on purpose (the machine is shared): 100 at the paper's design, 30 at 150 x 12,
20 at 90 cells, 10 one-vote-per-pair studies of 28 matchups; 499 bootstrap replicates per cell.
"""

from __future__ import annotations

import argparse

from judge_transfer_audit.verdict.hierarchy_study import main as study_main

TABLE = (
    (100, "paper:biased,paper:reader-like,paper:majority"),
    (10, "arena:wrong-side,arena:reader-like,arena:majority"),
    (30, "150x12:majority,150x12:reader-like"),
    (20, "90cells:biased,90cells:reader-like"),
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10 studies per row")
    parser.add_argument("--no-pool", action="store_true", help="Holm over the cells (transfer.pool_criteria false)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for studies, rows in TABLE:
        extra = ["--no-pool"] if args.no_pool else []
        n = 10 if args.quick else studies
        study_main(["--studies", str(n), "--n-boot", "499", "--seed", str(args.seed), "--rows", rows, *extra])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
