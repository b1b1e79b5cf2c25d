"""Checks, cell counts and the one-sentence verdict, derived from the decided cells.

One vocabulary: every cell's transfer decision is one check ``transfer.decision`` whose
status *is* the cell's status (PASS, FAIL, INCONCLUSIVE, INSUFFICIENT, ERROR), so the gate
counts exactly what the transfer table shows. ``[severity]`` may demote it
(``"transfer.decision" = "WARN"``: a FAIL cell is reported as WARN and does not fail the
gate, and the reason says so) or remove it (``OFF``); :func:`judge_transfer_audit.model.checks.apply_severity`
decides that, here as for every other check. The other per-cell check,
``transfer.judge_vs_reader_baseline``, is WARN by default. Summary checks (scope
``overall``): ``transfer.assessed`` (ERROR when no cell could be compared: the gate must not
pass when nothing was compared), agreement, invalid judge outputs, singular GLMMs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import pandas as pd

from judge_transfer_audit.model.cells import Cell, MatchupTransfer, StudyTransfer, headline_from_counts, plain_counts
from judge_transfer_audit.model.checks import CELL_STATUSES, Check, Status, apply_severity, breach_status
from judge_transfer_audit.model.data import JUDGE_AGGREGATE
from judge_transfer_audit.model.policy import Policy


def _add(
    checks: list[Check],
    name: str,
    breached: bool | None,
    *,
    value: float | None,
    threshold: float | None,
    reason: str,
    scope: str = "overall",
) -> None:
    """PASS, the check's default breach status (:func:`judge_transfer_audit.model.checks.breach_status`) or SKIPPED
    (``breached`` None); the policy's ``[severity]`` is applied afterwards, in one place."""
    status = Status.SKIPPED if breached is None else (breach_status(name) if breached else Status.PASS)
    checks.append(Check(name, status, value, threshold, reason, scope))


def cell_counts(cells: Sequence[Cell]) -> dict[str, int]:
    """Cells per transfer status, every status present (0 when none)."""
    counts = {s.value: 0 for s in CELL_STATUSES}
    for c in cells:
        counts[c.transfer.status.value] = counts.get(c.transfer.status.value, 0) + 1
    return counts


def _decision_check(c: Cell) -> Check:
    t = c.transfer
    value = t.difference.estimate if math.isfinite(t.difference.estimate) else None
    return Check(
        "transfer.decision",
        t.status,
        value,
        t.margin if math.isfinite(t.margin) else None,
        t.reason,
        f"{c.matchup}/{c.criterion}",
    )


def cell_checks(cells: Sequence[Cell], policy: Policy) -> list[Check]:
    checks: list[Check] = []
    for c in cells:
        scope = f"{c.matchup}/{c.criterion}"
        t, g = c.transfer, c.human.glmm
        checks.append(_decision_check(c))
        if t.below_reader_baseline is None:
            _add(
                checks,
                "transfer.judge_vs_reader_baseline",
                None,
                value=None,
                threshold=None,
                scope=scope,
                reason="no reader-majority baseline for this cell",
            )
        else:
            gap = t.judge_vs_majority - t.reader_baseline
            _add(
                checks,
                "transfer.judge_vs_reader_baseline",
                t.below_reader_baseline,
                value=gap,
                threshold=-policy.transfer.max_baseline_gap,
                scope=scope,
                reason=(
                    f"judge agrees with the reader majority on {t.judge_vs_majority:.1%} of pairs; "
                    f"readers agree with the others' majority on {t.reader_baseline:.1%}"
                ),
            )
        if g.status is Status.ERROR:
            checks.append(Check("glmm.fit", Status.ERROR, None, None, g.reason, scope))
    return apply_severity(checks, policy.severity)


