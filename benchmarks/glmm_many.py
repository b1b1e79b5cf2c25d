"""Many tiny crossed GLMMs: the per-cell engine in a loop beside the stacked fit.

    python benchmarks/glmm_many.py                      # 1,000 cells of 6 pairs x 3 readers (18 votes)
    python benchmarks/glmm_many.py --cells 10000 --pairs 6 --readers 3 --readers-per-pair 3

The cells are the ``criteria`` study of ``benchmarks/scale_data.py`` (seeded): one cell per
criterion. Both sides fit every cell's decisive votes with ``logit P(y=1) = b0 + u_pair + v_reader``:
``judge_transfer_audit.statistics.glmm.fit_crossed_glmm`` once per cell (what the audit did before) and
``judge_transfer_audit.statistics.glmm.batch.fit_many`` (all cells, the tiny ones evaluated together). Printed: CPU
seconds of each (``time.process_time``: the machine's load inflates it far less than wall time), the ratio, and
the largest difference between the two over the cells in b0, its SE, the two sds and logLik, with
the number of singular (boundary) fits and of fits whose flags or notes differ.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from scale_data import StudyShape, simulate  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=1000)
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--readers", type=int, default=3)
    parser.add_argument("--readers-per-pair", type=int, default=3)
    parser.add_argument("--seed", type=int, default=15)
    args = parser.parse_args(argv)

    from judge_transfer_audit.statistics.glmm import fit_crossed_glmm
    from judge_transfer_audit.statistics.glmm.batch import fit_many
    from judge_transfer_audit.statistics.glmm.design import build_design

    shape = StudyShape(args.pairs, args.readers, args.readers_per_pair, args.cells)
    _, humans = simulate(shape, seed=args.seed)
    y = (humans["choice"] == "focal").to_numpy(float)
    cells = [
        (y[idx], humans["pair_id"].to_numpy()[idx], humans["reader_id"].to_numpy()[idx])
        for idx in humans.groupby("criterion", sort=False).indices.values()
    ]
    designs = [build_design(yc, {"pair": p, "reader": r}) for yc, p, r in cells]

    t0 = time.process_time()
    one = [fit_crossed_glmm(yc, {"pair": p, "reader": r}) for yc, p, r in cells]
    t_one = time.process_time() - t0
    t0 = time.process_time()
    many = fit_many(designs)
    t_many = time.process_time() - t0

    worst = {"b0": 0.0, "se": 0.0, "sd_pair": 0.0, "sd_reader": 0.0, "loglik": 0.0}
    flags_differ = 0
    for a, b in zip(one, many):
        pairs = {
            "b0": (a.b[0], b.b[0]),
            "se": (a.se[0], b.se[0]),
            "sd_pair": (a.sd.get("pair", np.nan), b.sd.get("pair", np.nan)),
            "sd_reader": (a.sd.get("reader", np.nan), b.sd.get("reader", np.nan)),
            "loglik": (a.loglik, b.loglik),
        }
        for k, (u, v) in pairs.items():
            if np.isfinite(u) and np.isfinite(v):
                worst[k] = max(worst[k], abs(u - v))
        flags_differ += (a.singular, a.converged, a.separation, a.notes) != (
            b.singular,
            b.converged,
            b.separation,
            b.notes,
        )
    load = os.getloadavg()[0]
    print(
        f"{len(cells)} cells of {args.pairs} pairs x {args.readers} readers "
        f"({shape.pairs * args.readers_per_pair} votes each), load {load:.1f} on {os.cpu_count()} cores"
    )
    print(f"{'engine':<34}{'cpu s':>9}")
    print(f"{'fit_crossed_glmm, one per cell':<34}{t_one:>9.2f}")
    print(f"{'batch.fit_many (stacked)':<34}{t_many:>9.2f}   {t_one / t_many:.1f}x")
    print("largest |difference| over the cells: " + ", ".join(f"{k} {v:.2g}" for k, v in worst.items()))
    print(f"singular fits {sum(a.singular for a in one)}; fits whose flags or notes differ: {flags_differ}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
