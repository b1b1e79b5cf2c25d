"""AuditResult -> template context: the thin binding layer between the result and the HTML.

Everything here is selection and formatting (display rounding happens only here); nothing
is recomputed. Figures are rendered by :mod:`judge_transfer_audit.presentation.figures` from tidy frames built here.
The optional sections are drawn by the renderers their entries in the section table name
(:mod:`judge_transfer_audit.sections.registry`, ``audit/sections/<name>/render.py``);
:mod:`judge_transfer_audit.reports.context` puts everything together.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from judge_transfer_audit.core.redact import redact_command, redact_text
from judge_transfer_audit.presentation.figures import distance_map_svg, preference_svg
from judge_transfer_audit.presentation.format import DASH, cell_value, count_or_value, interval, num, pct
from judge_transfer_audit.presentation.tables import CELL_ORDER, STATUS_ORDER, status_value, table
from judge_transfer_audit.sections.dev.render import dev_summary
from judge_transfer_audit.verdict.checks import headline_text


class FormattedRows(Sequence):
    """Display rows of ``items``, each formatted by ``row`` when it is first read (then kept).

    A page shows the first few hundred rows of a table and counts the rest; at 10,000 cells formatting every
    row would be most of the work of drawing it. Reads as a list does: ``len``, indexing, slices, iteration."""

    def __init__(self, items: Sequence, row: Callable[[Any], dict]) -> None:
        self._items, self._row, self._done = items, row, {}

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self._items)))]
        n = len(self._items)
        i = index + n if index < 0 else index
        if not 0 <= i < n:
            raise IndexError("row index out of range")
        if i not in self._done:
            self._done[i] = self._row(self._items[i])
        return self._done[i]


def headline(result: Any) -> dict:
    """Dev-set validity beside the deployment findings (the contrast is the headline)."""
    cells = list(result.cells)
    judged = [c for c in cells if c.judge is not None]
    counts = dict(result.counts)
    margins = {c.transfer.margin for c in cells if c.transfer.margin == c.transfer.margin}
    levels = {c.transfer.interval_level for c in cells if c.transfer.interval_level == c.transfer.interval_level}
    prov = result.provenance
    deployment = {
        "n_cells": len(cells),
        "counts": [{"status": s, "n": int(counts.get(s, 0))} for s in CELL_ORDER],
        "n_assessed": sum(int(counts.get(s, 0)) for s in ("PASS", "FAIL", "INCONCLUSIVE")),
        "n_conflict": sum(bool(c.transfer.direction_conflict) for c in cells),
        "n_below": sum(bool(c.transfer.below_reader_baseline) for c in cells),
        "n_degenerate": sum(bool(c.human.glmm.degenerate) for c in cells),
        "margin": pct(margins.pop(), 0) if len(margins) == 1 else DASH,
        "level": f"{levels.pop():.0%}" if len(levels) == 1 else DASH,
        "adjust": next((c.transfer.adjust for c in cells if c.transfer.adjust), ""),
        "judge": prov.primary_judge or (judged[0].judge.judge if judged else DASH),
        "tie_rule": prov.tie_rule,
        "focals": sorted({c.focal for c in cells}),
        "n_matchups": len({c.matchup for c in cells}),
        "n_readers": max((c.n_readers for c in cells), default=0),
        "n_pairs": sum(c.n_pairs for c in cells if c.criterion == cells[0].criterion) if cells else 0,
        "n_votes": sum(c.n_votes for c in cells),
    }
    study = getattr(result, "study_transfer", None)
    deployment["levels"] = (
        None
        if study is None
        else {
            "study": status_value(study.status),
            "reason": study.reason,
            "matchups": [
                {
                    "matchup": m.matchup,
                    "status": status_value(m.status),
                    "cells": f"{m.n_fail} FAIL, {m.n_pass} PASS of {m.n_assessed}",
                    "p": "" if m.p_adjusted is None else f"{m.p_adjusted:.2g}",
                    "reason": m.reason,
                }
                for m in getattr(result, "matchup_transfers", ())
            ],
        }
    )
    return {
        "text": headline_text(result.status, cells, result.checks),
        "distance_map": distance_map_figure(result),
        "dev": dev_summary(result.dev, prov.primary_judge),
        "deployment": deployment,
        "worst": worst_cells(result),
        "next_steps": next_steps(result),
    }


WORST_SHOWN = 5


def distance_map_figure(result: Any) -> list[dict]:
    """The matchup x criterion map of the judge's distance from the human band, with the decisions; in
    parts of :data:`MAP_ROWS` matchups (each prints whole at the page width)."""
    cells = list(result.cells)
    frame = pd.DataFrame(
        {
            "matchup": [c.matchup for c in cells],
            "criterion": [c.criterion for c in cells],
            "distance": [c.transfer.difference.estimate for c in cells],
            "status": [status_value(c.transfer.status) for c in cells],
        }
    )
    margins = {c.transfer.margin for c in cells if c.transfer.margin == c.transfer.margin}
    margin = margins.pop() if len(margins) == 1 else None
    focals = sorted({c.focal for c in cells})
    matchups = list(dict.fromkeys(frame["matchup"].tolist()))[:MAX_MAP_MATCHUPS]
    groups = [matchups[i : i + MAP_ROWS] for i in range(0, len(matchups), MAP_ROWS)] or [[]]
    title = "Where the judge leaves the humans: distance from the human band per matchup and criterion"
    parts = []
    for k, group in enumerate(groups):
        fig_id = "fig-distance-map" if k == 0 else f"fig-distance-map-{k + 1}"
        more = ""
        if k == len(groups) - 1 and frame["matchup"].nunique() > len(matchups):
            more = (
                f" The first {len(matchups)} of {frame['matchup'].nunique():,} matchups are drawn; every cell is "
                "in cells.csv."
            )
        parts.append(
            {
                "id": fig_id,
                "title": title
                if k == 0
                else f"{title} (continued: matchups {k * MAP_ROWS + 1}-{k * MAP_ROWS + len(group)})",
                "caption": (
                    "Each cell: the judge's rate minus the human band (the readers' vote share and majority rate), in "
                    "points, for the focal system of its matchup ("
                    + (", ".join(focals[:6]) + (", ..." if len(focals) > 6 else ""))
                    + "), and the cell's decision. 0 means inside the band; the decision weighs the interval around "
                    "the distance against the margin, so a large distance can still be undecided on few pairs."
                    if k == len(groups) - 1
                    else ""
                )
                + more,
                "svg": distance_map_svg(
                    frame[frame["matchup"].isin(group)] if group else frame, margin=margin, fig_id=fig_id
                ),
            }
        )
    return parts


MAX_MAP_MATCHUPS = 200  #: matchups drawn in the distance map (cells.csv holds every cell)


def worst_first(cells) -> list:
    """Cells by status (FAIL, ERROR, INCONCLUSIVE, INSUFFICIENT, PASS), then largest distance from the band."""

    def key(c):
        d = c.transfer.difference.estimate
        return (
            CELL_ORDER.index(status_value(c.transfer.status))
            if status_value(c.transfer.status) in CELL_ORDER
            else len(CELL_ORDER),
            -(abs(d) if d == d else -1.0),
            c.matchup,
            c.criterion,
        )

    return sorted(cells, key=key)


def worst_cells(result: Any) -> list[dict]:
    """The first screen's short list: the worst cells with the judge's rate, the human band and the distance."""
    out = []
    for c in worst_first(result.cells)[:WORST_SHOWN]:
        t = c.transfer
        out.append(
            {
                "status": status_value(t.status),
                "cell": f"{c.matchup} / {c.criterion}",
                "focal": c.focal,
                "judge": pct(t.judge_rate.estimate),
                "band": interval(t.band_low, t.band_high),
                "distance": _points(t.difference.estimate),
                "pairs_needed": "" if t.pairs_needed is None else f"{t.pairs_needed:,}",
            }
        )
    return out


def next_steps(result: Any) -> list[str]:
    """What to do next, from the decisions: which cells not to trust, the label budget that would decide the rest."""
    by = {s: [c for c in result.cells if status_value(c.transfer.status) == s] for s in CELL_ORDER}
    steps = []
    if by["FAIL"]:
        names = ", ".join(f"{c.matchup} / {c.criterion}" for c in worst_first(by["FAIL"])[:3])
        steps.append(
            f"Do not use the judge's verdicts on the {len(by['FAIL'])} FAIL cell(s) ({names}"
            + (", ..." if len(by["FAIL"]) > 3 else "")
            + "): it is outside the human band by more than the margin."
        )
    if by["ERROR"]:
        steps.append(
            f"{len(by['ERROR'])} cell(s) could not be computed (ERROR): read their reasons in the transfer table."
        )
    undecided = [c for c in by["INCONCLUSIVE"] if c.transfer.pairs_needed is not None]
    if undecided:
        steps.append(_budget_step(undecided, len(by["INCONCLUSIVE"])))
    elif by["INCONCLUSIVE"]:
        steps.append(f"{len(by['INCONCLUSIVE'])} cell(s) are INCONCLUSIVE: more human pairs would decide them.")
    if by["INSUFFICIENT"]:
        steps.append(
            f"{len(by['INSUFFICIENT'])} cell(s) are INSUFFICIENT (too few pairs or readers to decide): reach the "
            "policy's minimum pairs and readers per cell first."
        )
    if not steps and by["PASS"]:
        steps.append(
            f"The judge stays within the margin on all {len(by['PASS'])} compared cells: it can be used on this "
            "data at this margin (re-run the audit when the data shift)."
        )
    warns = sum(status_value(c.status) == "WARN" for c in result.checks)
    if warns:
        steps.append(f"Read the {warns} WARN check(s) below: they do not fail the gate but qualify the numbers.")
    return steps


#: a cell needing more than this many times the pairs it has, and more than REACH_MIN more pairs, is beyond
#: reach (in practice: the estimates would have to change for more labels to decide it)
REACH_FACTOR = 10
REACH_MIN = 1_000


def _budget_step(undecided: list, n_inconclusive: int) -> str:
    """The label budget of the undecided cells: the cells within reach (pairs per matchup and reader votes),
    the cells beyond it said so, with the cheapest cell to decide."""

    def more(c) -> int:
        return max(0, int(c.transfer.pairs_needed) - int(c.transfer.n_pairs))

    def reachable(c) -> bool:
        return more(c) <= max(REACH_FACTOR * int(c.transfer.n_pairs), REACH_MIN)

    reach = [c for c in undecided if reachable(c)]
    beyond = [c for c in undecided if not reachable(c)]
    # the power the verdict's pairs_needed is computed at, when the result records it (else: about even odds)
    powers = {getattr(c.transfer, "pairs_needed_power", None) for c in undecided}
    power = next(iter(powers)) if len(powers) == 1 else None
    odds = f"at {power:.0%} power" if isinstance(power, float) and power == power else "about even odds"
    parts = []
    if reach:
        extra: dict[str, tuple[int, float]] = {}
        for c in reach:  # pairs serve every criterion of a matchup: the matchup needs its largest cell's count
            rpp = c.transfer.readers_per_pair if c.transfer.readers_per_pair == c.transfer.readers_per_pair else 1.0
            if more(c) > extra.get(c.matchup, (-1, 0.0))[0]:
                extra[c.matchup] = (more(c), rpp)
        pairs = sum(m for m, _ in extra.values())
        votes = sum(m * r for m, r in extra.values())
        per = "; ".join(f"{m}: +{n:,}" for m, (n, _) in sorted(extra.items(), key=lambda kv: -kv[1][0])[:4])
        parts.append(
            (
                f"Label budget to decide the {len(reach)} INCONCLUSIVE cell(s) within reach"
                if beyond
                else f"Label budget to decide the {n_inconclusive} INCONCLUSIVE cell(s)"
            )
            + f" at the current estimates: about {pairs:,} more pairs ({per}{'; ...' if len(extra) > 4 else ''}), "
            f"~{votes:,.0f} more reader votes per criterion (the verdict's pairs_needed: {odds})."
        )
    if beyond:
        worst = sorted(beyond, key=lambda c: -more(c))
        per = "; ".join(
            f"{c.matchup} / {c.criterion}: {more(c):,} more on {int(c.transfer.n_pairs):,}" for c in worst[:4]
        )
        cheapest = min(undecided, key=more)
        parts.append(
            f"Beyond reach: {len(beyond)} cell(s) would need over {REACH_FACTOR} times the pairs they have and over "
            f"{REACH_MIN:,} more ({per}{'; ...' if len(beyond) > 4 else ''}): at the current estimates more labels "
            f"will not decide them. The cheapest cell to decide is {cheapest.matchup} / {cheapest.criterion} at "
            f"~{int(cheapest.transfer.pairs_needed):,} pairs (+{more(cheapest):,})."
        )
    parts.append("The Label budget section gives the pairs for 80% power and the pairs-versus-readers trade-off.")
    return " ".join(parts)


MAX_REASON_CHARS = 1500  #: a check's reason in the page (one listing 2,000 readers is 20,000 characters)


def shown_reason(reason: str) -> str:
    """The reason as the page shows it: past ``MAX_REASON_CHARS``, cut at a word with what was cut
    and where the whole reason is."""
    if len(reason) <= MAX_REASON_CHARS:
        return reason
    head = reason[:MAX_REASON_CHARS].rsplit(" ", 1)[0].rstrip(",;: ")
    return f"{head} … ({len(reason) - len(head):,} more characters: the whole reason is in checks.csv and junit.xml)"


#: checks whose value and threshold are counts (of cells, of readers): printed as whole numbers
COUNT_CHECKS = frozenset({"transfer.assessed", "readers.separation"})


def _check_row(c: Any) -> dict:
    return {
        "status": status_value(c.status),
        "name": c.name,
        "scope": c.scope,
        "value": count_or_value(c.value) if c.name in COUNT_CHECKS else num(c.value),
        "threshold": count_or_value(c.threshold) if c.name in COUNT_CHECKS else num(c.threshold),
        "reason": shown_reason(c.reason),
    }


def checks_context(checks: tuple) -> dict:
    """Checks sorted worst first, with counts per status and one summary row per check name.

    ``rows`` formats a check when it is read (the page shows the first
    :data:`judge_transfer_audit.reports.context.PAGE_ROWS`
    of the 60,000 checks of 10k criteria); the summary formats each name's worst check."""
    order = {s: i for i, s in enumerate(STATUS_ORDER)}
    ranked = sorted(checks, key=lambda c: (order.get(status_value(c.status), 9), c.name, c.scope))
    counts = {s: 0 for s in STATUS_ORDER}
    for c in checks:
        counts[status_value(c.status)] = counts.get(status_value(c.status), 0) + 1
    rows = FormattedRows(ranked, _check_row)
    groups: dict[str, list[int]] = {}
    for i, c in enumerate(ranked):
        groups.setdefault(c.name, []).append(i)
    summary = []
    for name, members in groups.items():  # already worst first, so members[0] is the worst
        worst = rows[members[0]]
        if len(members) == 1:
            scope, value, threshold = worst["scope"], worst["value"], worst["threshold"]
        else:
            tally = {}
            for i in members:
                status = status_value(ranked[i].status)
                tally[status] = tally.get(status, 0) + 1
            scope = (
                f"{len(members)} scopes ("
                + ", ".join(f"{n} {st}" for st, n in tally.items())
                + f"); worst: {worst['scope']}"
            )
            value, threshold = worst["value"], worst["threshold"]
        summary.append(
            {
                "status": worst["status"],
                "name": name,
                "scope": scope,
                "value": value,
                "threshold": threshold,
                "reason": worst["reason"],
                "n": len(members),
            }
        )
    summary.sort(key=lambda g: (order.get(g["status"], 9), g["name"]))
    return {"counts": counts, "rows": rows, "summary": summary}


