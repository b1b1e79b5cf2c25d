"""What changed between two audit results, cell by cell (``audit diff OLD NEW``).

:func:`diff_results` pairs the cells of two results of the same schema version by their
two systems and criterion (whichever system each run called focal: a cell oriented the
other way round is turned to NEW's orientation, rates ``x -> 1 - x``, the judge's distance
to the human band negated) and reports, per cell in common:

* the decision, old and new, and whether it got worse, better or stayed (:data:`ORDER`);
* the judge's rate, its distance to the human band, the humans' vote share, majority rate
  and GLMM preference, old, new and the change, with an interval for the change where both
  sides have an interval at the same level;
* the judge-human agreement of the scopes in common (``kappa_majority``,
  ``alpha_difference``, ``raw_difference``).

Intervals for a change combine the two sides' intervals by the method of variance estimates
recovery (MOVER; Zou & Donner 2008, Statistics in Medicine 27: 1693-1702): for ``d = new -
old``, ``[d - sqrt((new - new_lo)^2 + (old_hi - old)^2), d + sqrt((new_hi - new)^2 + (old -
old_lo)^2)]``. It treats OLD and NEW as independent samples (a new deployment sample). For a
judge swap on the same pairs the two judges' rates are positively correlated and the interval
is conservative; where both results read the same human votes (same sha256) the human
estimates get no change interval (the change is not sampling).

"Worse" follows :data:`ORDER`, best first: PASS, INCONCLUSIVE, INSUFFICIENT, ERROR, FAIL.
PASS is evidence the judge transfers; INCONCLUSIVE is data without a decision; INSUFFICIENT
too little data to test; ERROR no figure at all; FAIL evidence that the judge does not
transfer, the worst finding. What makes ``audit diff --gate`` fail is the policy's
``[diff]`` section (:class:`judge_transfer_audit.model.policy.DiffPolicy`).

Incomparable inputs are an :class:`~judge_transfer_audit.core.errors.InputError` (exit 2) with the reason:
different schema versions, or no cell in common.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge_transfer_audit.core.errors import InputError, InputProblem
from judge_transfer_audit.model.policy import DiffPolicy
from judge_transfer_audit.results.result import AuditResult, Cell, Interval, result_from_json

#: Cell decisions from best to worst (see the module docstring).
ORDER = ("PASS", "INCONCLUSIVE", "INSUFFICIENT", "ERROR", "FAIL")
#: Cell quantities compared: name -> (what it is, whether it is a human estimate)
QUANTITIES = {
    "judge_rate": ("judge's rate for the focal system (compared pairs)", False),
    "difference": ("judge's distance to the human band", False),
    "vote_share": ("humans' vote share for the focal system", True),
    "majority_rate": ("humans' majority rate for the focal system", True),
    "glmm": ("humans' GLMM preference for the focal system (median pair and reader)", True),
}
#: Judge-agreement statistics compared per scope.
AGREEMENT_STATISTICS = ("kappa_majority", "alpha_difference", "raw_difference")
_FIX = "give two result.json files written by `audit run` of the same judge-audit version"


@dataclass(frozen=True)
class Change:
    """``old`` and ``new`` values, ``change = new - old`` and its interval at ``level``
    (NaN bounds: one side has no interval, the levels differ, or the change is not sampling)."""

    old: float
    new: float
    change: float
    ci_low: float = math.nan
    ci_high: float = math.nan
    level: float = math.nan

    def __str__(self) -> str:
        if not (math.isfinite(self.old) or math.isfinite(self.new)):
            return "n/a"
        head = f"{_fmt(self.old)} -> {_fmt(self.new)} ({_signed(self.change)}"
        if math.isfinite(self.ci_low) and math.isfinite(self.ci_high):
            head += f" [{_signed(self.ci_low)}, {_signed(self.ci_high)}]"
        return head + ")"


@dataclass(frozen=True)
class CellDiff:
    """One cell of OLD and/or NEW. ``direction``: worse, better, same, added (NEW only) or
    removed (OLD only); ``flipped``: OLD called the other system focal (its figures are shown
    turned to NEW's orientation); ``counts_as_worse``: what the gate counts under the policy."""

    matchup: str
    criterion: str
    focal: str
    other: str
    old_status: str
    new_status: str
    direction: str
    flipped: bool
    counts_as_worse: bool
    old_reason: str
    new_reason: str
    changes: dict[str, Change]


@dataclass(frozen=True)
class AgreementDiff:
    """Judge-human agreement of one scope (``matchup/criterion``) in both results."""

    scope: str
    changes: dict[str, Change]


@dataclass(frozen=True)
class ResultDiff:
    """Everything :func:`diff_results` compared; ``worse`` is what ``--gate`` acts on."""

    old_source: str
    new_source: str
    schema_version: str
    old_status: str
    new_status: str
    old_judge: str
    new_judge: str
    same_sources: dict[str, bool]  #: per input role (judge, humans, pairs...): same sha256 in both
    cells: tuple[CellDiff, ...]
    agreement: tuple[AgreementDiff, ...]
    policy: DiffPolicy
    notes: tuple[str, ...]

    @property
    def n_worse(self) -> int:
        return sum(c.counts_as_worse for c in self.cells)

    @property
    def worse(self) -> bool:
        return self.n_worse > 0

    def __str__(self) -> str:
        return diff_text(self)

    def to_dict(self) -> dict[str, Any]:
        from judge_transfer_audit.core.serialize import to_jsonable

        out = to_jsonable(self)
        out["n_worse"], out["worse"] = self.n_worse, self.worse
        return out


# ----------------------------------------------------------------------------- helpers
def _fmt(x: float) -> str:
    return "n/a" if not math.isfinite(x) else f"{x:.3f}"


def _signed(x: float) -> str:
    return "n/a" if not math.isfinite(x) else f"{x:+.3f}"


def _num(x: Any) -> float:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else math.nan


def mover(old: Interval, new: Interval) -> tuple[float, float]:
    """The MOVER interval of ``new - old`` from the two intervals (NaN when either is missing)."""
    values = (old.estimate, old.ci_low, old.ci_high, new.estimate, new.ci_low, new.ci_high)
    if not all(math.isfinite(v) for v in values):
        return math.nan, math.nan
    d = new.estimate - old.estimate
    low = d - math.hypot(new.estimate - new.ci_low, old.ci_high - old.estimate)
    high = d + math.hypot(new.ci_high - new.estimate, old.estimate - old.ci_low)
    return low, high


def change(old: Interval, new: Interval, *, interval: bool = True) -> Change:
    """:class:`Change` of two estimates; an interval when both have one at the same level."""
    d = new.estimate - old.estimate if math.isfinite(old.estimate) and math.isfinite(new.estimate) else math.nan
    same_level = math.isfinite(old.level) and abs(old.level - new.level) < 1e-9
    if not (interval and same_level):
        return Change(old.estimate, new.estimate, d)
    low, high = mover(old, new)
    return Change(old.estimate, new.estimate, d, low, high, new.level if math.isfinite(low) else math.nan)


def _flip_rate(i: Interval) -> Interval:
    return Interval(1.0 - i.estimate, 1.0 - i.ci_high, 1.0 - i.ci_low, i.level)


def _negate(i: Interval) -> Interval:
    return Interval(-i.estimate, -i.ci_high, -i.ci_low, i.level)


def _quantities(cell: Cell, glmm_level: float) -> dict[str, Interval]:
    t, h = cell.transfer, cell.human
    judge_rate = t.judge_rate
    if not math.isfinite(judge_rate.estimate) and cell.judge is not None:
        judge_rate = Interval(cell.judge.rate, math.nan, math.nan, math.nan)
    g = h.glmm
    glmm = (
        Interval(math.nan, math.nan, math.nan, math.nan)
        if g.degenerate
        else Interval(g.estimate, g.ci_low, g.ci_high, glmm_level)
    )
    return dict(
        judge_rate=judge_rate,
        difference=t.difference,
        vote_share=h.vote_share,
        majority_rate=h.majority_rate,
        glmm=glmm,
    )


def _turned(q: dict[str, Interval]) -> dict[str, Interval]:
    """The quantities of a cell seen from the other system (focal and other swapped)."""
    return {k: (_negate(v) if k == "difference" else _flip_rate(v)) for k, v in q.items()}


def _key(cell: Cell) -> tuple[frozenset, str]:
    return frozenset((cell.focal, cell.other)), cell.criterion


def _glmm_level(result: AuditResult) -> float:
    return _num(result.provenance.policy.get("transfer", {}).get("level", math.nan))


def _sources(result: AuditResult) -> dict[str, str]:
    return {str(s.get("role")): str(s.get("sha256", "")) for s in result.provenance.sources}


def _rank(status: str) -> int | None:
    return ORDER.index(status) if status in ORDER else None


def _direction(old: str, new: str) -> str:
    a, b = _rank(old), _rank(new)
    if a is None or b is None or a == b:
        return "same" if old == new else "changed"
    return "worse" if b > a else "better"


def _counts(policy: DiffPolicy, old: str, new: str, direction: str) -> bool:
    if direction == "removed":
        return policy.removed == "worse"
    if direction != "worse":
        return False
    if policy.worse == "any":
        return True
    if policy.worse == "fail":
        return new in ("FAIL", "ERROR")
    return old == "PASS"  # policy.worse == "pass": a PASS lost


# ----------------------------------------------------------------------------- the diff
def read_pair(old_path: str | Path, new_path: str | Path) -> tuple[AuditResult, AuditResult]:
    """Read two results; different schema versions are an InputError naming both."""
    texts, versions = [], []
    for path in (old_path, new_path):
        try:
            text = Path(path).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise InputError(InputProblem(str(path), "file not found", _FIX)) from None
        except UnicodeDecodeError as exc:
            raise InputError(InputProblem(str(path), f"not UTF-8 text (byte {exc.start})", _FIX)) from None
        except OSError as exc:
            raise InputError(InputProblem(str(path), f"cannot read the file: {exc.strerror or exc}", _FIX)) from None
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            data = None  # result_from_json says what is wrong
        texts.append(text)
        versions.append(data.get("schema_version") if isinstance(data, dict) else None)
    if versions[0] is not None and versions[1] is not None and str(versions[0]) != str(versions[1]):
        raise InputError(
            InputProblem(
                str(new_path),
                f"incomparable results: schema {versions[0]} ({old_path}) and schema {versions[1]} "
                f"({new_path}); their cells, statuses and estimates do not mean the same thing",
                "re-run `audit run` on the older inputs with this judge-audit version, then diff the two",
                column="schema_version",
                value=str(versions[1]),
            )
        )
    return (result_from_json(texts[0], source=str(old_path)), result_from_json(texts[1], source=str(new_path)))


def diff_results(
    old: AuditResult,
    new: AuditResult,
    *,
    policy: DiffPolicy | None = None,
    old_source: str = "OLD",
    new_source: str = "NEW",
) -> ResultDiff:
    """Cell by cell what changed from ``old`` to ``new`` (see the module docstring).

    Raises
    ------
    InputError
        The schema versions differ, or the two results have no cell (pair of systems x
        criterion) in common; the message lists each side's cells.
    """
    policy = policy or DiffPolicy()
    if old.schema_version != new.schema_version:
        raise InputError(
            InputProblem(
                new_source,
                f"incomparable results: schema {old.schema_version} and {new.schema_version}",
                "re-run `audit run` with one judge-audit version",
                column="schema_version",
                value=new.schema_version,
            )
        )
    old_cells = {_key(c): c for c in old.cells}
    new_cells = {_key(c): c for c in new.cells}
    common = [k for k in new_cells if k in old_cells]
    if not common:

        def listed(cells):
            names = [f"{c.matchup} / {c.criterion}" for c in cells.values()]
            return ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "") or "none"

        raise InputError(
            InputProblem(
                new_source,
                f"incomparable results: no cell (pair of systems x criterion) in common; {old_source} has "
                f"{listed(old_cells)}; {new_source} has {listed(new_cells)}",
                "diff results of the same matchups and criteria "
                "(the systems' names and the criterion names must match)",
            )
        )

    old_src, new_src = _sources(old), _sources(new)
    same = {role: bool(old_src[role]) and old_src[role] == new_src.get(role) for role in old_src if role in new_src}
    same_humans = same.get("humans", False)
    notes = []
    if same_humans:
        notes.append(
            "both results read the same human votes (same sha256): the human estimates' changes get no "
            "interval (they are not sampling changes)"
        )
    if same.get("judge") is False or old.provenance.primary_judge != new.provenance.primary_judge:
        notes.append(
            "change intervals treat OLD and NEW as independent samples; for two judges on the same pairs "
            "they are conservative"
        )
    old_level, new_level = _glmm_level(old), _glmm_level(new)

    rows = []
    for key, n in new_cells.items():
        o = old_cells.get(key)
        if o is None:
            rows.append(
                CellDiff(
                    n.matchup,
                    n.criterion,
                    n.focal,
                    n.other,
                    "",
                    n.transfer.status.value,
                    "added",
                    False,
                    False,
                    "",
                    n.transfer.reason,
                    {},
                )
            )
            continue
        flipped = o.focal != n.focal
        q_old, q_new = _quantities(o, old_level), _quantities(n, new_level)
        if flipped:
            q_old = _turned(q_old)
        changes = {
            name: change(q_old[name], q_new[name], interval=not (human and same_humans))
            for name, (_, human) in QUANTITIES.items()
        }
        old_s, new_s = o.transfer.status.value, n.transfer.status.value
        direction = _direction(old_s, new_s)
        rows.append(
            CellDiff(
                n.matchup,
                n.criterion,
                n.focal,
                n.other,
                old_s,
                new_s,
                direction,
                flipped,
                _counts(policy, old_s, new_s, direction),
                o.transfer.reason,
                n.transfer.reason,
                changes,
            )
        )
    for key, o in old_cells.items():
        if key not in new_cells:
            rows.append(
                CellDiff(
                    o.matchup,
                    o.criterion,
                    o.focal,
                    o.other,
                    o.transfer.status.value,
                    "",
                    "removed",
                    False,
                    _counts(policy, o.transfer.status.value, "", "removed"),
                    o.transfer.reason,
                    "",
                    {},
                )
            )
    return ResultDiff(
        old_source=old_source,
        new_source=new_source,
        schema_version=new.schema_version,
        old_status=old.status.value,
        new_status=new.status.value,
        old_judge=old.provenance.primary_judge,
        new_judge=new.provenance.primary_judge,
        same_sources=same,
        cells=tuple(rows),
        agreement=_agreement(old, new),
        policy=policy,
        notes=tuple(notes),
    )


