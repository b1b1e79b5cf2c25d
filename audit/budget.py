"""The label budget: how many pairs and readers would decide each cell, with stated power.

:func:`label_budget` reads a saved result (no data, no refit). Per assessed cell it takes the
judge's distance to the two ends of the human band, ``d_lo = J - min(V, M) = max(J - V, J - M)``
and ``d_hi = J - max(V, M) = min(J - V, J - M)``, with standard errors read off their recorded
intervals (``se = width / (2 z)`` at the cell's ``interval_level``), widened where the
verdict's own bootstrap is wider (the half-widths of the recorded decision interval over
``z_alpha``; for a cell beyond the margin ``(d - m) / z`` with ``z`` the normal quantile of the
recorded raw ``p_outside``: heavy-tailed bootstrap distributions are not treated as normal), and assumes the variance
falls as ``1 / pairs`` with the readers growing in proportion (the same scaling as the
verdict's ``pairs_needed``). With ``se(n) = se0 sqrt(n0 / n)``:

* FAIL (the cell is outside the band widened by the margin ``m``): the one-sided test at the
  verdict's Bonferroni level ``alpha / (2 x assessed cells)`` (conservative for Holm) rejects
  with probability ``Phi((d_hi - m) / se(n) - z_fail)`` (above; below the same with
  ``-m - d_lo``);
* PASS (the cell is inside): the TOST at ``alpha`` on both ends holds with probability at
  least ``Phi((d_lo + m) / se(n) - z_alpha) + Phi((m - d_hi) / se(n) - z_alpha) - 1``
  (the Bonferroni bound of the two one-sided tests).

The decision aimed at is the one the current estimates point to. ``pairs`` is the smallest
``n`` whose probability reaches ``power`` (found by doubling then bisection, capped at
:data:`MAX_PAIRS`: beyond it the cell is "out of reach"). The verdict's ``pairs_needed`` (the
pairs that decide the cell if the estimates stay put, i.e. about half the time) is shown
beside, not recomputed. ``min_detectable_distance``
is the distance from the band that a FAIL would detect with ``power`` at the current sample:
``m + (z_fail + z_power) se0``. A cell whose intervals have no width has no variance to
scale: it is reported as such ("no variance"), never searched. The direction-conflict test is
left out (it FAILs a cell only where the rates sit on opposite sides of 1/2).

Validated by seeded simulation in ``tests/audit/test_budget.py``: at the budgeted sample the
share of simulated studies that decide the cell is the stated power.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd
from scipy.stats import norm

from audit.result import AuditResult, Cell, Interval

MAX_PAIRS = 10_000_000  #: beyond this the budget says "out of reach"
ASSESSED = ("PASS", "FAIL", "INCONCLUSIVE")


@dataclass(frozen=True)
class CellBudget:
    """One cell's budget (see the module docstring). ``state``: "decided" (already PASS or
    FAIL; the powers are still shown), "budgeted", "on the margin", "out of reach", "no
    variance" or "not assessed" (INSUFFICIENT / ERROR cells: ``reason`` says why)."""

    matchup: str
    criterion: str
    status: str
    state: str
    target: str  #: the decision the current estimates point to: PASS, FAIL or ""
    n_pairs: int
    n_readers: int
    readers_per_pair: float
    distance: float
    se: float  #: the larger of the two ends' standard errors at the current sample
    power_now: float  #: probability of reaching ``target`` at the current sample
    pairs: int | None  #: pairs for ``target`` with ``power``
    readers: int | None  #: readers in proportion to ``pairs``
    votes: int | None  #: ``pairs`` x readers per pair
    pairs_needed_verdict: int | None  #: the verdict's figure (power about 0.5 at the current estimates)
    min_detectable_distance: float
    reason: str


@dataclass(frozen=True)
class LabelBudget:
    """Per cell budgets at ``power``, with the levels used."""

    cells: tuple[CellBudget, ...]
    power: float
    alpha: float
    fail_level: float
    margin: float

    def __str__(self) -> str:
        return budget_text(self)

    def to_frame(self) -> pd.DataFrame:
        from dataclasses import asdict

        return pd.DataFrame([asdict(c) for c in self.cells])


def _se(i: Interval) -> float:
    if not (math.isfinite(i.ci_low) and math.isfinite(i.ci_high) and math.isfinite(i.level) and 0 < i.level < 1):
        return math.nan
    return (i.ci_high - i.ci_low) / (2.0 * float(norm.ppf(0.5 + i.level / 2.0)))


def fail_power(d_lo: float, d_hi: float, se_lo: float, se_hi: float, margin: float, z_fail: float) -> float:
    """Probability that the one-sided FAIL test rejects (the side the estimates point to)."""
    if d_hi > margin:
        return float(norm.cdf((d_hi - margin) / se_hi - z_fail))
    if d_lo < -margin:
        return float(norm.cdf((-margin - d_lo) / se_lo - z_fail))
    return 0.0


