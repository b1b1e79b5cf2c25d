"""The judge-configurations section: every configuration's agreement and cell decisions, the one
closest to the humans named (``--judge auto``), panels of three or more
(:func:`judge_transfer_audit.verdict.judge_configurations.rank_judge_configurations`). No checks of its own."""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_transfer_audit.model.section_result import Section, Skipped
from judge_transfer_audit.sections._guard import guarded, int_seed, n_boot_of

NAME = "judge_configurations"
AUTO = "auto"  #: ``--judge auto``: the configuration closest to the humans
N_BOOT = 200  #: per configuration, pooled scope only


def auto_judge(data, choices_by_judge: dict[str, pd.DataFrame]) -> str | None:
    """``--judge auto``: the configuration with the largest kappa against the reader majority."""
    from judge_transfer_audit.verdict.judge_configurations import closest_configuration

    fallback = "ensemble" if "ensemble" in data.judges else (data.judges[0] if data.judges else None)
    return closest_configuration(data.votes, choices_by_judge) or fallback


def compute(
    data,
    spec,
    *,
    choices_by_judge: dict[str, pd.DataFrame],
    cells,
    primary: str | None,
    auto: bool,
    seed: np.random.SeedSequence,
    verdict_seed: int = 0,
    decided: dict | None = None,
) -> Section:
    """``Section[JudgeConfigurations]``: Skipped when no configuration's verdict matches a human criterion.
    ``decided``: the configurations' transfers decided beside the primary verdict (pipeline.assess_cells)."""
    if not any(c is not None and len(c) for c in choices_by_judge.values()):
        return Skipped("no judge verdict matches a human criterion")
    from judge_transfer_audit.verdict.judge_configurations import rank_judge_configurations

    n_boot = min(n_boot_of(spec), N_BOOT) if spec.uncertainty else 0
    return guarded(
        lambda: rank_judge_configurations(
            data.votes,
            choices_by_judge,
            cells=cells,
            primary=primary or "",
            auto=auto,
            n_boot=n_boot,
            level=spec.policy.transfer.level,
            rng=int_seed(seed),
            tie_rule=spec.tie_rule,
            policy=spec.policy.transfer,
            verdict_seed=verdict_seed,
            decided=decided,
        ),
        "judge configurations",
    )
