"""Coverage and width of the prediction-powered vote share (judge_transfer_audit.statistics.prediction_powered.ppi_mean)
on seeded crossed designs: per matchup ``n_voted`` voted pairs read by every one of ``readers``
readers (pairs x readers crossed), the judge on ``n_voted / fraction`` pairs, its quality from
useless to near-perfect. Prints one row per design: coverage of the 95% interval with its
Monte Carlo standard error, the mean width over the human-only width, and lam.

    python benchmarks/prediction_powered.py --studies 500
    python benchmarks/prediction_powered.py --target   # 20k one-vote pairs, humans on 10%

Truth: the population vote share ``E[expit(b0 + u + v)]`` over pairs u ~ N(0, sd_pair) and
readers v ~ N(0, sd_reader) (quadrature). The judge reports the sign of a noisy view of the
pair's preference with probability 2 quality - 1 (else a coin), or (``--target``) votes like one
more reader.
"""

from __future__ import annotations

import argparse
import itertools
import math

import numpy as np

from judge_transfer_audit.statistics.prediction_powered.estimators import ppi_mean

B0, SD_PAIR, SD_READER = 0.4, 1.0, 0.3


def truth(b0: float, sd_pair: float, sd_reader: float) -> float:
    x, w = np.polynomial.hermite_e.hermegauss(80)
    return float(np.sum(w / w.sum() / (1.0 + np.exp(-(b0 + math.hypot(sd_pair, sd_reader) * x)))))


def study(
    rng,
    n_voted,
    fraction,
    readers,
    quality,
    sd_pair=SD_PAIR,
    sd_reader=SD_READER,
    judge_votes=False,
    oracle=False,
    majority=False,
):
    n_total = int(round(n_voted / fraction))
    u = rng.normal(0.0, sd_pair, n_total)
    # readers=0: one vote per pair, each from a reader of its own (readers drawn per vote)
    v = rng.normal(0.0, sd_reader, readers if readers else n_voted)
    if oracle:  # the ceiling: a judge that reports each pair's population share exactly
        x, w = np.polynomial.hermite_e.hermegauss(40)
        f = (w / w.sum() / (1.0 + np.exp(-(B0 + u[:, None] + sd_reader * x[None, :])))).sum(1)
    elif judge_votes:  # a judge that votes like one more reader drawn from the population
        f = (rng.uniform(size=n_total) < 1.0 / (1.0 + np.exp(-(B0 + u + rng.normal(0, sd_reader, n_total))))) * 1.0
    else:
        sees = rng.uniform(size=n_total) < 2.0 * quality - 1.0
        lean = B0 + u + rng.normal(0.0, 0.5, n_total) > 0
        f = np.where(sees, lean, rng.uniform(size=n_total) < 0.5).astype(float)
    voted = rng.permutation(n_total)[:n_voted]
    unl = np.setdiff1d(np.arange(n_total), voted)
    pair = np.repeat(np.arange(n_voted), max(readers, 1))
    reader = np.tile(np.arange(readers), n_voted) if readers else np.arange(n_voted)
    p = 1.0 / (1.0 + np.exp(-(B0 + u[voted][pair] + v[reader])))
    credit = (rng.uniform(size=len(p)) < p).astype(float)
    share = ppi_mean(credit, pair, f[voted], f[unl], reader_of_vote=reader, level=0.95)
    if majority:
        from judge_transfer_audit.statistics.prediction_powered.compute import majority_ppi

        return majority_ppi(credit, pair, reader, f[voted], f[unl], share, 0.95)
    return share


def majority(studies: int, seed: int) -> None:
    """Coverage of the majority rate M = P(b0 + u > 0) = Phi(b0 / sd_pair) (symmetric readers)."""
    from judge_transfer_audit.statistics.distributions import norm

    true = float(norm.cdf(B0 / SD_PAIR))
    print(f"majority rate: truth M = {true:.4f}; {studies} studies per design")
    for n_voted, readers, fraction, quality in itertools.product((20, 60), (3, 12), (0.1,), (0.5, 0.97)):
        rng = np.random.default_rng([seed, n_voted, readers, 1])
        cover, hcover, ratio = 0, 0, []
        for _ in range(studies):
            m, lo, hi, _, hm, hlo, hhi, se, hse = study(rng, n_voted, fraction, readers, quality, majority=True)
            cover += lo <= true <= hi
            hcover += hlo <= true <= hhi
            ratio.append((hi - lo) / (hhi - hlo) if hhi > hlo else np.nan)
        c = cover / studies
        print(
            f"{n_voted:7d} {readers:7d} {fraction:8.2f} {quality:7.2f} | "
            f"{c:.3f} ({math.sqrt(c * (1 - c) / studies):.3f}) | human-only {hcover / studies:.3f} | "
            f"width/human-only {np.nanmean(ratio):.3f}"
        )


