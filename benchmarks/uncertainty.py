"""Benchmark: cluster bootstrap and leave-one-reader-out on the deployment fixture.

Targets: 10,000 replicates of all three schemes (pairs, readers, two-way -- the
variance-corrected two-way, which also computes the product replicates it rescales) for all
18 cells < 1 s;
leave-one-reader-out with GLMM refits < 1 s. Competitors, timed in the same run:

* a naive loop (resample cluster indices, rebuild the resampled votes, take the mean) --
  timed on fewer replicates and scaled linearly to 10,000 (its cost is linear in B);
* ``scipy.stats.bootstrap`` for the pairs scheme (it has no crossed two-way scheme), with the
  pair-level (focal votes, decisive votes) as paired samples and a ratio statistic;
* a naive LORO: filter the pandas frame per cell x reader and refit the GLMM cold.

Run: ``python benchmarks/uncertainty.py [--repeats 5]``
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "fixtures" / "deployment"
N_BOOT = 10_000


def load_votes() -> tuple[pd.DataFrame, str]:
    try:
        from judge_transfer_audit.inputs import load_audit_data

        d = load_audit_data(FIXTURE / "judge.csv", FIXTURE / "humans.csv", pairs=FIXTURE / "pairs.csv")
        return d.votes, "fixtures/deployment (loaded with judge_transfer_audit.inputs.load_audit_data)"
    except Exception as exc:  # noqa: BLE001 - fall back to a simulated study of the same shape
        rng = np.random.default_rng(0)
        rows = []
        for m in range(3):
            u = rng.normal(0, 0.45, 20)
            for c in range(6):
                for i in range(20):
                    for r in range(7):
                        y = float(rng.random() < 1 / (1 + np.exp(-(0.3 + u[i]))))
                        rows.append(
                            {
                                "pair_id": f"m{m}p{i}",
                                "reader_id": f"r{r}",
                                "matchup": f"m{m}",
                                "criterion": f"c{c}",
                                "y": y,
                            }
                        )
        return pd.DataFrame(rows), f"simulated 3 x 6 cells x 20 pairs x 7 readers (fixture unavailable: {exc})"


def timed(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def naive_bootstrap(votes: pd.DataFrame, n_boot: int, seed: int) -> list[tuple[float, float]]:
    """Replicate-by-replicate: resample cluster ids, gather their votes, mean, percentile CI."""
    rng = np.random.default_rng(seed)
    out = []
    for _, cell in votes[votes["y"].notna()].groupby(["matchup", "criterion"], sort=True):
        pairs = np.array(sorted(cell["pair_id"].unique()))
        readers = np.array(sorted(cell["reader_id"].unique()))
        y_by_pair = {p: g["y"].to_numpy() for p, g in cell.groupby("pair_id")}
        y_by_reader = {r: g["y"].to_numpy() for r, g in cell.groupby("reader_id")}
        y_by_both = {k: g["y"].to_numpy() for k, g in cell.groupby(["pair_id", "reader_id"])}
        for scheme in ("pairs", "readers", "two-way"):
            reps = np.empty(n_boot)
            for b in range(n_boot):
                if scheme == "pairs":
                    ys = np.concatenate([y_by_pair[p] for p in rng.choice(pairs, len(pairs))])
                elif scheme == "readers":
                    ys = np.concatenate([y_by_reader[r] for r in rng.choice(readers, len(readers))])
                else:
                    ps, rs = rng.choice(pairs, len(pairs)), rng.choice(readers, len(readers))
                    ys = np.concatenate([y_by_both.get((p, r), np.empty(0)) for p in ps for r in rs])
                reps[b] = ys.mean()
            out.append(tuple(np.quantile(reps, [0.025, 0.975])))
    return out


def scipy_pairs_bootstrap(votes: pd.DataFrame, n_boot: int, seed: int, method: str) -> list:
    import scipy.stats

    def ratio(s, n, axis=-1):
        return s.sum(axis=axis) / n.sum(axis=axis)

    out = []
    rng = np.random.default_rng(seed)
    for _, cell in votes[votes["y"].notna()].groupby(["matchup", "criterion"], sort=True):
        g = cell.groupby("pair_id")["y"]
        s, n = g.sum().to_numpy(float), g.count().to_numpy(float)
        res = scipy.stats.bootstrap(
            (s, n), ratio, paired=True, vectorized=True, n_resamples=n_boot, method=method, rng=rng
        )
        out.append(res.confidence_interval)
    return out


def naive_loro(votes: pd.DataFrame) -> list[float]:
    from judge_transfer_audit.statistics.glmm import fit_crossed_glmm

    out = []
    for _, cell in votes[votes["y"].notna()].groupby(["matchup", "criterion"], sort=True):
        fit_crossed_glmm(
            cell["y"].to_numpy(float), {"pair": cell["pair_id"].to_numpy(), "reader": cell["reader_id"].to_numpy()}
        )
        for reader in sorted(cell["reader_id"].unique()):
            c = cell[cell["reader_id"] != reader]
            res = fit_crossed_glmm(
                c["y"].to_numpy(float), {"pair": c["pair_id"].to_numpy(), "reader": c["reader_id"].to_numpy()}
            )
            out.append(res.prob_estimate()[0])
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--naive-boot", type=int, default=100, help="replicates for the naive loop (scaled to 10,000)")
    args = parser.parse_args()
    import warnings

    from judge_transfer_audit.core.errors import AuditWarning
    from judge_transfer_audit.statistics.uncertainty import cluster_bootstrap, leave_one_reader_out

    warnings.simplefilter("ignore", AuditWarning)
    votes, source = load_votes()
    n_cells = votes.groupby(["matchup", "criterion"]).ngroups
    print(f"data: {source}; {len(votes)} votes, {n_cells} cells")
    rows = []

    t_all, res = timed(lambda: cluster_bootstrap(votes, n_boot=N_BOOT, rng=1), args.repeats)
    t_pct, _ = timed(lambda: cluster_bootstrap(votes, n_boot=N_BOOT, intervals=("percentile",), rng=1), args.repeats)
    t_naive, _ = timed(lambda: naive_bootstrap(votes, args.naive_boot, 1), 1)
    t_naive_scaled = t_naive * N_BOOT / args.naive_boot
    rows.append(
        (
            "3 schemes x all cells, 10k reps, percentile+BCa+CGM",
            t_all,
            f"naive loop {t_naive_scaled:.1f} s (measured {t_naive:.2f} s at {args.naive_boot} reps, "
            f"x{N_BOOT // args.naive_boot})",
            t_naive_scaled,
        )
    )
    rows.append(("3 schemes x all cells, 10k reps, percentile only", t_pct, "naive loop (as above)", t_naive_scaled))
    t_four, _ = timed(
        lambda: cluster_bootstrap(
            votes, schemes=("pairs", "readers", "two-way", "two-way-product"), n_boot=N_BOOT, rng=1
        ),
        args.repeats,
    )
    rows.append(("+ two-way-product, 10k reps, percentile+BCa+CGM", t_four, "naive loop (as above)", t_naive_scaled))

    t_ours_pairs, _ = timed(
        lambda: cluster_bootstrap(votes, schemes=("pairs",), intervals=("percentile", "bca"), n_boot=N_BOOT, rng=1),
        args.repeats,
    )
    t_sp_pct, _ = timed(lambda: scipy_pairs_bootstrap(votes, N_BOOT, 1, "percentile"), max(1, args.repeats // 2))
    t_sp_bca, _ = timed(lambda: scipy_pairs_bootstrap(votes, N_BOOT, 1, "BCa"), max(1, args.repeats // 2))
    rows.append(
        (
            "pairs scheme, all cells, 10k reps, percentile+BCa",
            t_ours_pairs,
            f"scipy.stats.bootstrap percentile {t_sp_pct:.3f} s + BCa {t_sp_bca:.3f} s",
            t_sp_pct + t_sp_bca,
        )
    )

    t_loro, loro = timed(lambda: leave_one_reader_out(votes), max(1, args.repeats // 2))
    t_loro_raw, _ = timed(lambda: leave_one_reader_out(votes, glmm=False), args.repeats)
    t_loro_naive, _ = timed(lambda: naive_loro(votes), 1)
    rows.append(
        (
            f"LORO with GLMM refits ({loro.n_glmm_fits} fits, warm-started)",
            t_loro,
            "naive LORO (pandas filter + cold refit)",
            t_loro_naive,
        )
    )
    rows.append(("LORO raw rates only", t_loro_raw, "naive LORO (as above)", t_loro_naive))

    print(f"\n{'task':<58}{'ours (median s)':>16}  {'competitor':<70}{'ratio':>8}")
    for task, ours, what, theirs in rows:
        print(f"{task:<58}{ours:>16.3f}  {what:<70}{theirs / ours:>7.1f}x")
    print(
        f"\ntargets: bootstrap < 1 s -> {'met' if t_all < 1 else 'NOT met'} ({t_all:.3f} s); "
        f"LORO with GLMM < 1 s -> {'met' if t_loro < 1 else 'NOT met'} ({t_loro:.3f} s, "
        f"{t_loro / loro.n_glmm_fits * 1000:.1f} ms per GLMM fit)"
    )
    print(f"medians over {args.repeats} runs (naive loops: 1 run); {res.n_boot} replicates, seed {res.seed}")


if __name__ == "__main__":
    main()
