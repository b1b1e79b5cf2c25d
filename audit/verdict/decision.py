"""The cell decisions, with the multiplicity adjustment across cells, and their reasons.

Per assessed cell, in this order (docs/audit.md, "The decision"):

``FAIL``          the cell's test rejects in the closed test that pools the criteria of a
                  matchup (:mod:`judge_transfer_audit.verdict.hierarchy`; with one criterion per matchup, or
                  ``pool_criteria`` false, the adjustment ``adjust``, Holm by default, over the
                  family of the assessed cells), one test per cell: its p is the
                  smaller of the one-sided p that the judge lies outside the human band
                  widened by the margin and the one-sided p of a direction conflict (judge
                  decisive one way, the readers' vote share decisive the other), see
                  :func:`cell_p` and docs/audit.md, "The decision";
``PASS``          equivalence: two one-sided tests at alpha, ``p_equivalence`` (the larger of
                  the two one-sided p-values against -margin and +margin) below alpha, and
                  the 1 - 2 alpha interval of the distance inside (-margin, +margin) (the
                  interval is the tests' dual: the second condition follows from the first,
                  docs/audit.md 4.3); unadjusted: the overall PASS needs every assessed cell
                  to PASS, an intersection-union test that needs no adjustment;
``INCONCLUSIVE``  neither, with the pairs that would decide it at the current estimates.

INSUFFICIENT and ERROR cells were settled by :func:`judge_transfer_audit.verdict.compare.compare_cell`;
they are not in the family and never PASS or FAIL.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from statistics import NormalDist

import numpy as np

from judge_transfer_audit.model.cells import Interval, Transfer
from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.model.policy import TransferPolicy
from judge_transfer_audit.statistics.budget.compute import (
    MAX_PAIRS,
    PAIRS_NEEDED_POWER,
    power_search,
    verdict_fail_level,
)
from judge_transfer_audit.statistics.uncertainty.multiplicity import holm
from judge_transfer_audit.verdict.compare import CellComparison
from judge_transfer_audit.verdict.hierarchy import Closure, GroupPool, adjusted, closure
from judge_transfer_audit.verdict.paired_bootstrap import STATISTICS
from judge_transfer_audit.verdict.stacked import materialize, prefetch

ADJUSTMENTS = ("holm", "bonferroni", "none")


def adjust_p(p: np.ndarray, method: str) -> np.ndarray:
    """Family-wise adjusted p-values (NaN entries stay NaN and are not counted)."""
    p = np.asarray(p, float)
    if method == "holm":
        return holm(p)
    if method == "bonferroni":
        m = int(np.isfinite(p).sum())
        return np.where(np.isfinite(p), np.minimum(p * m, 1.0), np.nan)
    if method == "none":
        return p.copy()
    raise ValueError(f"unknown adjustment {method!r}: use one of {', '.join(ADJUSTMENTS)}")


ASSESSED = (Status.PASS, Status.FAIL, Status.INCONCLUSIVE)


def cell_p(p_outside: float, p_conflict: float) -> float:
    """The p-value of a cell's one FAIL test: the smaller of its two one-sided p-values.

    The cell's null is "the judge lies within the margin of the band and there is no direction
    conflict"; a conflict with both sides decisive puts the judge above (below) 1/2 and the
    readers' share below (above) it, so both tests reject on the same data: a judge far on one
    side of readers who are on the other. The family is one test per assessed cell (the
    calibration study checks the false-FAIL rate of aligned judges under this rule:
    docs/audit.md, 4.5).
    """
    values = [p for p in (p_outside, p_conflict) if p is not None and np.isfinite(p)]
    return float(min(values)) if values else float("nan")


def adjust_components(p_outside: np.ndarray, p_conflict: np.ndarray, method: str) -> tuple[np.ndarray, np.ndarray]:
    """Adjusted p of each cell's two tests inside the one-test-per-cell family.

    The family's p-values are the cells' :func:`cell_p`; a component's adjusted value is the
    adjusted p its cell would have if that component were the cell's p (so the smaller of a
    cell's two adjusted values is the cell's adjusted p, and a component rejects exactly when
    it would alone carry the cell).
    """
    p_outside, p_conflict = np.asarray(p_outside, float), np.asarray(p_conflict, float)
    family = np.array([cell_p(a, b) for a, b in zip(p_outside, p_conflict)], float)
    if method != "holm":  # single-step: each component is adjusted on its own, as the cell's p would be
        m = int(np.isfinite(family).sum())
        scale = 1.0 if method == "none" else float(m)
        if method not in ADJUSTMENTS:
            adjust_p(family, method)  # raises with the list of methods
        return np.minimum(p_outside * scale, 1.0), np.minimum(p_conflict * scale, 1.0)
    out = np.full(family.shape, np.nan)
    conf = np.full(family.shape, np.nan)
    for k in range(family.size):
        for source, target in ((p_outside, out), (p_conflict, conf)):
            if not np.isfinite(source[k]):
                continue
            trial = family.copy()
            trial[k] = source[k]
            target[k] = float(adjust_p(trial, method)[k])
    return out, conf


MC_SES = 2.0  #: a cell is Monte Carlo borderline when its p is within this many Monte Carlo SEs of its level


UNSEEN_COUNT = 7.0  #: a tail no replicate reached may still hold up to 7 / (B + 1) (-ln 0.001: a 99.9% upper bound)


def borderline(
    p_cell: np.ndarray, se_cell: np.ndarray, method: str, alpha: float, n_boot: np.ndarray | None = None
) -> np.ndarray:
    """Per cell of the family: could the bootstrap's Monte Carlo error alone change its FAIL decision?

    The cell's p is replaced by ``p - 2 se`` and by its Monte Carlo upper value, the larger of
    ``p + 2 se`` and ``UNSEEN_COUNT / (B + 1)`` (below that no count of ``B`` replicates can rule
    out a tail mass: with none beyond the null, 7 / (B + 1) is the 99.9% upper bound of the
    bootstrap's own tail probability), the others kept, and the family adjusted again:
    borderline when the two adjusted values fall on opposite sides of ``alpha``.
    """
    p_cell, se_cell = np.asarray(p_cell, float), np.asarray(se_cell, float)
    unseen = np.zeros(p_cell.shape) if n_boot is None else UNSEEN_COUNT / (np.asarray(n_boot, float) + 1.0)
    out = np.zeros(p_cell.shape, dtype=bool)
    for k in range(p_cell.size):
        if not (np.isfinite(p_cell[k]) and np.isfinite(se_cell[k])):
            continue
        low = max(p_cell[k] - MC_SES * se_cell[k], 0.0)
        high = min(max(p_cell[k] + MC_SES * se_cell[k], unseen[k]), 1.0)
        sides = []
        for moved in (low, high):
            trial = p_cell.copy()
            trial[k] = moved
            sides.append(bool(adjust_p(trial, method)[k] < alpha))
        out[k] = sides[0] != sides[1]
    return out


def pass_borderline(p_equivalence: np.ndarray, se: np.ndarray, alpha: float) -> np.ndarray:
    """Per cell: could the bootstrap's Monte Carlo error alone change its PASS decision?

    The equivalence test is not adjusted (the overall PASS is an intersection-union test), so
    a cell is borderline when ``p_equivalence - 2 se`` and ``p_equivalence + 2 se`` fall on
    opposite sides of ``alpha``.
    """
    p, se = np.asarray(p_equivalence, float), np.asarray(se, float)
    ok = np.isfinite(p) & np.isfinite(se)
    low = np.where(ok, p - MC_SES * se, np.nan)
    high = np.where(ok, p + MC_SES * se, np.nan)
    return ok & ((low < alpha) != (high < alpha))


def status_from(
    *,
    p_outside_adjusted: float,
    p_conflict_adjusted: float,
    difference_low: float,
    difference_high: float,
    alpha: float,
    margin: float,
    p_equivalence: float | None = None,
) -> Status:
    """The rule itself, on the numbers a result records (FAIL, then PASS, else INCONCLUSIVE).

    ``p_equivalence`` None: a result from before schema 2.4, decided on the interval alone.
    """
    if p_outside_adjusted < alpha or p_conflict_adjusted < alpha:
        return Status.FAIL
    equivalent = p_equivalence is None or p_equivalence < alpha
    if equivalent and difference_low > -margin and difference_high < margin:
        return Status.PASS
    return Status.INCONCLUSIVE


def recorded_components(
    p_out: np.ndarray, p_conf: np.ndarray, transfers: Sequence[Transfer], groups: Sequence, method: str
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`hierarchical_components` from the recorded closure values (``p_closure``, ``p_matchup_closure``)."""
    group_closure: dict = {}
    for t, g in zip(transfers, groups):
        if t.p_matchup_closure is not None:
            group_closure[g] = float(t.p_matchup_closure)
    out = np.full(len(transfers), np.nan)
    conf = np.full(len(transfers), np.nan)
    for k, (t, g) in enumerate(zip(transfers, groups)):
        for source, target in ((p_out, out), (p_conf, conf)):
            if np.isfinite(source[k]):
                target[k] = adjusted(max(float(t.p_closure), float(source[k])), g, group_closure, method)
    return out, conf


def redecide(transfers: Sequence[Transfer], policy: TransferPolicy, groups: Sequence | None = None) -> list[Transfer]:
    """The decisions re-derived from recorded transfers: the adjustment and the rule, not the bootstrap.

    What :func:`decide` computed from the data (raw p-values, intervals, INSUFFICIENT and
    ERROR) is taken as recorded; the multiplicity adjustment across the assessed cells and the
    status each cell's numbers give are recomputed (``audit gate`` uses this to refuse a
    result whose recorded statuses do not follow from its own numbers). ``groups``: each transfer's
    matchup; with them and the recorded closure values (``p_closure``, ``p_matchup_closure``) the
    hierarchical closed test is re-derived, else Holm over the cells (a result that records none).
    """
    assessed = [i for i, t in enumerate(transfers) if t.status in ASSESSED]
    p_out = np.array([np.nan if transfers[i].p_outside is None else transfers[i].p_outside for i in assessed], float)
    p_conf = np.array([np.nan if transfers[i].p_conflict is None else transfers[i].p_conflict for i in assessed], float)
    recorded = groups is not None and all(transfers[i].p_closure is not None for i in assessed)
    if recorded and policy.adjust != "none":
        adjusted_out, adjusted_conf = recorded_components(
            p_out, p_conf, [transfers[i] for i in assessed], [groups[i] for i in assessed], policy.adjust
        )
    else:
        adjusted_out, adjusted_conf = adjust_components(p_out, p_conf, policy.adjust)
    out = list(transfers)
    for k, i in enumerate(assessed):
        t = transfers[i]
        adj_out, adj_conf = float(adjusted_out[k]), float(adjusted_conf[k])
        status = status_from(
            p_outside_adjusted=adj_out,
            p_conflict_adjusted=adj_conf,
            difference_low=t.difference.ci_low,
            difference_high=t.difference.ci_high,
            alpha=policy.alpha,
            margin=policy.margin,
            p_equivalence=t.p_equivalence,
        )
        out[i] = replace(
            t,
            status=status,
            p_outside_adjusted=adj_out,
            p_conflict_adjusted=adj_conf,
            direction_conflict=bool(adj_conf < policy.alpha),
        )
    return out


def p_text(p: float, n_boot: int) -> str:
    """``= 0.0032``, or ``< 0.001`` below ``1 / (B + 1)`` (at B = 999): the terminal's rule for the reasons.

    Below what ``B`` replicates resolve the p is the Gaussian continuation's extrapolation
    (docs/audit.md 4.2): its order of magnitude moves with the seed while the decision does not,
    so the text shows the bound; the JSON keeps the number the decision used.
    """
    floor = 1.0 / (n_boot + 1) if n_boot > 0 else 0.0
    return f"< {floor:.2g}" if p < floor else f"= {p:.2g}"


def _pts(x: float) -> str:
    return f"{100 * x:+.1f}"


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _side(direction: str, systems: tuple[str, str] | None = None) -> str:
    """The system a direction points to, by name when the cell's names are known."""
    if systems is not None and direction in ("focal", "other"):
        return systems[0] if direction == "focal" else systems[1]
    return {"focal": "the focal system", "other": "the other system"}.get(direction, direction)


def _human_note(j_dir: str, h_dir: str, systems: tuple[str, str] | None = None) -> str:
    """What the two directions say, without calling chance a direction."""
    if j_dir in ("focal", "other") and h_dir == "chance":
        return f"; the judge is decisive for {_side(j_dir, systems)} where the readers are at chance"
    if j_dir in ("focal", "other") and h_dir in ("focal", "other") and j_dir != h_dir:
        return f"; the judge is decisive for {_side(j_dir, systems)}, the readers for {_side(h_dir, systems)}"
    return ""


def hierarchical_components(
    p_out: np.ndarray, p_conf: np.ndarray, groups: Sequence, method: str, pools: dict | None = None
) -> tuple[np.ndarray, np.ndarray, Closure]:
    """Adjusted p of each cell's two tests under the hierarchical closed test
    (:mod:`judge_transfer_audit.verdict.hierarchy`).

    A component's adjusted value is the closed test's adjusted p with the component in place of the
    cell's own p: Holm over ``[max(Pi_c, p_component)]`` and the other matchups' ``Pi_g``; so the smaller
    of the two is the cell's adjusted p, and with one cell per matchup this is :func:`adjust_components`
    exactly. ``method`` ``"none"``: the raw p-values.
    """
    p_out, p_conf = np.asarray(p_out, float), np.asarray(p_conf, float)
    family = np.array([cell_p(a, b) for a, b in zip(p_out, p_conf)], float)
    if method not in ADJUSTMENTS:
        adjust_p(family, method)  # raises with the list of methods
    cl = closure(family, groups, pools or {})
    if method == "none":
        return p_out.copy(), p_conf.copy(), cl
    out = np.full(family.shape, np.nan)
    conf = np.full(family.shape, np.nan)
    for k, g in enumerate(groups):
        for source, target in ((p_out, out), (p_conf, conf)):
            if np.isfinite(source[k]) and np.isfinite(cl.cell_closure[k]):
                target[k] = adjusted(max(float(cl.cell_closure[k]), float(source[k])), g, cl.group_closure, method)
    return out, conf, cl


def decide(
    comparisons: Sequence[CellComparison],
    policy: TransferPolicy,
    groups: Sequence | None = None,
    pools: dict | None = None,
    systems: Sequence[tuple[str, str] | None] | None = None,
) -> list[Transfer]:
    """One :class:`~judge_transfer_audit.results.result.Transfer` per comparison (the baseline fields left empty).

    ``groups``: each comparison's matchup (cells of one matchup share pairs; None: every cell its own
    matchup, i.e. Holm over the cells); ``pools``: the matchups' pooled tests
    (:func:`judge_transfer_audit.verdict.hierarchy.group_pools`); ``systems``: each comparison's (focal, other)
    names, which the reasons name the rates by (None: "the focal system").
    """
    assessed = [i for i, c in enumerate(comparisons) if c.assessed]
    family = len(assessed)
    fam_groups = [(i,) if groups is None else groups[i] for i in assessed]
    sizes = {g: fam_groups.count(g) for g in set(fam_groups)}
    pools = {} if pools is None else _family_pools(pools, assessed)
    prefetch_readings([comparisons[i] for i in assessed], policy.decisive_level)
    outside = [comparisons[i].p_outside_with_se() for i in assessed]
    conflict = [comparisons[i].p_conflict_with_se() for i in assessed]
    p_out = np.array([p for p, _ in outside], float)
    p_conf = np.array([p for p, _ in conflict], float)
    se_out = np.array([se for _, se in outside], float)
    se_conf = np.array([se for _, se in conflict], float)
    adj_out, adj_conf, cl = hierarchical_components(p_out, p_conf, fam_groups, policy.adjust, pools)
    equivalence = [comparisons[i].p_equivalence_with_se() for i in assessed]
    p_eq = np.array([p for p, _ in equivalence], float)
    se_eq = np.array([se for _, se in equivalence], float)
    n_boot = np.array([comparisons[i].boot.n_boot for i in assessed], float)
    near_fail = _near_fail(p_out, se_out, p_conf, se_conf, policy, n_boot, fam_groups, cl)
    # the PASS side matters unless the cell FAILs beyond its Monte Carlo error
    fails = (np.nan_to_num(adj_out, nan=1.0) < policy.alpha) | (np.nan_to_num(adj_conf, nan=1.0) < policy.alpha)
    near_pass = pass_borderline(p_eq, se_eq, policy.alpha) & ~(fails & ~near_fail)
    fail_level = verdict_fail_level(policy.alpha, policy.adjust, family)
    level = 1.0 - 2.0 * policy.alpha
    out: list[Transfer] = []
    rank = {i: k for k, i in enumerate(assessed)}
    for i, c in enumerate(comparisons):
        if not c.assessed:
            out.append(_not_assessed(c, policy))
            continue
        k = rank[i]
        t = _assessed(
            c,
            policy,
            level,
            (float(p_out[k]), float(adj_out[k]), float(p_conf[k]), float(adj_conf[k]), float(p_eq[k])),
            fail_level,
            None if systems is None else systems[i],
        )
        tests = [name for name, near in (("FAIL", near_fail[k]), ("PASS", near_pass[k])) if near]
        reason = t.reason + "".join(_BORDERLINE[name] for name in tests)
        g = fam_groups[k]
        if sizes[g] > 1 and policy.adjust in CLOSED_WORD:
            reason = reason.replace(ADJ_WORD[policy.adjust], CLOSED_WORD[policy.adjust])
        out.append(
            replace(
                t,
                reason=reason,
                p_closure=_finite_or_none(cl.cell_closure[k]),
                p_matchup=_finite_or_none(cl.group_p.get(g, float("nan"))),
                p_matchup_closure=_finite_or_none(cl.group_closure.get(g, float("nan"))),
                p_matchup_equivalence=_pool_equivalence(pools, g, sizes[g]),
                p_outside_mc_se=float(se_out[k]),
                p_conflict_mc_se=float(se_conf[k]),
                p_equivalence_mc_se=_finite_or_none(se_eq[k]),
                monte_carlo_borderline=bool(tests),
                monte_carlo_borderline_test=", ".join(tests) or None,
            )
        )
    return out


def _pool_equivalence(pools: dict, g, size: int) -> float | None:
    """The matchup's pooled equivalence p when its pool holds every assessed cell of the matchup."""
    pool = pools.get(g)
    if pool is None or len(pool.cells) != size:
        return None
    return _finite_or_none(pool.p_equivalence)


def _family_pools(pools: dict, assessed: Sequence[int]) -> dict:
    """The pools with their cells as positions in the family of assessed cells."""
    rank = {i: k for k, i in enumerate(assessed)}
    out = {}
    for g, pool in pools.items():
        if all(i in rank for i in pool.cells):
            out[g] = GroupPool(tuple(rank[i] for i in pool.cells), pool.p, pool.p_equivalence)
    return out


def _near_fail(p_out, se_out, p_conf, se_conf, policy, n_boot, groups, cl) -> np.ndarray:
    """:func:`monte_carlo_borderline`; in a matchup of several cells the cell's p moved by its Monte Carlo
    error while the larger sets' values (``Pi_c`` above the cell's own p) and the other matchups stay."""
    if len(set(groups)) == len(groups) or policy.adjust == "none":
        return monte_carlo_borderline(p_out, se_out, p_conf, se_conf, policy, n_boot)
    family = np.array([cell_p(a, b) for a, b in zip(p_out, p_conf)], float)
    se = np.where(np.nan_to_num(p_out, nan=np.inf) <= np.nan_to_num(p_conf, nan=np.inf), se_out, se_conf)
    unseen = UNSEEN_COUNT / (np.asarray(n_boot, float) + 1.0)
    out = np.zeros(family.shape, dtype=bool)
    for k, g in enumerate(groups):
        if not (np.isfinite(family[k]) and np.isfinite(se[k]) and np.isfinite(cl.cell_closure[k])):
            continue
        rest = float(cl.cell_closure[k]) if cl.cell_closure[k] > family[k] else 0.0
        low = max(family[k] - MC_SES * se[k], 0.0)
        high = min(max(family[k] + MC_SES * se[k], unseen[k]), 1.0)
        sides = [adjusted(max(rest, moved), g, cl.group_closure, policy.adjust) < policy.alpha for moved in (low, high)]
        out[k] = sides[0] != sides[1]
    return out


def prefetch_readings(assessed: Sequence[CellComparison], decisive_level: float) -> None:
    """Every reading the decision makes of the assessed cells' distributions, computed at once on
    stacked arrays (:mod:`judge_transfer_audit.verdict.stacked`; the same numbers, read from the caches below)."""
    materialize((c.boot, k) for c in assessed for k in STATISTICS)
    intervals, p_values = [], []
    for c in assessed:
        i, p = c.readings(decisive_level)
        intervals += i
        p_values += p
    prefetch(intervals=intervals, p_values=p_values)


def _finite_or_none(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


_BORDERLINE = {
    "FAIL": (
        "; Monte Carlo borderline (the FAIL test): its p-value is within two Monte Carlo standard errors of its "
        "adjusted level (or below what the replicates can resolve, 7 / (replicates + 1)), so the bootstrap's own "
        "noise, not the data, could move this cell to or from FAIL (raise transfer.n_boot)"
    ),
    "PASS": (
        "; Monte Carlo borderline (the PASS test): the equivalence p-value is within two Monte Carlo standard "
        "errors of alpha, so the bootstrap's own noise, not the data, could move this cell between PASS and "
        "INCONCLUSIVE (raise transfer.n_boot)"
    ),
}


def monte_carlo_borderline(
    p_out: np.ndarray,
    se_out: np.ndarray,
    p_conf: np.ndarray,
    se_conf: np.ndarray,
    policy: TransferPolicy,
    n_boot: np.ndarray | None = None,
) -> np.ndarray:
    """:func:`borderline` on the family's cell p-values (each with the SE of the test that gives it)."""
    p_out, p_conf = np.asarray(p_out, float), np.asarray(p_conf, float)
    family = np.array([cell_p(a, b) for a, b in zip(p_out, p_conf)], float)
    se = np.where(np.nan_to_num(p_out, nan=np.inf) <= np.nan_to_num(p_conf, nan=np.inf), se_out, se_conf)
    return borderline(family, se, policy.adjust, policy.alpha, n_boot)


def _counts(c: CellComparison) -> dict:
    t = c.table
    if t is None:
        return {}
    return {"n_pairs": t.n_pairs, "n_readers": t.n_readers, "readers_per_pair": t.readers_per_pair()}


def _not_assessed(c: CellComparison, policy: TransferPolicy) -> Transfer:
    return Transfer(
        status=c.status,
        reason=c.reason,
        margin=policy.margin,
        interval_level=1.0 - 2.0 * policy.alpha,
        adjust=policy.adjust,
        n_boot=c.boot.n_boot if c.boot is not None else 0,
        **_counts(c),
    )


def _assessed(
    c: CellComparison,
    policy: TransferPolicy,
    level: float,
    p_values: tuple[float, float, float, float, float],
    fail_level: float,
    systems: tuple[str, str] | None = None,
) -> Transfer:
    """``p_values``: raw and adjusted p of the outside test, raw and adjusted of the conflict test, p of equivalence;
    ``systems``: the cell's (focal, other) names, which every rate in the reason is named by."""
    p_out, adj_out, p_conf, adj_conf, p_eq = p_values
    a, m = policy.alpha, policy.margin
    b = c.boot
    v, mj, j = b.estimate("vote_share"), b.estimate("majority_rate"), b.estimate("judge_rate")
    if c.vote_share_only:
        return _vote_share_decision(c, policy, level, p_values, fail_level, systems)
    band = (min(v, mj), max(v, mj))
    dist = c.distance()
    low, high = c.band_interval(a)
    j_dir, h_dir = c.direction("judge_rate", policy.decisive_level), c.direction("vote_share", policy.decisive_level)
    conflict = bool(adj_conf < a)
    outside = bool(adj_out < a)
    adj_word = ADJ_WORD[policy.adjust]
    focal = _side("focal", systems)
    head = (
        f"judge {_pct(j)} for {focal} vs the human band [{_pct(band[0])}, {_pct(band[1])}] for {focal} "
        f"(vote share {_pct(v)}, majority rate {_pct(mj)}): distance {_pts(dist)} points, {level:.0%} interval "
        f"[{_pts(low)}, {_pts(high)}]"
    )
    status = status_from(
        p_outside_adjusted=adj_out,
        p_conflict_adjusted=adj_conf,
        difference_low=low,
        difference_high=high,
        alpha=a,
        margin=m,
        p_equivalence=p_eq,
    )
    if status is Status.FAIL:
        parts = []
        if outside:
            where = "above" if b.estimate("d_hi") > 0 else "below"
            parts.append(
                f"the judge lies {where} the band by more than the {100 * m:.0f}-point margin "
                f"(p {p_text(p_out, b.n_boot)}, {adj_word} {p_text(adj_out, b.n_boot)})"
            )
        if conflict:
            parts.append(
                f"direction conflict: the judge is decisive for {_side('focal' if j > 0.5 else 'other', systems)} "
                f"and the readers' vote share for {_side('focal' if v > 0.5 else 'other', systems)} "
                f"(p {p_text(p_conf, b.n_boot)}, {adj_word} {p_text(adj_conf, b.n_boot)})"
            )
        reason = f"FAIL: {head}; " + "; ".join(parts)
    elif status is Status.PASS:
        reason = (
            f"PASS: {head}, inside the {100 * m:.0f}-point margin (equivalence: two one-sided tests, "
            f"p {p_text(p_eq, b.n_boot)} < alpha = {a:g})" + _human_note(j_dir, h_dir, systems)
        )
    else:
        reason = (
            f"INCONCLUSIVE: {head}: neither inside the {100 * m:.0f}-point margin "
            f"(equivalence p {p_text(p_eq, b.n_boot)}, PASS needs < {a:g}) nor beyond it at the {adj_word} level "
            f"(p {p_text(adj_out, b.n_boot)})" + _human_note(j_dir, h_dir, systems)
        )
    transfer = Transfer(
        status=status,
        reason=reason,
        margin=m,
        difference=Interval(float(dist), float(low), float(high), level),
        difference_vote_share=c.interval("difference_vote_share", level),
        difference_majority=c.interval("difference_majority", level),
        judge_rate=c.interval("judge_rate", level),
        band_low=float(band[0]),
        band_high=float(band[1]),
        interval_level=level,
        p_outside=p_out,
        p_outside_adjusted=adj_out,
        p_conflict=p_conf,
        p_conflict_adjusted=adj_conf,
        p_equivalence=_finite_or_none(p_eq),
        adjust=policy.adjust,
        direction_conflict=conflict,
        human_direction=h_dir,
        judge_direction=j_dir,
        n_boot=b.n_boot,
        majority_identified=True,
        **_counts(c),
    )
    if status is not Status.INCONCLUSIVE:
        return transfer
    needed, why = pairs_needed(transfer, alpha=a, fail_level=fail_level)
    return replace(
        transfer,
        pairs_needed=needed,
        pairs_needed_power=PAIRS_NEEDED_POWER,
        reason=reason + "; " + _budget(c, needed, why),
    )


ADJ_WORD = {"holm": "Holm-adjusted", "bonferroni": "Bonferroni-adjusted", "none": "unadjusted"}
#: the same adjustment named for a cell whose matchup pools several criteria (the closed test)
CLOSED_WORD = {
    "holm": "closed-test-adjusted (criteria pooled per matchup, Holm over matchups)",
    "bonferroni": "closed-test-adjusted (criteria pooled per matchup, Bonferroni over matchups)",
}


def pairs_read_twice(v: float, margin: float, level: float) -> int:
    """Pairs read twice that would identify the band's far edge (the majority rate) to within the margin.

    A rough rule from the moment estimator of the between-pair variance: ``tau^2`` (probability scale) is
    the covariance of two votes on one pair, estimated from ``n2`` pairs read twice with a standard error
    of about ``V (1 - V) / sqrt(n2)``; across ``tau^2`` in ``[0, V (1 - V)]`` the majority rate sweeps from
    1 (0) down (up) to ``V``, a slope of about ``1 / max(V, 1 - V)``, so ``se(M) ~ min(V, 1 - V) / sqrt(n2)``;
    the interval's half-width ``z se(M)`` within the margin needs ``n2 >= (z min(V, 1 - V) / m)^2``.
    """
    z = float(NormalDist().inv_cdf(0.5 + level / 2.0))
    return max(2, math.ceil((z * min(v, 1.0 - v) / margin) ** 2))


def _vote_share_decision(
    c: CellComparison,
    policy: TransferPolicy,
    level: float,
    p_values: tuple[float, float, float, float, float],
    fail_level: float,
    systems: tuple[str, str] | None = None,
) -> Transfer:
    """A cell whose pairs are read once: decided on the judge's rate against the readers' vote share."""
    p_out, adj_out, p_conf, adj_conf, p_eq = p_values
    a, m = policy.alpha, policy.margin
    b = c.boot
    v, j = b.estimate("vote_share"), b.estimate("judge_rate")
    dist = c.distance()
    low, high = c.band_interval(a)
    j_dir, h_dir = c.direction("judge_rate", policy.decisive_level), c.direction("vote_share", policy.decisive_level)
    adj_word = ADJ_WORD[policy.adjust]
    twice = pairs_read_twice(v, m, level)
    t = c.table
    read_twice = int(np.sum(np.bincount(t.pair_index, minlength=t.n_pairs) >= 2)) if t is not None else 0
    unknown = (
        f"vote-share decision: {read_twice} of the {t.n_pairs} compared pairs carry two or more credited votes, "
        "so the readers' per-pair majority, and with it the band's far edge (the majority rate), cannot be "
        "estimated; decided here: the judge's side against the readers' vote share and whether it is less "
        f"decisive than the vote share by more than the margin; not decidable: whether a judge more decisive "
        f"than the readers' vote share lies within their majority rate (about {twice} pairs read twice would "
        "identify it)"
    )
    focal = _side("focal", systems)
    head = (
        f"judge {_pct(j)} for {focal} vs the readers' vote share {_pct(v)} for {focal} "
        "(the majority rate not identified): "
        f"J - V {_pts(dist)} points, {level:.0%} interval [{_pts(low)}, {_pts(high)}]"
    )
    status = status_from(
        p_outside_adjusted=adj_out,
        p_conflict_adjusted=adj_conf,
        difference_low=low,
        difference_high=high,
        alpha=a,
        margin=m,
        p_equivalence=p_eq,
    )
    conflict = bool(adj_conf < a)
    if status is Status.FAIL:
        parts = []
        if adj_out < a:
            parts.append(
                f"the judge is less decisive than the readers' vote share by more than the {100 * m:.0f}-point "
                f"margin, on the vote share's side of 1/2 (p {p_text(p_out, b.n_boot)}, {adj_word} "
                f"{p_text(adj_out, b.n_boot)})"
            )
        if conflict:
            parts.append(
                f"direction conflict: the judge is decisive for {_side('focal' if j > 0.5 else 'other', systems)} "
                f"and the readers' vote share for {_side('focal' if v > 0.5 else 'other', systems)} "
                f"(p {p_text(p_conf, b.n_boot)}, {adj_word} {p_text(adj_conf, b.n_boot)})"
            )
        reason = f"FAIL: {head}; " + "; ".join(parts)
    elif status is Status.PASS:
        reason = (
            f"PASS: {head}, within the {100 * m:.0f}-point margin of the vote share, so within it of the band "
            f"wherever the majority rate lies on the vote share's side (equivalence: two one-sided tests, "
            f"p {p_text(p_eq, b.n_boot)} < alpha = {a:g})" + _human_note(j_dir, h_dir, systems)
        )
    else:
        reason = (
            f"INCONCLUSIVE: {head}: neither within the {100 * m:.0f}-point margin of the vote share "
            f"(equivalence p {p_text(p_eq, b.n_boot)}, PASS needs < {a:g}) nor less decisive than it by more "
            f"than the margin or in a direction conflict at the {adj_word} level (p {p_text(adj_out, b.n_boot)})"
            + _human_note(j_dir, h_dir, systems)
        )
    reason += "; " + unknown
    transfer = Transfer(
        status=status,
        reason=reason,
        margin=m,
        difference=Interval(float(dist), float(low), float(high), level),
        difference_vote_share=c.interval("difference_vote_share", level),
        judge_rate=c.interval("judge_rate", level),
        band_low=float(v),
        band_high=float(v),
        interval_level=level,
        p_outside=p_out,
        p_outside_adjusted=adj_out,
        p_conflict=p_conf,
        p_conflict_adjusted=adj_conf,
        p_equivalence=_finite_or_none(p_eq),
        adjust=policy.adjust,
        direction_conflict=conflict,
        human_direction=h_dir,
        judge_direction=j_dir,
        n_boot=b.n_boot,
        majority_identified=False,
        pairs_read_twice_needed=twice,
        **_counts(c),
    )
    return transfer


def pairs_needed(t: Transfer, *, alpha: float, fail_level: float) -> tuple[int | None, str]:
    """The pairs that decide an INCONCLUSIVE cell with 80% power at its estimates, and why none when None.

    :func:`judge_transfer_audit.statistics.budget.compute.power_search` (the label budget's own search, one home) on
    the cell's recorded numbers; at least one pair more than the cell has.
    """
    found = power_search(t, power=PAIRS_NEEDED_POWER, alpha=alpha, fail_level=fail_level)
    if found.state == "on the margin":
        return None, "the estimate sits on the margin: no sample size would decide it at the current estimates"
    if found.state != "searched":
        return None, "the intervals of the distance have no width: no sample size changes the decision"
    if found.pairs is None:
        return None, f"{found.target} would need more than {MAX_PAIRS:,} pairs for {PAIRS_NEEDED_POWER:.0%} power"
    return max(found.pairs, int(t.n_pairs) + 1), ""


def _budget(c: CellComparison, needed: int | None, why: str) -> str:
    if needed is None:
        return why
    t = c.table
    more = needed - t.n_pairs
    rpp = t.readers_per_pair()
    readers = math.ceil(t.n_readers * needed / t.n_pairs)
    return (
        f"about {needed} pairs would decide it with {PAIRS_NEEDED_POWER:.0%} power at the current estimates "
        f"({more} more, each read by ~{rpp:.1f} readers: ~{math.ceil(more * rpp)} more votes; the 1/pairs "
        f"scaling assumes the pool of readers grows in proportion, to ~{readers} readers, {readers - t.n_readers} more)"
    )


__all__ = [
    "ADJUSTMENTS",
    "MC_SES",
    "UNSEEN_COUNT",
    "adjust_components",
    "adjust_p",
    "borderline",
    "cell_p",
    "decide",
    "monte_carlo_borderline",
    "pairs_needed",
    "p_text",
    "pass_borderline",
    "redecide",
    "status_from",
]
