"""Benchmark: our coincidence-matrix Krippendorff alpha against the ``krippendorff`` package,
our Fleiss kappa against statsmodels, and agreement_table / reader_baseline on a
paper-shaped study.

Each case prints the median wall time over repeats of both implementations, the ratio,
and the absolute difference of the two values (they must agree to ~1e-12).

Run: ``python benchmarks/agreement.py [--repeats 7]``
"""

from __future__ import annotations

import argparse
import statistics
import time

import krippendorff
import numpy as np
import pandas as pd
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from judge_transfer_audit.statistics.agreement import agreement_table, fleiss_kappa, reader_baseline
from judge_transfer_audit.statistics.reliability.krippendorff import krippendorff_alpha_matrix


def median_time(fn, repeats: int) -> tuple[float, object]:
    times, value = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), value


def likert(rng, coders, units, k, missing):
    latent = rng.normal(size=units)
    x = np.clip(np.round(latent + rng.normal(scale=1.2, size=(coders, units)) + (k + 1) / 2), 1, k)
    x[rng.random(x.shape) < missing] = np.nan
    return x


def paper_votes(rng):
    rows = []
    for m in ("gpt5-high-vs-gpt4o", "gpt5-low-vs-gpt4o", "r1-vs-v3"):
        for p in range(20):
            lean = rng.uniform(0.3, 0.7)
            for c in (
                "authenticity",
                "empathy",
                "engagement",
                "emotion_provocation",
                "narrative_complexity",
                "overall",
            ):
                for r in range(7):
                    rows.append(
                        dict(
                            pair_id=f"{m}:{p}", reader_id=f"r{r}", criterion=c, matchup=m, y=float(rng.random() < lean)
                        )
                    )
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(20261130)
    print(f"{'case':46s} {'ours (ms)':>10s} {'other (ms)':>11s} {'ratio':>7s} {'|diff|':>9s}")
    cases = [
        ("alpha nominal, 7 readers x 60 pairs, 3 cat.", likert(rng, 7, 60, 3, 0.0), "nominal"),
        ("alpha ordinal, 5 readers x 97 stories (PDS)", likert(rng, 5, 97, 5, 0.0), "ordinal"),
        ("alpha interval, 3 experts x 1600 (SummEval)", likert(rng, 3, 1600, 5, 0.0), "interval"),
        ("alpha nominal, 20 coders x 20000, 10% miss.", likert(rng, 20, 20000, 5, 0.1), "nominal"),
        ("alpha ordinal, 20 coders x 20000, 10% miss.", likert(rng, 20, 20000, 5, 0.1), "ordinal"),
        # the package builds a units x V x V array: continuous data are kept small for it
        ("alpha interval, 3 x 100 continuous", rng.normal(size=(3, 100)), "interval"),
    ]
    ratios = []
    for name, x, level in cases:
        ours_t, ours_v = median_time(lambda x=x, level=level: krippendorff_alpha_matrix(x, level).alpha, args.repeats)
        pkg_t, pkg_v = median_time(
            lambda x=x, level=level: krippendorff.alpha(reliability_data=x, level_of_measurement=level), args.repeats
        )
        ratios.append(pkg_t / ours_t)
        print(f"{name:46s} {ours_t * 1e3:10.2f} {pkg_t * 1e3:11.2f} {pkg_t / ours_t:6.1f}x {abs(ours_v - pkg_v):9.1e}")
    counts = np.stack([rng.multinomial(7, [0.45, 0.45, 0.1]) for _ in range(5000)])
    ours_t, ours_v = median_time(lambda: fleiss_kappa(counts)[0], args.repeats)
    sm_t, sm_v = median_time(lambda: sm_fleiss_kappa(counts), args.repeats)
    print(
        f"{'Fleiss kappa, 5000 units x 7 raters (statsmodels)':46s} {ours_t * 1e3:10.2f} {sm_t * 1e3:11.2f} "
        f"{sm_t / ours_t:6.1f}x {abs(ours_v - sm_v):9.1e}"
    )
    votes = paper_votes(rng)
    judge = votes[["pair_id", "criterion"]].drop_duplicates().assign(y_judge=1.0)
    table_t, _ = median_time(lambda: agreement_table(votes), args.repeats)
    base_t, _ = median_time(lambda: reader_baseline(votes, judge), args.repeats)
    print(f"{'agreement_table, 2,520 votes (27 rows)':46s} {table_t * 1e3:10.2f}")
    print(f"{'reader_baseline with judge, 2,520 votes':46s} {base_t * 1e3:10.2f}")
    print(
        f"median speed-up of our alpha over the krippendorff package: {statistics.median(ratios):.1f}x "
        f"(median of {args.repeats} repeats per case)"
    )


if __name__ == "__main__":
    main()