def _points(x: float) -> str:
    return DASH if x is None or x != x else f"{100 * x:+.1f}"


def transfer_rows(result: Any) -> FormattedRows:
    """The transfer table: one row per matchup x criterion, worst first, every number formatted (when the row
    is read: the page shows the first :data:`judge_transfer_audit.reports.context.PAGE_ROWS` of 10,000 cells)."""
    return FormattedRows(worst_first(result.cells), _transfer_row)


def _transfer_row(c: Any) -> dict:
    g, j, t, h = c.human.glmm, c.judge, c.transfer, c.human
    glmm_flags = [
        name
        for name, on in (
            ("degenerate", g.degenerate),
            ("singular", g.singular),
            ("not converged", not g.converged),
            ("separation", g.separation),
        )
        if on
    ]
    return {
        "matchup": c.matchup,
        "criterion": c.criterion,
        "judge_criterion": j.criterion if j is not None and j.criterion != c.criterion else "",
        "different_target": bool(j is not None and j.different_target),
        "focal": c.focal,
        "other": c.other,
        "n": f"{c.n_pairs} / {c.n_readers} / {c.n_votes}",
        "n_compared": t.n_pairs,
        "human_rate": pct(h.rate),
        "human_ties": h.n_ties,
        "vote_share": pct(h.vote_share.estimate),
        "vote_share_ci": interval(h.vote_share.ci_low, h.vote_share.ci_high),
        "majority_rate": pct(h.majority_rate.estimate),
        "majority_rate_ci": interval(h.majority_rate.ci_low, h.majority_rate.ci_high),
        "glmm": pct(g.estimate),
        "glmm_ci": interval(g.ci_low, g.ci_high),
        "glmm_degenerate": bool(g.degenerate),
        "glmm_degenerate_reason": g.degenerate_reason,
        "glmm_flags": glmm_flags,
        "judge_rate": pct(t.judge_rate.estimate)
        if t.judge_rate.estimate == t.judge_rate.estimate
        else (pct(j.rate) if j is not None else DASH),
        "judge_wlt": f"{j.wins} / {j.losses} / {j.ties}" if j is not None else DASH,
        "judge_invalid": j.invalid if j is not None else 0,
        "band": interval(t.band_low, t.band_high),
        "difference": _points(t.difference.estimate),
        "difference_ci": (
            f"[{_points(t.difference.ci_low)}, {_points(t.difference.ci_high)}]"
            if t.difference.ci_low == t.difference.ci_low
            else ""
        ),
        "pairs_needed": "" if t.pairs_needed is None else str(t.pairs_needed),
        "directions": f"{t.human_direction} / {t.judge_direction}",
        "conflict": bool(t.direction_conflict),
        "majority": f"{pct(t.judge_vs_majority)} vs {pct(t.reader_baseline)}",
        "below_baseline": bool(t.below_reader_baseline),
        "status": status_value(t.status),
        "reason": t.reason
        + (
            f" GLMM degenerate ({g.degenerate_reason}): its point is not the human preference; "
            "the decision rests on the vote share and majority rate."
            if g.degenerate
            else ""
        ),
    }


