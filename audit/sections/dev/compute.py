"""The development-set section: the judge's validity where it was selected, out of fold
(:func:`judge_transfer_audit.statistics.devset.dev_validity`) (its check: checks.py)."""

from __future__ import annotations

import numpy as np

from judge_transfer_audit.model.section_result import Section, Skipped
from judge_transfer_audit.sections._guard import guarded, int_seed

NAME = "dev"


def compute(data, spec, *, seed: np.random.SeedSequence) -> Section:
    """``Section[DevValidity]``: Skipped without a development set."""
    if data.dev_judge is None or data.dev_humans is None:
        return Skipped("no development set given (--dev-judge and --dev-humans)")
    from judge_transfer_audit.statistics.devset import dev_validity

    return guarded(lambda: dev_validity(data.dev_judge, data.dev_humans, rng=int_seed(seed)), "dev-set validity")
