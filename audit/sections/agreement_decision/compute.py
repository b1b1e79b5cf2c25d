"""The agreement-decision section: is the judge at least as good as a reader at reproducing the
other readers, pair by pair, per cell, matchup and study
(:func:`judge_transfer_audit.verdict.agreement_decision.agreement_decision`) (its check: checks.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_transfer_audit.model.section_result import Section, Skipped
from judge_transfer_audit.sections._guard import guarded, int_seed

NAME = "agreement_decision"
N_BOOT = 999  #: the two-way variance uses the replicates' spread only


def compute(data, spec, *, choices: pd.DataFrame, primary: str | None, seed: np.random.SeedSequence) -> Section:
    """``Section[AgreementDecision]``: Skipped when no judge verdict matches a human criterion."""
    if primary is None or choices is None or choices.empty:
        return Skipped("no judge verdict matches a human criterion")
    from judge_transfer_audit.verdict.agreement_decision import agreement_decision

    t = spec.policy.transfer
    n_boot = min(spec.n_boot if spec.n_boot is not None else t.n_boot, N_BOOT)
    return guarded(
        lambda: agreement_decision(
            data.votes,
            choices,
            ties_counted=spec.tie_rule.counts_ties,
            margin=spec.policy.agreement.margin,
            alpha=t.alpha,
            adjust=t.adjust,
            min_pairs=t.min_pairs,
            min_readers=t.min_readers,
            n_boot=n_boot,
            rng=int_seed(seed),
        ),
        "agreement decision",
    )
