"""A point estimate with its interval: the ``{estimate, ci_low, ci_high}`` of result.json."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Estimate:
    """``estimate`` with the interval ``[ci_low, ci_high]`` (NaN bounds: no interval)."""

    estimate: float
    ci_low: float = math.nan
    ci_high: float = math.nan

    def __str__(self) -> str:
        if math.isnan(self.estimate):
            return "n/a"
        if math.isnan(self.ci_low) or math.isnan(self.ci_high):
            return f"{self.estimate:.3f}"
        return f"{self.estimate:.3f} [{self.ci_low:.3f}, {self.ci_high:.3f}]"


NO_ESTIMATE = Estimate(math.nan)
