"""The development-set section: the judge's validity where it was selected, out of fold
(:func:`judge_transfer_audit.statistics.devset.dev_validity`), and its check ``dev.spearman``."""

from __future__ import annotations

import math

import numpy as np

from judge_transfer_audit.model.checks import Check, Status, breach_status
from judge_transfer_audit.model.policy import Policy
from judge_transfer_audit.model.section_result import Section, Skipped
from judge_transfer_audit.sections._guard import guarded, int_seed

NAME = "dev"


def compute(data, spec, *, seed: np.random.SeedSequence) -> Section:
    """``Section[DevValidity]``: Skipped without a development set."""
    if data.dev_judge is None or data.dev_humans is None:
        return Skipped("no development set given (--dev-judge and --dev-humans)")
    from judge_transfer_audit.statistics.devset import dev_validity

    return guarded(lambda: dev_validity(data.dev_judge, data.dev_humans, rng=int_seed(seed)), "dev-set validity")


def checks(section: Section, policy: Policy) -> list[Check]:
    """Gate on the out-of-fold estimate: the in-sample figure is the one the judge was selected on."""
    if not section.computed:
        return []
    dev = section.payload
    value = getattr(dev, "oof_pooled", float("nan"))
    threshold = policy.dev.min_dev_spearman
    if value is None or math.isnan(value):
        return [Check("dev.spearman", Status.SKIPPED, reason="no out-of-fold dev-set correlation could be computed")]
    status = Status.PASS if value >= threshold else breach_status("dev.spearman")
    reason = (
        f"development-set Spearman of the routed judge with mean human ratings, out of fold: {value:.3f} "
        f"(in sample {dev.routed_in_sample_pooled:.3f}, optimism {dev.optimism_pooled:+.3f})"
        + ("; selection and validation share data" if dev.selection_shares_data else "")
    )
    return [Check("dev.spearman", status, value, threshold, reason)]
