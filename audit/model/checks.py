"""Check statuses: the verdict vocabulary shared by every part of the audit.

We call them *checks*, never tests. "Could not compute" is a value (SKIPPED or ERROR
with a reason), not a crash.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType


class Status(str, enum.Enum):
    PASS = "PASS"
    WARN = "WARN"
    FAIL = "FAIL"
    SKIPPED = "SKIPPED"
    ERROR = "ERROR"
    #: a transfer cell decision that is neither PASS nor FAIL at the current sample
    INCONCLUSIVE = "INCONCLUSIVE"
    #: a transfer cell with fewer pairs or readers than the policy's minimum: never PASS or FAIL
    INSUFFICIENT = "INSUFFICIENT"


#: The statuses of a transfer cell decision (docs/audit.md, "The decision").
CELL_STATUSES = (Status.PASS, Status.FAIL, Status.INCONCLUSIVE, Status.INSUFFICIENT, Status.ERROR)


@dataclass(frozen=True)
class Check:
    """The outcome of one check.

    Attributes
    ----------
    name : str
        Stable dotted name, e.g. ``"transfer.judge_in_human_ci"``; policy files refer to it.
    status : Status
    value : float | None
        The measured quantity the status was decided on (None when not computed).
    threshold : float | None
        The threshold it was compared against (None when not applicable).
    reason : str
        One sentence a person can act on.
    scope : str
        What the check is about: ``"overall"`` or e.g. ``"gpt5-vs-gpt4o/empathy"``.
    """

    name: str
    status: Status
    value: float | None = None
    threshold: float | None = None
    reason: str = ""
    scope: str = "overall"

    def __str__(self) -> str:
        val = "" if self.value is None else f" value={self.value:.4g}"
        thr = "" if self.threshold is None else f" threshold={self.threshold:.4g}"
        return f"[{self.status.value}] {self.name} ({self.scope}){val}{thr}: {self.reason}"


#: What a breach of each check reports unless a policy's ``[severity]`` says otherwise; the
#: names are the ones a policy may refer to (audit/model/policy.py validates against them).
#: ERROR: the check says a part could not be computed or nothing was compared; ``[severity]``
#: can only turn it OFF (an ERROR is not a breach a policy may downgrade).
DEFAULT_SEVERITY: Mapping[str, Status] = MappingProxyType(
    {
        "transfer.decision": Status.FAIL,
        "transfer.assessed": Status.ERROR,
        "transfer.matchup": Status.FAIL,
        "transfer.study": Status.FAIL,
        "transfer.judge_vs_reader_baseline": Status.WARN,
        "agreement.human_alpha": Status.WARN,
        "agreement.decision": Status.FAIL,
        "judge.invalid_fraction": Status.FAIL,
        "judge.position_bias": Status.WARN,
        "glmm.fraction_singular": Status.WARN,
        "glmm.fit": Status.ERROR,
        "dev.spearman": Status.WARN,
        "dev.computed": Status.ERROR,
        "uncertainty.loro_max_shift": Status.WARN,
        "uncertainty.computed": Status.ERROR,
        "readers.judge_outside_reader_range": Status.WARN,
        "readers.separation": Status.WARN,
        "readers.fast_reader": Status.WARN,
        "readers.fatigue": Status.WARN,
        "readers.position_bias": Status.WARN,
        "readers.group_difference": Status.WARN,
        "readers.computed": Status.ERROR,
        "surface.judge_feature_r": Status.WARN,
        "surface.judge_only_feature": Status.WARN,
        "surface.computed": Status.ERROR,
        "surface.detector": Status.ERROR,
    }
)

#: What a ``[severity]`` entry may say: a breach FAILs, WARNs, or the check is not reported.
SEVERITY_LEVELS = ("FAIL", "WARN", "OFF")

#: The statuses a ``[severity]`` entry re-labels (a breach); PASS, SKIPPED, ERROR and the
#: cell statuses INCONCLUSIVE and INSUFFICIENT keep theirs.
BREACHES = (Status.WARN, Status.FAIL)


def breach_status(name: str) -> Status:
    """What a breach of check ``name`` reports by default (:data:`DEFAULT_SEVERITY`)."""
    try:
        return DEFAULT_SEVERITY[name]
    except KeyError:
        raise ValueError(
            f"check '{name}' has no default severity: add it to judge_transfer_audit.model.checks.DEFAULT_SEVERITY"
        ) from None


def gate_severity(severity: Mapping[str, str] | None, decisions: str) -> dict[str, str]:
    """``severity`` with ``[gate] decisions`` applied: the decision that does not gate reports its
    FAILs as WARN (``"rate"``: ``agreement.decision``; ``"agreement"``: ``transfer.decision``); an
    explicit ``[severity]`` entry wins."""
    implied = {"rate": {"agreement.decision": "WARN"}, "agreement": {"transfer.decision": "WARN"}}
    return {**implied.get(decisions, {}), **(severity or {})}


def apply_severity(checks: Iterable[Check], severity: Mapping[str, str] | None) -> list[Check]:
    """The one place a policy's ``[severity]`` decides what a breach means.

    ``severity`` maps a check name to ``FAIL``, ``WARN`` or ``OFF`` (``Policy.severity``).
    ``OFF`` removes the check whatever its status; ``FAIL``/``WARN`` re-label a breach (a
    check whose status is WARN or FAIL: its default, :func:`breach_status`) and the reason
    says so. Every producer of checks calls this (the verdict's, the sections', the peers'),
    and :func:`judge_transfer_audit.results.derive.derive_checks` calls it once more over all of them for the run and
    the gate alike; applying it twice changes nothing. The JSON, the terminal, JUnit and the
    gate all read the statuses it leaves.
    """
    severity = severity or {}
    out: list[Check] = []
    for check in checks:
        level = severity.get(check.name)
        if level == "OFF":
            continue
        if level in ("FAIL", "WARN") and check.status in BREACHES and check.status.value != level:
            note = f" (reported as {level}: [severity] {check.name} = {level})"
            check = dataclasses.replace(check, status=Status(level), reason=check.reason + note)
        out.append(check)
    return out
