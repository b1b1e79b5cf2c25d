"""The hierarchical decision on simulated studies whose criteria share pairs, and one-vote-per-pair studies.

usage: python -m judge_transfer_audit.verdict.hierarchy_study [--studies N] [--seed S] [--n-boot B] [--rows NAME,...]

Each row is a design and a judge; a study is one audit (:func:`~judge_transfer_audit.verdict.assess.decide_cells`, the
pipeline's path, with each cell's matchup as its group). Per row: the share of studies whose study-level
test FAILs, of matchups that FAIL, of cells that FAIL, and, for the judges that reproduce the readers,
the share of studies with any false FAIL (a cell, matchup or study FAILed though every cell concerned is
truly within the margin of the true band with no true direction conflict), each with its binomial
standard error; for the biased judge the share of the cells truly more than 30 points out that FAIL,
and on a line of its own how many of those cells' raw FAIL p-values clear alpha, alpha / matchups and
alpha / cells (:func:`raw_p_line`: what a rule that FAILs a cell on its own evidence could reach).

Designs (readers' preference per matchup drawn once per study; criteria of a matchup share the pairs:
pair effects correlated ``RHO`` across criteria):

``paper``      3 matchups x 6 criteria, 20 pairs x 7 readers; the first matchup's readers near 43%
``90cells``    10 matchups x 9 criteria, 20 pairs x 7 readers
``150x12``     3 matchups x 6 criteria, 150 pairs x 12 readers
``arena``      one vote per pair: 8 systems of evenly spaced strength (``STRENGTH_RANGE``), 28 matchups,
               714 votes each (20k votes), one criterion, each vote by one of 2,000 readers

Judges: ``biased`` (prefers the focal system with probability 0.95 whatever the pair), ``majority``
(the readers' expected majority on every pair), ``reader-like`` (one more reader), ``wrong-side``
(the opposite of the readers' expected majority).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.model.policy import TransferPolicy
from judge_transfer_audit.model.tie_rules import EVEN_SPLIT
from judge_transfer_audit.verdict.assess import CellInput, decide_cells
from judge_transfer_audit.verdict.compare import cell_generator
from judge_transfer_audit.verdict.decision import cell_p
from judge_transfer_audit.verdict.simulate import (
    CellDesign,
    band_distance,
    credit_probability,
    true_majority_rate,
    true_vote_share,
)

RHO = 0.7  #: correlation of a pair's effects across the criteria of its matchup
SD_PAIR, SD_READER = 0.8, 0.3
BIASED = 0.95
STRENGTH_RANGE = 1.4  #: arena: strengths evenly spaced on [-1.4, 1.4] (neighbours 0.4 apart on the logit scale)


@dataclass(frozen=True)
class StudyDesign:
    name: str
    matchups: int
    criteria: int
    n_pairs: int
    n_readers: int  #: readers per pair (arena: 1) ...
    pool: int = 0  #: ... drawn from a pool of this many readers (0: the same readers read every pair)
    first_b0: float | None = None  #: the first matchup's readers' b0 (the paper's R1 vs V3 near 43%)
    systems: int = 0  #: > 0: the matchups are every pair of this many systems of evenly spaced strength


DESIGNS = {
    "paper": StudyDesign("paper", 3, 6, 20, 7, first_b0=-0.3),
    "50x7": StudyDesign("50x7", 3, 6, 50, 7, first_b0=-0.3),
    "90cells": StudyDesign("90cells", 10, 9, 20, 7),
    "150x12": StudyDesign("150x12", 3, 6, 150, 12),
    "arena": StudyDesign("arena", 28, 1, 714, 1, pool=2000, systems=8),
}
JUDGES = ("biased", "majority", "reader-like", "wrong-side")


def _judge(kind: str, latent: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, float | None]:
    """The judge's credits on a criterion's pairs and (reader-like) its own reader effect."""
    if kind == "biased":
        return np.where(rng.random(latent.size) < BIASED, 1.0, 0.0), None
    if kind == "majority":
        return np.where(latent > 0, 1.0, 0.0), None
    if kind == "wrong-side":
        return np.where(latent > 0, 0.0, 1.0), None
    if kind == "reader-like":
        v = rng.normal(0.0, SD_READER)
        return (rng.random(latent.size) < expit(latent + v)).astype(float), v
    raise ValueError(kind)


def _truth(kind: str, d: CellDesign, v_j: float | None) -> float:
    if kind == "biased":
        return BIASED
    if kind == "majority":
        return true_majority_rate(d)
    if kind == "wrong-side":
        return 1.0 - true_majority_rate(d)
    x, w = np.polynomial.hermite_e.hermegauss(40)
    w = w / w.sum()
    return float(np.sum(w * credit_probability(d.b0 + x * d.sd_pair + v_j, 0.0)))


def simulate_study(design: StudyDesign, kind: str, study: int, seed: int):
    """One study's cell inputs (groups set) and per cell its truths: (inputs, truly_out, far, group)."""
    rng = cell_generator(seed, "hierarchy", design.name, kind, str(study))
    inputs, truth = [], []
    strengths = np.linspace(-STRENGTH_RANGE, STRENGTH_RANGE, design.systems) if design.systems else None
    duels = [(a, b) for a in range(design.systems) for b in range(a + 1, design.systems)]
    for g in range(design.matchups):
        b0s = rng.normal(0.3, 0.7, design.criteria)
        if strengths is not None:
            a, b = duels[g]
            b0s = np.full(design.criteria, strengths[b] - strengths[a])
        if g == 0 and design.first_b0 is not None:
            b0s = design.first_b0 + rng.normal(0.0, 0.1, design.criteria)
        common = rng.standard_normal(design.n_pairs)
        n_pool = design.pool or design.n_readers
        reader_effect = rng.normal(0.0, SD_READER, n_pool)
        pairs = np.array([f"m{g:02d}p{i:04d}" for i in range(design.n_pairs)])
        for k in range(design.criteria):
            d = CellDesign(b0=float(b0s[k]), sd_pair=SD_PAIR, sd_reader=SD_READER)
            u = SD_PAIR * (np.sqrt(RHO) * common + np.sqrt(1 - RHO) * rng.standard_normal(design.n_pairs))
            if design.pool:
                readers = rng.integers(0, n_pool, (design.n_pairs, design.n_readers))
            else:
                readers = np.broadcast_to(np.arange(design.n_readers), (design.n_pairs, design.n_readers))
            eta = d.b0 + u[:, None] + reader_effect[readers]
            y = (rng.random(eta.shape) < expit(eta)).astype(float)
            pair_id = np.repeat(pairs, design.n_readers)
            reader_id = np.array([f"r{r:04d}" for r in readers.ravel()])
            credit, v_j = _judge(kind, d.b0 + u, rng)
            key = (f"m{g:02d}", "focal", f"c{k}")
            inputs.append(
                CellInput(key, 1.0, pair_id, reader_id, y.ravel(), pairs, credit, group=(f"m{g:02d}", "focal"))
            )
            j, v, m = _truth(kind, d, v_j), true_vote_share(d), true_majority_rate(d)
            dist = band_distance(j, v, m)
            conflict = (j - 0.5) * (v - 0.5) < 0 and abs(j - 0.5) > 0.05 and abs(v - 0.5) > 0.05
            truth.append((abs(dist) > 0.10 or conflict, abs(dist) > 0.30, g))
    return inputs, truth


