"""Bias of the human estimands against the simulation truth.

usage: python -m judge_transfer_audit.verdict.bias_study [--reps N] [--seed S] [--no-glmm]

For each design of :data:`judge_transfer_audit.verdict.calibration.DESIGNS` and each cell of
:data:`judge_transfer_audit.verdict.calibration.CELLS`, ``N`` simulated cells: the mean, bias, SD and RMSE of
the vote share V and of the majority rate M (the beta-binomial moment estimator the decision
uses), and the bias of the GLMM's plug-in majority rate Phi(b0 / sd_pair) and of expit(b0)
beside them (secondary figures; ``--no-glmm`` skips the GLMM fits). docs/audit.md holds the
table and the command.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np
import pandas as pd

from judge_transfer_audit.model.tie_rules import EVEN_SPLIT
from judge_transfer_audit.statistics.estimands import estimands
from judge_transfer_audit.verdict.calibration import CELLS, DESIGNS
from judge_transfer_audit.verdict.compare import cell_generator
from judge_transfer_audit.verdict.simulate import simulate_cell, true_majority_rate, true_vote_share
from judge_transfer_audit.verdict.tables import comparison_table


def bias_table(*, reps: int = 30, seed: int = 0, glmm: bool = True, designs=DESIGNS) -> pd.DataFrame:
    """One row per design x cell: truth, mean, bias, SD and RMSE of V and M (and the GLMM figures)."""
    from judge_transfer_audit.verdict.human_side import fit_cell_glmm

    rows = []
    for n_readers, n_pairs in designs:
        for index, design in enumerate(CELLS):
            v_true, m_true = true_vote_share(design), true_majority_rate(design)
            v, m, plug, med = [], [], [], []
            for rep in range(reps):
                rng = cell_generator(seed, "bias", f"{n_readers}x{n_pairs}", str(index), str(rep))
                cell = simulate_cell(design, n_pairs, n_readers, rng)
                table = comparison_table(
                    cell.pair_id,
                    cell.reader_id,
                    cell.y,
                    cell.pairs,
                    np.full(n_pairs, 0.5),
                    tie_rule=EVEN_SPLIT,
                    rng=rng,
                )
                c, q, n = table.pair_sums()
                e = estimands(c, q, n, np.ones_like(c), table.judge)
                v.append(float(e.vote_share))
                m.append(float(e.majority_rate))
                if glmm:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        g = fit_cell_glmm(
                            pd.DataFrame({"pair_id": cell.pair_id, "reader_id": cell.reader_id, "y": cell.y})
                        )
                    plug.append(g.majority_plugin)
                    med.append(g.estimate)
            v, m = np.array(v), np.array(m)
            row = {
                "design": f"{n_readers}x{n_pairs}",
                "b0": design.b0,
                "sd_pair": design.sd_pair,
                "sd_reader": design.sd_reader,
                "tie": design.tie,
                "missing": design.missing,
                "V_true": v_true,
                "V_bias": v.mean() - v_true,
                "V_sd": v.std(ddof=1),
                "M_true": m_true,
                "M_mean": m.mean(),
                "M_bias": m.mean() - m_true,
                "M_sd": m.std(ddof=1),
                "M_rmse": float(np.sqrt(np.mean((m - m_true) ** 2))),
            }
            if glmm:
                plug_arr, med_arr = np.array(plug, float), np.array(med, float)
                row["plugin_bias"] = float(np.nanmean(plug_arr) - m_true)
                row["plugin_rmse"] = float(np.sqrt(np.nanmean((plug_arr - m_true) ** 2)))
                row["expit_b0_minus_V"] = float(np.nanmean(med_arr) - v_true)
            rows.append(row)
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m judge_transfer_audit.verdict.bias_study", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-glmm", action="store_true")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    table = bias_table(reps=args.reps, seed=args.seed, glmm=not args.no_glmm)
    with pd.option_context("display.width", 200, "display.max_columns", 30, "display.float_format", "{:.3f}".format):
        print(table.to_string(index=False))
    print(
        f"({time.perf_counter() - started:.0f} s; python -m judge_transfer_audit.verdict.bias_study "
        + " ".join(argv if argv is not None else sys.argv[1:])
        + ")"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
