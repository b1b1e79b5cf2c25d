"""The uncertainty section's typed result (a leaf: it imports only the uncertainty results)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from judge_transfer_audit.statistics.uncertainty.bootstrap import BootstrapResult
from judge_transfer_audit.statistics.uncertainty.judge_configs import JudgeConfigRates
from judge_transfer_audit.statistics.uncertainty.loro import LoroResult
from judge_transfer_audit.statistics.uncertainty.multiplicity import SignificanceTally


@dataclass(frozen=True)
class UncertaintySection:
    """Cluster bootstraps, leave-one-reader-out, significance tallies, judge configurations."""

    bootstrap: BootstrapResult
    loro: LoroResult
    tally: SignificanceTally
    tally_holm: SignificanceTally
    tally_bh: SignificanceTally
    judge_configurations: JudgeConfigRates

    def to_frame(self) -> pd.DataFrame:
        return self.bootstrap.to_frame()

    def __str__(self) -> str:
        return f"{self.tally}\n{self.loro}"