def run_row(design: StudyDesign, kind: str, studies: int, seed: int, n_boot: int, pool: bool = True) -> dict:
    policy = TransferPolicy(n_boot=n_boot, pool_criteria=pool)
    study_fail = matchup_false = study_false = first_fail = 0
    cells_fail = cells = far = far_fail = errors = matchups_fail = matchups = 0
    study_pass = 0
    far_p: list[float] = []  # the raw FAIL p of the cells truly more than 30 points out
    for s in range(studies):
        inputs, truth = simulate_study(design, kind, s, seed)
        transfers, _ = decide_cells(inputs, tie_rule=EVEN_SPLIT, policy=policy, seed=seed + s)
        decided = summarize(transfers, [t[2] for t in truth], policy)
        study_fail += decided["study"] == "FAIL"
        study_pass += decided["study"] == "PASS"
        first_fail += decided["matchups"].get(0) == "FAIL"  # the first matchup (the paper's R1 vs V3)
        errors += sum(t.status is Status.ERROR for t in transfers)
        for status in decided["matchups"].values():
            matchups += 1
            matchups_fail += status == "FAIL"
        false_any = False
        for t, (out, is_far, _) in zip(transfers, truth):
            cells += 1
            cells_fail += t.status is Status.FAIL
            if is_far:
                far += 1
                far_fail += t.status is Status.FAIL
                far_p.append(cell_p(t.p_outside, t.p_conflict))
            if t.status is Status.FAIL and not out:
                false_any = True
        for g, status in decided["matchups"].items():
            if status == "FAIL" and not any(out for out, _, gg in truth if gg == g):
                matchup_false += 1
                false_any = True
        study_false += false_any
    return {
        "design": design.name,
        "judge": kind,
        "studies": studies,
        "study_FAIL": study_fail / studies,
        "study_PASS": study_pass / studies,
        "first_FAIL": first_fail / studies,
        "matchup_FAIL": matchups_fail / max(matchups, 1),
        "cell_FAIL": cells_fail / max(cells, 1),
        "cell_ERROR": errors,
        "far_cells": far,
        "far_FAIL": far_fail / far if far else float("nan"),
        "any_false_FAIL": study_false / studies,
        "_n": (studies, max(matchups, 1), max(cells, 1), max(far, 1)),
        "far_p": np.asarray(far_p, float),
        "cells_per_study": len(truth),
        "matchups_per_study": design.matchups,
    }


