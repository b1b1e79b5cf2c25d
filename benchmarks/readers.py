"""Benchmark: the reader analyses against the tools they were validated with.

* per-reader ML logistic fit (ours, Newton) vs statsmodels ``Logit`` on a 60 x 6 reader design;
* Firth fit (ours) vs R ``brglm2`` (timed inside R, so R's start-up is not counted) on the
  endometrial data of Heinze & Schemper (2002);
* Cohen's kappa (ours) vs statsmodels ``cohens_kappa`` (contingency-table input);
* ``analyse_readers`` on the paper-shaped fixture (7 readers x 60 pairs x 6 criteria).

Each line prints the median wall time of both, the ratio ours / theirs and the largest
absolute difference of the estimates.

Run: ``python benchmarks/readers.py [--repeats 7]``
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
REF = ROOT / "tests" / "reference" / "firth"


def median_time(fn, repeats: int) -> tuple[float, object]:
    times, value = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), value


def line(name: str, ours: float, theirs: float | None, diff: float | None, tool: str) -> None:
    if theirs is None:
        print(f"{name:<34} ours {ours * 1e3:9.3f} ms   {tool}: not available")
        return
    print(
        f"{name:<34} ours {ours * 1e3:9.3f} ms   {tool} {theirs * 1e3:9.3f} ms   "
        f"ratio {ours / theirs:6.2f}   max|diff| {diff:.2e}"
    )


def bench_ml(repeats: int) -> None:
    import statsmodels.api as sm

    from judge_transfer_audit.statistics.readers.firth import fit_logistic

    rng = np.random.default_rng(0)
    X = np.column_stack([np.ones(60), rng.choice([-1.0, 1.0], size=(60, 5))])
    y = (rng.random(60) < 1 / (1 + np.exp(-(X @ np.array([0.2, 0.8, 0.5, 0.1, 0.3, -0.2]))))).astype(float)
    t_ours, ours = median_time(lambda: fit_logistic(X, y), repeats)
    t_sm, theirs = median_time(lambda: sm.Logit(y, X).fit(disp=0), repeats)
    line("ML logistic, 60 x 6", t_ours, t_sm, float(np.max(np.abs(np.array(ours.coef) - theirs.params))), "statsmodels")


def bench_firth(repeats: int) -> None:
    from judge_transfer_audit.statistics.readers.firth import fit_logistic

    data = pd.read_csv(REF / "endometrial.csv")
    X = np.column_stack([np.ones(len(data)), data["NV"], data["PI"], data["EH"]])
    t_ours, ours = median_time(lambda: fit_logistic(X, data["HG"].to_numpy(float)), repeats)
    t_r = None
    diff = None
    if shutil.which("Rscript"):
        script = f"""
suppressPackageStartupMessages(library(brglm2))
d <- read.csv("{REF / "endometrial.csv"}")
f <- function() glm(HG ~ NV + PI + EH, family = binomial, data = d, method = "brglmFit", type = "AS_mean")
invisible(f())
fit <- NULL
t <- sapply(1:{repeats}, function(i) system.time(fit <<- f())[["elapsed"]])
cat(median(t), coef(fit), sep = "\\n")
"""
        with tempfile.NamedTemporaryFile("w", suffix=".R", delete=False) as fh:
            fh.write(script)
        run = subprocess.run(["Rscript", fh.name], capture_output=True, text=True)
        if run.returncode == 0:
            values = [float(v) for v in run.stdout.split()]
            t_r = max(values[0], 1e-6)  # system.time resolution is 1 ms
            diff = float(np.max(np.abs(np.array(ours.coef) - np.array(values[1:]))))
    line("Firth logistic, endometrial (79x4)", t_ours, t_r, diff, "R brglm2")


def bench_kappa(repeats: int) -> None:
    from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa

    from judge_transfer_audit.statistics.readers.weights import cohens_kappa

    rng = np.random.default_rng(1)
    a = rng.choice(["focal", "other", "tie"], 60, p=[0.45, 0.45, 0.1])
    b = np.where(rng.random(60) < 0.5, a, rng.choice(["focal", "other"], 60))
    labels = sorted(set(a) | set(b))

    def theirs():
        table = np.array([[np.sum((a == x) & (b == y)) for y in labels] for x in labels])
        return float(sm_kappa(table, return_results=False))

    t_ours, ours = median_time(lambda: cohens_kappa(a, b)[0], repeats)
    t_sm, ref = median_time(theirs, repeats)
    line("Cohen's kappa, 60 labels", t_ours, t_sm, abs(ours - ref), "statsmodels (+table)")


def bench_fixture(repeats: int) -> None:
    from judge_transfer_audit.inputs import load_audit_data
    from judge_transfer_audit.model.tie_rules import EVEN_SPLIT
    from judge_transfer_audit.statistics.readers import analyse_readers
    from judge_transfer_audit.verdict.judge_side import judge_pair_outcomes

    fixture = ROOT / "fixtures" / "deployment"
    if not (fixture / "humans.csv").exists():
        print("analyse_readers on the fixture: fixture missing")
        return
    data = load_audit_data(fixture / "judge.csv", fixture / "humans.csv", pairs=fixture / "pairs.csv")
    credits = judge_pair_outcomes(data, EVEN_SPLIT, np.random.default_rng(0))
    t, _ = median_time(lambda: analyse_readers(data.votes, credits, rng=0, fit_glmm_if_missing=False), repeats)
    print(
        f"{'analyse_readers, 7 x 60 x 6 fixture':<34} ours {t * 1e3:9.3f} ms   (no competing tool; "
        f"{len(data.votes)} votes, GLMM row not refitted)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    bench_ml(args.repeats)
    bench_firth(args.repeats)
    bench_kappa(args.repeats)
    bench_fixture(max(3, args.repeats // 2))


if __name__ == "__main__":
    main()
