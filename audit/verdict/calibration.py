"""The calibration study: does the decision hold on simulated judges of known kind?

usage: python -m judge_transfer_audit.verdict.calibration [--studies N] [--quick] [--seed S] [--n-boot B]
                                           [--designs 7x20,7x60,...] [--margin M]

For each design (readers x pairs) a *study* is ``len(CELLS)`` cells, each simulated from the
crossed model with its own ``b0`` (readers at chance, decisive either way), pair and reader
variance, ties and missing votes (:mod:`judge_transfer_audit.verdict.simulate`). Every judge kind
(:data:`~judge_transfer_audit.verdict.simulate.JUDGES`) is audited on the same simulated readers through the
one path the pipeline runs, :func:`~judge_transfer_audit.verdict.assess.decide_cells` (each cell on its own
keyed stream, the family decided together, the sequential Monte Carlo on the borderline cells,
the default policy), so a study is one audit of one judge: the multiplicity adjustment is
across its cells. The judges of a cell share its stream key, as the pipeline's judge
configurations do. The table gives, per design x judge,
the share of cells that FAIL / PASS / are INCONCLUSIVE and the share of studies that FAIL
(any cell FAILs) / FAIL falsely (a cell FAILs whose judge is truly within the margin of the
true band with no true direction conflict: :func:`truly_fails`) / PASS (every cell PASSes),
each with its binomial standard error; the assessed cells split by the truth
(:func:`truth_side`: the shares truly outside the margin and truly in a direction conflict
within it; FAIL among the cells truly inside, the false-alarm rate; FAIL among those in a
conflict; FAIL among those truly outside, the power; PASS among those, a wrong PASS); and the
coverage of the intervals of J - V, J - M and of the band distance for the reader-like and
majority judges (the truth of each judge is its expected rate given the judge:
:mod:`judge_transfer_audit.verdict.simulate`).

Targets: reader-like, majority and noisy-aligned judges FAIL in <= 5% of cells and
of studies; skewed and reversed FAIL in >= 90% of studies at 7 x 60; PASS reachable for the
reader-like and majority judges at 12 x 150; coverage 93-97%. docs/audit.md holds the table
and the command that printed it.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field, replace

import numpy as np

from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.model.policy import TransferPolicy
from judge_transfer_audit.model.tie_rules import EVEN_SPLIT
from judge_transfer_audit.verdict.assess import CellInput, decide_cells
from judge_transfer_audit.verdict.compare import cell_generator
from judge_transfer_audit.verdict.simulate import (
    JUDGES,
    CellDesign,
    band_distance,
    simulate_cell,
    simulate_judge,
    true_majority_rate,
    true_vote_share,
)

DESIGNS = ((7, 20), (7, 60), (20, 60), (3, 40), (12, 150))
#: the cells of every study: readers at chance, decisive either way, weak and strong pair
#: variance, with and without reader variance, ties and missing votes
CELLS = (
    CellDesign(b0=0.0, sd_pair=0.5, sd_reader=0.3),
    CellDesign(b0=0.5, sd_pair=0.5, sd_reader=0.3, tie=0.4),
    CellDesign(b0=-0.8, sd_pair=0.8, sd_reader=0.4),
    CellDesign(b0=1.0, sd_pair=1.0, sd_reader=0.2, missing=0.2),
    CellDesign(b0=0.3, sd_pair=0.3, sd_reader=0.0),
    CellDesign(b0=-0.3, sd_pair=0.9, sd_reader=0.3, tie=0.2),
)
COVERAGE_JUDGES = ("reader-like", "majority")
DEFAULT_STUDIES = 40
QUICK_STUDIES = 5
QUICK_DESIGNS = ((7, 20), (7, 60))
QUICK_BOOT = 199


@dataclass
class Tally:
    """Counts of one design x judge (internal)."""

    cells: dict[str, int] = field(default_factory=lambda: {"FAIL": 0, "PASS": 0, "INCONCLUSIVE": 0, "other": 0})
    studies: dict[str, int] = field(default_factory=lambda: {"FAIL": 0, "false FAIL": 0, "PASS": 0, "n": 0})
    coverage: dict[str, list[bool]] = field(default_factory=lambda: {"J-V": [], "J-M": [], "band": []})
    extended: int = 0  #: cells decided on more replicates (sequential Monte Carlo)
    borderline: int = 0  #: cells still Monte Carlo borderline after it
    fail_by_test: dict[str, int] = field(default_factory=lambda: {"outside": 0, "conflict": 0})
    #: assessed cells split by the truth (:func:`truth_side`): how many, and how many FAIL / PASS in each
    truth: dict[str, int] = field(
        default_factory=lambda: {k: 0 for side in TRUTH_SIDES for k in (side, f"{side} FAIL", f"{side} PASS")}
    )

    @property
    def n_cells(self) -> int:
        return sum(self.cells.values())


def _rate(k: int, n: int) -> str:
    if n == 0:
        return "-"
    p = k / n
    return f"{100 * p:5.1f} ({100 * np.sqrt(p * (1 - p) / n):3.1f})"


def truly_fails(j_true: float, v_true: float, m_true: float, margin: float) -> bool:
    """Whether a FAIL is right: the judge's expected rate lies more than ``margin`` from the true
    band, or it and the true vote share lie on opposite sides of 1/2 (a direction conflict)."""
    return bool(abs(band_distance(j_true, v_true, m_true)) > margin or (j_true - 0.5) * (v_true - 0.5) < 0)


TRUTH_SIDES = ("inside", "conflict", "outside")


def truth_side(j_true: float, v_true: float, m_true: float, margin: float) -> str:
    """Where the judge truly is: ``outside`` (its expected rate more than ``margin`` from the true band:
    a FAIL is right, a PASS wrong), ``conflict`` (within the margin but across 1/2 from the true vote
    share: a FAIL by the direction-conflict test is right, a PASS too) or ``inside`` (neither: a FAIL
    is a false alarm)."""
    if abs(band_distance(j_true, v_true, m_true)) > margin:
        return "outside"
    return "conflict" if truly_fails(j_true, v_true, m_true, margin) else "inside"


def run_study(
    design: tuple[int, int],
    study: int,
    seed: int,
    policy: TransferPolicy,
    tallies: dict[tuple[tuple[int, int], str], Tally],
) -> None:
    """Simulate one study of every judge kind on the same readers and tally the decisions."""
    n_readers, n_pairs = design
    inputs: dict[str, list[CellInput]] = {k: [] for k in JUDGES}
    truths: dict[str, list[tuple[float, float, float]]] = {k: [] for k in JUDGES}
    for index, cell_design in enumerate(CELLS):
        key = (f"{n_readers}x{n_pairs}", str(study), str(index))
        rng = cell_generator(seed, *key)
        cell = simulate_cell(cell_design, n_pairs, n_readers, rng)
        v_true, m_true = true_vote_share(cell_design), true_majority_rate(cell_design)
        human = CellInput(("calibration", *key), 1.0, cell.pair_id, cell.reader_id, cell.y)
        for kind in JUDGES:
            judge = simulate_judge(kind, cell, rng)
            inputs[kind].append(human.with_judge(cell.pairs, judge.credit))
            truths[kind].append((judge.truth, v_true, m_true))
    for kind in JUDGES:
        tally = tallies.setdefault((design, kind), Tally())
        transfers, comparisons = decide_cells(inputs[kind], tie_rule=EVEN_SPLIT, policy=policy, seed=seed)
        items = list(zip(comparisons, *zip(*truths[kind])))
        statuses = [t.status for t in transfers]
        for s in statuses:
            tally.cells[s.value if s.value in tally.cells else "other"] += 1
        tally.studies["n"] += 1
        tally.studies["FAIL"] += any(s is Status.FAIL for s in statuses)
        tally.studies["false FAIL"] += any(
            s is Status.FAIL and not truly_fails(j, v, m, policy.margin) for s, (_, j, v, m) in zip(statuses, items)
        )
        tally.studies["PASS"] += all(s is Status.PASS for s in statuses)
        tally.extended += sum(t.n_boot > policy.n_boot for t in transfers)
        tally.borderline += sum(bool(t.monte_carlo_borderline) for t in transfers)
        tally.fail_by_test["outside"] += sum(
            t.status is Status.FAIL and t.p_outside_adjusted < policy.alpha for t in transfers
        )
        tally.fail_by_test["conflict"] += sum(t.status is Status.FAIL and bool(t.direction_conflict) for t in transfers)
        for s, (c, j, v, m) in zip(statuses, items):
            if not c.assessed:
                continue
            side = truth_side(j, v, m, policy.margin)
            tally.truth[side] += 1
            tally.truth[f"{side} FAIL"] += s is Status.FAIL
            tally.truth[f"{side} PASS"] += s is Status.PASS
        if kind in COVERAGE_JUDGES:
            for c, j_true, v_true, m_true in items:
                if not c.assessed:
                    continue
                for key, name, truth in (
                    ("J-V", "difference_vote_share", j_true - v_true),
                    ("J-M", "difference_majority", j_true - m_true),
                ):
                    iv = c.interval(name, 1.0 - policy.alpha)
                    tally.coverage[key].append(bool(iv.ci_low <= truth <= iv.ci_high))
                low, high = c.band_interval(policy.alpha / 2.0)
                tally.coverage["band"].append(bool(low <= band_distance(j_true, v_true, m_true) <= high))


def format_table(tallies: dict[tuple[tuple[int, int], str], Tally], policy: TransferPolicy) -> str:
    lines = [
        f"margin {policy.margin:g}, alpha {policy.alpha:g} (cell intervals at {1 - 2 * policy.alpha:.0%}), "
        f"adjust {policy.adjust}, n_boot {policy.n_boot}; {len(CELLS)} cells per study",
        f"rates in % (binomial standard error); coverage of the two-sided {1 - policy.alpha:.0%} intervals; "
        "more B: cells decided on more replicates (sequential Monte Carlo), bordl: still borderline then; "
        "FAIL out/conf: FAIL cells by the test that rejects (outside the margin / direction conflict); "
        "by the truth (assessed cells, truth_side): out = the judge's expected rate more than the margin from "
        "the true band, conf = within it but across 1/2 from the true vote share, in = neither; "
        "FAIL|in = the false-alarm rate, FAIL|out = the power, PASS|out = a PASS of a judge truly outside",
        f"{'design':<8} {'judge':<14} {'studies':>7} {'cell FAIL':>12} {'cell PASS':>12} {'cell INCONC':>12} "
        f"{'study FAIL':>12} {'false FAIL':>12} {'study PASS':>12} {'cov J-V':>12} {'cov J-M':>12} {'cov band':>12} "
        f"{'more B':>6} {'bordl':>5} {'FAIL out/conf':>13} {'out':>12} {'conf':>12} {'FAIL|in':>12} "
        f"{'FAIL|conf':>12} {'FAIL|out':>12} {'PASS|out':>12}",
    ]
    for (design, kind), t in tallies.items():
        n = t.n_cells
        cov = [(_rate(sum(t.coverage[k]), len(t.coverage[k])) if t.coverage[k] else "") for k in ("J-V", "J-M", "band")]
        assessed = sum(t.truth[side] for side in TRUTH_SIDES)
        lines.append(
            f"{design[0]}x{design[1]:<6} {kind:<14} {t.studies['n']:>7} {_rate(t.cells['FAIL'], n):>12} "
            f"{_rate(t.cells['PASS'], n):>12} {_rate(t.cells['INCONCLUSIVE'], n):>12} "
            f"{_rate(t.studies['FAIL'], t.studies['n']):>12} {_rate(t.studies['false FAIL'], t.studies['n']):>12} "
            f"{_rate(t.studies['PASS'], t.studies['n']):>12} "
            f"{cov[0]:>12} {cov[1]:>12} {cov[2]:>12} "
            f"{t.extended:>6} {t.borderline:>5} {t.fail_by_test['outside']:>6}/{t.fail_by_test['conflict']:<6} "
            f"{_rate(t.truth['outside'], assessed):>12} {_rate(t.truth['conflict'], assessed):>12} "
            f"{_rate(t.truth['inside FAIL'], t.truth['inside']):>12} "
            f"{_rate(t.truth['conflict FAIL'], t.truth['conflict']):>12} "
            f"{_rate(t.truth['outside FAIL'], t.truth['outside']):>12} "
            f"{_rate(t.truth['outside PASS'], t.truth['outside']):>12}"
        )
    return "\n".join(lines)


def calibrate(
    *,
    studies: int = DEFAULT_STUDIES,
    seed: int = 0,
    designs=DESIGNS,
    policy: TransferPolicy | None = None,
    progress=None,
) -> dict[tuple[tuple[int, int], str], Tally]:
    """Run the study; returns the tallies per (design, judge kind)."""
    policy = policy or TransferPolicy()
    tallies: dict[tuple[tuple[int, int], str], Tally] = {}
    for design in designs:
        for k in JUDGES:
            tallies[(design, k)] = Tally()
        for study in range(studies):
            run_study(design, study, seed, policy, tallies)
        if progress is not None:
            progress(design)
    return tallies


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m judge_transfer_audit.verdict.calibration", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--studies", type=int, default=None, help=f"studies per design (default {DEFAULT_STUDIES})")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"{QUICK_STUDIES} studies of designs 7x20 and 7x60, {QUICK_BOOT} replicates (a smoke test)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-boot", type=int, default=None, help="bootstrap replicates (default: the policy's)")
    parser.add_argument("--margin", type=float, default=None)
    parser.add_argument("--designs", default=None, help="comma-separated RxP, e.g. 7x20,7x60")
    args = parser.parse_args(argv)
    policy = TransferPolicy()
    if args.quick:
        policy = replace(policy, n_boot=QUICK_BOOT)
    if args.n_boot is not None:
        policy = replace(policy, n_boot=args.n_boot)
    if args.margin is not None:
        policy = replace(policy, margin=args.margin)
    designs = QUICK_DESIGNS if args.quick else DESIGNS
    if args.designs:
        designs = tuple(tuple(int(x) for x in d.split("x")) for d in args.designs.split(","))
    studies = args.studies or (QUICK_STUDIES if args.quick else DEFAULT_STUDIES)
    started = time.perf_counter()
    tallies = calibrate(
        studies=studies,
        seed=args.seed,
        designs=designs,
        policy=policy,
        progress=lambda d: print(
            f"  {d[0]}x{d[1]} done ({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True
        ),
    )
    print(format_table(tallies, policy))
    print(
        f"({time.perf_counter() - started:.0f} s; python -m judge_transfer_audit.verdict.calibration "
        + " ".join(argv if argv is not None else sys.argv[1:])
        + ")"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