def raw_p_line(r: dict, alpha: float) -> str:
    """How many of the far-out cells' raw p-values clear alpha, alpha / matchups and alpha / cells: the
    share any rule that FAILs a cell on its own evidence can reach at those levels (no adjustment, a
    Bonferroni over the matchups, over every cell)."""
    p = np.nan_to_num(r["far_p"], nan=1.0)
    n = p.size
    parts = []
    for label, level in (
        ("alpha", alpha),
        ("alpha/matchups", alpha / r["matchups_per_study"]),
        ("alpha/cells", alpha / r["cells_per_study"]),
    ):
        share = float(np.mean(p < level))
        parts.append(f"< {label} ({level:.2g}) {share:.3f} ± {_se(share, n):.3f}")
    return f"         far cells' raw p (n = {n}): " + "; ".join(parts)


def summarize(transfers, groups, policy: TransferPolicy) -> dict:
    """The study and matchup statuses from the cells' transfers
    (:func:`judge_transfer_audit.verdict.hierarchy.levels`)."""
    from judge_transfer_audit.verdict.hierarchy import levels

    if policy.pool_criteria:
        return levels(transfers, groups, policy)
    # Holm over the cells: a matchup (the study) FAILs when one of its cells does, PASSes when all do
    statuses = {}
    for g in dict.fromkeys(groups):
        mine = [t.status for t, h in zip(transfers, groups) if h == g]
        statuses[g] = (
            "FAIL" if Status.FAIL in mine else ("PASS" if all(s is Status.PASS for s in mine) else "INCONCLUSIVE")
        )
    study = (
        "FAIL" if "FAIL" in statuses.values() else ("PASS" if set(statuses.values()) == {"PASS"} else "INCONCLUSIVE")
    )
    return {"study": study, "matchups": statuses}


def _se(p: float, n: int) -> float:
    return float(np.sqrt(p * (1 - p) / n)) if np.isfinite(p) and n > 0 else float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m judge_transfer_audit.verdict.hierarchy_study", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--studies", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-boot", type=int, default=499)
    parser.add_argument("--rows", default="paper:biased,paper:reader-like,paper:majority")
    parser.add_argument(
        "--no-pool", action="store_true", help="Holm over the cells (policy transfer.pool_criteria false)"
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(
        "design   judge        studies  study FAIL     study PASS     matchup FAIL   1st matchup FAIL  cell FAIL  "
        "ERROR  far FAIL (n)          any false FAIL"
    )
    for spec in args.rows.split(","):
        name, kind = spec.split(":")
        r = run_row(DESIGNS[name], kind, args.studies, args.seed, args.n_boot, pool=not args.no_pool)
        n_s, n_m, n_c, n_f = r["_n"]
        far = f"{r['far_FAIL']:.3f} ± {_se(r['far_FAIL'], n_f):.3f} ({r['far_cells']})" if r["far_cells"] else "-"
        print(
            f"{r['design']:8s} {r['judge']:12s} {n_s:7d}  {r['study_FAIL']:.3f} ± {_se(r['study_FAIL'], n_s):.3f}  "
            f"{r['study_PASS']:.3f} ± {_se(r['study_PASS'], n_s):.3f}  {r['matchup_FAIL']:.3f} ± "
            f"{_se(r['matchup_FAIL'], n_m):.3f}  {r['first_FAIL']:.3f} ± {_se(r['first_FAIL'], n_s):.3f}    "
            f"{r['cell_FAIL']:.3f}      {r['cell_ERROR']:5d}  {far:20s}  "
            f"{r['any_false_FAIL']:.3f} ± {_se(r['any_false_FAIL'], n_s):.3f}",
            flush=True,
        )
        if r["far_cells"]:
            print(raw_p_line(r, TransferPolicy().alpha), flush=True)
    print(
        f"({time.perf_counter() - started:.0f} s; python -m judge_transfer_audit.verdict.hierarchy_study "
        + " ".join(argv if argv is not None else sys.argv[1:])
        + ")"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
