"""Coverage and width of the prediction-powered vote share (judge_transfer_audit.statistics.prediction_powered.ppi_mean)
on seeded crossed designs: per matchup ``n_voted`` voted pairs read by every one of ``readers``
readers (pairs x readers crossed), the judge on ``n_voted / fraction`` pairs, its quality from
useless to near-perfect. Prints one row per design: coverage of the 95% interval with its
Monte Carlo standard error, the mean width over the human-only width, and lam.

    python benchmarks/prediction_powered.py --studies 500
    python benchmarks/prediction_powered.py --target   # 20k one-vote pairs, humans on 10%
    python benchmarks/prediction_powered.py --majority # the majority rate on the same grid

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
    b0=B0,
):
    n_total = int(round(n_voted / fraction))
    u = rng.normal(0.0, sd_pair, n_total)
    # readers=0: one vote per pair, each from a reader of its own (readers drawn per vote)
    v = rng.normal(0.0, sd_reader, readers if readers else n_voted)
    if oracle:  # the ceiling: a judge that reports each pair's population share exactly
        x, w = np.polynomial.hermite_e.hermegauss(40)
        f = (w / w.sum() / (1.0 + np.exp(-(b0 + u[:, None] + sd_reader * x[None, :])))).sum(1)
    elif judge_votes:  # a judge that votes like one more reader drawn from the population
        f = (rng.uniform(size=n_total) < 1.0 / (1.0 + np.exp(-(b0 + u + rng.normal(0, sd_reader, n_total))))) * 1.0
    else:
        sees = rng.uniform(size=n_total) < 2.0 * quality - 1.0
        lean = b0 + u + rng.normal(0.0, 0.5, n_total) > 0
        f = np.where(sees, lean, rng.uniform(size=n_total) < 0.5).astype(float)
    voted = rng.permutation(n_total)[:n_voted]
    unl = np.setdiff1d(np.arange(n_total), voted)
    pair = np.repeat(np.arange(n_voted), max(readers, 1))
    reader = np.tile(np.arange(readers), n_voted) if readers else np.arange(n_voted)
    p = 1.0 / (1.0 + np.exp(-(b0 + u[voted][pair] + v[reader])))
    credit = (rng.uniform(size=len(p)) < p).astype(float)
    share = ppi_mean(credit, pair, f[voted], f[unl], reader_of_vote=reader, level=0.95)
    if majority:
        from judge_transfer_audit.statistics.prediction_powered.compute import majority_ppi

        return majority_ppi(credit, pair, reader, f[voted], f[unl], share, 0.95)
    return share


def majority(
    studies: int, seed: int, b0: float = B0, sd_reader: float = SD_READER, designs: list[tuple] | None = None
) -> None:
    """Coverage of the majority rate M = P(b0 + u > 0) = Phi(b0 / sd_pair) (readers symmetric
    around 0, so a pair's population majority is the sign of b0 + u) on the vote share's grid, or
    on the given ``designs`` (n_voted, readers, fraction, quality) only (same seeds per design)."""
    from judge_transfer_audit.statistics.distributions import norm

    true = float(norm.cdf(b0 / SD_PAIR))
    print(f"majority rate: truth M = {true:.4f} (b0 {b0}, sd_reader {sd_reader}); {studies} studies per design")
    print(
        "n_voted readers fraction quality | coverage (se) | human-only coverage | width/human-only"
        " | misses: interval below / above the truth"
    )
    rows = []
    grid_ = designs or list(itertools.product((20, 60), (3, 12), (0.05, 0.5), (0.5, 0.75, 0.97)))
    for n_voted, readers, fraction, quality in grid_:
        rng = np.random.default_rng([seed, n_voted, readers, int(fraction * 100), int(quality * 100), 1])
        cover, hcover, ratio, below, above = 0, 0, [], 0, 0
        for _ in range(studies):
            m, lo, hi, _, hm, hlo, hhi, se, hse = study(
                rng, n_voted, fraction, readers, quality, majority=True, b0=b0, sd_reader=sd_reader
            )
            cover += lo <= true <= hi
            below += hi < true
            above += lo > true
            hcover += hlo <= true <= hhi
            ratio.append((hi - lo) / (hhi - hlo) if hhi > hlo else np.nan)
        c = cover / studies
        rows.append(c)
        print(
            f"{n_voted:7d} {readers:7d} {fraction:8.2f} {quality:7.2f} | "
            f"{c:.3f} ({math.sqrt(c * (1 - c) / studies):.3f}) | {hcover / studies:.3f} | "
            f"{np.nanmean(ratio):.3f} | {below / studies:.3f} / {above / studies:.3f}"
        )
    print(f"coverage over all designs: min {min(rows):.3f}, mean {np.mean(rows):.3f}, max {max(rows):.3f}")


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


def one_vote_study(rng, design: str, judge: str, n_total: int = 20_000, n_voted: int = 2_000):
    """Humans on ``n_voted`` of ``n_total`` pairs, one vote each by a reader of its own.

    design: ``sd=S`` a pair's logit ``b0 + u``, u ~ N(0, S); ``decisive`` 60% of the pairs at
    logit +2.944 and 40% at -2.944 (95% / 5% of the votes for the focal system). Readers add
    N(0, sd_reader) to the logit. judge: ``reader`` votes like one more reader; ``side=A`` the
    pair's majority side (its logit's sign), right with probability A; ``oracle`` each pair's
    population share (a probability: the ceiling; a verdict cannot carry it).
    Returns (the PPI mean, truth, the population share of a vote's variance the judge explains)."""
    if design == "decisive":
        logit = np.where(rng.uniform(size=n_total) < 0.6, 2.944, -2.944)
    else:
        logit = B0 + rng.normal(0.0, float(design.split("=")[1]), n_total)
    x, w = np.polynomial.hermite_e.hermegauss(40)
    w = w / w.sum()
    share = (w / (1.0 + np.exp(-(logit[:, None] + SD_READER * x[None, :])))).sum(1)
    if judge == "reader":
        f = (rng.uniform(size=n_total) < 1.0 / (1.0 + np.exp(-(logit + rng.normal(0, SD_READER, n_total))))) * 1.0
    elif judge == "oracle":
        f = share
    else:
        right = rng.uniform(size=n_total) < float(judge.split("=")[1])
        f = np.where(right, logit > 0, logit <= 0).astype(float)
    voted = rng.permutation(n_total)[:n_voted]
    unl = np.setdiff1d(np.arange(n_total), voted)
    p = 1.0 / (1.0 + np.exp(-(logit[voted] + rng.normal(0.0, SD_READER, n_voted))))
    credit = (rng.uniform(size=n_voted) < p).astype(float)
    r = ppi_mean(credit, np.arange(n_voted), f[voted], f[unl], reader_of_vote=np.arange(n_voted), level=0.95)
    v = float(share.mean())
    explained = float(np.cov(share, f)[0, 1] ** 2 / (np.var(f, ddof=1) * v * (1.0 - v))) if np.var(f) > 0 else 0.0
    return r, explained


TARGET_DESIGNS = ("sd=1.0", "sd=2.5", "sd=6.0", "decisive")
TARGET_JUDGES = ("reader", "side=0.90", "side=0.95", "side=0.98", "side=1.0", "oracle")


def target(studies: int, seed: int) -> None:
    """Humans on 10% of 20k one-vote pairs: width against human-only and coverage per design x
    judge, beside the ceiling ``1 - sqrt(1 - (N / T) rho^2)`` (rho^2 the population share of a
    vote's variance the judge's prediction explains, N / T = 0.9 the judge-only share)."""
    print(f"{studies} studies per design; 2,000 voted of 20,000 pairs, one vote per pair")
    print("design   judge      | coverage (se) | width/human-only | narrower | ceiling (rho^2)")
    for design in TARGET_DESIGNS:
        if design == "decisive":
            x, w = np.polynomial.hermite_e.hermegauss(80)
            w = w / w.sum()
            true = float(
                sum(pi * np.sum(w / (1 + np.exp(-(b + SD_READER * x)))) for pi, b in ((0.6, 2.944), (0.4, -2.944)))
            )
        else:
            true = truth(B0, float(design.split("=")[1]), SD_READER)
        for judge in TARGET_JUDGES:
            rng = np.random.default_rng([seed, TARGET_DESIGNS.index(design), TARGET_JUDGES.index(judge)])
            cover, ratio, rho2 = 0, [], []
            for _ in range(studies):
                r, explained = one_vote_study(rng, design, judge)
                cover += r.ci_low <= true <= r.ci_high
                ratio.append(r.width_ratio)
                rho2.append(explained)
            c, wr, e = cover / studies, float(np.mean(ratio)), float(np.mean(rho2))
            print(
                f"{design:8s} {judge:10s} | {c:.3f} ({math.sqrt(c * (1 - c) / studies):.3f}) | {wr:.3f} | "
                f"{1 - wr:6.1%} | {1 - math.sqrt(1 - 0.9 * e):6.1%} ({e:.3f})"
            )


def cost(folder: str, repeats: int = 3) -> None:
    """Seconds of the section alone against the whole audit (``audit.run``, what ``audit run``
    computes before writing its files) on a benchmarks/scale_data.py FOLDER, its judge file
    copied onto 9x more pair ids (judge_all.csv, written once: 90% of the judged pairs carry only
    the judge). The best of ``repeats`` timings of each, one after the other in this process."""
    import time
    from pathlib import Path

    import pandas as pd

    from judge_transfer_audit.api import run
    from judge_transfer_audit.engine.pipeline import choose_primary_judge, judge_choices
    from judge_transfer_audit.inputs import load_audit_data
    from judge_transfer_audit.model.spec import AuditSpec
    from judge_transfer_audit.model.tie_rules import EVEN_SPLIT
    from judge_transfer_audit.sections.prediction_powered import compute as section
    from judge_transfer_audit.verdict.judge_side import judge_pair_outcomes

    d = Path(folder)
    if not (d / "judge_all.csv").exists():  # the judge on 10x the voted pairs: 9 renamed copies
        j = pd.read_csv(d / "judge.csv", dtype={"pair_id": str})
        copies = [j.assign(pair_id=j["pair_id"] + f"_j{r}") for r in range(9)]
        pd.concat([j, *copies]).to_csv(d / "judge_all.csv", index=False)
    data = load_audit_data(d / "judge_all.csv", d / "humans.csv")
    outcomes = judge_pair_outcomes(data, EVEN_SPLIT, np.random.default_rng(0))
    primary = choose_primary_judge(data.judges, None)
    choices = judge_choices(outcomes, primary, data.criteria)
    spec = AuditSpec()
    took = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        got = section.compute(data, spec, choices=choices, primary=primary, seed=np.random.SeedSequence(0))
        took.append(time.perf_counter() - t0)
    whole = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = run(d / "judge_all.csv", d / "humans.csv", seed=0)
        whole.append(time.perf_counter() - t0)
    print(
        f"{len(data.votes):,} votes, {len(data.pairs):,} voted pairs, {data.n_judge_only_pairs:,} judge-only pairs: "
        f"the prediction-powered section {min(took):.2f} s ({got.status.value}, in the run "
        f"{result.prediction_powered.status.value}; load excluded), the whole audit "
        f"(audit.run, load included) {min(whole):.1f} s: {min(took) / min(whole):.1%} (best of {repeats}; "
        f"section {', '.join(f'{t:.2f}' for t in took)} s, audit {', '.join(f'{t:.1f}' for t in whole)} s)"
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
    ap.add_argument("--b0", type=float, default=B0, help="--majority: the mean logit preference (truth Phi(b0))")
    ap.add_argument("--sd-reader", type=float, default=SD_READER, help="--majority: the readers' leniency sd")
    ap.add_argument(
        "--design",
        action="append",
        metavar="N,R,F,Q",
        help="--majority: only this design (voted pairs, readers, voted share, judge quality); repeatable",
    )
    ap.add_argument("--leaderboard", action="store_true", help="coverage of the Bradley-Terry strengths")
    ap.add_argument("--cost", metavar="DIR", help="time the section on a scale_data.py folder (see cost())")
    a = ap.parse_args()
    if a.cost:
        cost(a.cost)
        return
    if a.leaderboard:
        leaderboard(a.studies, a.seed)
        return
    if a.majority:
        designs = None
        if a.design:
            try:
                designs = [(int(n), int(r), float(f), float(q)) for n, r, f, q in (d.split(",") for d in a.design)]
            except ValueError:
                ap.error("--design takes N,R,F,Q, e.g. 60,12,0.05,0.97")
        majority(a.studies, a.seed, a.b0, a.sd_reader, designs)
        return
    (target if a.target else grid)(a.studies, a.seed)


if __name__ == "__main__":
    main()
