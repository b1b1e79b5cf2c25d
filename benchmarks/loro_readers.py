"""Leave-one-reader-out's one-step on one cell as its readers grow (sub-quadratic in readers).

    python benchmarks/loro_readers.py                       # 2,000, 5,000 and 20,000 readers, 5,000 pairs x 20
    python benchmarks/loro_readers.py --readers 3000 5000 --check-dense --refits 10
    python benchmarks/loro_readers.py --readers 20000 --pairs 50000     # 1M votes
    python benchmarks/loro_readers.py --readers 2000 6000 --per-pair 1 --pairs 100000   # one reader per pair

For each reader count it builds one seeded cell (``--pairs`` pairs, each read by ``--per-pair``
readers drawn uniformly, logit P = ``--b0`` + pair and reader effects of SDs ``--sd``), then times,
in this process, what leave-one-reader-out does per cell after the full fit, at the generating
intercept and SDs: :func:`judge_transfer_audit.statistics.uncertainty.one_step.conditional_modes` and
:func:`judge_transfer_audit.statistics.uncertainty.one_step.one_step_without_readers`, and prints CPU seconds, the
process's peak RSS, the path taken and, for the stochastic path, its probes and estimated Monte-Carlo error
(probability points). Up to ``STOCHASTIC_MIN_READERS`` readers sharing pairs the block is dense
(cubic time, quadratic memory); above, conjugate gradients and random probes (linear in the votes);
with one reader per pair the block is diagonal (linear).

``--check-dense`` also runs the dense one-step on the same cell (cubic: up to ~6,000 readers) and
prints the largest |stochastic - dense| shift; ``--refits N`` refits the GLMM exactly without the
``N`` readers of largest one-step shift (variances re-estimated; cold starts, as leave-one-reader-out
refits cells above 50,000 votes: a warm start stops within the optimiser's tolerance of the full
fit, ~2e-4 on the logit scale, as large as one reader's shift among thousands) and prints the
largest |one-step - exact| over them and the largest exact shift. There is no competing tool:
nothing else computes this one-step. Run one reader count per process for a clean peak RSS.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import judge_transfer_audit.statistics.uncertainty.one_step as one_step  # noqa: E402
from judge_transfer_audit.statistics.uncertainty._cells import cell_tables  # noqa: E402


def cell(readers: int, pairs: int, per_pair: int, seed: int = 1, b0: float = 0.0, sd: float = 0.0):
    rng = np.random.default_rng(seed)
    if per_pair == 1:
        reader = rng.integers(0, readers, pairs)
    else:
        reader = np.concatenate([rng.choice(readers, per_pair, replace=False) for _ in range(pairs)])
    pair = np.repeat(np.arange(pairs), per_pair)
    eta = b0 + rng.normal(0, sd, pairs)[pair] + rng.normal(0, sd, readers)[reader]
    y = (rng.random(pair.size) < expit(eta)).astype(float)
    frame = pd.DataFrame(
        {"pair_id": pair.astype(str), "reader_id": reader.astype(str), "y": y, "matchup": "m", "criterion": "c"}
    )
    return cell_tables(frame, ("matchup", "criterion"))[0]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--readers", type=int, nargs="+", default=[2000, 5000, 20000])
    parser.add_argument("--pairs", type=int, default=5000)
    parser.add_argument("--per-pair", type=int, default=20)
    parser.add_argument("--b0", type=float, default=0.1)
    parser.add_argument("--sd", type=float, default=0.5, help="SD of the pair and of the reader effects")
    parser.add_argument(
        "--at",
        type=float,
        nargs=3,
        metavar=("B0", "SD_PAIR", "SD_READER"),
        help="evaluate the one-step at these values instead of the generating ones (a stress case)",
    )
    parser.add_argument("--check-dense", action="store_true")
    parser.add_argument("--refits", type=int, default=0)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    theta = tuple(args.at) if args.at else (args.b0, args.sd, args.sd)
    print("readers  pairs   votes  modes CPU s  one-step CPU s  peak RSS MB  path        probes  MC err    reason")
    for readers in args.readers:
        t = cell(readers, args.pairs, args.per_pair, b0=args.b0, sd=args.sd)
        c0 = time.process_time()
        bp, br = one_step.conditional_modes(t, *theta)
        c1 = time.process_time()
        step = one_step.one_step_without_readers(t, *theta, bp, br)
        c2 = time.process_time()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        if one_step.one_reader_per_pair(t) and t.n_readers > one_step.DIAGONAL_MIN_READERS:
            path = "diagonal"
        else:
            path = "stochastic" if step.probes else "dense"
        p0 = expit(theta[0])
        print(
            f"{t.n_readers:7d} {t.n_pairs:6d} {int(t.n.sum()):7d} {c1 - c0:12.2f} {c2 - c1:15.2f} {peak:12.0f}  "
            f"{path:<10} {step.probes:7d}  {step.mc_error * p0 * (1 - p0):8.1e}  {step.reason or 'computed'}",
            flush=True,
        )
        shift = expit(step.b0_without) - p0
        if args.check_dense and step.probes:
            saved = one_step.STOCHASTIC_MIN_READERS
            one_step.STOCHASTIC_MIN_READERS = 10**9
            c3 = time.process_time()
            dense = expit(one_step.one_step_without_readers(t, *theta, bp, br).b0_without) - p0
            c4 = time.process_time()
            one_step.STOCHASTIC_MIN_READERS = saved
            diff = np.abs(shift - dense).max()
            print(
                f"    dense one-step: {c4 - c3:.2f} CPU-s; largest |stochastic - dense| {diff:.2e} "
                f"= {diff / np.abs(dense).max():.2%} of the largest shift {np.abs(dense).max():.2e}"
            )
        if args.refits:
            from judge_transfer_audit.statistics.glmm import fit_crossed_glmm

            y, p, r = t.vote_arrays()
            c3 = time.process_time()
            full = fit_crossed_glmm(y, {"pair": p, "reader": r})
            base = expit(full.b[0])
            bp_f, br_f = one_step.modes_from_fit(full, t.n_pairs, t.n_readers)
            fitted = (t, full.b[0], full.sd["pair"], full.sd["reader"], bp_f, br_f)
            at_fit = one_step.one_step_without_readers(*fitted)
            approx = expit(at_fit.b0_without) - base
            top = np.argsort(-np.abs(approx))[: args.refits]
            exact = np.array(
                [expit(fit_crossed_glmm(y[r != j], {"pair": p[r != j], "reader": r[r != j]}).b[0]) - base for j in top]
            )
            c4 = time.process_time()
            j = top[0]
            warm = fit_crossed_glmm(y[r != j], {"pair": p[r != j], "reader": r[r != j]}, start=full)
            warm_shift = expit(warm.b[0]) - base
            err = np.abs(approx[top] - exact)
            print(
                f"    exact refits of the {len(top)} most influential readers ({c4 - c3:.1f} CPU-s, full fit "
                f"sds {full.sd['pair']:.2f}/{full.sd['reader']:.2f}, {at_fit.probes} probes): largest exact shift "
                f"{np.abs(exact).max():.2e}, largest |one-step - exact| {err.max():.2e} "
                f"= {err.max() / np.abs(exact).max():.1%}; the top reader refitted warm from the full fit: "
                f"{warm_shift:.2e} against cold {exact[0]:.2e} and one-step {approx[j]:.2e}"
            )


if __name__ == "__main__":
    main()