def transfer_levels(cells: Sequence[Cell], policy: Policy) -> tuple[tuple[MatchupTransfer, ...], StudyTransfer | None]:
    """The matchup and study transfer decisions from the decided cells
    (:func:`judge_transfer_audit.verdict.hierarchy.levels`);
    none when the policy does not pool the criteria (``transfer.pool_criteria = false``)."""
    from judge_transfer_audit.verdict.hierarchy import levels

    if not policy.transfer.pool_criteria or not cells:
        return (), None
    if not any(c.transfer.p_matchup is not None for c in cells):  # nothing assessed, or a result from before
        return (), None
    tp = policy.transfer
    groups = [c.matchup for c in cells]
    lv = levels([c.transfer for c in cells], groups, tp)
    word = {"holm": "Holm", "bonferroni": "Bonferroni"}.get(tp.adjust, "no adjustment")
    matchups = []
    for g in dict.fromkeys(groups):
        mine = [c.transfer for c in cells if c.matchup == g]
        live = [t for t in mine if t.status.value in ("PASS", "FAIL", "INCONCLUSIVE")]
        status = Status(lv["matchups"][g])
        p = next((t.p_matchup for t in live if t.p_matchup is not None), None)
        eq = next((t.p_matchup_equivalence for t in live if t.p_matchup_equivalence is not None), None)
        adj = lv["matchup_p"].get(g)
        n_fail = sum(t.status is Status.FAIL for t in live)
        n_pass = sum(t.status is Status.PASS for t in live)
        if status is Status.INSUFFICIENT:
            reason = "no cell of this matchup could be compared"
        else:
            test = (
                f"the test of all {len(live)} compared criteria pooled (one joint bootstrap of the matchup's pairs) "
                f"p = {_p(p)}, closed-test-adjusted ({word} over matchups) {_p(adj)}"
            )
            if status is Status.FAIL:
                reason = (
                    f"FAIL: at least one criterion lies outside the {100 * tp.margin:.0f}-point margin of the readers' "
                    f"band or in a direction conflict ({test}); {n_fail} of its cells FAIL on their own"
                )
            elif status is Status.PASS:
                how = (
                    "every compared cell PASSes"
                    if n_pass == len(live)
                    else f"the judge's absolute distance to the band, averaged over its criteria, is below the margin "
                    f"(pooled equivalence p = {_p(eq)} < {tp.alpha:g}; {n_pass} of {len(live)} cells PASS alone)"
                )
                reason = f"PASS: {how}; {test}"
            else:
                reason = f"INCONCLUSIVE: {test}; {n_pass} of {len(live)} cells PASS, none FAILs"
        matchups.append(MatchupTransfer(g, status, reason, len(mine), len(live), n_fail, n_pass, p, adj, eq))
    live = [m for m in matchups if m.status is not Status.INSUFFICIENT]
    study = Status(lv["study"])
    n_fail = sum(m.status is Status.FAIL for m in live)
    n_pass = sum(m.status is Status.PASS for m in live)
    text = (
        f"{len(live)} compared matchups: {n_fail} FAIL, {n_pass} PASS, {len(live) - n_fail - n_pass} INCONCLUSIVE; "
        f"study test (Bonferroni over the matchups' pooled tests) p = {_p(lv['study_p'])}"
    )
    return tuple(matchups), StudyTransfer(study, f"{study.value}: {text}", lv["study_p"], len(live), n_fail, n_pass)


def _adjusted(adjust: str, levels: Sequence[Check]) -> str:
    """How the cells' p-values were adjusted: the closed test over matchups when the run decided
    matchups with their criteria pooled (its matchup and study checks exist), else the policy's rule."""
    return "closed-test-adjusted over the matchups" if levels else f"{adjust}-adjusted"


def _matchups(failing: list[str]) -> str:
    return f"; FAILing matchups with the criteria pooled: {', '.join(failing)}" if failing else ""


def _p(x: float | None) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.2g}"


def level_checks(cells: Sequence[Cell], policy: Policy) -> list[Check]:
    """``transfer.matchup`` per matchup of two or more criteria and ``transfer.study``: their statuses are the
    matchup and study decisions (a FAIL fails the gate like a FAILed cell; ``[severity]`` may demote it)."""
    matchups, study = transfer_levels(cells, policy)
    checks: list[Check] = []
    for m in matchups:
        if m.n_cells < 2:
            continue
        checks.append(Check("transfer.matchup", m.status, m.p_adjusted, policy.transfer.alpha, m.reason, m.matchup))
    if study is not None and len(matchups) > 1:
        checks.append(Check("transfer.study", study.status, study.p_study, policy.transfer.alpha, study.reason))
    return checks


def _nothing_assessed_reason(cells: Sequence[Cell]) -> str:
    if not cells:
        return "no cell has human votes"
    if all(c.judge is None for c in cells):
        return (
            "no cell could be compared: the judge has no outputs for any of the humans' criteria "
            "(check that the criterion names match)"
        )
    if all(c.human.n_focal + c.human.n_other == 0 for c in cells):
        return "no cell could be compared: every human vote is a tie (the readers expressed no preference)"
    counts = cell_counts(cells)
    return (
        f"no cell could be compared: {counts['INSUFFICIENT']} INSUFFICIENT and {counts['ERROR']} ERROR "
        "(see each cell's reason)"
    )


