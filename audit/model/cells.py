"""The audit's per-cell result types: the humans' side, the judge's side, the transfer decision
(per cell, matchup and study) and the cells' headline in words.

Field names are a stable interface (result.json); :mod:`judge_transfer_audit.results.result`
assembles them into the ``AuditResult``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from judge_transfer_audit.model.checks import Status

#: the columns every judge-pairs table has, in this order (judge_transfer_audit.verdict.judge_side builds it with them)
JUDGE_PAIR_COLUMNS = (
    "pair_id",
    "matchup",
    "focal",
    "other",
    "criterion",
    "judge",
    "focal_score",
    "other_score",
    "outcome",
    "credit",
)


@dataclass(frozen=True)
class Interval:
    """An estimate with its two-sided interval at ``level``."""

    estimate: float
    ci_low: float
    ci_high: float
    level: float = 0.95


def _nan_interval() -> Interval:
    nan = float("nan")
    return Interval(nan, nan, nan, nan)


@dataclass(frozen=True)
class GlmmSummary:
    """The crossed pair + reader GLMM of one cell, on the probability scale.

    ``estimate`` is expit(b0): the preference for the focal system of the *median* pair and
    reader (random effects at zero), a secondary figure; ``ci_low``/``ci_high`` transform the
    Wald interval of b0. ``majority_plugin`` is Phi(b0 / sd_pair), the GLMM's plug-in for
    the majority rate. ``degenerate`` flags a fit whose point the audit does not use or show
    as the human preference (``degenerate_reason`` says which rule fired; docs/audit.md).
    ``factorization`` is how the native engine solved the cell ("dense", "sparse", "iterative",
    "diagonal"; "" for another backend or a fit that did not run; docs/glmm.md).
    """

    estimate: float
    ci_low: float
    ci_high: float
    b0: float
    se: float
    sd_pair: float
    sd_reader: float
    singular: bool
    converged: bool
    separation: bool
    loglik: float
    status: Status = Status.PASS
    reason: str = ""
    notes: tuple[str, ...] = ()
    majority_plugin: float = float("nan")
    degenerate: bool = False
    degenerate_reason: str = ""
    factorization: str = ""


@dataclass(frozen=True)
class HumanSide:
    """Human votes of one cell.

    ``rate`` = focal votes / decisive votes (ties excluded), vote-weighted, over every pair of
    the cell; ``rate_even_split`` counts ties half. ``vote_share`` and ``majority_rate`` are
    the estimands the judge is compared with (docs/audit.md), on the cell's compared pairs
    (``n_pairs_compared``) under the run's tie rule: the pair-weighted readers' preference
    share and the share of pairs whose reader majority favours the focal system.
    ``between_pair_sd`` is the SD over pairs of the pair's expected credit (probability
    scale) behind ``majority_rate``.
    """

    rate: float
    n_focal: int
    n_other: int
    n_ties: int
    rate_even_split: float  #: (focal + 0.5 ties) / all votes, for comparison with the judge
    glmm: GlmmSummary
    vote_share: Interval = field(default_factory=_nan_interval)
    majority_rate: Interval = field(default_factory=_nan_interval)
    between_pair_sd: float = float("nan")
    n_pairs_compared: int = 0


@dataclass(frozen=True)
class JudgeConfigRate:
    judge: str
    rate: float
    wins: int
    losses: int
    ties: int
    invalid: int


@dataclass(frozen=True)
class JudgeSide:
    """The judge's verdicts of one cell, per pair, under ``tie_rule``.

    ``rate`` is the primary configuration's rate for the focal system; ``criterion`` is the
    judge criterion compared (``aggregate`` when the human criterion is ``overall``: a
    different target, labelled as such).
    """

    judge: str
    criterion: str
    rate: float
    wins: int
    losses: int
    ties: int
    invalid: int
    n_pairs: int
    tie_rule: str
    different_target: bool
    configurations: tuple[JudgeConfigRate, ...] = ()


@dataclass(frozen=True)
class Transfer:
    """The cell decision: does the judge reproduce the humans in this cell?

    ``status`` is PASS, FAIL, INCONCLUSIVE, INSUFFICIENT or ERROR (docs/audit.md, "The
    decision"). ``difference`` is the signed distance from the judge's rate to the human
    band ``[band_low, band_high] = [min(V, M), max(V, M)]`` (0 inside), with its interval at
    ``interval_level`` (1 - 2 alpha: the TOST interval); ``difference_vote_share`` is
    J - V and ``difference_majority`` J - M at the same level. ``p_outside`` is the one-sided
    p-value that the judge lies outside the band widened by ``margin``, ``p_conflict`` that
    of a direction conflict with both sides decisive; ``*_adjusted`` after the multiplicity
    adjustment ``adjust`` across the assessed cells. ``p_equivalence`` is the equivalence test
    behind a PASS (two one-sided tests against the margin, the larger p; unadjusted: the overall
    PASS is an intersection-union test).
    """

    status: Status
    reason: str
    margin: float = float("nan")
    difference: Interval = field(default_factory=_nan_interval)
    difference_vote_share: Interval = field(default_factory=_nan_interval)
    difference_majority: Interval = field(default_factory=_nan_interval)
    judge_rate: Interval = field(default_factory=_nan_interval)  #: J over the compared pairs
    band_low: float = float("nan")
    band_high: float = float("nan")
    interval_level: float = float("nan")
    p_outside: float | None = None
    p_outside_adjusted: float | None = None
    p_conflict: float | None = None
    p_conflict_adjusted: float | None = None
    adjust: str = ""
    direction_conflict: bool | None = None
    human_direction: str = "unknown"  #: "focal", "other" or "chance" (vote share's interval vs 1/2)
    judge_direction: str = "unknown"  #: the same for the judge's rate
    pairs_needed: int | None = (
        None  #: INCONCLUSIVE: pairs that decide it at the current estimates, at pairs_needed_power
    )
    pairs_needed_power: float | None = None  #: the power pairs_needed is computed at (schema 2.3: 0.8)
    p_outside_mc_se: float | None = None  #: Monte Carlo SE of p_outside (what another seed would move; 2.3)
    p_conflict_mc_se: float | None = None  #: Monte Carlo SE of p_conflict (2.3)
    monte_carlo_borderline: bool | None = None  #: the cell's p within 2 Monte Carlo SEs of its adjusted level (2.3)
    p_equivalence: float | None = None  #: TOST p of equivalence, the larger one-sided p; PASS needs < alpha (2.4)
    p_equivalence_mc_se: float | None = None  #: Monte Carlo SE of p_equivalence (2.4)
    monte_carlo_borderline_test: str | None = None  #: "FAIL" or "PASS": the test within its Monte Carlo error (2.4)
    n_pairs: int = 0  #: compared pairs (a credited human vote and a valid judge output)
    n_readers: int = 0  #: readers who voted on the compared pairs
    readers_per_pair: float = float("nan")  #: mean credited votes per compared pair
    n_boot: int = 0
    judge_vs_majority: float | None = None  #: judge's agreement with the readers' majority, per pair
    reader_baseline: float | None = None  #: mean reader agreement with the majority of the others
    below_reader_baseline: bool | None = None
    # the hierarchical FAIL decision (audit/verdict/hierarchy.py) and the vote-share decision
    p_closure: float | None = None  #: the largest local p over the sets of the cell's matchup that contain it
    p_matchup: float | None = None  #: the matchup's local test of all its assessed cells (pooled criteria)
    p_matchup_closure: float | None = None  #: the largest local p over the non-empty sets of the matchup's cells
    majority_identified: bool | None = None  #: False: pairs read once, decided on the vote share alone
    pairs_read_twice_needed: int | None = None  #: vote-share decision: pairs read twice that would identify M
    p_matchup_equivalence: float | None = None  #: the matchup's pooled equivalence test (mean distance ends)


@dataclass(frozen=True)
class MatchupTransfer:
    """The transfer decision of one matchup: its criteria pooled (audit/verdict/hierarchy.py).

    FAIL: the closed test rejects "every criterion of this matchup within the margin" (``p_adjusted``
    below alpha; familywise error controlled in the strong sense across matchups and cells); PASS: no
    cell FAILs and every assessed cell PASSes or the pooled equivalence test holds (``p_equivalence``:
    the judge's absolute distance to the band, averaged over the criteria, is below the margin).
    """

    matchup: str
    status: Status
    reason: str
    n_cells: int = 0
    n_assessed: int = 0
    n_fail: int = 0  #: cells FAILed (the cells of a FAILing matchup that the closed test rejects)
    n_pass: int = 0
    p_matchup: float | None = None  #: the local test of all its assessed cells (pooled criteria)
    p_adjusted: float | None = None  #: closed-test-adjusted
    p_equivalence: float | None = None  #: the pooled equivalence test (None: not every assessed cell pooled)


@dataclass(frozen=True)
class StudyTransfer:
    """The study-level transfer decision: FAIL when the study test (Bonferroni over the matchups' local
    tests) rejects or a matchup FAILs, PASS when every matchup with an assessed cell PASSes."""

    status: Status
    reason: str
    p_study: float | None = None
    n_matchups: int = 0  #: matchups with an assessed cell
    n_fail: int = 0
    n_pass: int = 0


@dataclass(frozen=True)
class Cell:
    matchup: str
    criterion: str
    focal: str
    other: str
    n_pairs: int
    n_readers: int
    n_votes: int
    human: HumanSide
    judge: JudgeSide | None
    transfer: Transfer


def plain_counts(counts: dict[str, int]) -> str:
    """The compared cells in words, failures first: ``3 cells fail, 15 undecided, none pass``."""
    fail, undecided, passed = counts["FAIL"], counts["INCONCLUSIVE"], counts["PASS"]
    first = "no cell fails" if fail == 0 else (f"{fail} cell fails" if fail == 1 else f"{fail} cells fail")
    last = "none pass" if passed == 0 else (f"{passed} passes" if passed == 1 else f"{passed} pass")
    return f"{first}, {undecided or 'none'} undecided, {last}"


def headline_from_counts(word: str, counts: dict[str, int]) -> str:
    """``FAIL: 3 cells fail, 15 undecided, none pass`` (INSUFFICIENT and ERROR cells in parentheses)
    from the status word and the cells per transfer status."""
    counts = {s: int(counts.get(s, 0)) for s in ("PASS", "FAIL", "INCONCLUSIVE", "INSUFFICIENT", "ERROR")}
    if counts["PASS"] + counts["FAIL"] + counts["INCONCLUSIVE"] == 0:
        return f"{word}: nothing was compared"
    extra = [f"{counts[s]} {s.lower()}" for s in ("INSUFFICIENT", "ERROR") if counts[s]]
    return f"{word}: {plain_counts(counts)}" + (f" ({', '.join(extra)})" if extra else "")
