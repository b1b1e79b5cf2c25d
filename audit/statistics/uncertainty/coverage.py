"""Coverage simulation: do the 95% intervals cover the true rate 95% of the time?

Each simulated study is one cell shaped like the deployment fixture: ``n_pairs`` pairs x
``n_readers`` readers, every reader voting on every pair, with
``logit P(y_ir = 1) = b0 + u_i + v_r``, ``u_i ~ N(0, sd_pair^2)``, ``v_r ~ N(0, sd_reader^2)``.

Which "true rate"? The model has two, and they differ whenever an SD is positive:

* the **conditional** rate ``expit(b0)``: a typical pair judged by a typical reader (random
  effects at zero). The GLMM Wald interval ``expit(b0_hat -/+ z se)`` targets this one.
* the **marginal** (population-averaged) rate ``E[expit(b0 + u + v)]``: the share of votes
  for the focal system over the whole population of pairs and readers. The raw vote share and
  therefore every cluster bootstrap of it target this one. It is closer to 0.5 than expit(b0).

Each interval is scored against its own target (GLMM -> conditional, bootstraps -> marginal);
the cross-coverages are reported too. Run::

    python -m judge_transfer_audit.statistics.uncertainty.coverage --n-studies 500 --seed 1
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit

from judge_transfer_audit.statistics.uncertainty.bootstrap import (
    acceleration,
    bca_interval,
    cgm_interval,
    jackknife_rates,
    multinomial_weights,
    percentile_interval,
    replicate_rates,
)
from judge_transfer_audit.statistics.uncertainty.two_way import correct_two_way, t_calibrated_level

RAW_SCHEMES = ("pairs", "readers", "two-way-product")


def marginal_rate(b0: float, sd_pair: float, sd_reader: float, n_nodes: int = 80) -> float:
    """``E[expit(b0 + e)]``, ``e ~ N(0, sd_pair^2 + sd_reader^2)``, by Gauss-Hermite quadrature."""
    sd = float(np.hypot(sd_pair, sd_reader))
    if sd == 0:
        return float(expit(b0))
    x, w = np.polynomial.hermite_e.hermegauss(n_nodes)
    return float(np.sum(w * expit(b0 + sd * x)) / np.sqrt(2 * np.pi))


def simulate_cell(
    rng: np.random.Generator, n_pairs: int, n_readers: int, b0: float, sd_pair: float, sd_reader: float
) -> np.ndarray:
    """One study's ``n_pairs x n_readers`` 0/1 vote table."""
    u = rng.normal(0.0, sd_pair, n_pairs)
    v = rng.normal(0.0, sd_reader, n_readers)
    return (rng.random((n_pairs, n_readers)) < expit(b0 + u[:, None] + v[None, :])).astype(float)