def pass_power(d_lo: float, d_hi: float, se_lo: float, se_hi: float, margin: float, z_alpha: float) -> float:
    """Lower bound of the probability that the TOST on both ends of the band holds."""
    p = norm.cdf((d_lo + margin) / se_lo - z_alpha) + norm.cdf((margin - d_hi) / se_hi - z_alpha) - 1.0
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
    dv, dm = t.difference_vote_share, t.difference_majority
    d_lo, d_hi = max(dv.estimate, dm.estimate), min(dv.estimate, dm.estimate)
    se_lo = _se(dv if dv.estimate >= dm.estimate else dm)
    se_hi = _se(dv if dv.estimate <= dm.estimate else dm)
    m, n0 = float(t.margin), int(t.n_pairs)
    if not (math.isfinite(se_lo) and math.isfinite(se_hi)) or n0 < 1:
        return CellBudget(
            state="no variance",
            reason="the cell records no interval for the judge's distance to the human band: nothing to scale",
            **base,
            **empty,
        )
    if se_lo <= 1e-12 or se_hi <= 1e-12:
        return CellBudget(
            state="no variance",
            reason="the intervals of the judge's distance to the band have no "
            "width (every vote and verdict alike): no sample size changes the decision by this formula",
            **base,
            **{**empty, "se": max(se_lo, se_hi)},
        )
    z_alpha, z_fail, z_power = (float(norm.ppf(1.0 - a)) for a in (alpha, fail_level, 1.0 - power))
    # never narrower than the verdict's own bootstrap: its decision interval and its raw p-value
    low, high = t.difference.ci_low, t.difference.ci_high
    if math.isfinite(high) and high > d_hi:
        se_hi = max(se_hi, (high - d_hi) / z_alpha)
    if math.isfinite(low) and low < d_lo:
        se_lo = max(se_lo, (d_lo - low) / z_alpha)
    p = t.p_outside
    if p is not None and 0.0 < p < 0.5 and (d_hi > m or d_lo < -m):
        z_obs = float(norm.ppf(1.0 - p))
        if d_hi > m:
            se_hi = max(se_hi, (d_hi - m) / z_obs)
        else:
            se_lo = max(se_lo, (-m - d_lo) / z_obs)
    if d_hi > m or d_lo < -m:
        target, rule, z = "FAIL", fail_power, z_fail
    elif d_lo > -m and d_hi < m:
        target, rule, z = "PASS", pass_power, z_alpha
    else:
        return CellBudget(
            state="on the margin",
            reason="the estimate sits on the margin: no sample size decides it at the current estimates",
            **base,
            **{**empty, "se": max(se_lo, se_hi)},
        )

    def power_at(n: int) -> float:
        shrink = math.sqrt(n0 / n)
        return rule(d_lo, d_hi, se_lo * shrink, se_hi * shrink, m, z)

    se_side = se_hi if d_hi >= 0 else se_lo
    pairs = smallest_n(power_at, n0, power)
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
    return CellBudget(
        state=state,
        target=target,
        se=max(se_lo, se_hi),
        power_now=power_at(n0),
        pairs=pairs,
        readers=readers,
        votes=votes,
        min_detectable_distance=m + (z_fail + z_power) * se_side,
        reason=reason,
        **base,
    )


def label_budget(result: AuditResult, *, power: float = 0.8) -> LabelBudget:
    """Every cell's budget at ``power`` (0 < power < 1) from a saved result."""
    if not 0.0 < power < 1.0:
        from audit.errors import InputError, InputProblem

        raise InputError(
            InputProblem(
                "arguments", f"power must lie in (0, 1), got {power!r}", "use e.g. --power 0.8", value=str(power)
            )
        )
    transfer = result.provenance.policy.get("transfer", {}) if isinstance(result.provenance.policy, dict) else {}
    alpha = float(transfer.get("alpha", 0.05))
    adjust = str(transfer.get("adjust", "holm"))
    family = 2 * sum(c.transfer.status.value in ASSESSED for c in result.cells)
    fail_level = alpha / family if (adjust != "none" and family) else alpha
    cells = tuple(_cell(c, power, alpha, fail_level) for c in result.cells)
    margin = float(transfer.get("margin", 0.10))
    return LabelBudget(cells=cells, power=float(power), alpha=alpha, fail_level=fail_level, margin=margin)


def budget_text(b: LabelBudget, *, all_cells: bool = False) -> str:
    """Terminal summary: one line per cell that is not already decided (all with ``all_cells``)."""
    lines = [
        (
            f"Label budget (power {b.power:.0%}; PASS: TOST at alpha {b.alpha:g}; FAIL: one-sided at "
            f"{b.fail_level:.3g}, Bonferroni over the cells; margin {100 * b.margin:.0f} points)"
        )
    ]
    for c in b.cells:
        if not all_cells and c.state in ("decided", "not assessed"):
            continue
        mdd = (
            ""
            if not math.isfinite(c.min_detectable_distance)
            else (
                f"; a FAIL would detect a distance of {100 * c.min_detectable_distance:.1f} points now"
                if c.min_detectable_distance <= 1.0
                else "; no distance on the scale is detectable now"
            )
        )
        lines.append(
            f"  {c.status:12} {c.matchup} / {c.criterion}: {c.state}; {c.reason}{mdd}"
            + (
                f" (verdict: ~{c.pairs_needed_verdict} pairs at the current estimates)"
                if c.pairs_needed_verdict
                else ""
            )
        )
    counts = {
        s: sum(c.state == s for c in b.cells)
        for s in ("budgeted", "decided", "out of reach", "on the margin", "no variance", "not assessed")
    }
    lines.append("Cells: " + ", ".join(f"{v} {k}" for k, v in counts.items() if v))
    return "\n".join(lines)
