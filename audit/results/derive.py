"""The checks and the status of a result, derived from its parts: one place for the run and the gate.

``audit run`` builds its checks with :func:`derive_checks`; ``audit gate`` (and ``audit
report``) call :func:`verify_result` on a saved result.json, which re-derives everything it
can from the file itself and refuses the file when the recorded verdict does not follow:

* every cell's transfer decision, from the cell's recorded test results (raw p-values and the
  interval of the judge's distance to the human band) and the recorded policy
  (``provenance.policy``): the multiplicity adjustment across cells and the decision rule are
  applied again (:func:`judge_transfer_audit.verdict.decision.redecide`); the paired bootstrap behind the
  numbers needs the data;
* the checks, from the cells, the agreement table, the per-pair judge outcomes
  (``judge_pairs``) and the optional sections' payloads, under the recorded policy;
* the top-level ``status``, from those checks (:func:`derive_status`).

What cannot be re-derived without the data (the GLMM fits, the bootstraps, INSUFFICIENT and
ERROR cells, the reader and surface analyses themselves) is taken as written; ``provenance.sources`` holds the sha256 of
every input, so a result can be re-checked by running the audit again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import pandas as pd

from judge_transfer_audit.core.errors import InputError, InputProblem
from judge_transfer_audit.core.serialize import to_jsonable
from judge_transfer_audit.model.checks import Check, Status, apply_severity, gate_severity
from judge_transfer_audit.model.policy import Policy, policy_from_mapping
from judge_transfer_audit.results.result import SCHEMA_VERSION, AuditResult, Cell, Section


def derive_checks(
    *,
    cells: tuple[Cell, ...],
    agreement: pd.DataFrame,
    judge_pairs: pd.DataFrame,
    policy: Policy,
    sections: Mapping[str, Section],
    primary: str | None,
) -> list[Check]:
    """Every check of a run, in the order the result lists them, the policy's ``[severity]``
    resolved by :func:`judge_transfer_audit.model.checks.apply_severity` (the one owner; each producer applies it
    too, and applying it again changes nothing): the run and the gate both come through here.

    The cells' and the study's checks, then every section's (``sections``: name -> section; the
    section table's :func:`~judge_transfer_audit.sections.registry.section_checks`)."""
    from judge_transfer_audit.sections.registry import section_checks
    from judge_transfer_audit.verdict import cell_checks, summary_checks

    checks = cell_checks(cells, policy) + summary_checks(cells, agreement, policy, judge_pairs)
    checks += section_checks(policy, sections, primary=primary, focal={c.matchup: c.focal for c in cells})
    return apply_severity(checks, gate_severity(policy.severity, policy.gate.decisions))


def status_of(checks) -> Status:
    """The run's status from its checks: ERROR > FAIL > INCONCLUSIVE > WARN > PASS
    (judge_transfer_audit.verdict.overall_status)."""
    from judge_transfer_audit.verdict import overall_status

    return overall_status(checks)


def recorded_policy(result: AuditResult, source: str = "result.json") -> Policy:
    """The policy the result was computed under (``provenance.policy``), validated like a policy file."""
    try:
        return policy_from_mapping(result.provenance.policy, f"{source} (provenance.policy)")
    except TypeError as exc:  # a section table whose keys do not fit
        raise InputError(
            InputProblem(
                source,
                f"provenance.policy is not a judge-audit policy: {exc}",
                "give the result.json written by `audit run`",
                column="provenance.policy",
            )
        ) from None


def derive_transfers(cells: tuple[Cell, ...], policy: Policy) -> list:
    """The cells' transfer decisions re-derived from their recorded tests (adjustment and rule)."""
    from judge_transfer_audit.verdict.decision import redecide

    groups = [c.matchup for c in cells] if policy.transfer.pool_criteria else None
    transfers = redecide([c.transfer for c in cells], policy.transfer, groups)
    out = []
    for c, t in zip(cells, transfers):
        below = None
        if t.judge_vs_majority is not None and t.reader_baseline is not None and c.judge is not None:
            below = bool(t.judge_vs_majority < t.reader_baseline - policy.transfer.max_baseline_gap)
        out.append(dataclasses.replace(t, below_reader_baseline=below))
    return out


def rederived_checks(result: AuditResult, policy: Policy) -> list[Check]:
    """The result's checks, recomputed from its cells (decisions re-derived), tables and sections."""
    cells = tuple(
        dataclasses.replace(c, transfer=t) for c, t in zip(result.cells, derive_transfers(result.cells, policy))
    )
    return derive_checks(
        cells=cells,
        agreement=result.agreement.to_frame(),
        judge_pairs=result.judge_pairs.to_frame(),
        policy=policy,
        sections=result.sections,
        primary=result.provenance.primary_judge or None,
    )


