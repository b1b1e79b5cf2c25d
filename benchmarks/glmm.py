"""Benchmark: the native crossed GLMM engine against lme4::glmer on the same data, in one run.

    python benchmarks/glmm.py                      # 2.5k and 100k votes, glmer via Rscript
    python benchmarks/glmm.py --sizes 2500 100000 1000000 --no-r-above 100000
    python benchmarks/glmm.py --sizes 1000000 --memory

Data: N votes, N/20 pairs, N/500 readers, each pair read by 20 distinct readers,
logit P(y=1) = 0.3 + u_pair + v_reader with sd 0.8 and 0.5 (seeded). glmer's time is measured
inside R (``system.time`` around ``glmer()``), so R's start-up and CSV reading are excluded;
ours is wall time of ``fit_crossed_glmm`` (input encoding included), best of ``--repeats``.
Prints both times, their ratio and the differences in the estimates.

    python benchmarks/glmm.py --boundary 900 [--boundary-glmer]

The false-boundary study (issue 12 item 5): N small cells (7 readers x 20-60 pairs, b0 ~ U(0.2,
0.4), sd_pair ~ U(0.3, 0.45), sd_reader ~ U(0, 0.3), cell i seeded by i), each fitted in a
shuffled row order and compared with the best of six plain projected-BFGS runs from interior
starts (and, with ``--boundary-glmer``, with glmer(tolPwrss = 1e-10) on every cell, one R
process). A false boundary: the fit reports an sd < 1e-4 while the best optimum found has that
sd > 1e-3 and a logLik higher by > 1e-3. Also counts fits below the best by > 1e-3 in logLik and
fits whose intercept moves by > 1e-6 when the rows are put in another order.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audit.glmm import fit_crossed_glmm  # noqa: E402
from audit.glmm.rscript import rscript_available, run_glmer  # noqa: E402

FORMULA = "y ~ 1 + (1|pair) + (1|reader)"


def simulate(n_votes: int, seed: int = 20260) -> pd.DataFrame:
    """N votes, N/20 pairs each read by 20 distinct readers out of N/500."""
    rng = np.random.default_rng(seed)
    n_pair = max(n_votes // 20, 2)
    n_reader = max(n_votes // 500, 20)
    per_pair = 20
    reader = np.concatenate([rng.choice(n_reader, per_pair, replace=False) for _ in range(n_pair)])
    pair = np.repeat(np.arange(n_pair), per_pair)
    eta = 0.3 + rng.normal(0, 0.8, n_pair)[pair] + rng.normal(0, 0.5, n_reader)[reader]
    y = (rng.random(pair.size) < 1 / (1 + np.exp(-eta))).astype(np.int8)
    return pd.DataFrame({"y": y, "pair": pair.astype(np.int64), "reader": reader.astype(np.int64)})


def boundary_cell(seed: int):
    """One small cell of the false-boundary study (see the module docstring)."""
    rng = np.random.default_rng(seed)
    n_pair, n_reader = int(rng.integers(20, 61)), 7
    b0, sd_pair, sd_reader = rng.uniform(0.2, 0.4), rng.uniform(0.3, 0.45), rng.uniform(0.0, 0.3)
    u, v = rng.normal(0, sd_pair, n_pair), rng.normal(0, sd_reader, n_reader)
    pair, reader = np.repeat(np.arange(n_pair), n_reader), np.tile(np.arange(n_reader), n_pair)
    y = (rng.random(pair.size) < 1 / (1 + np.exp(-(b0 + u[pair] + v[reader])))).astype(float)
    return y, np.array([f"p{i:03d}" for i in pair]), np.array([f"r{j}" for j in reader]), rng.permutation(y.size)


def _multistart_best(y, pair, reader):
    """Lowest deviance (and its sds) of plain projected BFGS from six interior starts."""
    from audit.glmm.design import build_design
    from audit.glmm.laplace import LaplaceDeviance
    from audit.glmm.optimize import _projected_bfgs

    d = build_design(y, {"pair": pair, "reader": reader})
    lap = LaplaceDeviance(d.y, d.X, d.codes, [len(lv) for lv in d.levels])

    def fg(z):
        return lap(z[:2], z[2:]), lap.gradient()

    runs = [_projected_bfgs(fg, np.array([*t, 0.3]), 2)
            for t in [(0.05, 0.05), (0.3, 0.3), (1.0, 1.0), (0.5, 0.01), (0.01, 0.5), (2.0, 2.0)]]
    best = min(runs, key=lambda r: r.fun)
    return best.fun, best.x[:2]


_GLMER_LOOP = r"""
suppressPackageStartupMessages({library(lme4); library(jsonlite)})
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[[1]], stringsAsFactors = FALSE)
ctrl <- glmerControl(tolPwrss = 1e-10)
out <- lapply(split(d, d$cell), function(x) {
  x$pair <- factor(x$pair); x$reader <- factor(x$reader)
  m <- suppressMessages(suppressWarnings(glmer(y ~ 1 + (1|pair) + (1|reader), data = x, family = binomial,
                                               control = ctrl)))
  list(cell = x$cell[[1]], loglik = as.numeric(logLik(m)), b0 = unname(fixef(m))[[1]],
       se = sqrt(diag(as.matrix(vcov(m))))[[1]], theta = unname(getME(m, "theta")))
})
writeLines(toJSON(unname(out), auto_unbox = TRUE, digits = NA), args[[2]])
"""


def boundary_study(n_cells: int, with_glmer: bool) -> int:
    """Print the false-boundary counts of the current engine over ``n_cells`` cells."""
    import subprocess
    import tempfile

    counts = dict(singular=0, false_boundary=0, below_best=0, order_dependent=0, below_glmer=0)
    worst_gap, se_ratio, t_fit, frames = 0.0, [], 0.0, []
    for i in range(n_cells):
        y, pair, reader, perm = boundary_cell(i)
        t0 = time.perf_counter()
        res = fit_crossed_glmm(y[perm], {"pair": pair[perm], "reader": reader[perm]})
        t_fit += time.perf_counter() - t0
        other = fit_crossed_glmm(y, {"pair": pair, "reader": reader})
        best_dev, best_sd = _multistart_best(y, pair, reader)
        gap = (res.deviance - best_dev) / 2.0
        sds = np.array([res.sd["pair"], res.sd["reader"]])
        counts["singular"] += res.singular
        counts["below_best"] += gap > 1e-3
        counts["order_dependent"] += abs(res.b[0] - other.b[0]) > 1e-6 or res.singular != other.singular
        if gap > 1e-3 and np.any((sds < 1e-4) & (best_sd > 1e-3)):
            counts["false_boundary"] += 1
            refit = fit_crossed_glmm(y, {"pair": pair, "reader": reader}, start={"theta": best_sd, "beta": [res.b[0]]})
            se_ratio.append(res.se[0] / refit.se[0])
        worst_gap = max(worst_gap, gap)
        frames.append(pd.DataFrame({"cell": i, "y": y.astype(int), "pair": pair, "reader": reader,
                                    "ours": res.loglik}))
    glmer_note = ""
    if with_glmer and rscript_available():
        with tempfile.TemporaryDirectory() as tmp:
            data = pd.concat(frames)
            data.drop(columns="ours").to_csv(Path(tmp) / "cells.csv", index=False)
            (Path(tmp) / "loop.R").write_text(_GLMER_LOOP)
            subprocess.run(["Rscript", str(Path(tmp) / "loop.R"), str(Path(tmp) / "cells.csv"),
                            str(Path(tmp) / "out.json")], check=True)
            glmer = {o["cell"]: o for o in json.loads((Path(tmp) / "out.json").read_text())}
        ours = data.groupby("cell")["ours"].first()
        diffs = np.array([ours[c] - glmer[c]["loglik"] for c in ours.index])
        counts["below_glmer"] = int(np.sum(diffs < -1e-3))
        glmer_note = (f"; ours - glmer(tolPwrss=1e-10) logLik: min {diffs.min():.2e}, max {diffs.max():.2e}, "
                      f"cells below glmer by > 1e-3: {counts['below_glmer']}")
    n = n_cells
    print(f"false-boundary study: {n} cells (7 readers x 20-60 pairs), rows shuffled")
    print(f"  singular fits          {counts['singular']:>5}  ({100 * counts['singular'] / n:.1f}%)")
    print(f"  false boundaries       {counts['false_boundary']:>5}  ({100 * counts['false_boundary'] / n:.2f}%)"
          + (f"  SE / SE at the optimum: {min(se_ratio):.2f}-{max(se_ratio):.2f}" if se_ratio else ""))
    print(f"  logLik below best>1e-3 {counts['below_best']:>5}  (worst {worst_gap:.4f})")
    print(f"  row-order dependent    {counts['order_dependent']:>5}  (|db0| > 1e-6 or another singular flag)")
    print(f"  time per fit           {1000 * t_fit / n:.1f} ms" + glmer_note)
    return 0


def fit_ours(frame: pd.DataFrame, repeats: int):
    best, res = np.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        res = fit_crossed_glmm(frame["y"].to_numpy(float), {"pair": frame["pair"].to_numpy(),
                                                            "reader": frame["reader"].to_numpy()})
        best = min(best, time.perf_counter() - t0)
    return best, res


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2500, 100_000])
    parser.add_argument("--no-r-above", type=int, default=None,
                        help="skip glmer for sizes above this (glmer takes ~18 min at 1M)")
    parser.add_argument("--repeats", type=int, default=3, help="repeats of our fit (best is kept) below 200k")
    parser.add_argument("--memory", action="store_true", help="report this process's peak RSS after each size")
    parser.add_argument("--glmer-cache", type=Path, default=None,
                        help="directory caching glmer's JSON per size (reuse a long 1M glmer run)")
    parser.add_argument("--glmer-only", action="store_true", help="only run (and cache) glmer")
    parser.add_argument("--boundary", type=int, default=None, metavar="N",
                        help="run the false-boundary study over N small cells instead")
    parser.add_argument("--boundary-glmer", action="store_true", help="also fit every study cell with glmer")
    args = parser.parse_args(argv)
    if args.boundary:
        return boundary_study(args.boundary, args.boundary_glmer)
    have_r = rscript_available()
    if not have_r:
        print("Rscript with lme4/jsonlite not found: timing the native engine only")
    header = (f"{'votes':>9} {'pairs':>7} {'readers':>7} {'ours s':>9} {'glmer s':>9} {'ratio':>7} "
              f"{'|db0|':>9} {'|dse|':>9} {'|dsd_pair|':>10} {'|dsd_rdr|':>9} {'dlogLik':>10}")
    rows = []
    for n in args.sizes:
        frame = simulate(n)
        if args.glmer_only:
            _glmer(frame, n, args.glmer_cache)
            continue
        ours_t, res = fit_ours(frame, args.repeats if n < 200_000 else 1)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        line = {"votes": len(frame), "pairs": frame["pair"].nunique(), "readers": frame["reader"].nunique(),
                "ours": ours_t, "res": res, "peak_mb": peak}
        if have_r and (args.no_r_above is None or n <= args.no_r_above):
            line["r"] = _glmer(frame, n, args.glmer_cache)
        rows.append(line)
        print(_format(line, header if len(rows) == 1 else None, args.memory), flush=True)
    return 0


def _glmer(frame, n, cache):
    path = None if cache is None else cache / f"glmer_{n}.json"
    if path is not None and path.exists():
        return json.loads(path.read_text())
    r_frame = frame.assign(pair="p" + frame["pair"].astype(str), reader="r" + frame["reader"].astype(str))
    out = run_glmer(r_frame, FORMULA)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(out))
    return out


def _format(line, header, memory):
    res = line["res"]
    text = "" if header is None else header + "\n"
    out = line.get("r")
    if out is None:
        text += (f"{line['votes']:>9} {line['pairs']:>7} {line['readers']:>7} {line['ours']:>9.3f} {'-':>9} {'-':>7} "
                 f"{'-':>9} {'-':>9} {'-':>10} {'-':>9} {'-':>10}   b0={res.b[0]:.5f} se={res.se[0]:.5f} "
                 f"sd={res.sd['pair']:.4f},{res.sd['reader']:.4f} logLik={res.loglik:.4f}")
    else:
        fixef = out["fixef"] if isinstance(out["fixef"], list) else [out["fixef"]]
        se = out["se"] if isinstance(out["se"], list) else [out["se"]]
        text += (f"{line['votes']:>9} {line['pairs']:>7} {line['readers']:>7} {line['ours']:>9.3f} "
                 f"{out['time_fit']:>9.3f} {out['time_fit'] / line['ours']:>7.1f} "
                 f"{abs(res.b[0] - fixef[0]):>9.2e} {abs(res.se[0] - se[0]):>9.2e} "
                 f"{abs(res.sd['pair'] - out['sd']['pair']):>10.2e} {abs(res.sd['reader'] - out['sd']['reader']):>9.2e} "
                 f"{res.loglik - out['loglik']:>10.2e}")
    if memory:
        text += f"   peak RSS {line['peak_mb']:.0f} MB"
    return text


if __name__ == "__main__":
    raise SystemExit(main())