def summary_checks(
    cells: Sequence[Cell], agreement: pd.DataFrame, policy: Policy, judge_pairs: pd.DataFrame
) -> list[Check]:
    checks: list[Check] = []
    counts = cell_counts(cells)
    n_assessed = counts["PASS"] + counts["FAIL"] + counts["INCONCLUSIVE"]
    if n_assessed:
        checks.append(
            Check(
                "transfer.assessed",
                Status.PASS,
                float(n_assessed),
                None,
                f"{n_assessed} of {len(cells)} cells compared ({counts['INSUFFICIENT']} "
                f"INSUFFICIENT, {counts['ERROR']} ERROR)",
            )
        )
    else:
        checks.append(
            Check("transfer.assessed", breach_status("transfer.assessed"), 0.0, None, _nothing_assessed_reason(cells))
        )
    checks += level_checks(cells, policy)
    alpha = _pooled_alpha(agreement)
    thr = policy.agreement.min_human_alpha
    _add(
        checks,
        "agreement.human_alpha",
        None if alpha is None else alpha < thr,
        value=alpha,
        threshold=thr,
        reason=(
            "readers' Krippendorff alpha over all cells: the human target is "
            + (
                "weakly reliable; report the judge against a distribution, not a consensus"
                if alpha is not None and alpha < thr
                else "reliable enough to compare against"
            )
        )
        if alpha is not None
        else "agreement could not be computed",
    )
    # The derived aggregate would count an invalid criterion score a second time.
    own = judge_pairs[judge_pairs["criterion"] != JUDGE_AGGREGATE] if "criterion" in judge_pairs else judge_pairs
    if own.empty:
        own = judge_pairs
    if len(own):
        n_invalid = int((own["outcome"] == "invalid").sum())
        invalid = n_invalid / len(own)
        thr = policy.judge.max_invalid_fraction
        _add(
            checks,
            "judge.invalid_fraction",
            invalid > thr,
            value=invalid,
            threshold=thr,
            reason=f"{n_invalid} of {len(own)} judge pair comparisons have an unparsable score on either side",
        )
    fitted = [c for c in cells if c.human.glmm.status not in (Status.ERROR, Status.SKIPPED)]
    if fitted:
        singular = sum(c.human.glmm.singular for c in fitted) / len(fitted)
        thr = policy.glmm.max_fraction_singular
        _add(
            checks,
            "glmm.fraction_singular",
            singular > thr,
            value=singular,
            threshold=thr,
            reason=f"{sum(c.human.glmm.singular for c in fitted)} of {len(fitted)} GLMM fits are singular "
            "(a variance component at zero)",
        )
    return apply_severity(checks, policy.severity)


def _pooled_alpha(agreement: pd.DataFrame) -> float | None:
    """Krippendorff's alpha over every vote (the agreement table's ``level == "all"`` row)."""
    if agreement is None or agreement.empty or "krippendorff_alpha" not in agreement:
        return None
    pooled = agreement[agreement["level"] == "all"] if "level" in agreement else agreement.iloc[0:0]
    if pooled.empty:
        return None
    value = float(pooled["krippendorff_alpha"].iloc[0])
    return None if math.isnan(value) else value


def overall_status(checks: Iterable[Check]) -> Status:
    """ERROR > FAIL > INCONCLUSIVE > WARN > PASS; INSUFFICIENT and SKIPPED do not count."""
    statuses = {c.status for c in checks}
    for s in (Status.ERROR, Status.FAIL, Status.INCONCLUSIVE, Status.WARN):
        if s in statuses:
            return s
    return Status.PASS


def _apart(counts: dict[str, int]) -> str:
    """``; 75 insufficient cells counted apart`` (INSUFFICIENT and ERROR cells), or ``""``."""
    extra = [f"{counts[s]} {s.lower()}" for s in ("INSUFFICIENT", "ERROR") if counts[s]]
    return f"; {' and '.join(extra)} cell(s) counted apart" if extra else ""


