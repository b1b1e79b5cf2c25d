"""The judge-agreement section: kappa and judge-minus-human alpha of the primary judge, per scope,
with intervals (:func:`judge_transfer_audit.statistics.judge.agreement.judge_agreement`). Its figures are read by the
verdict's summary checks; it has no checks of its own."""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_transfer_audit.model.section_result import Section, Skipped
from judge_transfer_audit.sections._guard import guarded, int_seed, n_boot_of

NAME = "judge_agreement"
N_BOOT = 500  #: the intervals use the replicates' variance only (~3% error on a standard error)


def compute(data, spec, *, choices: pd.DataFrame, primary: str | None, seed: np.random.SeedSequence) -> Section:
    """``Section[JudgeAgreement]``: Skipped when no judge verdict matches a human criterion."""
    if primary is None or choices is None or choices.empty:
        return Skipped("no judge verdict matches a human criterion")
    from judge_transfer_audit.statistics.judge.agreement import judge_agreement

    n_boot = min(n_boot_of(spec), N_BOOT) if spec.uncertainty else 0
    return guarded(
        lambda: judge_agreement(
            data.votes, choices, judge=primary, n_boot=n_boot, level=spec.policy.transfer.level, rng=int_seed(seed)
        ),
        "judge agreement",
    )