def _agreement(old: AuditResult, new: AuditResult) -> tuple[AgreementDiff, ...]:
    """Judge-agreement scopes in both results; a matchup scope is matched by its two systems."""
    sections = [r.judge_agreement.payload for r in (old, new)]
    if any(s is None or not hasattr(s, "rows") for s in sections):
        return ()

    def names(result: AuditResult) -> dict[str, str]:
        return {c.matchup: " vs ".join(sorted((c.focal, c.other))) for c in result.cells}

    def keyed(section, matchups):
        return {(matchups.get(r.matchup, r.matchup), r.criterion): r for r in section.rows}

    old_rows, new_rows = keyed(sections[0], names(old)), keyed(sections[1], names(new))
    same_level = abs(sections[0].level - sections[1].level) < 1e-9
    out = []
    for key, n in new_rows.items():
        o = old_rows.get(key)
        if o is None:
            continue
        changes = {}
        for stat in AGREEMENT_STATISTICS:
            a, b = getattr(o, stat), getattr(n, stat)
            changes[stat] = change(
                Interval(a.estimate, a.ci_low, a.ci_high, sections[0].level),
                Interval(b.estimate, b.ci_low, b.ci_high, sections[1].level),
                interval=same_level,
            )
        out.append(AgreementDiff(scope=n.scope, changes=changes))
    return tuple(out)


