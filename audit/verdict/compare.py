"""Per cell: the compared pairs, the paired bootstrap, and the tests the decision needs.

:func:`compare_cell` turns one cell's human votes and judge credits into a
:class:`CellComparison`: the estimates, their intervals at ``1 - 2 alpha`` (the TOST level),
the one-sided p-values of "outside the band widened by the margin" and of a direction
conflict, and what a larger sample would need. It is INSUFFICIENT or ERROR (with the reason)
when it cannot be assessed. The multiplicity adjustment across cells and the final status
are :mod:`judge_transfer_audit.verdict.decision`.

Seeds: every cell draws from its own generator, ``SeedSequence([run seed, *hash(cell key)])``
(:func:`cell_generator`), so its result does not depend on the order cells are visited in or
on which worker computes it. The key is canonical (:func:`canonical_cell`): the unordered
system pair in sorted order and the criterion, never the matchup's label or which system is
focal; pairs and readers are drawn in the sorted order of their ids; and a cell whose focal
system is the second of the sorted pair (``orientation`` -1) is computed in the canonical
orientation (votes and judge credits ``1 - y``) and its bootstrap mirrored
(:meth:`~judge_transfer_audit.verdict.paired_bootstrap.CellBootstrap.mirrored`: ``J -> 1 - J``, ``d_lo -> -d_hi``).
So naming the other system focal gives the same p-values and decision, the differences
negated, bit for bit (tests/audit/verdict/test_assess.py), whatever the tie rule.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np

from judge_transfer_audit.model.cells import Interval
from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.model.policy import TransferPolicy
from judge_transfer_audit.model.tie_rules import TieRule
from judge_transfer_audit.verdict.paired_bootstrap import CellBootstrap, paired_bootstrap
from judge_transfer_audit.verdict.stacked import materialize
from judge_transfer_audit.verdict.tables import ComparisonTable, compared_votes


def cell_generator(run_seed: int, *key: str) -> np.random.Generator:
    """A generator for one cell from the run seed and the cell key (order-free)."""
    digest = hashlib.sha256("\x1f".join(key).encode("utf-8")).digest()
    words = [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]
    return np.random.default_rng(np.random.SeedSequence([int(run_seed) % 2**32, *words]))


def canonical_cell(focal: str, other: str, criterion: str) -> tuple[tuple[str, str, str], float]:
    """The orientation-free stream key of a cell and its orientation (+1: focal sorts first, else -1)."""
    first, second = sorted((str(focal), str(other)))
    return (first, second, str(criterion)), (1.0 if str(focal) == first else -1.0)


@dataclass(frozen=True)
class CellComparison:
    """One cell before the multiplicity adjustment (internal).

    ``status`` is None for an assessed cell (PASS / FAIL / INCONCLUSIVE decided later),
    else INSUFFICIENT or ERROR with ``reason``.
    """

    status: Status | None
    reason: str
    table: ComparisonTable | None = None
    boot: CellBootstrap | None = None
    alpha: float = 0.05
    margin: float = 0.10
    #: the pairs are read once (fewer than two pairs carry two credited votes): the majority rate, and so the
    #: band's far edge, is not identified; the cell is decided on the judge's rate against the vote share
    #: (:meth:`vote_side`, docs/audit.md 4.3, "One vote per pair")
    vote_share_only: bool = False
    #: the table holds the cell in the other orientation (votes and judge credits ``1 - y``); the bootstrap is
    #: mirrored back to the cell's own
    flipped: bool = False

    # ---- the pieces the decision and the result read
    @property
    def assessed(self) -> bool:
        return self.status is None

    def distance(self) -> float:
        """The signed distance from J to the band [min(V, M), max(V, M)] (0 inside); J - V for a
        vote-share decision (:attr:`vote_share_only`: the band's far edge is not identified)."""
        b = self.boot
        if self.vote_share_only:
            return b.estimate("difference_vote_share")
        d_lo, d_hi = b.estimate("d_lo"), b.estimate("d_hi")
        return d_hi if d_hi > 0 else (d_lo if d_lo < 0 else 0.0)

    def band_interval(self, a: float) -> tuple[float, float]:
        """The interval of the distance at two-sided level ``1 - 2a`` from those of d_lo and d_hi."""
        if self.vote_share_only:
            dv = self.boot["difference_vote_share"]
            return dv.lower(a), dv.upper(a)
        d_lo, d_hi = self.boot["d_lo"], self.boot["d_hi"]
        a1, a2 = d_lo.lower(a), d_lo.upper(a)
        b1, b2 = d_hi.lower(a), d_hi.upper(a)
        low = a1 if a1 < 0 else max(b1, 0.0)
        high = b2 if b2 > 0 else min(a2, 0.0)
        return low, high

    def p_outside(self) -> float:
        """One-sided p that the judge lies outside [band_low - margin, band_high + margin]."""
        return self.p_outside_with_se()[0]

    def p_outside_with_se(self) -> tuple[float, float]:
        """:meth:`p_outside` and its Monte Carlo standard error (that of the smaller side)."""
        if self.vote_share_only:
            return self.p_less_decisive_with_se()
        hi, lo = self.boot["d_hi"], self.boot["d_lo"]
        above = (hi.p_greater(self.margin), hi.p_mc_se(self.margin, greater=True))
        below = (lo.p_less(-self.margin), lo.p_mc_se(-self.margin, greater=False))
        p, se = above if above[0] <= below[0] else below
        return float(p), float(se)

    def vote_side(self) -> str:
        """The side of 1/2 the readers' vote share estimate lies on: "focal", "other" or "chance" (exactly 1/2)."""
        v = self.boot.estimate("vote_share")
        return "focal" if v > 0.5 else ("other" if v < 0.5 else "chance")

    def p_less_decisive_with_se(self) -> tuple[float, float]:
        """A vote-share decision's outside test and its Monte Carlo SE: the judge is less decisive than the
        readers' vote share by more than the margin, on the vote share's side of 1/2.

        Under the crossed model the readers' majority rate lies on the vote share's side of 1/2 and
        beyond it (``M = Phi(b0 / sd_pair)``, ``V`` a logistic average shrunk towards 1/2), so the band is
        ``[V, M]`` (``V > 1/2``) or ``[M, V]``: its edge towards 1/2 is ``V``, identified from single
        votes, and its far edge is not. With ``V > 1/2`` the judge lies below the band by more than the
        margin exactly when ``J - V < -m``; the side itself is estimated, so the test is the
        intersection of ``J - V < -m`` and ``V > 1/2`` (the larger of the two one-sided p: an
        intersection-union test); mirrored for ``V < 1/2``. 1 at ``V = 1/2`` exactly.
        """
        dv, v = self.boot["difference_vote_share"], self.boot["vote_share"]
        m = self.margin
        side = self.vote_side()
        if side == "focal":
            sides = [(dv.p_less(-m), dv.p_mc_se(-m, greater=False)), (v.p_greater(0.5), v.p_mc_se(0.5, greater=True))]
        elif side == "other":
            sides = [(dv.p_greater(m), dv.p_mc_se(m, greater=True)), (v.p_less(0.5), v.p_mc_se(0.5, greater=False))]
        else:
            return 1.0, 0.0
        p, se = max(sides, key=lambda s: s[0])
        return float(p), float(se)

    def p_conflict(self) -> float:
        """One-sided p of a direction conflict: J decisive one way, V decisive the other.

        An intersection of two one-sided tests: the larger p. 1 when the estimates are on
        the same side of 1/2 (no conflict to test).
        """
        return self.p_conflict_with_se()[0]

    def p_conflict_with_se(self) -> tuple[float, float]:
        """:meth:`p_conflict` and its Monte Carlo standard error (that of the larger p; 0 when 1 by rule)."""
        j, v = self.boot["judge_rate"], self.boot["vote_share"]
        if j.estimate > 0.5 and v.estimate < 0.5:
            sides = [(j.p_greater(0.5), j.p_mc_se(0.5, greater=True)), (v.p_less(0.5), v.p_mc_se(0.5, greater=False))]
        elif j.estimate < 0.5 and v.estimate > 0.5:
            sides = [(j.p_less(0.5), j.p_mc_se(0.5, greater=False)), (v.p_greater(0.5), v.p_mc_se(0.5, greater=True))]
        else:
            return 1.0, 0.0
        p, se = max(sides, key=lambda side: side[0])
        return float(p), float(se)

    def p_equivalence_sides(self) -> dict[str, tuple[float, float]]:
        """The two one-sided tests of equivalence (TOST), each ``(p, Monte Carlo SE)``.

        ``lower``: H0 ``d_lo <= -margin`` (the judge lies below the band by the margin or more),
        small when the 1 - 2 alpha interval's lower end is above ``-margin``; ``upper``: H0
        ``d_hi >= +margin``, small when its upper end is below ``+margin``. Read from the same
        replicate distributions as :meth:`band_interval` (docs/audit.md 4.3, how the two relate).
        """
        if self.vote_share_only:  # |J - V| < m puts J within the margin of [V, M] wherever M lies on V's side
            lo = hi = self.boot["difference_vote_share"]
        else:
            lo, hi = self.boot["d_lo"], self.boot["d_hi"]
        return {
            "lower": (float(lo.p_greater(-self.margin)), float(lo.p_mc_se(-self.margin, greater=True))),
            "upper": (float(hi.p_less(self.margin)), float(hi.p_mc_se(self.margin, greater=False))),
        }

    def p_equivalence_with_se(self) -> tuple[float, float]:
        """The equivalence p (the larger of the two one-sided p: an intersection-union test) and its Monte Carlo SE."""
        sides = self.p_equivalence_sides().values()
        if any(not np.isfinite(p) for p, _ in sides):
            return float("nan"), float("nan")
        p, se = max(sides, key=lambda side: side[0])
        return float(p), float(se)

    def pass_holds(self) -> bool:
        """Equivalence (TOST at ``alpha``): the 1 - 2 alpha interval of the distance inside (-margin, margin)."""
        low, high = self.band_interval(self.alpha)
        return bool(low > -self.margin and high < self.margin)

    def readings(self, decisive_level: float) -> tuple[list, list]:
        """What the decision of this assessed cell reads from its distributions, for
        :func:`judge_transfer_audit.verdict.stacked.prefetch`: ``(intervals, p_values)``, each reading as its method
        computes its argument (:meth:`band_interval` at alpha, :meth:`direction` at ``decisive_level``,
        :meth:`interval` at ``1 - 2 alpha``, :meth:`p_outside_with_se`, :meth:`p_conflict_with_se`,
        :meth:`p_equivalence_sides`)."""
        b, m = self.boot, self.margin
        j, v = b["judge_rate"], b["vote_share"]
        a_decisive, a_level = (1.0 - decisive_level) / 2.0, (1.0 - (1.0 - 2.0 * self.alpha)) / 2.0
        if self.vote_share_only:
            dv = b["difference_vote_share"]
            intervals = [(dv, self.alpha), (j, a_decisive), (v, a_decisive), (dv, a_level), (j, a_level)]
            # the equivalence tests, then the less-decisive test on the vote share's side
            p_values = [(dv, -m, True), (dv, m, False)]
            side = self.vote_side()
            if side == "focal":
                p_values += [(dv, -m, False), (v, 0.5, True)]
            elif side == "other":
                p_values += [(dv, m, True), (v, 0.5, False)]
        else:
            lo, hi = b["d_lo"], b["d_hi"]
            intervals = [(lo, self.alpha), (hi, self.alpha), (j, a_decisive), (v, a_decisive)]
            intervals += [(b[k], a_level) for k in ("difference_vote_share", "difference_majority", "judge_rate")]
            p_values = [(hi, m, True), (hi, m, False), (lo, -m, False), (lo, -m, True)]
        if j.estimate > 0.5 and v.estimate < 0.5:
            p_values += [(j, 0.5, True), (v, 0.5, False)]
        elif j.estimate < 0.5 and v.estimate > 0.5:
            p_values += [(j, 0.5, False), (v, 0.5, True)]
        return intervals, p_values

    def interval(self, name: str, level: float) -> Interval:
        d = self.boot[name]
        lo, hi = d.interval(level)
        return Interval(float(d.estimate), float(lo), float(hi), float(level))

    def direction(self, name: str, level: float) -> str:
        lo, hi = self.boot[name].interval(level)
        if not (math.isfinite(lo) and math.isfinite(hi)):
            return "unknown"
        return "focal" if lo > 0.5 else ("other" if hi < 0.5 else "chance")


@dataclass(frozen=True)
class PreparedCell:
    """One cell up to its bootstrap (internal): the compared table in the canonical orientation and the
    counts the status rules read. :func:`prepare_cell` makes it, :func:`finish_cell` decides the cell's
    status from it and its bootstrap; :func:`compare_cell` is the two around one bootstrap call, and
    :func:`compare_cells` the same for many cells with their bootstraps stacked."""

    table: ComparisonTable
    flip: bool
    has_judge: bool
    n_common_pairs: int
    n_common_readers: int
    all_ties: bool  #: every human vote on the compared pairs is a tie
    tie_rule: TieRule
    policy: TransferPolicy

    @property
    def needs_bootstrap(self) -> bool:
        return self.table.n_pairs >= 2 and self.table.n_readers >= 2

    @property
    def counts_suffice(self) -> bool:
        """Whether :func:`finish_cell` gets past the rules that do not read the bootstrap (a judge with
        outputs, enough pairs and readers, not every vote a tie)."""
        policy, table = self.policy, self.table
        return (
            self.has_judge
            and self.n_common_pairs >= policy.min_pairs
            and self.n_common_readers >= policy.min_readers
            and not self.all_ties
            and table.n_pairs >= policy.min_pairs
            and table.n_readers >= policy.min_readers
        )


def prepare_cell(
    pair_id: np.ndarray,
    reader_id: np.ndarray,
    y: np.ndarray,
    judge_pairs: np.ndarray | None,
    judge_credit: np.ndarray | None,
    *,
    tie_rule: TieRule,
    policy: TransferPolicy,
    rng: np.random.Generator,
    orientation: float = 1.0,
) -> PreparedCell:
    """:func:`compare_cell` before the bootstrap: the table (``rng`` draws a random tie rule's credits) and counts."""
    flip = orientation < 0
    y = np.asarray(y, float)
    if flip:  # the canonical orientation; mirrored back in finish_cell
        y = 1.0 - y
        judge_credit = None if judge_credit is None else 1.0 - np.asarray(judge_credit, float)
    has_judge = judge_pairs is not None
    if not has_judge:
        judge_pairs = np.unique(np.asarray(pair_id).astype(str))
        judge_credit = np.full(judge_pairs.size, 0.5)
    table, common = compared_votes(pair_id, reader_id, y, judge_pairs, judge_credit, tie_rule=tie_rule, rng=rng)
    return PreparedCell(table, flip, has_judge, common.n_pairs, common.n_readers, common.all_ties, tie_rule, policy)


NEEDED = ("judge_rate", "vote_share", "majority_rate", "d_lo", "d_hi")  #: what an assessed cell must estimate
#: what a cell whose pairs are read once (the majority rate unidentified) must estimate for the vote-share decision
VOTE_SHARE_NEEDED = ("judge_rate", "vote_share", "difference_vote_share")


def finish_cell(p: PreparedCell, boot: CellBootstrap | None) -> CellComparison:
    """:func:`compare_cell` after the bootstrap (``boot``: the canonical orientation's, None when not
    bootstrapped): the status rules, in order, and the bootstrap mirrored back for a flipped cell."""
    policy, table, tie_rule = p.policy, p.table, p.tie_rule
    if boot is not None and p.flip:
        boot = boot.mirrored()
    kw = dict(alpha=policy.alpha, margin=policy.margin, flipped=p.flip)
    if not p.has_judge:
        return CellComparison(Status.INSUFFICIENT, "the judge has no outputs for this criterion", table, boot, **kw)
    n_common_pairs, n_common_readers = p.n_common_pairs, p.n_common_readers
    if n_common_pairs < policy.min_pairs or n_common_readers < policy.min_readers:
        return CellComparison(
            Status.INSUFFICIENT,
            f"{n_common_pairs} pair(s) with both a human vote and a valid judge output and {n_common_readers} "
            f"reader(s) on them; the policy needs at least {policy.min_pairs} pairs and {policy.min_readers} readers",
            table,
            boot,
            **kw,
        )
    if p.all_ties:
        return CellComparison(
            Status.ERROR,
            "every human vote on the compared pairs is a tie: the readers expressed "
            "no preference to compare the judge with",
            table,
            boot,
            **kw,
        )
    if table.n_pairs < policy.min_pairs or table.n_readers < policy.min_readers:
        return CellComparison(
            Status.INSUFFICIENT,
            f"only {table.n_pairs} pair(s) and {table.n_readers} reader(s) have a vote credited by the "
            f"'{tie_rule.name}' tie rule (the other votes are excluded ties); the policy needs "
            f"{policy.min_pairs} pairs and {policy.min_readers} readers",
            table,
            boot,
            **kw,
        )
    if boot is not None and not math.isfinite(boot.between_pair_sd):
        if all(boot[k].defined and math.isfinite(boot[k].sd) for k in VOTE_SHARE_NEEDED):
            # one credited vote per pair (or one pair read twice): the vote-share decision
            return CellComparison(None, "", table, boot, vote_share_only=True, **kw)
        return CellComparison(
            Status.INSUFFICIENT,
            "fewer than two compared pairs have two or more credited votes: the between-pair variance, and so "
            "the majority rate, cannot be estimated (a pair read once carries no information on it), and the "
            "bootstrap could not estimate the judge's rate and the vote share either",
            table,
            boot,
            **kw,
        )
    needed = NEEDED
    if boot is None or not all(boot[k].defined and math.isfinite(boot[k].sd) for k in needed):
        bad = [k for k in needed if boot is None or not (boot[k].defined and math.isfinite(boot[k].sd))]
        return CellComparison(
            Status.ERROR,
            "the bootstrap could not estimate " + ", ".join(bad) + " (too few distinct pairs or readers with votes)",
            table,
            boot,
            **kw,
        )
    return CellComparison(None, "", table, boot, **kw)


def compare_cell(
    pair_id: np.ndarray,
    reader_id: np.ndarray,
    y: np.ndarray,
    judge_pairs: np.ndarray | None,
    judge_credit: np.ndarray | None,
    *,
    tie_rule: TieRule,
    policy: TransferPolicy,
    rng: np.random.Generator,
    orientation: float = 1.0,
    n_boot: int | None = None,
    bootstrap=paired_bootstrap,
) -> CellComparison:
    """Build, check and bootstrap one cell (see the module doc).

    ``judge_pairs``/``judge_credit`` None: the judge has no outputs for this criterion (the
    humans' estimands are still computed, on every pair with a vote, for the report).
    ``orientation`` is the cell's sign from :func:`canonical_cell`; ``n_boot`` overrides the
    policy's replicates (the sequential Monte Carlo of :mod:`judge_transfer_audit.verdict.assess`).
    ``bootstrap(table, n_boot, rng)`` is :func:`~judge_transfer_audit.verdict.paired_bootstrap.paired_bootstrap`
    unless the caller shares one bootstrap across judges (:mod:`judge_transfer_audit.verdict.batched`).
    """
    p = prepare_cell(
        pair_id,
        reader_id,
        y,
        judge_pairs,
        judge_credit,
        tie_rule=tie_rule,
        policy=policy,
        rng=rng,
        orientation=orientation,
    )
    replicates = policy.n_boot if n_boot is None else int(n_boot)
    return finish_cell(p, bootstrap(p.table, replicates, rng) if p.needs_bootstrap else None)


def stacked_bootstraps(tables, replicates: int, rngs) -> list[CellBootstrap]:
    """:func:`~judge_transfer_audit.verdict.paired_bootstrap.paired_bootstrap` of every table (each its own stream),
    same-shape cells stacked (:func:`judge_transfer_audit.verdict.stacked_bootstrap.bootstrap_cells`)."""
    from judge_transfer_audit.verdict.stacked_bootstrap import bootstrap_cells

    return [b[0] for b in bootstrap_cells(tables, [t.judge[None, :] for t in tables], replicates, rngs)]


def compare_cells(prepared, replicates: int, rngs, bootstrap=None) -> list[CellComparison]:
    """:func:`finish_cell` of every :class:`PreparedCell` after one call ``bootstrap(indices, tables,
    replicates, rngs)`` for those that need it (``indices`` into ``prepared``; default
    :func:`stacked_bootstraps`), each with the stream its table was drawn from (``rngs``)."""
    need = [i for i, p in enumerate(prepared) if p.needs_bootstrap]
    tables = [prepared[i].table for i in need]
    streams = [rngs[i] for i in need]
    if bootstrap is None:
        boots = stacked_bootstraps(tables, replicates, streams) if need else []
    else:
        boots = bootstrap(need, tables, replicates, streams) if need else []
    by_index = dict(zip(need, boots))
    # the distributions the last rule reads, built together (judge_transfer_audit.verdict.stacked.materialize)
    # (NEEDED holds d_lo and d_hi, so a flipped cell's mirrored readings are built too)
    materialize((b, k) for i, b in by_index.items() if prepared[i].counts_suffice for k in NEEDED)
    return [finish_cell(p, by_index.get(i)) for i, p in enumerate(prepared)]


__all__ = [
    "CellComparison",
    "PreparedCell",
    "canonical_cell",
    "cell_generator",
    "compare_cell",
    "compare_cells",
    "finish_cell",
    "prepare_cell",
    "stacked_bootstraps",
]