def grid(studies: int, seed: int) -> None:
    true = truth(B0, SD_PAIR, SD_READER)
    print(f"truth V = {true:.4f}; {studies} studies per design; sd_pair {SD_PAIR}, sd_reader {SD_READER}")
    print("n_voted readers fraction quality | coverage (se) | human-only coverage | width/human-only | lam")
    rows = []
    for n_voted, readers, fraction, quality in itertools.product((20, 60), (3, 12), (0.05, 0.5), (0.5, 0.75, 0.97)):
        rng = np.random.default_rng([seed, n_voted, readers, int(fraction * 100), int(quality * 100)])
        cover = hcover = 0
        ratio, lam = [], []
        for _ in range(studies):
            r = study(rng, n_voted, fraction, readers, quality)
            cover += r.ci_low <= true <= r.ci_high
            hcover += r.human_ci[0] <= true <= r.human_ci[1]
            ratio.append(r.width_ratio)
            lam.append(r.lam)
        c = cover / studies
        rows.append(c)
        print(
            f"{n_voted:7d} {readers:7d} {fraction:8.2f} {quality:7.2f} | "
            f"{c:.3f} ({math.sqrt(c * (1 - c) / studies):.3f})"
            f" | {hcover / studies:.3f} | {np.mean(ratio):.3f} | {np.mean(lam):.3f}"
        )
    print(f"coverage over all designs: min {min(rows):.3f}, mean {np.mean(rows):.3f}")


def target(studies: int, seed: int) -> None:
    """Humans on 10% of 20k one-vote pairs (a reader of its own per vote): a judge that follows
    the readers (votes like one more reader; the majority side seen through noise, quality 0.9),
    and the ceiling (a judge that knows each pair's population share)."""
    for sd_pair in (1.0, 2.5):
        true = truth(B0, sd_pair, SD_READER)
        for name, kw in (
            ("votes like a reader", dict(judge_votes=True)),
            ("noisy majority, quality 0.9", dict(quality=0.9)),
            ("oracle: the pair's share", dict(oracle=True)),
        ):
            rng = np.random.default_rng([seed, int(sd_pair * 10)])
            cover, ratio = 0, []
            for _ in range(studies):
                extra = {k: v for k, v in kw.items() if k != "quality"}
                r = study(rng, 2000, 0.1, 0, kw.get("quality", 0.9), sd_pair=sd_pair, **extra)
                cover += r.ci_low <= true <= r.ci_high
                ratio.append(r.width_ratio)
            c = cover / studies
            print(
                f"sd_pair {sd_pair}: judge {name:28s} coverage {c:.3f} ({math.sqrt(c * (1 - c) / studies):.3f}), "
                f"width / human-only {np.mean(ratio):.3f} (narrower by {1 - np.mean(ratio):.1%})"
            )


def cost(folder: str) -> None:
    """Seconds of the section alone on a benchmarks/scale_data.py FOLDER, its judge file copied onto
    9x more pair ids (judge_all.csv, written once: 90% of the judged pairs carry only the judge)."""
    import time
    from pathlib import Path

    import pandas as pd

    from judge_transfer_audit.engine.pipeline import choose_primary_judge, judge_choices
    from judge_transfer_audit.inputs import load_audit_data
    from judge_transfer_audit.model.spec import AuditSpec
    from judge_transfer_audit.sections import prediction_powered as section
    from judge_transfer_audit.verdict.judge_side import judge_pair_outcomes

    d = Path(folder)
    if not (d / "judge_all.csv").exists():  # the judge on 10x the voted pairs: 9 renamed copies
        j = pd.read_csv(d / "judge.csv", dtype={"pair_id": str})
        copies = [j.assign(pair_id=j["pair_id"] + f"_j{r}") for r in range(9)]
        pd.concat([j, *copies]).to_csv(d / "judge_all.csv", index=False)
    data = load_audit_data(d / "judge_all.csv", d / "humans.csv")
    outcomes = judge_pair_outcomes(data, "even-split", np.random.default_rng(0))
    primary = choose_primary_judge(data.judges, None)
    choices = judge_choices(outcomes, primary, data.criteria)
    spec = AuditSpec()
    t0 = time.perf_counter()
    got = section.compute(data, spec, choices=choices, primary=primary, seed=np.random.SeedSequence(0))
    took = time.perf_counter() - t0
    print(
        f"{len(data.votes):,} votes, {len(data.pairs):,} voted pairs, {data.n_judge_only_pairs:,} judge-only pairs: "
        f"the prediction-powered section {took:.2f} s ({got.status.value})"
    )