@dataclass(frozen=True)
class CoverageResult:
    """Coverage of each interval method over simulated studies.

    Attributes
    ----------
    coverage : DataFrame
        One row per method x target: ``method`` (glmm-wald, glmm-wald-t -- the same interval
        with a t quantile on min(pairs, readers) - 1 df --, pairs, readers, two-way (the
        variance-corrected default), two-way-product (the raw pigeonhole bootstrap), each
        bootstrap with ``-percentile`` / ``-bca``; two-way-z-percentile -- the corrected
        replicates read at the plain normal tails, and two-way-msdf-percentile -- read at the
        t tails of the classical Satterthwaite df of the mean squares; both diagnostics of the
        t calibration --; and
        two-way-cgm), ``target`` (conditional / marginal),
        ``own_target`` (whether this is the quantity the method estimates), ``coverage``,
        ``mc_se`` (binomial Monte-Carlo SE), ``below`` / ``above`` (share of studies whose
        interval lies entirely below / above the truth), ``mean_width``, ``n_usable``.
    n_studies, n_pairs, n_readers, n_boot : int
    b0, sd_pair, sd_reader, level : float
    true_conditional, true_marginal : float
    n_glmm_failed, n_glmm_singular : int
    seed : int
    """

    coverage: pd.DataFrame
    n_studies: int
    n_pairs: int
    n_readers: int
    n_boot: int
    b0: float
    sd_pair: float
    sd_reader: float
    level: float
    true_conditional: float
    true_marginal: float
    n_glmm_failed: int
    n_glmm_singular: int
    seed: int

    def to_frame(self) -> pd.DataFrame:
        return self.coverage.copy()

    def __str__(self) -> str:
        head = (
            f"Coverage of {self.level:.0%} intervals over {self.n_studies} simulated studies "
            f"({self.n_pairs} pairs x {self.n_readers} readers, b0={self.b0:g}, sd_pair={self.sd_pair:g}, "
            f"sd_reader={self.sd_reader:g}; {self.n_boot} bootstrap replicates; seed {self.seed})\n"
            f"true conditional rate expit(b0) = {self.true_conditional:.4f}; "
            f"true marginal rate = {self.true_marginal:.4f}; GLMM failed {self.n_glmm_failed}, "
            f"singular {self.n_glmm_singular}"
        )
        own = self.coverage[self.coverage["own_target"]]
        lines = [head, f"  {'method':<28}{'target':<13}{'coverage':>9}{'mc_se':>8}{'below':>8}{'above':>8}{'width':>8}"]
        for _, r in own.iterrows():
            lines.append(
                f"  {r['method']:<28}{r['target']:<13}{r['coverage']:>9.3f}{r['mc_se']:>8.3f}"
                f"{r['below']:>8.3f}{r['above']:>8.3f}{r['mean_width']:>8.3f}"
            )
        return "\n".join(lines)