def headline_text(status: Status | str, cells: Sequence[Cell], checks: Sequence[Check] = ()) -> str:
    """The report's one-line headline: ``FAIL: 3 cells fail, 15 undecided, none pass``, and
    ``; agreement decision FAIL`` when the judge is worse than a reader, pair by pair, somewhere."""
    word = status.value if isinstance(status, Status) else str(status)
    agreement = any(c.name == "agreement.decision" and c.status is Status.FAIL for c in checks)
    return headline_from_counts(word, cell_counts(cells)) + ("; agreement decision FAIL" if agreement else "")


def _agreement_failures(checks: Sequence[Check]) -> str:
    """Where the agreement decision FAILs, counted by level ("" when it FAILs nowhere)."""
    failing = [c.scope for c in checks if c.name == "agreement.decision" and c.status is Status.FAIL]
    if not failing:
        return ""
    study = sum(1 for s in failing if s == "all/all")
    matchups = sum(1 for s in failing if s != "all/all" and s.endswith("/all"))
    n_cells = len(failing) - study - matchups
    parts = (["the study"] if study else []) + [
        f"{n} {word}{'' if n == 1 else 's'}" for n, word in ((matchups, "matchup"), (n_cells, "cell")) if n
    ]
    where = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return (
        "Agreement decision FAIL: the judge reproduces the other readers worse than a reader does, pair by "
        f"pair ({where}). Rate decision: "
    )


def verdict_sentence(
    cells: Sequence[Cell],
    status: Status,
    checks: Sequence[Check] = (),
    margin: float | None = None,
    adjust: str = "holm",
) -> str:
    """The verdict: the agreement decision's FAILs first (when there are any), then one sentence on the
    rate decision whose every number is a count of cells or a policy value."""
    checks = tuple(checks)
    head = _agreement_failures(checks)
    if head:
        checks = tuple(c for c in checks if c.name != "agreement.decision")
    return head + _rate_sentence(cells, status, checks, margin, adjust)


def _rate_sentence(
    cells: Sequence[Cell], status: Status, checks: Sequence[Check], margin: float | None, adjust: str
) -> str:
    counts = cell_counts(cells)
    n_assessed = counts["PASS"] + counts["FAIL"] + counts["INCONCLUSIVE"]
    if n_assessed == 0:
        return "Nothing was compared: " + _nothing_assessed_reason(cells) + "."
    margin_text = f"{100 * margin:.0f}-point margin" if margin is not None else "margin"
    cells_text = f"{plain_counts(counts)} (of {n_assessed} compared cells{_apart(counts)}"
    other = sorted(
        {
            c.name
            for c in checks
            if c.status in (Status.FAIL, Status.ERROR) and c.name not in ("transfer.decision", "transfer.assessed")
        }
    )
    levels = [c for c in checks if c.name in ("transfer.matchup", "transfer.study") and c.status is Status.FAIL]
    other = [name for name in other if name not in ("transfer.matchup", "transfer.study")]
    tail = f"; other failing checks: {', '.join(other)}" if other else ""
    failing = [c.scope for c in levels if c.name == "transfer.matchup"]
    if levels and not counts["FAIL"]:
        where = f"matchup(s) {', '.join(failing)}" if failing else "the study as a whole"
        return (
            f"The judge does not transfer to this data: {where} FAIL with the criteria pooled (a criterion "
            f"outside the human band by more than the {margin_text}, or a direction conflict, not yet located "
            f"in one cell); {cells_text}){tail}."
        )
    if counts["FAIL"]:
        return (
            f"The judge does not transfer to this data: {cells_text}; a cell fails when the judge is outside the "
            f"human band by more than the {margin_text}, or in a direction conflict, {_adjusted(adjust, levels)})"
            f"{_matchups(failing)}{tail}."
        )
    if counts["ERROR"]:
        return f"The audit could not decide every cell: {cells_text}){tail}."
    if counts["INCONCLUSIVE"]:
        return (
            f"Not decided yet: {cells_text}); no cell is outside the {margin_text}, "
            f"and the undecided cells need more pairs (see pairs_needed){tail}."
        )
    insufficient = f" ({counts['INSUFFICIENT']} insufficient cell(s) counted apart)" if counts["INSUFFICIENT"] else ""
    return (
        f"The judge transfers to this data: all {n_assessed} compared cells pass (within the {margin_text} of the "
        f"human band){insufficient}{tail}."
    )


__all__ = [
    "cell_checks",
    "cell_counts",
    "headline_text",
    "level_checks",
    "overall_status",
    "plain_counts",
    "summary_checks",
    "transfer_levels",
    "verdict_sentence",
]
