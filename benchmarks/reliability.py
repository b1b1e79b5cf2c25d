"""Benchmark: `audit reliability`'s statistics against the R functions they were validated with.

* ICC (six forms, F-tests, bounds): ours vs ``psych::ICC(x, lmer = FALSE)``;
* Cronbach's alpha with the Feldt interval: ours vs ``psych::alpha``;
* Kendall's W (tie-corrected): ours vs base R ``friedman.test`` (W = chi2 / (m (n - 1)));
* the whole ``reliability_report`` on a GrAImes-shaped study (16 texts x 15 questions x
  20 readers in two groups, with the group-comparison bootstrap).

R is timed inside R (start-up not counted). Each line prints the median wall time of both,
the ratio ours / R and the largest absolute difference of the values.

Run: ``python benchmarks/reliability.py [--repeats 7]``
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from judge_transfer_audit.statistics.reliability.cronbach import cronbach_alpha
from judge_transfer_audit.statistics.reliability.icc import icc_from_matrix
from judge_transfer_audit.statistics.reliability.kendall import kendall_w
from judge_transfer_audit.statistics.reliability.ratings import validate_ratings
from judge_transfer_audit.statistics.reliability.report import reliability_report

R_SCRIPT = r"""
suppressPackageStartupMessages(library(psych))
args <- commandArgs(TRUE); reps <- as.integer(args[1])
med <- function(f) {
  t <- numeric(reps); for (i in 1:reps) t[i] <- system.time(v <- f())[["elapsed"]]; list(median(t), v)
}
out <- data.frame()
for (name in c("likert_16x20", "continuous_200x8")) {
  x <- as.matrix(read.csv(paste0(name, ".csv")))
  r <- med(function() ICC(x, lmer = FALSE)$results)
  out <- rbind(out, data.frame(case = paste0("icc_", name), seconds = r[[1]],
                               values = paste(sprintf("%.17g", c(r[[2]]$ICC, r[[2]]$F, r[[2]][["lower bound"]],
                                                               r[[2]][["upper bound"]])), collapse = ";")))
  k <- med(function() friedman.test(t(x)))
  out <- rbind(out, data.frame(case = paste0("w_", name), seconds = k[[1]],
                               values = sprintf("%.17g", unname(k[[2]]$statistic) / (ncol(x) * (nrow(x) - 1)))))
}
q <- read.csv("questionnaire_320x15.csv")
a <- med(function() suppressWarnings(alpha(q, check.keys = FALSE, warnings = FALSE)))
out <- rbind(out, data.frame(case = "alpha_320x15", seconds = a[[1]],
                             values = paste(sprintf("%.17g", c(a[[2]]$total$raw_alpha, a[[2]]$feldt$lower.ci,
                                                              a[[2]]$feldt$upper.ci)), collapse = ";")))
write.csv(out, "r_times.csv", row.names = FALSE)
"""


def median_time(fn, repeats: int):
    times, value = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), value


def study(rng: np.random.Generator) -> tuple[dict[str, np.ndarray], pd.DataFrame, pd.DataFrame]:
    quality = rng.normal(size=16)
    likert = np.clip(np.round(3 + quality[:, None] + rng.normal(scale=1.0, size=(16, 20))), 1, 5)
    continuous = rng.normal(size=200)[:, None] + rng.normal(scale=0.7, size=(200, 8)) + rng.normal(size=8)
    rows = []
    for i in range(16):
        for r in range(20):
            group = "expert" if r < 8 else "enthusiast"
            for q in range(15):
                value = np.clip(
                    np.round(3 + quality[i] + 0.3 * rng.normal() + rng.normal(scale=0.8 if r < 8 else 1.2)), 1, 5
                )
                rows.append((f"mf{i}", f"r{r}", f"Q{q + 1}", group, value))
    long = pd.DataFrame(rows, columns=["item_id", "reader_id", "criterion", "reader_group", "rating"])
    questionnaire = long.pivot_table(index=["item_id", "reader_id"], columns="criterion", values="rating")
    return {"likert_16x20": likert, "continuous_200x8": continuous}, questionnaire, long


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    matrices, questionnaire, long = study(np.random.default_rng(20261130))
    r_rows = {}
    if shutil.which("Rscript"):
        with tempfile.TemporaryDirectory() as tmp:
            for name, x in matrices.items():
                pd.DataFrame(x, columns=[f"r{j}" for j in range(x.shape[1])]).to_csv(
                    Path(tmp) / f"{name}.csv", index=False
                )
            questionnaire.to_csv(Path(tmp) / "questionnaire_320x15.csv", index=False)
            (Path(tmp) / "bench.R").write_text(R_SCRIPT)
            subprocess.run(["Rscript", "bench.R", str(args.repeats)], cwd=tmp, check=True, capture_output=True)
            r_rows = pd.read_csv(Path(tmp) / "r_times.csv").set_index("case").to_dict("index")

    def line(case, ours_s, ours_values, key):
        ref = r_rows.get(key)
        if ref is None:
            print(f"{case:<42} ours {ours_s * 1e3:8.3f} ms   R: not available")
            return
        theirs = np.array([float(v) for v in str(ref["values"]).split(";")])
        diff = float(np.max(np.abs(np.asarray(ours_values, float) - theirs)))
        r_s = ref["seconds"]
        ratio = f"{ours_s / r_s:6.2f}" if r_s > 0 else "  (R below its 1 ms timer)"
        print(f"{case:<42} ours {ours_s * 1e3:8.3f} ms   R {r_s * 1e3:8.1f} ms   ratio {ratio}   max |diff| {diff:.1e}")

    print(f"median of {args.repeats} repeats; R timed inside R with system.time (1 ms resolution)")
    for name, x in matrices.items():
        t, res = median_time(lambda x=x: icc_from_matrix(x), args.repeats)
        frame = res.to_frame()
        values = np.concatenate([frame["icc"], frame["f"], frame["ci_low"], frame["ci_high"]])
        line(f"ICC six forms, {name}", t, values, f"icc_{name}")
        t, w = median_time(lambda x=x: kendall_w(x), args.repeats)
        line(f"Kendall's W, {name}", t, [w.w], f"w_{name}")
    t, a = median_time(lambda: cronbach_alpha(questionnaire), args.repeats)
    line("Cronbach's alpha + Feldt, 320 x 15", t, [a.alpha, a.ci_low, a.ci_high], "alpha_320x15")
    ratings = validate_ratings(long.astype({"rating": str}))
    t, _ = median_time(lambda: reliability_report(ratings, rng=1), max(1, args.repeats // 2))
    print(
        f"{'reliability_report, 16 x 15 x 20 (2 groups)':<42} ours {t * 1e3:8.1f} ms   "
        f"({len(ratings)} ratings, 2000 bootstrap replicates per question)"
    )


if __name__ == "__main__":
    main()
