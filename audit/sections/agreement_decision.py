"""The agreement-decision section: is the judge at least as good as a reader at reproducing the
other readers, pair by pair, per cell, matchup and study
(:func:`judge_transfer_audit.verdict.agreement_decision.agreement_decision`), and its check ``agreement.decision``."""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_transfer_audit.model.checks import Check, Status, apply_severity
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


def checks(section: Section, policy) -> list[Check]:
    """``agreement.decision``: one per study, matchup and cell, its status the scope's decision."""
    if section.status is Status.ERROR:
        return [Check("agreement.decision", Status.ERROR, reason=section.reason)]
    if not section.computed:
        return []
    out = []
    for r in section.payload.rows:
        out.append(
            Check(
                "agreement.decision",
                Status(r.status),
                r.advantage.estimate,
                -section.payload.margin,
                r.reason,
                scope=r.scope,
            )
        )
    return apply_severity(out, policy.severity)


def check_gate_support(policy, votes: pd.DataFrame, source: str) -> None:
    """An input error (exit 2) when the policy gates on the agreement decision explicitly
    (``[gate] decisions`` = "both" or "agreement") and no pair has two votes on one criterion:
    a reader's agreement with the other readers cannot be estimated from such data."""
    from judge_transfer_audit.core.errors import InputError, InputProblem
    from judge_transfer_audit.verdict.agreement_decision import data_supports_agreement

    if policy.gate.decisions not in ("both", "agreement") or data_supports_agreement(votes):
        return
    raise InputError(
        InputProblem(
            source,
            f'[gate] decisions = "{policy.gate.decisions}" gates on the agreement decision, but every pair has '
            "one reader vote per criterion: a reader's agreement with the other readers cannot be estimated",
            'set [gate] decisions = "rate" (or "auto": the agreement decision is then reported from the votes '
            "and the chance baseline, never PASS), or have some pairs read by two or more readers",
            column="gate.decisions",
            value=policy.gate.decisions,
        )
    )
