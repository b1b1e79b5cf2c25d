"""Calibration of the agreement decision: false FAIL and power on simulated studies.

usage: python -m judge_transfer_audit.verdict.agreement_calibration [--studies N] [--seed S] [--n-boot B]
                                             [--designs 7x20,7x60,paper,...] [--margin M] [--panel P]

A *study* on a design ``RxP`` (readers x pairs per matchup) is one matchup per cell design of
:data:`CELLS` (three matchups, one criterion each), every matchup with the same number of pairs and
the same readers, simulated from the crossed model of :mod:`judge_transfer_audit.verdict.simulate`. The named
designs of :data:`STUDY_DESIGNS` are the shapes users bring (several criteria of a matchup read on
the same pairs, ties, many cells, one vote per pair); see :func:`simulate_named_study`.
Each judge kind (:data:`JUDGES`) is decided on the same readers by
:func:`judge_transfer_audit.verdict.agreement_decision.agreement_decision` (default policy: margin 0.05, alpha 0.05,
Holm), and the table gives per design x judge the share of studies whose study-level decision
FAILs / PASSes, the share with a FAIL at any level (study, matchup or cell), and the share of cells
FAILed, each with its binomial standard error.

Judges (the first four reproduce the readers, the last three do not):

``following``    the majority of the readers' actual votes on each pair (a tie where they split)
``majority``     the readers' expected majority (:func:`judge_transfer_audit.verdict.simulate.simulate_judge`)
``reader-like``  one more reader from the model (same)
``noisy-aligned`` the expected majority seen through noise (same)
``coin``         picks the focal system with the readers' own vote share in the cell, whatever the pair
``biased``       prefers the focal system 90% of the time whatever the pair (``skewed`` there)
``wrong-side``   the opposite of the readers' expected majority (``reversed`` there)

Targets: the coin judge FAILs the study in >= 90% of studies at 7 readers x 60 pairs x 3
matchups; the judges that reproduce the readers FAIL in <= 5%. docs/agreement.md holds the table.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit

from judge_transfer_audit.verdict.agreement_decision import agreement_decision
from judge_transfer_audit.verdict.simulate import SKEW, CellDesign, simulate_cell, simulate_judge

JUDGES = ("following", "majority", "reader-like", "noisy-aligned", "coin", "biased", "wrong-side")
ALIGNED = ("following", "majority", "reader-like", "noisy-aligned")
_SIMULATE_KIND = {"biased": "skewed", "wrong-side": "reversed"}
#: the matchups of a study (one criterion each), per reader panel: readers at chance overall,
#: decisive, with ties and with missing votes. ``reliable``: the pairs differ a lot (sd 2.5 on the
#: logit scale: two readers agree on ~75% of votes); ``weak``: they differ little (sd 1.0: ~55%, of
#: which chance is ~50%), so a reader reproduces the others barely better than a coin does
PANELS = {
    "reliable": (
        CellDesign(b0=0.0, sd_pair=2.5, sd_reader=0.3),
        CellDesign(b0=0.5, sd_pair=2.5, sd_reader=0.3, tie=0.4),
        CellDesign(b0=-0.8, sd_pair=2.5, sd_reader=0.4, missing=0.1),
    ),
    "weak": (
        CellDesign(b0=0.0, sd_pair=1.0, sd_reader=0.3),
        CellDesign(b0=0.5, sd_pair=1.0, sd_reader=0.3, tie=0.4),
        CellDesign(b0=-0.8, sd_pair=1.2, sd_reader=0.4, missing=0.1),
    ),
}
CELLS = PANELS["reliable"]
DESIGNS = ((7, 20), (7, 60))


@dataclass(frozen=True)
class StudyOutcome:
    study: str  #: the study-level status
    any_fail: bool
    cells_fail: int
    cells: int


def _judge_credit(kind: str, cell, votes: pd.DataFrame, rng: np.random.Generator) -> np.ndarray:
    if kind == "following":
        g = votes.assign(f=(votes["y"] == 1.0).astype(float), o=(votes["y"] == 0.0).astype(float))
        s = g.groupby("pair_id", sort=False)[["f", "o"]].sum().reindex(cell.pairs).fillna(0.0)
        return np.where(s["f"] > s["o"], 1.0, np.where(s["f"] < s["o"], 0.0, 0.5))
    if kind == "coin":
        y = votes["y"].to_numpy(float)
        share = float(np.nanmean(np.where(np.isnan(y), 0.5, y)))
        return np.where(rng.random(cell.pairs.size) < share, 1.0, 0.0)
    return simulate_judge(_SIMULATE_KIND.get(kind, kind), cell, rng).credit


def simulate_study(n_readers: int, n_pairs: int, rng: np.random.Generator, cells=CELLS) -> tuple[pd.DataFrame, dict]:
    """The votes of one study and, per judge kind, its choices frame."""
    frames, choices = [], {k: [] for k in JUDGES}
    for m, design in enumerate(cells):
        cell = simulate_cell(design, n_pairs, n_readers, rng)
        v = pd.DataFrame(
            {
                "pair_id": [f"m{m}-{p}" for p in cell.pair_id],
                "reader_id": cell.reader_id,
                "criterion": "overall",
                "matchup": f"m{m}",
                "y": cell.y,
            }
        )
        frames.append(v)
        raw = v.assign(pair_id=cell.pair_id)
        for k in JUDGES:
            credit = _judge_credit(k, cell, raw, rng)
            choices[k].append(
                pd.DataFrame({"pair_id": [f"m{m}-{p}" for p in cell.pairs], "criterion": "overall", "y_judge": credit})
            )
    return pd.concat(frames, ignore_index=True), {k: pd.concat(c, ignore_index=True) for k, c in choices.items()}


def run_study(votes: pd.DataFrame, choices: pd.DataFrame, *, margin: float, n_boot: int, seed: int) -> StudyOutcome:
    res = agreement_decision(votes, choices, margin=margin, n_boot=n_boot, rng=seed)
    cells = res.level("cell")
    return StudyOutcome(
        study=res.row("all/all").status,
        any_fail=any(r.status == "FAIL" for r in res.rows),
        cells_fail=sum(r.status == "FAIL" for r in cells),
        cells=len(cells),
    )


def calibrate(
    designs=DESIGNS, studies: int = 100, seed: int = 0, n_boot: int = 499, margin: float = 0.05, panel="reliable"
) -> pd.DataFrame:
    rows = []
    for n_readers, n_pairs in designs:
        outcomes: dict[str, list[StudyOutcome]] = {k: [] for k in JUDGES}
        for s in range(studies):
            rng = np.random.default_rng([seed, n_readers, n_pairs, s])
            votes, choices = simulate_study(n_readers, n_pairs, rng, PANELS[panel])
            for k in JUDGES:
                outcomes[k].append(run_study(votes, choices[k], margin=margin, n_boot=n_boot, seed=s))
        for k in JUDGES:
            o = outcomes[k]
            n = len(o)
            fail = np.mean([x.study == "FAIL" for x in o])
            ok = np.mean([x.study == "PASS" for x in o])
            anyf = np.mean([x.any_fail for x in o])
            cf = sum(x.cells_fail for x in o) / max(sum(x.cells for x in o), 1)
            nc = sum(x.cells for x in o)
            rows.append(
                {
                    "design": f"{n_readers}x{n_pairs}x{len(PANELS[panel])} {panel}",
                    "judge": k,
                    "reproduces": k in ALIGNED,
                    "studies": n,
                    "study_fails": int(sum(x.study == "FAIL" for x in o)),
                    "study_fail": fail,
                    "study_fail_se": np.sqrt(fail * (1 - fail) / n),
                    "any_fail": anyf,
                    "any_fail_se": np.sqrt(anyf * (1 - anyf) / n),
                    "cell_fail": cf,
                    "cell_fail_se": np.sqrt(cf * (1 - cf) / max(nc, 1)),
                    "study_pass": ok,
                    "study_pass_se": np.sqrt(ok * (1 - ok) / n),
                }
            )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- the designs users bring

RHO = 0.7  #: correlation of a pair's effects across the criteria of its matchup
SD_READER = 0.3
#: the tie threshold of the ``ties`` design: about half of the votes are ties
TIE_HEAVY = 2.1
STRENGTH_RANGE = 1.4  #: one vote per pair: 8 systems of strengths evenly spaced on [-1.4, 1.4]
#: the judge kinds of the named designs: three that reproduce the readers, three that do not
NAMED_JUDGES = ("following", "majority", "reader-like", "coin", "biased", "wrong-side")


@dataclass(frozen=True)
class StudyDesign:
    """A named study design: ``matchups`` x ``criteria`` cells, the criteria of a matchup read on the
    same ``n_pairs`` pairs (pair effects correlated :data:`RHO` across them), ``n_readers`` votes per
    pair (from the same readers, or drawn from a ``pool`` of readers when ``pool > 0``)."""

    name: str
    matchups: int
    criteria: int
    n_pairs: int
    n_readers: int
    pool: int = 0
    tie: float = 0.0  #: tie threshold of the ordered-logit tie band (0: no ties)
    first_b0: float | None = None  #: the first matchup's readers' preference (the paper's R1 vs V3)
    systems: int = 0  #: > 0: the matchups are every pair of this many systems of evenly spaced strength


STUDY_DESIGNS = {
    "paper": StudyDesign("paper", 3, 6, 20, 7, first_b0=-0.3),
    "50x7": StudyDesign("50x7", 3, 6, 50, 7, first_b0=-0.3),
    "150x12": StudyDesign("150x12", 3, 6, 150, 12),
    "ties": StudyDesign("ties", 3, 6, 20, 7, tie=TIE_HEAVY),
    "90cells": StudyDesign("90cells", 10, 9, 20, 7),
    "arena5k": StudyDesign("arena5k", 28, 1, 179, 1, pool=2000, systems=8),
    "arena50k": StudyDesign("arena50k", 28, 1, 1786, 1, pool=2000, systems=8),
}


def _votes_of(eta: np.ndarray, tie: float, rng: np.random.Generator) -> np.ndarray:
    """Ordered-logit votes at latent ``eta``: 1 focal, 0 other, NaN tie."""
    p_focal, p_other = expit(eta - tie), expit(-eta - tie)
    draw = rng.random(eta.shape)
    return np.where(draw < p_focal, 1.0, np.where(draw < p_focal + p_other, 0.0, np.nan))


def _named_judge(kind: str, latent: np.ndarray, y: np.ndarray, d: StudyDesign, v_j: float, rng) -> np.ndarray:
    """A judge's credits on one criterion's pairs (``y``: pairs x votes of the readers)."""
    if kind == "following":  # the plurality of the readers' votes, ties a category of their own
        f, o, t = (y == 1.0).sum(axis=1), (y == 0.0).sum(axis=1), np.isnan(y).sum(axis=1)
        return np.where(t > np.maximum(f, o), 0.5, np.where(f > o, 1.0, np.where(o > f, 0.0, 0.5)))
    if kind == "majority":  # the readers' expected plurality category at the pair's latent preference
        p_focal, p_other = expit(latent - d.tie), expit(-latent - d.tie)
        tie = 1.0 - p_focal - p_other
        return np.where(tie > np.maximum(p_focal, p_other), 0.5, np.where(latent > 0, 1.0, 0.0))
    if kind == "wrong-side":
        return np.where(latent > 0, 0.0, 1.0)
    if kind == "reader-like":
        return np.nan_to_num(_votes_of(latent + v_j, d.tie, rng), nan=0.5)
    if kind == "coin":
        share = float(np.mean(np.where(np.isnan(y), 0.5, y)))
        return np.where(rng.random(latent.size) < share, 1.0, 0.0)
    if kind == "biased":
        return np.where(rng.random(latent.size) < SKEW, 1.0, 0.0)
    raise ValueError(f"unknown judge {kind!r}: use one of {', '.join(NAMED_JUDGES)}")


def simulate_named_study(
    design: StudyDesign, rng: np.random.Generator, sd_pair: float = 2.5
) -> tuple[pd.DataFrame, dict]:
    """The votes of one study of a named design and, per judge of :data:`NAMED_JUDGES`, its choices.

    Per matchup the readers' preference ``b0`` of each criterion is drawn from N(0.3, 0.7) (the
    paper's first matchup near ``first_b0``; one vote per pair: the strength difference of the two
    systems, which of them is focal drawn at random); a reader votes for the focal system with
    probability ``expit(b0 + u_i + v_r - tie)``, for the other with ``expit(-b0 - u_i - v_r - tie)``
    and ties otherwise (pair effects ``u`` of SD ``sd_pair``, reader effects of SD :data:`SD_READER`
    shared by a matchup's criteria).

    Judges: ``following`` the plurality of the readers' actual votes on the pair (ties a category:
    a tie where the tie votes outnumber either side or the sides are level); ``majority`` the
    readers' expected plurality at the pair's latent preference ``b0 + u_i`` (with ``tie = 0``: the
    side of ``b0 + u_i``); ``reader-like`` one more reader (its own reader effect per matchup);
    ``coin`` the focal system with the readers' vote share in the cell (ties credited 1/2), whatever
    the pair; ``biased`` the focal system with probability :data:`~judge_transfer_audit.verdict.simulate.SKEW`;
    ``wrong-side`` the opposite side of ``b0 + u_i``.
    """
    strengths = np.linspace(-STRENGTH_RANGE, STRENGTH_RANGE, design.systems) if design.systems else None
    duels = [(a, b) for a in range(design.systems) for b in range(a + 1, design.systems)]
    frames, choices = [], {k: [] for k in NAMED_JUDGES}
    for g in range(design.matchups):
        b0s = rng.normal(0.3, 0.7, design.criteria)
        if strengths is not None:  # which system of the duel is focal: a coin flip
            a, b = duels[g]
            b0s = np.full(design.criteria, (strengths[b] - strengths[a]) * rng.choice((-1.0, 1.0)))
        if g == 0 and design.first_b0 is not None:
            b0s = design.first_b0 + rng.normal(0.0, 0.1, design.criteria)
        common = rng.standard_normal(design.n_pairs)
        n_pool = design.pool or design.n_readers
        reader_effect = rng.normal(0.0, SD_READER, n_pool)
        v_judge = rng.normal(0.0, SD_READER)
        pairs = np.array([f"m{g:02d}p{i:04d}" for i in range(design.n_pairs)])
        for k in range(design.criteria):
            u = sd_pair * (np.sqrt(RHO) * common + np.sqrt(1 - RHO) * rng.standard_normal(design.n_pairs))
            if design.pool:
                readers = rng.integers(0, n_pool, (design.n_pairs, design.n_readers))
            else:
                readers = np.broadcast_to(np.arange(design.n_readers), (design.n_pairs, design.n_readers))
            latent = b0s[k] + u
            y = _votes_of(latent[:, None] + reader_effect[readers], design.tie, rng)
            frames.append(
                pd.DataFrame(
                    {
                        "pair_id": np.repeat(pairs, design.n_readers),
                        "reader_id": np.char.add("r", readers.ravel().astype(str)),
                        "criterion": f"c{k}",
                        "matchup": f"m{g:02d}",
                        "y": y.ravel(),
                    }
                )
            )
            for kind in NAMED_JUDGES:
                credit = _named_judge(kind, latent, y, design, v_judge, rng)
                choices[kind].append(pd.DataFrame({"pair_id": pairs, "criterion": f"c{k}", "y_judge": credit}))
    return pd.concat(frames, ignore_index=True), {k: pd.concat(c, ignore_index=True) for k, c in choices.items()}


def _share(x: float, n: int) -> tuple[float, float]:
    return x, float(np.sqrt(x * (1 - x) / n)) if n else float("nan")


def calibrate_named(
    names=("paper",),
    studies: int = 100,
    seed: int = 0,
    n_boot: int = 499,
    margin: float = 0.05,
    sd_pair: float = 2.5,
    judges=NAMED_JUDGES,
    decide=agreement_decision,
) -> pd.DataFrame:
    """Per named design x judge: the shares of studies FAILed at the study level and at any level,
    of matchups and cells FAILed, of studies PASSed, each with its binomial standard error."""
    rows = []
    for name in names:
        design = STUDY_DESIGNS[name]
        tally = {k: dict(study_fail=0, study_pass=0, any_fail=0, m_fail=0, m=0, c_fail=0, c=0) for k in judges}
        for s in range(studies):
            rng = np.random.default_rng([seed, s, *name.encode()])
            votes, choices = simulate_named_study(design, rng, sd_pair)
            for k in judges:
                res = decide(votes, choices[k], margin=margin, n_boot=n_boot, rng=s)
                t = tally[k]
                t["study_fail"] += res.row("all/all").status == "FAIL"
                t["study_pass"] += res.row("all/all").status == "PASS"
                t["any_fail"] += any(r.status == "FAIL" for r in res.rows)
                for level, key in (("matchup", "m"), ("cell", "c")):
                    rs = res.level(level)
                    t[key] += len(rs)
                    t[key + "_fail"] += sum(r.status == "FAIL" for r in rs)
        for k in judges:
            t = tally[k]
            row = {"design": name, "judge": k, "reproduces": k in ALIGNED, "studies": studies}
            for col, x, n in (
                ("study_fail", t["study_fail"] / studies, studies),
                ("any_fail", t["any_fail"] / studies, studies),
                ("matchup_fail", t["m_fail"] / max(t["m"], 1), t["m"]),
                ("cell_fail", t["c_fail"] / max(t["c"], 1), t["c"]),
                ("study_pass", t["study_pass"] / studies, studies),
            ):
                row[col], row[col + "_se"] = _share(x, n)
            row["study_fails"] = t["study_fail"]
            rows.append(row)
    return pd.DataFrame(rows)


def format_named_table(table: pd.DataFrame) -> str:
    head = (
        "| design | judge | study FAIL | FAIL at any level | matchups FAIL | cells FAIL | study PASS |\n"
        "|---|---|---|---|---|---|---|"
    )
    cols = ("any_fail", "matchup_fail", "cell_fail", "study_pass")
    lines = [head]
    for r in table.to_dict("records"):
        rest = " | ".join(f"{r[c]:.3f} ({r[c + '_se']:.3f})" for c in cols)
        lines.append(
            f"| {r['design']} | {r['judge']} | {r['study_fails']}/{r['studies']}: {r['study_fail']:.3f} "
            f"({r['study_fail_se']:.3f}) | {rest} |"
        )
    return "\n".join(lines)


def format_table(table: pd.DataFrame) -> str:
    head = "| design | judge | study FAIL | FAIL at any level | cells FAIL | study PASS |\n|---|---|---|---|---|---|"
    lines = [head]
    for r in table.itertuples():
        lines.append(
            f"| {r.design} | {r.judge} | {r.study_fails}/{r.studies}: {r.study_fail:.3f} ({r.study_fail_se:.3f}) | "
            f"{r.any_fail:.3f} "
            f"({r.any_fail_se:.3f}) | {r.cell_fail:.3f} ({r.cell_fail_se:.3f}) | {r.study_pass:.3f} "
            f"({r.study_pass_se:.3f}) |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--studies", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-boot", type=int, default=499)
    ap.add_argument("--margin", type=float, default=0.05)
    ap.add_argument(
        "--designs",
        default="7x20,7x60",
        help=f"readers x pairs per matchup (RxP), or named designs ({', '.join(STUDY_DESIGNS)}), comma-separated",
    )
    ap.add_argument("--panel", default="reliable", choices=sorted(PANELS), help="how much the readers agree")
    ap.add_argument("--judges", default=",".join(NAMED_JUDGES), help="the judges of the named designs, comma-separated")
    a = ap.parse_args(argv)
    judges = tuple(a.judges.split(","))
    if not set(judges) <= set(NAMED_JUDGES):
        ap.error(f"unknown judge in {a.judges!r}: use {', '.join(NAMED_JUDGES)}")
    wanted = a.designs.split(",")
    named = [d for d in wanted if d in STUDY_DESIGNS]
    unknown = [d for d in wanted if d not in STUDY_DESIGNS and not re.fullmatch(r"\d+x\d+", d)]
    if unknown:
        ap.error(f"unknown design {unknown[0]!r}: use RxP (e.g. 7x60) or one of {', '.join(STUDY_DESIGNS)}")
    grid = tuple(tuple(int(x) for x in d.split("x")) for d in wanted if d not in STUDY_DESIGNS)
    t0 = time.perf_counter()
    if grid:
        print(format_table(calibrate(grid, a.studies, a.seed, a.n_boot, a.margin, a.panel)))
    if named:
        sd_pair = PANELS[a.panel][0].sd_pair
        print(format_named_table(calibrate_named(named, a.studies, a.seed, a.n_boot, a.margin, sd_pair, judges)))
    print(
        f"\n{a.studies} studies per design, {a.panel} readers, seed {a.seed}, {a.n_boot} replicates, "
        f"margin {a.margin:g}; "
        f"standard errors in brackets; {time.perf_counter() - t0:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
