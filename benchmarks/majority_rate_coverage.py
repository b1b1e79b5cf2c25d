"""Coverage of the readers' majority-rate interval shown per cell, against the bootstrap's percentile interval.

    python benchmarks/majority_rate_coverage.py --cells 400                      # the default grid
    python benchmarks/majority_rate_coverage.py --cells 400 --designs 12x20 --b0 1.2 --sd-pair 1.0

Each cell is simulated from the crossed model (:mod:`judge_transfer_audit.verdict.simulate`) and decided through
the pipeline's path (:func:`judge_transfer_audit.verdict.assess.decide_cells`); the interval shown as
``human.majority_rate`` (:func:`judge_transfer_audit.verdict.assess.human_estimands`: the profile interval) and the
bootstrap's percentile interval of M are both checked against the true majority rate. Per row: the coverage of
each 95% interval with its binomial standard error and the median width.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from judge_transfer_audit.model.policy import TransferPolicy
from judge_transfer_audit.model.tie_rules import EVEN_SPLIT
from judge_transfer_audit.verdict.assess import CellInput, decide_cells, human_estimands
from judge_transfer_audit.verdict.compare import cell_generator
from judge_transfer_audit.verdict.simulate import CellDesign, simulate_cell, simulate_judge, true_majority_rate

#: (b0, sd_pair, sd_reader, ties): M near the top, near the bottom, at 1/2, with ties, without reader variance
CELLS = (
    (1.2, 1.0, 0.3, 0.0),
    (2.0, 1.0, 0.3, 0.0),
    (-0.8, 0.8, 0.4, 0.0),
    (0.0, 0.5, 0.3, 0.0),
    (0.5, 0.5, 0.3, 0.4),
    (0.3, 0.3, 0.0, 0.0),
)
DESIGNS = ((7, 20), (12, 20), (12, 60), (3, 40))


def coverage(design: CellDesign, n_readers: int, n_pairs: int, n_cells: int, seed: int) -> dict[str, float]:
    truth = true_majority_rate(design)
    inputs = []
    for s in range(n_cells):
        key = ("majority-coverage", f"{n_readers}x{n_pairs}", str(s))
        rng = cell_generator(seed, *key)
        cell = simulate_cell(design, n_pairs, n_readers, rng)
        judge = simulate_judge("reader-like", cell, rng)
        inputs.append(CellInput(key, 1.0, cell.pair_id, cell.reader_id, cell.y).with_judge(cell.pairs, judge.credit))
    shown, boot, w_shown, w_boot = [], [], [], []
    for start in range(0, n_cells, 50):
        _, comparisons = decide_cells(
            inputs[start : start + 50], tie_rule=EVEN_SPLIT, policy=TransferPolicy(), seed=seed
        )
        for c, h in zip(comparisons, human_estimands(comparisons, 0.95)):
            if not c.assessed:
                continue
            m, b = h["majority_rate"], c.interval("majority_rate", 0.95)
            shown.append(m.ci_low <= truth <= m.ci_high)
            boot.append(b.ci_low <= truth <= b.ci_high)
            w_shown.append(m.ci_high - m.ci_low)
            w_boot.append(b.ci_high - b.ci_low)
    n = len(shown)
    return {
        "truth": truth,
        "cells": n,
        "shown": float(np.mean(shown)) if n else float("nan"),
        "bootstrap": float(np.mean(boot)) if n else float("nan"),
        "width_shown": float(np.median(w_shown)) if n else float("nan"),
        "width_bootstrap": float(np.median(w_boot)) if n else float("nan"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", type=int, default=400, help="simulated cells per row (default 400)")
    parser.add_argument("--designs", default=None, help="comma-separated READERSxPAIRS, e.g. 12x20,7x60")
    parser.add_argument("--b0", type=float, default=None, help="one cell design instead of the grid: its b0")
    parser.add_argument("--sd-pair", type=float, default=1.0)
    parser.add_argument("--sd-reader", type=float, default=0.3)
    parser.add_argument("--ties", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args(argv)
    designs = DESIGNS
    if args.designs:
        designs = tuple(tuple(int(x) for x in d.split("x")) for d in args.designs.split(","))
    cells = CELLS if args.b0 is None else ((args.b0, args.sd_pair, args.sd_reader, args.ties),)
    print(
        f"{'design':<7} {'b0':>5} {'sd_pair':>7} {'sd_rdr':>6} {'ties':>4} {'M':>6} {'cells':>5} "
        f"{'shown':>13} {'bootstrap':>13} {'width shown':>11} {'width boot':>10}"
    )
    for n_readers, n_pairs in designs:
        for b0, sd_pair, sd_reader, ties in cells:
            t0 = time.perf_counter()
            d = CellDesign(b0=b0, sd_pair=sd_pair, sd_reader=sd_reader, tie=ties)
            r = coverage(d, n_readers, n_pairs, args.cells, args.seed)
            n = max(r["cells"], 1)

            def se(p: float, n: int = n) -> float:
                return float(np.sqrt(p * (1 - p) / n))

            print(
                f"{n_readers}x{n_pairs:<4} {b0:>5.1f} {sd_pair:>7.1f} {sd_reader:>6.1f} {ties:>4.1f} "
                f"{r['truth']:>6.3f} "
                f"{r['cells']:>5} {r['shown']:>6.3f} ({se(r['shown']):.3f}) {r['bootstrap']:>6.3f} "
                f"({se(r['bootstrap']):.3f}) {r['width_shown']:>11.3f} {r['width_bootstrap']:>10.3f}"
                f"  [{time.perf_counter() - t0:.0f} s]",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
