"""The rate decision's cell-level power on many cells: the closed test against other local tests and
against rules that control other error rates, on the same simulated studies.

    python benchmarks/rate_cell_power.py --studies 20                # 90 cells, the paper's biased judge
    python benchmarks/rate_cell_power.py --studies 20 --judge reader-like

Each study is decided once through the pipeline's path (:func:`judge_transfer_audit.verdict.assess.decide_cells`,
:mod:`judge_transfer_audit.verdict.hierarchy_study`'s designs); the cells' recorded FAIL p-values and the matchups'
pooled tests (:func:`judge_transfer_audit.verdict.hierarchy.group_pools`) are then decided again by each rule:

``closed``            the closed test as it is (a matchup's sets: ``2 min(p_pooled, |J| min p)``)
``pooled-whole-only`` the pooled test only in the set of all a matchup's cells, Bonferroni elsewhere
``pooled-as-one-more`` Bonferroni over the set's cells and its pooled test: ``(|J| + 1) min(...)``
``no-pooling``        Bonferroni within a matchup (Holm over the matchups' hardest pieces)
``holm-in-failing``   Holm within each matchup the closed test FAILs (each matchup's own error rate)
``bh``                Benjamini-Hochberg over every cell (false discovery rate)
``unadjusted``        each cell's raw p at alpha

The first four control the familywise error rate at alpha (closed testing with valid local tests); the
last three do not. Per rule: the share of the cells truly more than 30 points out that FAIL (with its
binomial SE), the cells FAILed, and the studies with a false FAIL (a cell FAILed that is truly within
the margin of the true band).
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np

from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.model.policy import TransferPolicy
from judge_transfer_audit.model.tie_rules import EVEN_SPLIT
from judge_transfer_audit.statistics.uncertainty.multiplicity import holm
from judge_transfer_audit.verdict.assess import decide_cells
from judge_transfer_audit.verdict.decision import cell_p
from judge_transfer_audit.verdict.hierarchy import adjusted, group_pools
from judge_transfer_audit.verdict.hierarchy_study import DESIGNS, simulate_study

FWER_RULES = ("closed", "pooled-whole-only", "pooled-as-one-more", "no-pooling")
RULES = (*FWER_RULES, "holm-in-failing", "bh", "unadjusted")


def _piece(rule: str, subset, whole: bool, p: np.ndarray, pooled: dict | None, mask: int | None) -> float:
    values = p[list(subset)]
    k = len(values)
    if k == 1:
        return float(values[0])
    low = float(np.min(values))
    q = pooled.get(mask) if pooled is not None and mask is not None else None
    if q is None or rule == "no-pooling" or (rule == "pooled-whole-only" and not whole):
        return min(1.0, k * low)
    if rule == "pooled-as-one-more":
        return min(1.0, (k + 1) * min(q, low))
    return min(1.0, 2 * min(q, k * low))


def closed_fails(rule: str, p: np.ndarray, groups: list, pools: dict, alpha: float) -> tuple[np.ndarray, dict]:
    """Per cell FAIL and per matchup FAIL under the closed test with ``rule``'s local tests in a matchup."""
    members: dict = {}
    for i, g in enumerate(groups):
        if np.isfinite(p[i]):
            members.setdefault(g, []).append(i)
    cell_closure, group_p, group_closure = np.full(p.shape, np.nan), {}, {}
    for g, cells in members.items():
        pool = pools.get(g)
        where = {i: b for b, i in enumerate(pool.cells)} if pool is not None else {}
        pooled = pool.p if pool is not None else None

        def mask_of(subset, where=where):
            return sum(1 << where[i] for i in subset) if all(i in where for i in subset) else None

        group_p[g] = _piece(rule, cells, True, p, pooled, mask_of(cells))
        best = {i: p[i] for i in cells}
        top = max(best.values())
        for size in range(2, len(cells) + 1):
            for subset in itertools.combinations(cells, size):
                v = _piece(rule, subset, size == len(cells), p, pooled, mask_of(subset))
                top = max(top, v)
                for i in subset:
                    best[i] = max(best[i], v)
        for i, v in best.items():
            cell_closure[i] = v
        group_closure[g] = top
    fails = np.array([adjusted(cell_closure[i], groups[i], group_closure, "holm") < alpha for i in range(p.size)])
    matchups = {g: adjusted(group_p[g], g, group_closure, "holm") < alpha for g in group_p}
    return fails, matchups


def decide_by(rule: str, p: np.ndarray, groups: list, pools: dict, alpha: float) -> np.ndarray:
    if rule in FWER_RULES:
        return closed_fails(rule, p, groups, pools, alpha)[0]
    q = np.nan_to_num(p, nan=1.0)
    if rule == "unadjusted":
        return q < alpha
    if rule == "bh":
        order = np.argsort(q)
        below = q[order] <= np.arange(1, q.size + 1) / q.size * alpha
        out = np.zeros(q.size, bool)
        if below.any():
            out[order[: np.flatnonzero(below).max() + 1]] = True
        return out
    _, failing = closed_fails("closed", p, groups, pools, alpha)
    out = np.zeros(q.size, bool)
    for g, failed in failing.items():
        idx = [i for i, h in enumerate(groups) if h == g]
        if failed:
            out[idx] = holm(q[idx]) < alpha
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--studies", type=int, default=20)
    parser.add_argument("--design", default="90cells", choices=sorted(DESIGNS))
    parser.add_argument("--judge", default="biased")
    parser.add_argument("--n-boot", type=int, default=499)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    policy = TransferPolicy(n_boot=args.n_boot)
    started = time.perf_counter()
    tally = {r: {"far": 0, "far_fail": 0, "fail": 0, "false_studies": 0} for r in RULES}
    mismatches = 0  # "closed" against the statuses the pipeline recorded (a check of this script)
    for s in range(args.studies):
        inputs, truth = simulate_study(DESIGNS[args.design], args.judge, s, args.seed)
        transfers, comparisons = decide_cells(inputs, tie_rule=EVEN_SPLIT, policy=policy, seed=args.seed + s)
        groups = [c.group for c in inputs]
        pools = group_pools(comparisons, groups, policy, args.seed + s)
        p = np.array(
            [cell_p(t.p_outside, t.p_conflict) if c.assessed else np.nan for t, c in zip(transfers, comparisons)]
        )
        for rule in RULES:
            fails = decide_by(rule, p, groups, pools, policy.alpha)
            if rule == "closed":
                mismatches += sum(bool(f) != (t.status is Status.FAIL) for f, t in zip(fails, transfers))
            t = tally[rule]
            t["fail"] += int(fails.sum())
            t["far"] += sum(far for _, far, _ in truth)
            t["far_fail"] += sum(bool(f) and far for f, (_, far, _) in zip(fails, truth))
            t["false_studies"] += any(bool(f) and not out for f, (out, _, _) in zip(fails, truth))
    print(f"{'rule':20s} {'far FAIL':>16s}  cells FAIL  studies with a false FAIL")
    for rule in RULES:
        t = tally[rule]
        share = t["far_fail"] / max(t["far"], 1)
        se = np.sqrt(share * (1 - share) / max(t["far"], 1))
        print(f"{rule:20s} {share:.3f} ± {se:.3f} ({t['far']})  {t['fail']:10d}  {t['false_studies']}/{args.studies}")
    print(
        f"({time.perf_counter() - started:.0f} s; {args.studies} studies, {args.design}, judge {args.judge}; "
        f"'closed' differs from the recorded statuses in {mismatches} cells)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