def derive_status(result: AuditResult, source: str = "result.json") -> Status:
    """The status ``result`` must have, re-derived from its parts (not read from its ``status``)."""
    return status_of(rederived_checks(result, recorded_policy(result, source)))


def _key(check: Check) -> str:
    return f"{check.name} [{check.scope}]"


def verify_result(result: AuditResult, source: str = "result.json") -> tuple[Check, ...]:
    """Re-derive ``result``'s verdict from its parts; return the checks, or refuse an inconsistent file.

    Raises
    ------
    InputError
        The recorded transfer of a cell, the list of checks (a check missing, added or with
        another status, value or threshold) or the top-level status is not what the
        result's own parts give. One problem per difference (the first 20).
    """
    policy = recorded_policy(result, source)
    fix = (
        "re-run `audit run` (with this judge-audit version) to get a consistent result.json; a result edited "
        "by hand, truncated or produced by another tool is not gated"
    )
    problems: list[InputProblem] = []
    derived = rederived_checks(result, policy)
    status = status_of(derived)
    if result.status is not status:
        problems.append(
            InputProblem(
                source,
                f"the recorded status is {result.status.value} but the result's own "
                f"data give {status.value} ({len(result.checks)} checks recorded, "
                f"{len(derived)} derived)",
                fix,
                column="status",
            )
        )
    from judge_transfer_audit.verdict import cell_counts

    transfers = derive_transfers(result.cells, policy)
    counts = cell_counts([dataclasses.replace(c, transfer=t) for c, t in zip(result.cells, transfers)])
    if dict(result.counts) != counts:
        problems.append(
            InputProblem(
                source,
                f"the recorded cell counts {dict(result.counts)} are not the cells' own statuses {counts}",
                fix,
                column="counts",
            )
        )
    for i, (cell, transfer) in enumerate(zip(result.cells, transfers)):
        expected = to_jsonable(transfer)
        found = to_jsonable(cell.transfer)
        differ = [k for k in expected if expected[k] != found.get(k)]
        if differ:
            problems.append(
                InputProblem(
                    source,
                    f"cell {cell.matchup}/{cell.criterion}: the recorded transfer decision does not follow from "
                    f"the cell's recorded tests ({', '.join(differ)} differ)",
                    fix,
                    column=f"cells[{i}].transfer",
                )
            )
    recorded: dict[str, list[Check]] = {}
    for check in result.checks:
        recorded.setdefault(_key(check), []).append(check)
    wanted: dict[str, list[Check]] = {}
    for check in derived:
        wanted.setdefault(_key(check), []).append(check)
    for keys, what in (
        (sorted(wanted.keys() - recorded.keys()), "missing from the recorded checks"),
        (sorted(recorded.keys() - wanted.keys()), "recorded but not given by the result's data"),
    ):
        if keys:
            shown = ", ".join(keys[:5]) + (f" and {len(keys) - 5} more" if len(keys) > 5 else "")
            problems.append(InputProblem(source, f"{len(keys)} check(s) {what}: {shown}", fix, column="checks"))
    # a check's reason is worded by this version: a result of an older schema keeps its own
    # wording (its statuses, values and thresholds are compared all the same)
    same_schema = result.schema_version == SCHEMA_VERSION

    def compared(check: Check) -> str:
        data = to_jsonable(check)
        if not same_schema and isinstance(data, dict):
            data = {k: v for k, v in data.items() if k != "reason"}
        return repr(data)

    for key in sorted(wanted.keys() & recorded.keys()):
        mine, theirs = wanted[key], recorded[key]
        if sorted(map(compared, mine)) != sorted(map(compared, theirs)):
            got = ", ".join(c.status.value for c in theirs)
            want = ", ".join(c.status.value for c in mine)
            problems.append(
                InputProblem(
                    source,
                    f"check {key} is recorded as {got} but the result's data give {want}"
                    + (" (its value, threshold or reason differ)" if got == want else ""),
                    fix,
                    column="checks",
                )
            )
    from judge_transfer_audit.verdict.checks import verdict_sentence

    cells = [dataclasses.replace(c, transfer=t) for c, t in zip(result.cells, transfers)]
    sentence = verdict_sentence(cells, status, derived, margin=policy.transfer.margin, adjust=policy.transfer.adjust)
    # the sentence's wording is this version's: a result of an older schema keeps its own wording
    # (its status, cells and checks are verified above all the same)
    if result.schema_version == SCHEMA_VERSION and result.verdict != sentence:
        problems.append(
            InputProblem(
                source,
                "the recorded verdict sentence is not the one the result's own cells and checks give "
                f"(recorded {result.verdict[:120]!r}; derived {sentence[:120]!r})",
                fix,
                column="verdict",
            )
        )
    if problems:
        raise InputError(problems[:20])
    return tuple(derived)


__all__ = ["derive_checks", "derive_status", "derive_transfers", "recorded_policy", "status_of", "verify_result"]
