"""The label budget's typed result (the payload of ``AuditResult.label_budget``): per cell the
pairs and readers that would decide it, and the pairs-vs-readers trade-off.

A leaf module (no import of :mod:`judge_transfer_audit.results.result`), so the section table
(:mod:`judge_transfer_audit.sections.registry`) can name the payload type without an import cycle; the
computation is :mod:`judge_transfer_audit.statistics.budget.compute`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import pandas as pd


@dataclass(frozen=True)
class ReaderDesign:
    """One design of the trade-off: ``pairs`` with ``readers_per_pair`` readers each reach the
    cell's target with the budget's power (``None``: out of reach). ``readers`` is the reader
    pool at the current workload (votes per reader); ``current`` marks today's readers per pair."""

    readers_per_pair: float
    pairs: int | None
    votes: int | None
    readers: int | None
    current: bool = False


@dataclass(frozen=True)
class CellBudget:
    """One cell's budget (docs/leaderboard.md, "Label budget"). ``state``: "decided" (already PASS
    or FAIL; the powers are still shown), "budgeted", "on the margin", "out of reach", "no
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
    pairs_needed_verdict: (
        int | None
    )  #: the verdict's ``pairs_needed`` (80% power from schema 2.3; about even odds before)
    min_detectable_distance: float
    reason: str
    #: share of the distance's variance at the current design that falls with more readers per pair
    #: (the votes' own variance, from the GLMM's pair and reader SDs); the rest falls with pairs only
    vote_variance_share: float = math.nan
    #: "GLMM" (pair and reader SDs of the cell's fit) or "binomial" (no usable fit); says why when no trade-off
    variance_basis: str = ""
    designs: tuple[ReaderDesign, ...] = ()  #: the pairs needed at other readers per pair


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
        """One row per cell (the trade-off designs are in :meth:`designs_frame`)."""
        rows = []
        for c in self.cells:
            row = asdict(c)
            row.pop("designs")
            rows.append(row)
        return pd.DataFrame(rows)

    def designs_frame(self) -> pd.DataFrame:
        """One row per cell x readers per pair: the pairs, votes and readers that reach the target."""
        rows = [
            {"matchup": c.matchup, "criterion": c.criterion, "target": c.target, **asdict(d)}
            for c in self.cells
            for d in c.designs
        ]
        columns = ["matchup", "criterion", "target", "readers_per_pair", "pairs", "votes", "readers", "current"]
        return pd.DataFrame(rows, columns=columns)


def _count(x: int | None) -> str:
    return "out of reach" if x is None else f"{x:,}"


def tradeoff_text(c: CellBudget) -> str:
    """``3 readers/pair: 412 pairs; 5 (now): 260; ...`` for one cell; empty without designs."""
    if not c.designs:
        return ""
    parts = [
        f"{d.readers_per_pair:.3g}{' (now)' if d.current else ''}: {_count(d.pairs)}"
        for d in sorted(c.designs, key=lambda d: d.readers_per_pair)
    ]
    return "pairs at readers per pair " + "; ".join(parts)


def budget_text(b: LabelBudget, *, all_cells: bool = False, tradeoff: bool = True) -> str:
    """Terminal summary: one line per cell that is not already decided (all with ``all_cells``),
    each followed by its pairs-vs-readers trade-off."""
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
                f" (the verdict's pairs_needed: ~{c.pairs_needed_verdict:,})"
                if c.pairs_needed_verdict and c.pairs_needed_verdict != c.pairs
                else ""
            )
        )
        if tradeoff and c.designs:
            lines.append(
                f"      {tradeoff_text(c)} ({100 * c.vote_variance_share:.0f}% of the variance is the votes' own, "
                f"{c.variance_basis})"
            )
    counts = {
        s: sum(c.state == s for c in b.cells)
        for s in ("budgeted", "decided", "out of reach", "on the margin", "no variance", "not assessed")
    }
    lines.append("Cells: " + ", ".join(f"{v} {k}" for k, v in counts.items() if v))
    return "\n".join(lines)