def leaderboard(studies: int, seed: int) -> None:
    """Coverage of the prediction-powered Bradley-Terry strengths (one row per voted pair, its
    readers' mean vote; pairs x readers crossed): 4 systems, every matchup 40 voted pairs read by
    3 of 8 readers, the judge on 5x the pairs. Truth: the population estimating equations'
    solution (the logistic fit of each matchup's population vote share, matchups weighted equally)."""
    from judge_transfer_audit.statistics.leaderboard.fit import bt_design
    from judge_transfer_audit.statistics.prediction_powered.estimators import _fit_rectified, ppi_logistic

    systems = ["s0", "s1", "s2", "s3"]
    strength = np.array([0.0, 0.4, 0.8, -0.3])
    matchups = [(a, b) for a in range(4) for b in range(a + 1, 4)]
    x, w = np.polynomial.hermite_e.hermegauss(80)
    shares = np.array(
        [
            np.sum(w / w.sum() / (1 + np.exp(-(strength[a] - strength[b] + math.hypot(1.0, 0.3) * x))))
            for a, b in matchups
        ]
    )
    Xm = bt_design(np.array([systems[a] for a, _ in matchups]), np.array([systems[b] for _, b in matchups]), systems)
    one = np.ones(len(matchups))
    truth_coef = _fit_rectified(Xm, shares, shares, Xm[:0], shares[:0], 0.0, np.zeros(3), one, one[:0])
    for quality in (0.5, 0.97):
        rng = np.random.default_rng([seed, int(quality * 100)])
        cover, ratio = np.zeros(3), []
        for _ in range(studies):
            rows_l, rows_u = [], []
            v = rng.normal(0.0, 0.3, 8)
            for a, b in matchups:
                u = rng.normal(0.0, 1.0, 200)
                sees = rng.uniform(size=200) < 2 * quality - 1
                lean = strength[a] - strength[b] + u + rng.normal(0, 0.5, 200) > 0
                f = np.where(sees, lean, rng.uniform(size=200) < 0.5).astype(float)
                for i in range(200):
                    (rows_l if i < 40 else rows_u).append((a, b, u[i], f[i]))
            lab = np.array(rows_l)
            unl = np.array(rows_u)
            n = len(lab)
            pair = np.repeat(np.arange(n), 3)
            reader = np.concatenate([rng.choice(8, 3, replace=False) for _ in range(n)])
            eta = strength[lab[pair, 0].astype(int)] - strength[lab[pair, 1].astype(int)] + lab[pair, 2] + v[reader]
            credit = (rng.uniform(size=len(eta)) < 1 / (1 + np.exp(-eta))).astype(float)
            y = np.bincount(pair, weights=credit) / 3.0

            def design(rows):
                return bt_design(
                    np.array([systems[int(a)] for a in rows[:, 0]]),
                    np.array([systems[int(b)] for b in rows[:, 1]]),
                    systems,
                )

            fit = ppi_logistic(
                design(lab), y, lab[:, 3], design(unl), unl[:, 3], cluster_psi=(credit, pair, reader, np.full(n, 3.0))
            )
            lo, hi = fit.ci(0.95)
            cover += (lo <= truth_coef) & (truth_coef <= hi)
            ratio.append(np.mean(np.sqrt(np.diag(fit.vcov) / np.diag(fit.human_vcov))))
        c = cover / studies
        print(
            f"leaderboard, judge quality {quality}: coverage per coefficient {np.round(c, 3)} "
            f"(se {math.sqrt(0.95 * 0.05 / studies):.3f}); width / human-only {np.mean(ratio):.3f}"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--studies", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--target", action="store_true")
    ap.add_argument("--majority", action="store_true", help="coverage of the majority rate")
    ap.add_argument("--leaderboard", action="store_true", help="coverage of the Bradley-Terry strengths")
    ap.add_argument("--cost", metavar="DIR", help="time the section on a scale_data.py folder (see cost())")
    a = ap.parse_args()
    if a.cost:
        cost(a.cost)
        return
    if a.leaderboard:
        leaderboard(a.studies, a.seed)
        return
    (target if a.target else majority if a.majority else grid)(a.studies, a.seed)


if __name__ == "__main__":
    main()
