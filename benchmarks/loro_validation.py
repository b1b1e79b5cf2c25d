"""One-step leave-one-reader-out against exact refits, over seeded designs (docs/uncertainty.md).

    python benchmarks/loro_validation.py
    python benchmarks/loro_validation.py --stochastic    # the same designs, the stochastic entries forced

Each design is one cell: P pairs, each read by k distinct readers out of R, with
``logit P(y=1) = 0.3 + u_pair + v_reader`` (SDs given, seed given). For every reader the GLMM
is refitted exactly without it (warm start from the full fit) and approximated by the one-step
update (:mod:`judge_transfer_audit.statistics.uncertainty.one_step`). Prints, per design, the largest exact shift of the
probability-scale estimate, the largest |one-step - exact| shift, their ratio, whether the most
influential reader and the top 5 agree, the correlation, and both times. ``--stochastic`` forces
the entries that cells of more than ``STOCHASTIC_MIN_READERS`` readers sharing pairs estimate with
random probes (:mod:`judge_transfer_audit.statistics.uncertainty.stochastic_inverse`) and adds their probes, estimated
Monte-Carlo error and largest difference from the dense one-step (all on the probability scale).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import judge_transfer_audit.statistics.uncertainty.one_step as one_step_module  # noqa: E402
from judge_transfer_audit.statistics.glmm import fit_crossed_glmm  # noqa: E402
from judge_transfer_audit.statistics.uncertainty._cells import cell_tables  # noqa: E402
from judge_transfer_audit.statistics.uncertainty.one_step import modes_from_fit, one_step_without_readers  # noqa: E402

# (pairs, readers, readers per pair, seed, sd_pair, sd_reader)
DESIGNS = [
    (300, 30, 10, 1, 0.5, 0.5),
    (400, 60, 10, 2, 0.5, 0.5),
    (400, 100, 10, 3, 0.5, 0.5),
    (400, 100, 10, 4, 1.0, 0.3),
    (500, 50, 20, 5, 0.8, 0.8),
    (600, 120, 10, 6, 0.5, 0.2),
]


def design_votes(n_pairs, n_readers, per_pair, seed, sd_pair, sd_reader) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    readers = np.argsort(rng.random((n_pairs, n_readers)), axis=1)[:, :per_pair]
    pair = np.repeat(np.arange(n_pairs), per_pair)
    reader = readers.ravel()
    eta = 0.3 + rng.normal(0, sd_pair, n_pairs)[pair] + rng.normal(0, sd_reader, n_readers)[reader]
    y = (rng.random(pair.size) < expit(eta)).astype(float)
    return pd.DataFrame(
        {
            "pair_id": [f"p{i:04d}" for i in pair],
            "reader_id": [f"r{j:03d}" for j in reader],
            "y": y,
            "matchup": "m",
            "criterion": "c",
        }
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stochastic", action="store_true", help="force the stochastic entries")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    print(
        f"{'P':>5} {'R':>4} {'k':>3} {'seed':>4} {'sd_p':>5} {'sd_r':>5} {'votes':>6} {'max|exact|':>10} "
        f"{'max|err|':>9} {'ratio':>6} {'top1':>5} {'top5':>5} {'corr':>7} {'exact s':>8} {'1-step s':>8}"
        + (f" {'probes':>6} {'MC err':>9} {'|stoch-dense|':>13}" if args.stochastic else "")
    )
    worst = 0.0
    for design in DESIGNS:
        t = cell_tables(design_votes(*design), ("matchup", "criterion"))[0]
        y, p, r = t.vote_arrays()
        full = fit_crossed_glmm(y, {"pair": p, "reader": r})
        base = expit(full.b[0])
        t0 = time.perf_counter()
        exact = np.array(
            [
                expit(fit_crossed_glmm(y[r != j], {"pair": p[r != j], "reader": r[r != j]}, start=full).b[0]) - base
                for j in range(t.n_readers)
            ]
        )
        t_exact = time.perf_counter() - t0
        t0 = time.perf_counter()
        bp, br = modes_from_fit(full, t.n_pairs, t.n_readers)
        fit = (t, full.b[0], full.sd["pair"], full.sd["reader"], bp, br)
        if args.stochastic:
            one_step_module.STOCHASTIC_MIN_READERS = 0
        step = one_step_without_readers(*fit)
        t_step = time.perf_counter() - t0
        extra = ""
        if args.stochastic:
            one_step_module.STOCHASTIC_MIN_READERS = 10**9
            dense = expit(one_step_without_readers(*fit).b0_without)
            extra = (
                f" {step.probes:6d} {step.mc_error * base * (1 - base):9.2e} "
                f"{np.abs(expit(step.b0_without) - dense).max():13.2e}"
            )
        approx = expit(step.b0_without) - base
        err = np.abs(approx - exact)
        top = lambda v: set(np.argsort(-np.abs(v))[:5])  # noqa: E731
        ratio = err.max() / np.abs(exact).max()
        worst = max(worst, ratio)
        print(
            f"{design[0]:5d} {design[1]:4d} {design[2]:3d} {design[3]:4d} {design[4]:5.2f} {design[5]:5.2f} "
            f"{y.size:6d} {np.abs(exact).max():10.5f} {err.max():9.2e} {ratio:6.3f} "
            f"{'yes' if np.argmax(np.abs(approx)) == np.argmax(np.abs(exact)) else 'no':>5} "
            f"{len(top(approx) & top(exact)):>3}/5 {np.corrcoef(approx, exact)[0, 1]:7.4f} "
            f"{t_exact:8.2f} {t_step:8.3f}" + extra,
            flush=True,
        )
    print(f"worst max|err| / max|exact shift| over the designs: {worst:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
