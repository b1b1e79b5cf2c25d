"""The hierarchical FAIL decision: study, matchups, then the cells of a failing matchup.

The criteria of a matchup are read on the same pairs, so a judge biased one way on every
criterion of a matchup is one piece of evidence seen several times, not several unrelated
questions: Holm over every cell treats it as the latter and loses the power the pooled
evidence has. The FAIL decision is a closed test (Marcus, Peritz and Gabriel 1976) over the
cells' null hypotheses ``H_c`` ("the judge lies within the margin of the band, no direction
conflict"), whose local tests pool the criteria of a matchup:

* **piece tests** (one matchup ``g``, a set ``J`` of its assessed cells): ``pi(J) = p_c`` for one
  cell (:func:`judge_transfer_audit.verdict.decision.cell_p`); for two or more, the Bonferroni combination of two
  valid tests of ``H_J``, ``min(1, 2 min(p_pool(J), |J| min_{c in J} p_c))``: the pooled test reads
  the mean over ``J`` of the cells' distances to the band ends (``d_hi`` above, ``d_lo`` below; under
  ``H_J`` every ``d_hi <= m`` so their mean is too) on **one joint bootstrap of the matchup's pairs**
  (:func:`joint_bootstraps`: every criterion's replicate ``b`` resamples the same pairs and readers),
  and the Bonferroni part keeps a single far-out cell among many in-margin ones detectable. A set
  holding a cell decided on its vote share alone (majority rate not identified) has no pooled part;
* **local test of any set of cells** ``I``: Bonferroni over the ``K`` matchups it touches, each piece
  ``I cap g`` at ``alpha / K`` (``policy.transfer.adjust = "holm"``; ``"bonferroni"``: ``K`` is the number of
  matchups with an assessed cell, whatever ``I``; ``"none"``: each cell's own p, no adjustment).

The closure rejects ``H_c`` when every set containing ``c`` is rejected. With ``Pi_c`` the largest
``pi(J)`` over the sets ``J`` of ``c``'s matchup that contain ``c`` and ``Pi_g`` the largest ``pi(J)``
over all non-empty sets of matchup ``g``, that is: ``Pi_c`` is rejected by Holm over the list
``[Pi_c] + [Pi_g for every other matchup g]`` (the worst set adds to ``c`` each other matchup's
hardest piece: a matchup drops out of the count only when even its hardest piece is significant).
The matchup hypothesis ``H_g`` (every cell of ``g`` within the margin) is rejected the same way with
``p_g = pi(all assessed cells of g)`` in place of ``Pi_c``, and the study hypothesis (every cell)
when ``min_g p_g <= alpha / (matchups)``. A FAILed cell's matchup and the study FAIL too (a set
containing ``g`` contains ``c``).

**Error rate controlled:** the familywise error rate in the strong sense over all cell, matchup and
study hypotheses at ``alpha``: whatever subset of cells is truly within the margin, the probability
of FAILing any of them (or a matchup, or the study, all of whose cells are) is at most ``alpha``
(closed testing with valid local tests; the pooled and cell p-values are bootstrap p-values, valid
as far as the bootstrap is: the calibration study measures it, docs/audit.md 4.5). With one
criterion per matchup every piece is one cell and the procedure is Holm over the cells, exactly.

Exact enumeration of the sets of a matchup up to :data:`MAX_EXACT` assessed criteria; beyond, the
bound ``pi(J) <= 2 |J| min_J p <= 2 k p_c`` stands in for ``Pi_c`` (and ``2 k max_c p_c`` for
``Pi_g``): valid, more conservative.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from judge_transfer_audit.statistics.uncertainty.multiplicity import holm

MAX_EXACT = 10  #: matchups with more assessed criteria use the Bonferroni bound for their closure values


@dataclass(frozen=True)
class GroupPool:
    """The pooled p-value of every set of two or more poolable cells of one matchup (internal).

    ``cells``: positions (in the decision's family) of the matchup's cells with a joint bootstrap;
    ``p``: bitmask over ``cells`` -> pooled one-sided p (the smaller of the above and below tests).
    """

    cells: tuple[int, ...]
    p: dict[int, float]
    p_equivalence: float = float("nan")  #: the pooled equivalence test of all ``cells``: mean |distance| < m


def group_of(key: Sequence[str]) -> tuple[str, ...]:
    """A cell's matchup from its stream key: the key without its criterion (the last element)."""
    return tuple(key[:-1])


def _generator(seed: int, group: Sequence[str]) -> np.random.Generator:
    digest = hashlib.sha256(("matchup\x1f" + "\x1f".join(group)).encode("utf-8")).digest()
    words = [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]
    return np.random.default_rng(np.random.SeedSequence([int(seed) % 2**32, *words]))


def joint_bootstraps(tables: Sequence, n_boot: int, rng: np.random.Generator) -> list:
    """The paired bootstrap of each table on one joint draw: replicate ``b`` gives every pair id (and
    reader id) the same resampling count in every table (counts drawn over the union of the matchup's
    pairs, one multinomial; a table reads its own pairs' counts), one reader-shift score, and the
    between-pair variance's draws from one shared stream."""
    judges = [np.asarray(t.judge, float)[None, :] for t in tables]
    return [boots[0] for boots in joint_bootstraps_judges(tables, judges, n_boot, rng)]


def joint_bootstraps_judges(tables: Sequence, judges: Sequence[np.ndarray], n_boot: int, rng: np.random.Generator):
    """:func:`joint_bootstraps` for ``K`` judges on the same tables (``judges``: per table, K x its pairs), one
    list of ``K`` bootstraps per table: every judge on the same draws, each judge's numbers those of its own
    call (:func:`~judge_transfer_audit.verdict.paired_bootstrap.bootstrap_judges` computes the humans' replicates
    once and a judge's rate with one product per judge). The criteria with the same numbers of pairs and
    readers are bootstrapped together on stacked arrays
    (:func:`~judge_transfer_audit.verdict.stacked_bootstrap.bootstrap_cells`: each table's numbers those of its
    own ``bootstrap_judges`` call on its draws, bit for bit)."""
    from judge_transfer_audit.statistics.uncertainty.resampling import multinomial_weights
    from judge_transfer_audit.verdict.stacked_bootstrap import bootstrap_cells

    pairs = sorted(set().union(*(t.pairs for t in tables)))
    readers = sorted(set().union(*(t.readers for t in tables)))
    p_index = {p: i for i, p in enumerate(pairs)}
    r_index = {r: i for i, r in enumerate(readers)}
    wp = multinomial_weights(rng, len(pairs), n_boot)
    wr = multinomial_weights(rng, len(readers), n_boot)
    z = rng.standard_normal(n_boot)
    # the between-pair variance's draws: every criterion from a copy of one stream, so that its scores are
    # shared (comonotone where the draws are a Gaussian copula): the criteria's variance estimates from
    # the same pairs err together, and treating them as more dependent than they are makes the pooled
    # mean's spread larger, never smaller (independent draws would understate it)
    state = rng.bit_generator.state
    draws, streams = [], []
    for t in tables:
        cols = np.fromiter((p_index[p] for p in t.pairs), int, t.n_pairs)
        rcols = np.fromiter((r_index[r] for r in t.readers), int, t.n_readers)
        draws.append((wp[:, cols], wr[:, rcols], z))
        shared = np.random.Generator(type(rng.bit_generator)())
        shared.bit_generator.state = state
        streams.append(shared)
    # the criteria of one shape bootstrapped on stacked arrays, each on its own draws and stream copy
    return bootstrap_cells(list(tables), [np.atleast_2d(np.asarray(j, float)) for j in judges], n_boot, streams, draws)


def pooled_judges(
    tables: Sequence, judges: Sequence[np.ndarray], n_boot: int, margin: float, rng: np.random.Generator
) -> list[dict[int, float]]:
    """Per judge (the rows of ``judges``, as in :func:`joint_bootstraps_judges`), :func:`pooled_p_values` of its
    joint bootstraps of ``tables``, with the full set's pooled equivalence p under key -1."""
    boots = joint_bootstraps_judges(tables, judges, n_boot, rng)
    return [pooled_p_values([b[k] for b in boots], margin) for k in range(len(boots[0]))]


def _pending(boot, name: str):
    pending = boot.distributions.pending(name) if hasattr(boot.distributions, "pending") else None
    return pending


def pooled_p_values(boots: Sequence, margin: float) -> dict[int, float]:
    """Per bitmask over ``boots`` (two or more set): the pooled test's one-sided p, the smaller of
    ``mean d_hi > margin`` and ``mean d_lo < -margin``, each read as a Student-t on the pooled
    replicates' standard deviation with the Satterthwaite df of their pair and reader parts."""
    from judge_transfer_audit.statistics.distributions import t as student_t
    from judge_transfer_audit.verdict.paired_bootstrap import _df_from_variances

    k = len(boots)
    masks = [mask for mask in range(1, 2**k) if bin(mask).count("1") >= 2]
    if not masks:
        return {}
    weights = np.array([[(mask >> i) & 1 for mask in masks] for i in range(k)], float)
    weights /= weights.sum(axis=0, keepdims=True)  # columns: the mean over the set
    p_best = np.ones(len(masks))
    for name, sign in (("d_hi", 1.0), ("d_lo", -1.0)):
        pend = [_pending(b, name) for b in boots]
        if any(p is None for p in pend):
            return {}
        est = np.array([p.estimate for p in pend]) @ weights
        reps = np.column_stack([p.replicates for p in pend]) @ weights
        pairs_only = np.column_stack([p.pairs_only for p in pend]) @ weights
        ok = np.all(np.isfinite(reps), axis=1) & np.all(np.isfinite(pairs_only), axis=1)
        if ok.sum() < 3:
            return {}
        v_total, v_pairs = np.var(reps[ok], axis=0, ddof=1), np.var(pairs_only[ok], axis=0, ddof=1)
        n_pairs = min(p.n_pairs for p in pend)
        n_readers = min(p.n_readers for p in pend)
        df = np.atleast_1d(_df_from_variances(v_total, v_pairs, n_pairs, n_readers))
        sd = np.sqrt(v_total)
        score = np.divide(sign * (est - sign * margin), sd, out=np.full(sd.shape, -np.inf), where=sd > 0)
        score = np.where(sd > 0, score, np.where(sign * (est - sign * margin) > 0, np.inf, -np.inf))
        df = np.where(np.isfinite(df), df, 1e6)
        p = student_t.sf(score, df)
        p_best = np.minimum(p_best, np.nan_to_num(p, nan=1.0))
    out = {mask: float(p) for mask, p in zip(masks, p_best)}
    out[-1] = _pooled_equivalence(boots, margin)  # the full set's pooled equivalence p (key -1)
    return out


def _absolute_distance(boot, which: str):
    """Per replicate (``which``: "replicates" or "pairs_only") and for the estimate, the judge's absolute
    distance to the band, ``max(d_hi, -d_lo, 0)`` (``d_hi <= d_lo``: above the band d_hi > 0, below d_lo < 0)."""
    hi, lo = _pending(boot, "d_hi"), _pending(boot, "d_lo")
    if which == "estimate":
        return max(hi.estimate, -lo.estimate, 0.0)
    return np.maximum(np.maximum(getattr(hi, which), -getattr(lo, which)), 0.0)


def _pooled_equivalence(boots: Sequence, margin: float) -> float:
    """The pooled equivalence test's p: H0 "the mean over the criteria of the judge's absolute distance to
    the band is at least ``margin``", one-sided, read as a Student-t on the joint replicates' SD with their
    Satterthwaite df. Absolute distances, so that a judge above the band on one criterion and below it on
    another does not cancel out; the replicates of a distance bounded at 0 spread wider than its sampling
    distribution near 0, which makes the test conservative there."""
    from judge_transfer_audit.statistics.distributions import t as student_t
    from judge_transfer_audit.verdict.paired_bootstrap import _df_from_variances

    if any(_pending(b, "d_hi") is None or _pending(b, "d_lo") is None for b in boots):
        return float("nan")
    est = float(np.mean([_absolute_distance(b, "estimate") for b in boots]))
    reps = np.mean([_absolute_distance(b, "replicates") for b in boots], axis=0)
    pairs_only = np.mean([_absolute_distance(b, "pairs_only") for b in boots], axis=0)
    ok = np.isfinite(reps) & np.isfinite(pairs_only)
    if ok.sum() < 3:
        return float("nan")
    v_total, v_pairs = float(np.var(reps[ok], ddof=1)), float(np.var(pairs_only[ok], ddof=1))
    n_pairs = min(_pending(b, "d_hi").n_pairs for b in boots)
    n_readers = min(_pending(b, "d_hi").n_readers for b in boots)
    df = _df_from_variances(v_total, v_pairs, n_pairs, n_readers)
    df = df if np.isfinite(df) else 1e6
    if v_total <= 0:
        return 0.0 if est < margin else 1.0
    return float(student_t.cdf((est - margin) / np.sqrt(v_total), df))


def group_pools(comparisons: Sequence, groups: Sequence, policy, seed: int, pooled=None) -> dict:
    """The joint bootstrap of every matchup with two or more assessed cells whose band is identified
    (:attr:`~judge_transfer_audit.verdict.compare.CellComparison.vote_share_only` False), and the pooled p-values of
    their sets (:func:`pooled_p_values`); matchups with more than :data:`MAX_EXACT` such cells are left
    to the bound (module doc). ``pooled(cells, tables, n_boot, margin, rng)``, when given, returns a
    matchup's pooled p-values instead (the judge configurations share the joint draws:
    :mod:`judge_transfer_audit.verdict.batched`)."""
    members: dict = {}
    for i, (c, g) in enumerate(zip(comparisons, groups)):
        if c.assessed and not c.vote_share_only and c.table is not None:
            members.setdefault(g, []).append(i)
    out = {}
    for g, cells in members.items():
        if not 2 <= len(cells) <= MAX_EXACT:
            continue
        tables = [comparisons[i].table for i in cells]
        rng = _generator(seed, g)
        if pooled is None:
            p = pooled_judges(
                tables, [np.asarray(t.judge, float)[None, :] for t in tables], policy.n_boot, policy.margin, rng
            )[0]
        else:
            p = dict(pooled(cells, tables, policy.n_boot, policy.margin, rng))
        out[g] = GroupPool(tuple(cells), p, p.pop(-1, float("nan")))
    return out


@dataclass(frozen=True)
class Closure:
    """Per cell of the family and per matchup, the closed test's ingredients (internal; see the module doc)."""

    cell_closure: np.ndarray  #: Pi_c per cell (NaN: not in the family)
    group_p: dict  #: matchup -> p_g, the local test of all its assessed cells
    group_closure: dict  #: matchup -> Pi_g


def piece_p(cells: Sequence[int], p_cell: np.ndarray, pooled: dict[int, float] | None, mask: int | None) -> float:
    """``pi(J)`` for the cells ``cells`` (positions; ``mask`` their bitmask in the matchup's pool, None: no pool)."""
    values = p_cell[list(cells)]
    if len(values) == 1:
        return float(values[0])
    bonf = len(values) * float(np.min(values))
    if pooled is not None and mask is not None and mask in pooled:
        return float(min(1.0, 2.0 * min(pooled[mask], bonf)))
    return float(min(1.0, bonf))


def _closure_by_size(p: np.ndarray, whole: float | None) -> np.ndarray:
    """``Pi_c`` of each cell of one matchup whose only pooled test (``whole``, or none) is that of all its
    cells, the values :func:`closure`'s enumeration gives without enumerating: a set of ``s`` cells other than
    the whole is tested by ``s`` times its smallest p, and among the sets of ``s`` cells containing cell ``i``
    the largest such value is that of ``i`` with the ``s - 1`` largest p of the others."""
    k = p.size
    if k == 1:  # a matchup of one cell: its own p
        return np.array([float(p[0])])
    whole_value = piece_p(range(k), p, None if whole is None else {0: whole}, 0)
    out = np.empty(k)
    for i in range(k):
        others = np.sort(np.delete(p, i))[::-1]
        best = float(p[i])
        for size in range(2, k):
            best = max(best, float(min(1.0, size * float(min(p[i], others[size - 2])))))
        out[i] = max(best, whole_value) if k > 1 else best
    return out


def closure(p_cell: np.ndarray, groups: Sequence, pools: dict) -> Closure:
    """``Pi_c``, ``p_g`` and ``Pi_g`` from the cells' p-values (NaN: not assessed) and the matchups' pools."""
    p_cell = np.asarray(p_cell, float)
    members: dict = {}
    for i, g in enumerate(groups):
        if np.isfinite(p_cell[i]):
            members.setdefault(g, []).append(i)
    cell_closure = np.full(p_cell.shape, np.nan)
    group_p, group_closure = {}, {}
    for g, cells in members.items():
        pool = pools.get(g)
        in_pool = {i: b for b, i in enumerate(pool.cells)} if pool is not None else {}

        def mask_of(subset, in_pool=in_pool):
            if not all(i in in_pool for i in subset):
                return None
            return sum(1 << in_pool[i] for i in subset)

        k = len(cells)
        pooled = pool.p if pool is not None else None
        group_p[g] = piece_p(cells, p_cell, pooled, mask_of(cells))
        if k > MAX_EXACT:
            for i in cells:
                cell_closure[i] = min(1.0, 2.0 * k * p_cell[i])
            group_closure[g] = min(1.0, 2.0 * k * float(np.max(p_cell[cells])))
            continue
        whole = mask_of(cells)
        if pooled is None or set(pooled) <= {whole}:  # no pooled test but the whole matchup's: by set size
            best_of = _closure_by_size(p_cell[cells], pooled.get(whole) if pooled is not None else None)
            cell_closure[cells] = best_of
            group_closure[g] = float(np.max(best_of))
            continue
        best = {i: p_cell[i] for i in cells}
        top = max(best.values())
        for size in range(2, k + 1):
            for subset in itertools.combinations(cells, size):
                value = piece_p(subset, p_cell, pooled, mask_of(subset))
                top = max(top, value)
                for i in subset:
                    if value > best[i]:
                        best[i] = value
        for i, v in best.items():
            cell_closure[i] = v
        group_closure[g] = top
    return Closure(cell_closure, group_p, group_closure)


def adjusted(value: float, own: object, group_closure: dict, method: str) -> float:
    """The closed test's adjusted p of a hypothesis of matchup ``own`` whose own-matchup value is ``value``:
    Holm over ``[value] + [Pi_g for every other matchup]`` (``"bonferroni"``: times the matchups;
    ``"none"``: ``value``)."""
    if not np.isfinite(value):
        return float("nan")
    if method == "none":
        return float(value)
    others = [v for g, v in group_closure.items() if g != own]
    if method == "bonferroni":
        return float(min(1.0, value * (len(others) + 1)))
    return float(holm(np.array([value, *others], float))[0])


class AdjustedAcross:
    """:func:`adjusted` for many hypotheses of one closure, the same values: under Holm every matchup's ``Pi_g``
    are sorted once with the running maximum of Holm's factors, and a hypothesis is then placed among its
    matchup's others (ties after it, as Holm's stable order puts it first). A value at most its own matchup's
    ``Pi_g`` (a cell's ``Pi_c``, a matchup's ``p_g``) has only other matchups' values below it, so it is placed
    among everyone's, with the factors of one hypothesis fewer; any other, among its matchup's others."""

    def __init__(self, group_closure: dict, method: str) -> None:
        self._closure = group_closure
        self._method = method
        values = np.array(list(group_closure.values()), float)
        self._sorted = np.sort(values[np.isfinite(values)])
        self._steps = np.maximum.accumulate((self._sorted.size - np.arange(self._sorted.size)) * self._sorted)
        self._others: dict = {}

    def __call__(self, value: float, own: object) -> float:
        if self._method != "holm" or not np.isfinite(value):
            return adjusted(value, own, self._closure, self._method)
        own_value = self._closure.get(own, np.nan)
        if np.isfinite(own_value) and value <= own_value:
            others, steps, n = self._sorted, self._steps, self._sorted.size
        else:
            try:
                others, steps = self._others[own]
            except KeyError:
                others = self._sorted
                if np.isfinite(own_value):  # one copy of its own Pi_g out of the sorted values
                    others = np.delete(others, np.searchsorted(others, own_value))
                steps = np.maximum.accumulate((others.size + 1 - np.arange(others.size)) * others)
                self._others[own] = others, steps
            n = others.size + 1
        below = int(np.searchsorted(others, value, side="left"))
        best = (n - below) * float(value)
        if below:
            best = max(best, float(steps[below - 1]))
        return float(min(1.0, best))


def study_p(group_p: dict, method: str) -> float:
    """The study-level test's p: Bonferroni over the matchups of their local tests (``"none"``: the smallest)."""
    values = [v for v in group_p.values() if np.isfinite(v)]
    if not values:
        return float("nan")
    low = float(min(values))
    return low if method == "none" else float(min(1.0, low * len(values)))


def levels(transfers: Sequence, groups: Sequence, policy) -> dict:
    """The matchup and study statuses from the cells' recorded transfers (the rule of the module doc):
    ``{"study": status, "study_p": p, "matchups": {group: status}, "matchup_p": {group: adjusted p}}``.

    A matchup FAILs when its closed-test-adjusted ``p_matchup`` is below alpha; it PASSes when none of
    its cells FAILs and either every assessed cell PASSes or the pooled equivalence test of its criteria
    holds (``p_matchup_equivalence`` below alpha: the judge's absolute distance to the band, averaged over
    its criteria, is below the margin); INCONCLUSIVE otherwise; INSUFFICIENT without an assessed cell. The
    study FAILs when its test rejects (Bonferroni over the matchups' local tests) or a matchup FAILs,
    PASSes when every matchup with an assessed cell PASSes.
    """
    assessed = ("PASS", "FAIL", "INCONCLUSIVE")
    members: dict = {}
    for t, g in zip(transfers, groups):
        members.setdefault(g, []).append(t)
    group_p, group_closure = {}, {}
    for g, ts in members.items():
        for t in ts:
            if t.status.value in assessed and t.p_matchup is not None:
                group_p[g] = float(t.p_matchup)
                group_closure[g] = float(t.p_matchup_closure)
    statuses, adjusted_p = {}, {}
    for g, ts in members.items():
        live = [t for t in ts if t.status.value in assessed]
        if not live:
            statuses[g] = "INSUFFICIENT"
            continue
        adj = adjusted(group_p.get(g, float("nan")), g, group_closure, policy.adjust) if g in group_p else float("nan")
        adjusted_p[g] = adj
        eq = next((t.p_matchup_equivalence for t in live if t.p_matchup_equivalence is not None), None)
        if (np.isfinite(adj) and adj < policy.alpha) or any(t.status.value == "FAIL" for t in live):
            statuses[g] = "FAIL"
        elif all(t.status.value == "PASS" for t in live) or (eq is not None and eq < policy.alpha):
            statuses[g] = "PASS"
        else:
            statuses[g] = "INCONCLUSIVE"
    p_study = study_p(group_p, policy.adjust)
    live_groups = [g for g, s in statuses.items() if s != "INSUFFICIENT"]
    if not live_groups:
        study = "INSUFFICIENT"
    elif (np.isfinite(p_study) and p_study < policy.alpha) or any(statuses[g] == "FAIL" for g in live_groups):
        study = "FAIL"
    elif all(statuses[g] == "PASS" for g in live_groups):
        study = "PASS"
    else:
        study = "INCONCLUSIVE"
    return {"study": study, "study_p": p_study, "matchups": statuses, "matchup_p": adjusted_p}


__all__ = [
    "MAX_EXACT",
    "levels",
    "Closure",
    "GroupPool",
    "adjusted",
    "closure",
    "group_of",
    "group_pools",
    "joint_bootstraps",
    "joint_bootstraps_judges",
    "pooled_judges",
    "piece_p",
    "pooled_p_values",
    "study_p",
]
