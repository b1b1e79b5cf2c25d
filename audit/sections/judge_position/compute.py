"""The judge-position section: the judge's first-shown rate and swap consistency when its rows
carry ``shown_first`` (:func:`judge_transfer_audit.statistics.judge.position.judge_position_bias`) (its check:
checks.py)."""

from __future__ import annotations

import numpy as np

from judge_transfer_audit.model.section_result import Section, Skipped
from judge_transfer_audit.sections._guard import guarded, int_seed, n_boot_of

NAME = "judge_position"


def compute(data, spec, *, seed: np.random.SeedSequence) -> Section:
    """``Section[JudgePosition]``: Skipped for a scoring judge or a judge file without ``shown_first``."""
    verdicts = data.judge_verdicts
    if verdicts is None:
        return Skipped("the judge gives scores, not pairwise verdicts: no order shown")
    if "shown_first" not in verdicts.columns or not (verdicts["shown_first"] != "").any():
        return Skipped("the judge file has no shown_first column (the order the judge saw)")
    from judge_transfer_audit.statistics.judge.position import judge_position_bias

    return guarded(
        lambda: judge_position_bias(
            verdicts, level=spec.policy.transfer.level, n_boot=n_boot_of(spec), rng=int_seed(seed)
        ),
        "judge position bias",
    )