# ----------------------------------------------------------------------------- terminal
def _excludes_zero(c: Change) -> bool:
    return math.isfinite(c.ci_low) and math.isfinite(c.ci_high) and (c.ci_low > 0 or c.ci_high < 0)


def diff_text(d: ResultDiff, *, all_cells: bool = False) -> str:
    """The terminal summary: the overall change, the cells that changed (all with ``all_cells``),
    the pooled agreement and what the gate counts."""
    lines = [
        f"audit diff: {d.old_source} -> {d.new_source} (schema {d.schema_version})",
        f"Status: {d.old_status} -> {d.new_status}; judge: {d.old_judge or '?'} -> {d.new_judge or '?'}",
    ]
    if d.same_sources:
        lines.append(
            "Inputs: "
            + ", ".join(f"{role} {'same' if s else 'different'}" for role, s in sorted(d.same_sources.items()))
        )
    tally = {
        k: sum(c.direction == k for c in d.cells) for k in ("worse", "better", "same", "changed", "added", "removed")
    }
    lines.append("Cells: " + ", ".join(f"{v} {k}" for k, v in tally.items() if v))
    shown = [c for c in d.cells if all_cells or c.direction != "same"]
    if shown:
        lines.append("Cells that changed:" if not all_cells else "Cells:")
    for c in shown:
        flag = "  (OLD had the other system focal)" if c.flipped else ""
        lines.append(
            f"  {c.direction.upper():8} {c.matchup} / {c.criterion}: {c.old_status or '-'} -> "
            f"{c.new_status or '-'}{flag}"
        )
        for name in ("judge_rate", "difference", "vote_share", "majority_rate"):
            if name in c.changes:
                lines.append(f"           {name:14} {c.changes[name]}")
    for name in ("judge_rate", "vote_share"):
        moved = [c for c in d.cells if name in c.changes and _excludes_zero(c.changes[name])]
        if moved:
            top = max(moved, key=lambda c: abs(c.changes[name].change))
            lines.append(
                f"{name}: the change's interval excludes 0 in {len(moved)} of {len(d.cells)} cells; "
                f"largest {top.matchup} / {top.criterion} {top.changes[name]}"
            )
    pooled = [a for a in d.agreement if a.scope.endswith("all/all")]
    for a in pooled:
        lines.append(
            f"Judge agreement ({a.scope}): kappa vs majority {a.changes['kappa_majority']}; "
            f"alpha difference {a.changes['alpha_difference']}"
        )
    for note in d.notes:
        lines.append(f"Note: {note}")
    lines.append(
        f"diff: {'WORSE' if d.worse else 'no decision worse'} ({d.n_worse} cell(s) counted under "
        f"[diff] worse = {d.policy.worse!r}, removed = {d.policy.removed!r})"
    )
    return "\n".join(lines)
