"""Check statuses: the verdict vocabulary shared by every part of the audit.

We call them *checks*, never tests. "Could not compute" is a value (SKIPPED or ERROR
with a reason), not a crash.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


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
