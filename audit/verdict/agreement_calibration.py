"""Calibration of the agreement decision: false FAIL and power on simulated studies.

usage: python -m judge_transfer_audit.verdict.agreement_calibration [--studies N] [--seed S] [--n-boot B]
                                             [--designs 7x20,7x60] [--margin M] [--panel P]

A *study* is one matchup per design of :data:`CELLS` (three matchups, one criterion each), every
matchup with the same number of pairs and the same readers, simulated from the crossed model of
:mod:`judge_transfer_audit.verdict.simulate`. Each judge kind (:data:`JUDGES`) is decided on the same readers by
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
import sys
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judge_transfer_audit.verdict.agreement_decision import agreement_decision
from judge_transfer_audit.verdict.simulate import CellDesign, simulate_cell, simulate_judge

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
    ap.add_argument("--designs", default="7x20,7x60", help="readers x pairs per matchup, comma-separated")
    ap.add_argument("--panel", default="reliable", choices=sorted(PANELS), help="how much the readers agree")
    a = ap.parse_args(argv)
    designs = tuple(tuple(int(x) for x in d.split("x")) for d in a.designs.split(","))
    t0 = time.perf_counter()
    table = calibrate(designs, a.studies, a.seed, a.n_boot, a.margin, a.panel)
    print(format_table(table))
    print(
        f"\n{a.studies} studies per design, {a.panel} readers, seed {a.seed}, {a.n_boot} replicates, "
        f"margin {a.margin:g}; "
        f"standard errors in brackets; {time.perf_counter() - t0:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