def preference_frames(result: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tidy frames for Fig. 1a (human vote share per cell) and Fig. 1b (judge composition)."""
    human, judge = [], []
    for c in result.cells:
        v = c.human.vote_share
        human.append(
            {
                "matchup": c.matchup,
                "criterion": c.criterion,
                "estimate": v.estimate,
                "ci_low": v.ci_low,
                "ci_high": v.ci_high,
            }
        )
        if c.judge is not None:
            j = c.judge
            label = f"{c.criterion} (judge: {j.criterion})" if j.criterion != c.criterion else c.criterion
            judge.append(
                {
                    "matchup": c.matchup,
                    "criterion": c.criterion,
                    "label": label,
                    "wins": j.wins,
                    "losses": j.losses,
                    "ties": j.ties,
                    "n_pairs": j.wins + j.losses + j.ties,
                    "invalid": j.invalid,
                }
            )
    return pd.DataFrame(human), pd.DataFrame(judge)


def focal_label(result: Any) -> str:
    focals = sorted({c.focal for c in result.cells})
    return focals[0] if len(focals) == 1 else "the focal system"


#: matchups whose focal systems a figure's caption names one by one (more: the transfer table names them)
FOCALS_NAMED = 12


def focals_caption(result: Any) -> str:
    """Which system each matchup's rates are for, when the matchups' focal systems differ ("" when one
    system is focal everywhere: the figure's axes name it)."""
    focal = {c.matchup: c.focal for c in result.cells}
    if len(set(focal.values())) < 2:
        return ""
    if len(focal) > FOCALS_NAMED:
        return "Each matchup's rates are for its focal system; the transfer table names it per cell."
    named = "; ".join(f"{f} in {m}" for m, f in focal.items())
    return f"Each matchup's rates are for its focal system: {named}."


#: rows (matchup x criterion) of the preference figure in one part: a taller figure prints in parts
PREFERENCE_ROWS = 60
#: matchups of the distance map in one part
MAP_ROWS = 16


def preference_figure(result: Any) -> list[dict]:
    """The preference figure, in parts of whole criteria (at most :data:`PREFERENCE_ROWS` rows each, so
    that each part prints whole at the page width); one part for most audits."""
    human, judge = preference_frames(result)
    prov = result.provenance
    criteria = list(dict.fromkeys(human["criterion"].tolist())) if len(human) else []
    n_matchups = max(1, human["matchup"].nunique()) if len(human) else 1
    size = max(1, PREFERENCE_ROWS // n_matchups)
    groups = [criteria[i : i + size] for i in range(0, len(criteria), size)] or [[]]
    parts = []
    for k, group in enumerate(groups):
        fig_id = "fig-preference" if k == 0 else f"fig-preference-{k + 1}"
        h = human[human["criterion"].isin(group)] if group else human
        j = judge[judge["criterion"].isin(group)] if group and len(judge) else judge
        svg = preference_svg(
            h,
            j if len(j) else None,
            focal_label=focal_label(result),
            judge_label=prov.primary_judge or "judge",
            fig_id=fig_id,
            tie_rule=prov.tie_rule or None,
        )
        parts.append(
            {
                "id": fig_id,
                "title": "" if len(groups) == 1 else f"Criteria {', '.join(map(str, group))}",
                "caption": focals_caption(result) if k == 0 else "",
                "svg": svg,
                "label": "Human vote share with its interval beside the judge's rate",
            }
        )
    return parts


def configurations_table(result: Any) -> dict | None:
    """Per judge configuration rates per cell: does the skew survive every configuration?"""
    rows = []
    for c in result.cells:
        if c.judge is None:
            continue
        for k in c.judge.configurations:
            rows.append(
                {
                    "matchup": c.matchup,
                    "criterion": c.criterion,
                    "configuration": k.judge,
                    "rate": pct(k.rate),
                    "wins / losses / ties": f"{k.wins} / {k.losses} / {k.ties}",
                    "invalid": k.invalid,
                }
            )
    if not rows:
        return None
    return table(pd.DataFrame(rows), caption="Judge rate per configuration (same tie rule)", max_rows=400)


AGREEMENT_COLUMNS = [
    "level",
    "matchup",
    "criterion",
    "n_pairs",
    "n_readers",
    "n_votes",
    "n_ties",
    "fleiss_kappa",
    "krippendorff_alpha",
    "raw_agreement",
]
BASELINE_COLUMNS = [
    "level",
    "matchup",
    "criterion",
    "n_pairs",
    "n_readers",
    "reader_mean",
    "reader_min",
    "reader_max",
    "reader_min_id",
    "reader_max_id",
    "judge_agreement",
    "judge_agreement_loo",
]


def agreement_context(result: Any) -> dict:
    """The main agreement columns up front; every column in the folded full tables."""
    frame, base = result.agreement.to_frame(), result.reader_baseline.to_frame()
    out: dict[str, Any] = {"agreement": None, "baseline": None, "full": []}
    if frame is not None and len(frame):
        cols = [c for c in AGREEMENT_COLUMNS if c in frame.columns] or list(frame.columns)
        out["agreement"] = table(
            frame,
            caption="Inter-reader agreement",
            columns=cols,
            sort_by=(("krippendorff_alpha", True),),
            sort_label="worst first (lowest Krippendorff alpha)",
        )
        if len(cols) < len(frame.columns):
            out["full"].append(table(frame, caption="Inter-reader agreement, every column"))
    if base is not None and len(base):
        cols = [c for c in BASELINE_COLUMNS if c in base.columns] or list(base.columns)
        out["baseline"] = table(
            base,
            caption="Reader baseline: each reader's agreement with the majority of the other "
            "readers (mean, min, max), beside the judge's agreement with the majority",
            columns=cols,
        )
        if len(cols) < len(base.columns):
            out["full"].append(table(base, caption="Reader baseline, every column"))
    return out


def row_accounting(provenance: Any) -> list[dict]:
    """One entry per input file: ``line`` ("2,520 votes read, 2,520 used"), ``role`` and the
    ``excluded`` reasons with their counts (read = used + excluded)."""
    out = []
    for r in getattr(provenance, "rows", ()) or ():
        r = dict(r)
        read, used = int(r.get("read", 0)), int(r.get("used", 0))
        unit = str(r.get("unit", "rows"))
        excluded = [{"reason": str(k), "n": f"{int(v):,}"} for k, v in dict(r.get("excluded_by_reason", {})).items()]
        line = f"{read:,} {unit} read, {used:,} used"
        if read != used:
            line += f", {read - used:,} left out"
        out.append({"role": str(r.get("role", "")), "line": line, "excluded": excluded})
    return out


def provenance_context(result: Any) -> dict:
    p = result.provenance
    policy = [
        {"key": k, "value": cell_value(v) if not isinstance(v, (dict, list, tuple)) else repr(v)}
        for k, v in sorted(_flatten(p.policy).items())
    ]
    # a saved result can be edited: what it holds is redacted again where it is shown (a no-op on what
    # `audit run` recorded, which was redacted when recorded)
    sources = [
        {k: cell_value(redact_text(v) if isinstance(v, str) else v) for k, v in dict(s).items()} for s in p.sources
    ]
    return {
        "package_version": p.package_version,
        "schema_version": result.schema_version,
        "command": redact_command(p.command),
        "seed": DASH if p.seed is None else str(p.seed),
        "tie_rule": p.tie_rule,
        "policy_source": redact_text(p.policy_source) if p.policy_source else "built-in defaults",
        "policy": policy,
        "sources": sources,
        "source_columns": ["role", "path", "format", "n_rows", "layout", "sha256"],
        "exclusions": [{k: cell_value(v) for k, v in dict(e).items()} for e in p.exclusions],
        "rows": row_accounting(p),
        "focal_source": p.focal_source,
        "human_shape": p.human_shape,
        "primary_judge": p.primary_judge,
        "notes": list(p.notes),
        "versions": [{"package": k, "version": v} for k, v in sorted(p.package_versions.items())],
    }


def _flatten(d: Any, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    if not isinstance(d, dict):
        return {prefix or "policy": d}
    for k, v in d.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, dict):
            out.update(_flatten(v, key))
        else:
            out[key] = v
    return out
