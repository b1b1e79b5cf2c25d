"""The label budget: how many pairs and readers would decide each cell, with stated power.

`audit run` computes it from the cells (:func:`budget_of_cells`, stored in
``AuditResult.label_budget`` from schema 2.2 at 80% power); :func:`label_budget` returns the
stored budget, or computes it from a saved result (no data, no refit: a 2.1 result, or another
power). Per assessed cell it takes the
judge's distance to the two ends of the human band, ``d_lo = J - min(V, M) = max(J - V, J - M)``
and ``d_hi = J - max(V, M) = min(J - V, J - M)``, with standard errors read off their recorded
intervals (``se = width / (2 z)`` at the cell's ``interval_level``), widened where the
verdict's own bootstrap is wider (the half-widths of the recorded decision interval over
``z_alpha``; for a cell beyond the margin ``(d - m) / z`` with ``z`` the normal quantile of the
recorded raw ``p_outside`` where it is below alpha: heavy-tailed bootstrap distributions are not treated as normal;
never from a p-value above alpha, which near the margin would put ``z`` near 0 and the SE near infinity; near
the margin the SE is the decision interval's half-width facing the margin), and assumes the variance
falls as ``1 / pairs`` with the readers growing in proportion (the same scaling as the
verdict's ``pairs_needed``). With ``se(n) = se0 sqrt(n0 / n)``:

* FAIL (the cell is outside the band widened by the margin ``m``): the one-sided test at the
  verdict's Bonferroni level ``alpha / assessed cells`` (conservative for Holm; the verdict's family is one
  test per cell: :func:`verdict_fail_level`) rejects
  with probability ``Phi((d_hi - m) / se(n) - z_fail)`` (above; below the same with
  ``-m - d_lo``);
* PASS (the cell is inside): the TOST at ``alpha`` on both ends holds with probability at
  least ``Phi((d_lo + m) / se(n) - z_alpha) + Phi((m - d_hi) / se(n) - z_alpha) - 1``
  (the Bonferroni bound of the two one-sided tests).

The decision aimed at is the one the current estimates point to. ``pairs`` is the smallest
``n`` whose probability reaches ``power`` (found by doubling then bisection, capped at
:data:`MAX_PAIRS`: beyond it the cell is "out of reach"). This search is the one home of the
sample-size rule (:func:`power_search`): the verdict's ``cells[].transfer.pairs_needed`` is the
same search at :data:`PAIRS_NEEDED_POWER` (80%, recorded as ``pairs_needed_power``; before schema
2.3 it was the pairs that decide the cell if the estimates stay put, about even odds), so an
INCONCLUSIVE cell's ``pairs_needed`` equals its budgeted ``pairs`` at 80%. ``min_detectable_distance``
is the distance from the band that a FAIL would detect with ``power`` at the current sample:
``m + (z_fail + z_power) se0``. A cell whose intervals have no width has no variance to
scale: it is reported as such ("no variance"), never searched. The direction-conflict test is
left out (it FAILs a cell only where the rates sit on opposite sides of 1/2).

**Pairs versus readers** (:func:`reader_designs`): the distance's variance at the current design
``se0^2`` splits into the votes' own part ``s se0^2`` (:func:`vote_variance` from the cell's GLMM
pair and reader SDs, over ``k0 n0`` votes), which falls with more readers per pair, and the
pair part (the judge's and the pairs' own variation), which only more pairs reduce. At ``n``
pairs of ``k`` readers each, ``se^2 = se0^2 (n0 / n) ((1 - s) + s k0 / k)``; per ``k`` in
:func:`design_readers` the smallest ``n`` that reaches the target is found as above.

Validated by seeded simulation in ``tests/audit/statistics/budget/test_budget.py`` (at the budgeted sample the
share of simulated studies that decide the cell is the stated power) and, for the trade-off,
:mod:`judge_transfer_audit.statistics.budget.simulation` (studies simulated from the crossed GLMM at two readers per
pair, each decided with its own two-way standard error).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from judge_transfer_audit.model.cells import Cell, Interval, Transfer
from judge_transfer_audit.statistics.budget.result import (
    CellBudget,
    LabelBudget,
    ReaderDesign,
    budget_text,
    tradeoff_text,
)

_SQRT2 = math.sqrt(2.0)
_NORMAL = NormalDist()

#: An audit result (:class:`judge_transfer_audit.results.result.AuditResult`, a layer above this one):
#: the budget reads its cells, its provenance's policy and its stored ``label_budget`` section.
AuditResult = Any


def _phi(x: float) -> float:
    """The standard normal CDF of a scalar (math.erfc: the search calls it ~50 times a design)."""
    return 0.5 * math.erfc(-x / _SQRT2)


def _z(p: float) -> float:
    """The standard normal quantile of a scalar probability."""
    return _NORMAL.inv_cdf(p)


PAIRS_NEEDED_POWER = 0.8  #: the power of the verdict's ``pairs_needed`` and of the stored budget
MAX_PAIRS = 10_000_000  #: beyond this the budget says "out of reach"
ASSESSED = ("PASS", "FAIL", "INCONCLUSIVE")


def _se(i: Interval) -> float:
    if not (math.isfinite(i.ci_low) and math.isfinite(i.ci_high) and math.isfinite(i.level) and 0 < i.level < 1):
        return math.nan
    return (i.ci_high - i.ci_low) / (2.0 * float(_z(0.5 + i.level / 2.0)))


def fail_power(d_lo: float, d_hi: float, se_lo: float, se_hi: float, margin: float, z_fail: float) -> float:
    """Probability that the one-sided FAIL test rejects (the side the estimates point to)."""
    if d_hi > margin:
        return float(_phi((d_hi - margin) / se_hi - z_fail))
    if d_lo < -margin:
        return float(_phi((-margin - d_lo) / se_lo - z_fail))
    return 0.0


def pass_power(d_lo: float, d_hi: float, se_lo: float, se_hi: float, margin: float, z_alpha: float) -> float:
    """Lower bound of the probability that the TOST on both ends of the band holds."""
    p = _phi((d_lo + margin) / se_lo - z_alpha) + _phi((margin - d_hi) / se_hi - z_alpha) - 1.0
    return float(max(p, 0.0))


def smallest_n(power_at, n0: int, target: float) -> int | None:
    """The smallest ``n >= n0`` with ``power_at(n) >= target`` (power increasing in n); None
    beyond :data:`MAX_PAIRS`. At most ~2 log2(MAX_PAIRS) evaluations."""
    if power_at(n0) >= target:
        return n0
    low, high = n0, max(2 * n0, n0 + 1)
    while power_at(high) < target:
        if high >= MAX_PAIRS:
            return None
        low, high = high, min(2 * high, MAX_PAIRS)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if power_at(mid) >= target else (mid, high)
    return high


def verdict_fail_level(alpha: float, adjust: str, n_assessed: int) -> float:
    """The one-sided level a cell's FAIL test is read at for a budget: ``alpha / K`` over the ``K``
    assessed cells (Bonferroni: conservative for Holm; the verdict's family is one test per
    cell, :func:`judge_transfer_audit.verdict.decision.cell_p`), ``alpha`` without an adjustment."""
    return alpha / n_assessed if (adjust != "none" and n_assessed) else alpha


@dataclass(frozen=True)
class PowerSearch:
    """What one cell's power search found (internal to the budget and the verdict's ``pairs_needed``)."""

    state: str  #: "searched", "no variance", "no interval" or "on the margin"
    target: str = ""  #: "FAIL" or "PASS"
    pairs: int | None = None  #: the smallest number of pairs reaching the power (None: out of reach)
    se: float = math.nan  #: the larger of the two ends' standard errors at the current pairs
    se_side: float = math.nan  #: the standard error of the end the target is read at
    power_at: Callable[..., float] | None = None  #: ``power_at(n, inflation=1)``


def power_search(t: Transfer, *, power: float, alpha: float, fail_level: float) -> PowerSearch:
    """The pairs that decide a cell with ``power`` at its recorded estimates (module doc).

    The one home of the sample-size rule: the label budget (:func:`budget_of_cells`) and the
    verdict's ``cells[].transfer.pairs_needed`` (:mod:`judge_transfer_audit.verdict.decision`, at 80% power)
    both call this on the cell's :class:`~judge_transfer_audit.results.result.Transfer`.
    """
    dv, dm = t.difference_vote_share, t.difference_majority
    if t.majority_identified is False:  # pairs read once: the vote-share decision reads J - V alone
        dm = dv
    d_lo, d_hi = max(dv.estimate, dm.estimate), min(dv.estimate, dm.estimate)
    se_lo = _se(dv if dv.estimate >= dm.estimate else dm)
    se_hi = _se(dv if dv.estimate <= dm.estimate else dm)
    m, n0 = float(t.margin), int(t.n_pairs)
    if not (math.isfinite(se_lo) and math.isfinite(se_hi)) or n0 < 1:
        return PowerSearch("no interval")
    if se_lo <= 1e-12 or se_hi <= 1e-12:
        return PowerSearch("no variance", se=max(se_lo, se_hi))
    z_alpha, z_fail = (float(_z(1.0 - a)) for a in (alpha, fail_level))
    # never narrower than the verdict's own bootstrap: its decision interval and its raw p-value
    low, high = t.difference.ci_low, t.difference.ci_high
    if math.isfinite(high) and high > d_hi:
        se_hi = max(se_hi, (high - d_hi) / z_alpha)
    if math.isfinite(low) and low < d_lo:
        se_lo = max(se_lo, (d_lo - low) / z_alpha)
    # beyond the margin: also the decision interval's half-width on the side facing the margin, and, where
    # the raw p is below alpha (the test's tail beyond that interval), the SE the p implies; at p = alpha the
    # two agree (the interval's end is then on the margin), so the SE is continuous in the distance. A p
    # above alpha says nothing the interval does not: near the margin a p near 0.5 would give an SE near
    # infinity (z near 0), so it is never read there.
    if d_hi > m and math.isfinite(low) and low < d_hi:
        se_hi = max(se_hi, (d_hi - low) / z_alpha)
    if d_lo < -m and math.isfinite(high) and high > d_lo:
        se_lo = max(se_lo, (high - d_lo) / z_alpha)
    p = t.p_outside
    if p is not None and 0.0 < p < alpha and (d_hi > m or d_lo < -m):
        z_obs = -float(_z(p))  # the upper quantile from p itself: 1 - p rounds to 1 below p ~ 1e-16
        if d_hi > m:
            se_hi = max(se_hi, (d_hi - m) / z_obs)
        else:
            se_lo = max(se_lo, (-m - d_lo) / z_obs)
    if d_hi > m or d_lo < -m:
        target, rule, z = "FAIL", fail_power, z_fail
    elif d_lo > -m and d_hi < m:
        target, rule, z = "PASS", pass_power, z_alpha
    else:
        return PowerSearch("on the margin", se=max(se_lo, se_hi))

    def power_at(n: int, inflation: float = 1.0) -> float:
        shrink = math.sqrt(n0 * inflation / n)
        return rule(d_lo, d_hi, se_lo * shrink, se_hi * shrink, m, z)

    se_side = se_hi if d_hi >= 0 else se_lo
    return PowerSearch("searched", target, smallest_n(power_at, n0, power), max(se_lo, se_hi), se_side, power_at)


def _cell(cell: Cell, power: float, alpha: float, fail_level: float) -> CellBudget:
    t = cell.transfer
    status = t.status.value
    base = dict(
        matchup=cell.matchup,
        criterion=cell.criterion,
        status=status,
        n_pairs=int(t.n_pairs),
        n_readers=int(t.n_readers),
        readers_per_pair=float(t.readers_per_pair),
        distance=t.difference.estimate,
        pairs_needed_verdict=t.pairs_needed,
    )
    nan = math.nan
    empty = dict(target="", se=nan, power_now=nan, pairs=None, readers=None, votes=None, min_detectable_distance=nan)
    if status not in ASSESSED:
        return CellBudget(state="not assessed", reason=t.reason, **base, **empty)
    found = power_search(t, power=power, alpha=alpha, fail_level=fail_level)
    if found.state == "no interval":
        return CellBudget(
            state="no variance",
            reason="the cell records no interval for the judge's distance to the human band: nothing to scale",
            **base,
            **empty,
        )
    if found.state == "no variance":
        return CellBudget(
            state="no variance",
            reason="the intervals of the judge's distance to the band have no "
            "width (every vote and verdict alike): no sample size changes the decision by this formula",
            **base,
            **{**empty, "se": found.se},
        )
    if found.state == "on the margin":
        return CellBudget(
            state="on the margin",
            reason="the estimate sits on the margin: no sample size decides it at the current estimates",
            **base,
            **{**empty, "se": found.se},
        )
    m, n0, target, pairs, power_at = float(t.margin), int(t.n_pairs), found.target, found.pairs, found.power_at
    z_fail, z_power = (float(_z(1.0 - a)) for a in (fail_level, 1.0 - power))
    readers = None if pairs is None else math.ceil(max(t.n_readers, 1) * pairs / n0)
    votes = None if pairs is None or not math.isfinite(t.readers_per_pair) else math.ceil(pairs * t.readers_per_pair)
    state = "decided" if status in ("PASS", "FAIL") else ("out of reach" if pairs is None else "budgeted")
    if pairs is None:
        reason = f"{target} would need more than {MAX_PAIRS:,} pairs for power {power:.0%}"
    else:
        reason = (
            f"{target} with power {power:.0%} at about {pairs:,} pairs ({max(pairs - n0, 0):,} more) and "
            f"~{readers:,} readers, assuming the readers grow in proportion"
        )
    share, basis = vote_variance_share(cell, found.se_side)
    designs = reader_designs(cell, share, power_at, power) if math.isfinite(share) else ()
    return CellBudget(
        state=state,
        target=target,
        se=found.se,
        power_now=power_at(n0),
        pairs=pairs,
        readers=readers,
        votes=votes,
        min_detectable_distance=m + (z_fail + z_power) * found.se_side,
        reason=reason,
        vote_variance_share=share,
        variance_basis=basis,
        designs=designs,
        **base,
    )


_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(40)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


def vote_variance(b0: float, sd_pair: float, sd_reader: float, workload: float) -> float:
    """Per vote, the variance of a reader's vote about its pair's mean that averages away with
    more readers per pair, under the crossed GLMM ``logit p = b0 + u_pair + r_reader``:
    ``E_u[m(u) (1 - m(u))] + (L - 1) Var_r(E_u p)``, with ``m(u) = E_r p`` and ``L`` the votes per
    reader (a reader's effect is shared by its ``L`` votes). Gauss-Hermite quadrature, 40 x 40 nodes."""
    from scipy.special import expit

    p = expit(b0 + sd_pair * _NODES[:, None] + sd_reader * _NODES[None, :])  # [pair node, reader node]
    m = p @ _WEIGHTS  # over readers, per pair node
    within = float(_WEIGHTS @ (m * (1.0 - m)))
    h = _WEIGHTS @ p  # over pairs, per reader node
    between_readers = float(_WEIGHTS @ (h - _WEIGHTS @ h) ** 2)
    return within + max(workload - 1.0, 0.0) * between_readers


def vote_variance_share(cell: Cell, se: float) -> tuple[float, str]:
    """The share of the distance's variance ``se^2`` at the current design that is the votes' own
    (:func:`vote_variance` / (readers per pair x pairs)), at least 0, and its basis: the
    cell's GLMM (``b0``, ``sd_pair``, ``sd_reader``) when usable, else the binomial variance of the
    vote share (no reader variance). NaN when the design or ``se`` is unknown, or when the votes'
    own variance would exceed the recorded one (the basis says so; no trade-off is given)."""
    t, g = cell.transfer, cell.human.glmm
    k0, n0, r0 = float(t.readers_per_pair), int(t.n_pairs), int(t.n_readers)
    if not (math.isfinite(k0) and k0 > 0 and n0 > 0 and r0 > 0 and math.isfinite(se) and se > 0):
        return math.nan, ""
    workload = n0 * k0 / r0
    params = (g.b0, g.sd_pair, g.sd_reader)
    if all(math.isfinite(x) for x in params) and g.converged and not g.degenerate:
        per_vote, basis = vote_variance(g.b0, max(g.sd_pair, 0.0), max(g.sd_reader, 0.0), workload), "GLMM"
    else:
        v = cell.human.vote_share.estimate
        if not math.isfinite(v):
            return math.nan, ""
        per_vote, basis = v * (1.0 - v), "binomial"
    share = per_vote / (k0 * n0 * se**2)
    if share > 1.0:  # the fit and the interval disagree: no trade-off rather than a wrong one
        return math.nan, (
            f"{basis}: no trade-off, the votes' own variance would be {share:.2f} times the recorded one "
            "(the interval is narrower than the fit predicts)"
        )
    return float(max(share, 0.0)), basis


def design_readers(k0: float) -> tuple[float, ...]:
    """The readers per pair of the trade-off: 3, 5, 10, 20 and half, once and twice the current
    (the current exactly; the others to one decimal; those that round to the current dropped)."""
    others = {3.0, 5.0, 10.0, 20.0, round(2 * k0, 1)} | ({round(k0 / 2, 1)} if k0 / 2 >= 1 else set())
    return tuple(sorted({k for k in others if k != round(k0, 1)} | {float(k0)}))


def reader_designs(cell: Cell, share: float, power_at, power: float) -> tuple[ReaderDesign, ...]:
    """Per readers per pair ``k``, the pairs that reach the target with ``power``: the variance at
    ``n`` pairs and ``k`` readers is ``se0^2 (n0 / n) ((1 - s) + s k0 / k)`` (``s`` the votes' share),
    the reader pool grows at the current votes per reader. The search starts at one pair: with
    more readers per pair fewer pairs than today may suffice."""
    t = cell.transfer
    k0 = float(t.readers_per_pair)
    workload = t.n_pairs * k0 / t.n_readers
    designs = []
    for k in design_readers(k0):
        inflation = (1.0 - share) + share * k0 / k
        pairs = smallest_n(lambda n, f=inflation: power_at(n, f), 1, power)
        votes = None if pairs is None else math.ceil(pairs * k)
        readers = None if votes is None else max(math.ceil(votes / workload), math.ceil(k))
        designs.append(ReaderDesign(k, pairs, votes, readers, current=k == k0))
    return tuple(designs)


def budget_of_cells(cells, *, alpha: float, adjust: str, margin: float, power: float = 0.8) -> LabelBudget:
    """Every cell's budget at ``power`` (0 < power < 1): the run computes this (``AuditResult.label_budget``)."""
    if not 0.0 < power < 1.0:
        from judge_transfer_audit.core.errors import InputError, InputProblem

        raise InputError(
            InputProblem(
                "arguments", f"power must lie in (0, 1), got {power!r}", "use e.g. --power 0.8", value=str(power)
            )
        )
    fail_level = verdict_fail_level(alpha, adjust, sum(c.transfer.status.value in ASSESSED for c in cells))
    budgets = tuple(_cell(c, power, alpha, fail_level) for c in cells)
    return LabelBudget(cells=budgets, power=float(power), alpha=alpha, fail_level=fail_level, margin=float(margin))


def computed_budget(result: AuditResult, *, power: float = 0.8) -> LabelBudget:
    """The budget computed from a saved result's cells and recorded policy (no data, no refit)."""
    transfer = result.provenance.policy.get("transfer", {}) if isinstance(result.provenance.policy, dict) else {}
    return budget_of_cells(
        result.cells,
        alpha=float(transfer.get("alpha", 0.05)),
        adjust=str(transfer.get("adjust", "holm")),
        margin=float(transfer.get("margin", 0.10)),
        power=power,
    )


def stored_budget(result: AuditResult) -> LabelBudget | None:
    """The budget the run stored in ``result.label_budget`` (schema 2.2), or None."""
    section = getattr(result, "label_budget", None)
    payload = getattr(section, "payload", None)
    return payload if isinstance(payload, LabelBudget) else None


def label_budget(result: AuditResult, *, power: float | None = None) -> LabelBudget:
    """Every cell's budget: the stored one when it is at ``power`` (None: whatever power it has),
    else computed from the result (a 2.1 result stores none; another power is recomputed)."""
    stored = stored_budget(result)
    if stored is not None and (power is None or math.isclose(stored.power, power)):
        return stored
    return computed_budget(result, power=0.8 if power is None else power)


def _minor(version: str) -> int:
    parts = version.split(".")
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


def budget_source(result: AuditResult, power: float | None = None) -> str:
    """Where :func:`label_budget` takes its figures from, in words."""
    stored = stored_budget(result)
    if stored is not None and (power is None or math.isclose(stored.power, power)):
        return "stored in the result by `audit run`"
    if stored is not None:
        return f"computed from the result at power {power:.0%} (the result stores the budget at {stored.power:.0%})"
    version = str(result.schema_version)
    if _minor(version) < 2:
        return f"computed from the result: schema {version} stores no label budget (`audit run` stores it from 2.2)"
    section = getattr(result, "label_budget", None)
    why = f" ({section.reason})" if section is not None and section.reason else ""
    return f"computed from the result: it stores no label budget{why}"


__all__ = [
    "CellBudget",
    "LabelBudget",
    "PAIRS_NEEDED_POWER",
    "PowerSearch",
    "ReaderDesign",
    "budget_of_cells",
    "budget_source",
    "budget_text",
    "computed_budget",
    "label_budget",
    "power_search",
    "verdict_fail_level",
    "tradeoff_text",
    "vote_variance",
]
