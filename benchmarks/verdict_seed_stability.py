"""Does the verdict depend on the seed? The fixture's cells decided at many run seeds.

Loads the shipped fixture once and, per run seed, derives the verdict's seed exactly as
:func:`judge_transfer_audit.engine.pipeline.run_audit` does and decides every cell
(:func:`judge_transfer_audit.engine.pipeline.assess_cells`,
the primary judge; no other section) under the default policy: the hierarchical closed test over
the matchups, each matchup's criteria pooled (docs/audit.md 4.3). Prints, per cell that is FAIL at
some seed or whose status changes, the statuses seen, the range of its raw p (the smaller of
p_outside and p_conflict), its Monte Carlo SE, the range of its adjusted p (the smaller of
p_outside_adjusted and p_conflict_adjusted: the cell FAILs when it is below alpha) and of its
closure value p_closure, the most bootstrap replicates it was decided on, at how many seeds it
needed more than 999 (sequential Monte Carlo) and at how many it stayed Monte Carlo borderline;
then the counts per status at each seed.

    python benchmarks/verdict_seed_stability.py --seeds 20
    python benchmarks/verdict_seed_stability.py --seeds 5 --data hanna   # HANNA (../shared/datasets), judge ChatGPT

With ``--data hanna`` the rows are the cells whose status changes or that are flagged Monte Carlo
borderline at some seed (HANNA has no FAIL cell), and the counts per status at each seed are printed.

``--tail`` also prints, for each row, the first pass's bootstrap (B = 999, the cell's own stream at
each seed) of the distance to the band end the judge lies beyond (``d_hi`` above the band, ``d_lo``
below): how many replicates fall on the null's side of the margin at each seed, and the range of
the replicates' kurtosis. Where a few do, the raw p is their smoothed share; where none does, it is
the Gaussian continuation beyond the 20-replicate anchor (docs/audit.md 4.2, "The p-value").
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from judge_transfer_audit.engine.pipeline import _cell_parts, assess_cells, choose_primary_judge, judge_choices
from judge_transfer_audit.inputs.load import load_audit_data
from judge_transfer_audit.model.spec import AuditSpec
from judge_transfer_audit.sections.judge_configurations import compute as configurations_part
from judge_transfer_audit.statistics.agreement import reader_baseline
from judge_transfer_audit.verdict.assess import cell_input, compare_input
from judge_transfer_audit.verdict.compare import cell_generator
from judge_transfer_audit.verdict.judge_side import judge_pair_outcomes

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("JUDGE_AUDIT_DATASETS") or ROOT.parent / "shared" / "datasets")


def verdict_seed(seed: int) -> int:
    root = np.random.SeedSequence(seed)
    root.spawn(5)
    return int(root.spawn(1)[0].generate_state(1)[0])


def _cell_p(t) -> tuple[float, float | None]:
    """The cell's p (the smaller of its two tests) and that test's Monte Carlo SE (None before 2.3)."""
    sides = [(t.p_outside, getattr(t, "p_outside_mc_se", None)), (t.p_conflict, getattr(t, "p_conflict_mc_se", None))]
    return min((s for s in sides if s[0] is not None), key=lambda s: s[0])


def _cell_adjusted_p(t) -> float:
    """The cell's adjusted p (the smaller of its two tests'): the cell FAILs when it is below alpha."""
    sides = [p for p in (t.p_outside_adjusted, t.p_conflict_adjusted) if p is not None]
    return min(sides) if sides else float("nan")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20, help="run seeds 0 .. N-1")
    ap.add_argument("--pairs", default=str(ROOT / "fixtures/deployment/pairs.csv"))
    ap.add_argument("--data", choices=("fixture", "hanna"), default="fixture")
    ap.add_argument("--tail", action="store_true", help="the first pass's replicates beyond the null, per seed")
    args = ap.parse_args(argv)
    if args.data == "hanna":
        sys.path.insert(0, str(ROOT))  # tests.support converts HANNA as the external tests do
        from tests.support.hanna import convert_hanna  # noqa: PLC0415

        with tempfile.TemporaryDirectory() as tmp:
            hanna = convert_hanna(SHARED / "hanna" / "hanna_metric_scores_llm.csv", Path(tmp) / "hanna")
            data = load_audit_data(hanna / "judge.csv", hanna / "humans.csv")
        spec = AuditSpec(surface=False, judge="ChatGPT")
    else:
        d = ROOT / "fixtures/deployment"
        data = load_audit_data(d / "judge.csv", d / "humans.csv", pairs=args.pairs)
        spec = AuditSpec(surface=False)
    outcomes = judge_pair_outcomes(data, spec.tie_rule, np.random.default_rng(0))
    primary = choose_primary_judge(data.judges, spec.judge)
    if primary == configurations_part.AUTO:
        primary = data.judges[0]
    choices = judge_choices(outcomes, primary, data.criteria)
    baseline = reader_baseline(data.votes, choices).to_frame()
    statuses, pvals, ses = defaultdict(list), defaultdict(list), defaultdict(list)
    adjusted, closure = defaultdict(list), defaultdict(list)
    boots, flagged, p_eq = defaultdict(list), defaultdict(int), defaultdict(list)
    totals, seconds = [], []
    t0 = time.process_time()
    for s in range(args.seeds):
        started = time.process_time()
        cells = assess_cells(data, spec, outcomes, primary, baseline, verdict_seed(s))
        seconds.append(time.process_time() - started)
        assessed = [c for c in cells if c.transfer.status.value in ("PASS", "FAIL", "INCONCLUSIVE")]
        totals.append(Counter(c.transfer.status.value for c in cells))
        for c in assessed:
            p, se = _cell_p(c.transfer)
            key = (c.matchup, c.criterion)
            statuses[key].append(c.transfer.status.value)
            pvals[key].append(p)
            ses[key].append(np.nan if se is None else se)
            boots[key].append(c.transfer.n_boot)
            flagged[key] += bool(getattr(c.transfer, "monte_carlo_borderline", False))
            p_eq[key].append(getattr(c.transfer, "p_equivalence", None) or np.nan)  # schema 2.4
            adjusted[key].append(_cell_adjusted_p(c.transfer))
            closure[key].append(np.nan if c.transfer.p_closure is None else c.transfer.p_closure)
    cpu = time.process_time() - t0
    policy = spec.policy.transfer
    how = "closed test, criteria pooled per matchup" if policy.pool_criteria else f"{policy.adjust} over the cells"
    print(f"{args.seeds} seeds, {cpu:.1f} s CPU ({cpu / args.seeds:.2f} s a seed); alpha {policy.alpha}, {how}")
    head = f"{'cell':48s} {'statuses':28s} {'p min':>9s} {'p max':>9s} {'max/min':>8s} {'MC SE':>9s}"
    head += f" {'adj min':>9s} {'adj max':>9s} {'clos min':>9s} {'clos max':>9s}"
    print(head + f" {'max B':>6s} {'B > 999':>7s} {'borderline':>10s} {'p_eq min':>9s} {'p_eq max':>9s}")
    for key in statuses:
        seen = Counter(statuses[key])
        if "FAIL" not in seen and len(seen) == 1 and not flagged[key]:
            continue
        p = np.array(pvals[key])
        print(
            f"{key[0] + ' / ' + key[1]:48s} {', '.join(f'{k} {v}' for k, v in sorted(seen.items())):28s} "
            f"{p.min():9.2e} {p.max():9.2e} {p.max() / p.min():8.3g} {_max(ses[key]):9.1e} "
            f"{_min(adjusted[key]):9.2e} {_max(adjusted[key]):9.2e} "
            f"{_min(closure[key]):9.2e} {_max(closure[key]):9.2e} "
            f"{max(boots[key]):6d} {sum(b > 999 for b in boots[key]):7d} {flagged[key]:10d} "
            f"{_min(p_eq[key]):9.3f} {_max(p_eq[key]):9.3f}"
        )
    if args.tail:
        shown = [k for k in statuses if "FAIL" in statuses[k] or len(set(statuses[k])) > 1 or flagged[k]]
        _print_tails(data, spec, outcomes, primary, shown, args.seeds)
    changed = sum(len(set(v)) > 1 for v in statuses.values())
    print(f"cells whose status changes across seeds: {changed} of {len(statuses)}")
    for name in ("FAIL", "PASS", "INCONCLUSIVE", "INSUFFICIENT", "ERROR"):
        per = [t.get(name, 0) for t in totals]
        print(f"  {name:13s} per seed: min {min(per)}, max {max(per)}  ({' '.join(map(str, per))})")
    print(f"CPU s per seed: {' '.join(f'{x:.0f}' for x in seconds)}")


def _print_tails(data, spec, outcomes, primary, keys, seeds: int) -> None:
    """Per cell of ``keys``: the first-pass replicates on the null's side of the margin at each seed."""
    policy = spec.policy.transfer
    parts = {(p.matchup, p.criterion): p for p in _cell_parts(data, spec, outcomes, primary)}
    print(f"first pass (B = {policy.n_boot}): replicates of the far distance on the null's side, per seed")
    for key in keys:
        part = parts[key]
        c = cell_input(part.matchup, part.criterion, part.votes, part.credits)
        counts, kurtosis = [], []
        for s in range(seeds):
            rng = cell_generator(verdict_seed(s), *c.key)
            cmp = compare_input(c, tie_rule=spec.tie_rule, policy=policy, rng=rng)
            if cmp.boot is None or cmp.vote_share_only:
                continue
            above = cmp.distance() > 0
            dist = cmp.boot["d_hi" if above else "d_lo"]
            base = getattr(dist, "base", dist)  # a cell read in the other orientation: about - X
            reps = dist.about - base._reps if base is not dist else base._reps
            counts.append(int(np.sum(reps <= policy.margin) if above else np.sum(reps >= -policy.margin)))
            kurtosis.append(base._kurtosis)
        print(
            f"  {key[0] + ' / ' + key[1]:48s} {' '.join(map(str, counts))}  "
            f"(at {sum(n > 0 for n in counts)} of {len(counts)} seeds; "
            f"kurtosis {_min(kurtosis):.1f}-{_max(kurtosis):.1f})"
        )


def _min(values) -> float:
    values = np.asarray(values, float)
    return float(np.nanmin(values)) if np.isfinite(values).any() else float("nan")


def _max(values) -> float:
    values = np.asarray(values, float)
    return float(np.nanmax(values)) if np.isfinite(values).any() else float("nan")


if __name__ == "__main__":
    main()