def run_coverage(
    n_studies: int = 500,
    *,
    seed: int = 1,
    n_pairs: int = 20,
    n_readers: int = 7,
    b0: float = 0.4,
    sd_pair: float = 0.5,
    sd_reader: float = 0.5,
    n_boot: int = 999,
    level: float = 0.95,
    glmm: bool = True,
    progress=None,
) -> CoverageResult:
    """Simulate ``n_studies`` studies and score every interval method.

    Study ``k`` draws its data and its bootstrap weights from ``SeedSequence(seed).spawn``'s
    ``k``-th child, so results are reproducible and independent of ``n_studies`` ordering.
    """
    from judge_transfer_audit.statistics.distributions import t as student_t
    from judge_transfer_audit.statistics.uncertainty.glmm_cells import fit_vote_arrays

    truth = {"conditional": float(expit(b0)), "marginal": marginal_rate(b0, sd_pair, sd_reader)}
    t_quantile = float(student_t.ppf(0.5 + level / 2.0, min(n_pairs, n_readers) - 1))
    children = np.random.SeedSequence(seed).spawn(n_studies)
    pair_ids = np.repeat(np.array([f"p{i}" for i in range(n_pairs)], object), n_readers)
    reader_ids = np.tile(np.array([f"r{j}" for j in range(n_readers)], object), n_pairs)
    intervals: dict[str, list[tuple[float, float]]] = {}
    n_failed = n_singular = 0
    for k, child in enumerate(children):
        rng = np.random.default_rng(child)
        Y = simulate_cell(rng, n_pairs, n_readers, b0, sd_pair, sd_reader)
        N = np.ones_like(Y)
        wp = multinomial_weights(rng, n_pairs, n_boot)
        wr = multinomial_weights(rng, n_readers, n_boot)
        est = float(Y.mean())
        raw = {scheme: replicate_rates(Y, N, scheme, wp, wr) for scheme in RAW_SCHEMES}
        corr = correct_two_way(est, raw["two-way-product"], raw["pairs"], raw["readers"], n_pairs, n_readers)
        var = {}
        sets = [(s, raw[s], level) for s in RAW_SCHEMES] + [
            ("two-way", corr.replicates, t_calibrated_level(level, corr.df))
        ]
        for scheme, reps, tail in sets:
            reps = reps[np.isfinite(reps)]
            var[scheme] = float(reps.var(ddof=1))
            intervals.setdefault(f"{scheme}-percentile", []).append(percentile_interval(reps, tail))
            a = acceleration(jackknife_rates(Y, N, scheme))
            lo, hi, _ = bca_interval(reps, est, a, tail)
            intervals.setdefault(f"{scheme}-bca", []).append((lo, hi))
        finite = corr.replicates[np.isfinite(corr.replicates)]
        intervals.setdefault("two-way-z-percentile", []).append(percentile_interval(finite, level))
        intervals.setdefault("two-way-msdf-percentile", []).append(
            percentile_interval(finite, t_calibrated_level(level, corr.df_mean_squares))
        )
        lo, hi, _, _ = cgm_interval(est, var["pairs"], var["readers"], Y, N, level)
        intervals.setdefault("two-way-cgm", []).append((lo, hi))
        if glmm:
            row, _ = fit_vote_arrays(Y.ravel(), pair_ids, reader_ids)
            ok = row["error"] == "" and row["converged"]
            n_failed += not ok
            n_singular += bool(row["singular"])
            intervals.setdefault("glmm-wald", []).append((row["ci_low"], row["ci_high"]) if ok else (np.nan, np.nan))
            # the same Wald interval with a Student-t quantile on min(pairs, readers) - 1 df
            half = t_quantile * row["se"]
            intervals.setdefault("glmm-wald-t", []).append(
                (float(expit(row["b0"] - half)), float(expit(row["b0"] + half))) if ok else (np.nan, np.nan)
            )
        if progress is not None:
            progress(k + 1, n_studies)
    rows = []
    for method, ivs in intervals.items():
        arr = np.asarray(ivs, float)
        usable = np.isfinite(arr).all(axis=1)
        lo, hi = arr[usable, 0], arr[usable, 1]
        own = "conditional" if method.startswith("glmm") else "marginal"
        for target, value in truth.items():
            cover = (lo <= value) & (value <= hi)
            n = int(usable.sum())
            c = float(cover.mean()) if n else float("nan")
            rows.append(
                {
                    "method": method,
                    "target": target,
                    "own_target": target == own,
                    "coverage": c,
                    "mc_se": float(np.sqrt(c * (1 - c) / n)) if n else float("nan"),
                    "below": float((hi < value).mean()) if n else float("nan"),
                    "above": float((lo > value).mean()) if n else float("nan"),
                    "mean_width": float((hi - lo).mean()) if n else float("nan"),
                    "n_usable": n,
                }
            )
    return CoverageResult(
        coverage=pd.DataFrame(rows),
        n_studies=int(n_studies),
        n_pairs=int(n_pairs),
        n_readers=int(n_readers),
        n_boot=int(n_boot),
        b0=float(b0),
        sd_pair=float(sd_pair),
        sd_reader=float(sd_reader),
        level=float(level),
        true_conditional=truth["conditional"],
        true_marginal=truth["marginal"],
        n_glmm_failed=int(n_failed),
        n_glmm_singular=int(n_singular),
        seed=int(seed),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m judge_transfer_audit.statistics.uncertainty.coverage",
        description="Coverage simulation of the GLMM and cluster-bootstrap intervals.",
    )
    parser.add_argument("--n-studies", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--n-pairs", type=int, default=20)
    parser.add_argument("--n-readers", type=int, default=7)
    parser.add_argument("--b0", type=float, default=0.4)
    parser.add_argument("--sd-pair", type=float, default=0.5)
    parser.add_argument("--sd-reader", type=float, default=0.5)
    parser.add_argument("--n-boot", type=int, default=999)
    parser.add_argument("--no-glmm", action="store_true", help="skip the GLMM fits (bootstraps only)")
    parser.add_argument("--all-targets", action="store_true", help="also print cross-target coverage")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    res = run_coverage(
        args.n_studies,
        seed=args.seed,
        n_pairs=args.n_pairs,
        n_readers=args.n_readers,
        b0=args.b0,
        sd_pair=args.sd_pair,
        sd_reader=args.sd_reader,
        n_boot=args.n_boot,
        glmm=not args.no_glmm,
    )
    print(res)
    if args.all_targets:
        print(res.coverage.to_string(index=False))
    print(f"elapsed {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
