"""The leaderboard section: Bradley-Terry leaderboards of the humans and the primary judge when
three or more systems are compared (:func:`judge_transfer_audit.statistics.leaderboard.fit.bradley_terry_leaderboard`),
with their diagnostics (:mod:`judge_transfer_audit.statistics.leaderboard.diagnostics`). No checks.
Its bootstrap refits run in blocks on the run's runner (the pool's workers, or a Dask cluster)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_transfer_audit.model.section_result import Section, Skipped
from judge_transfer_audit.sections._guard import guarded, int_seed, n_boot_of, task_runner

NAME = "leaderboard"
N_BOOT = 100  #: refits per replicate make this bootstrap ~0.1-0.5 s a replicate


def compute(data, spec, *, choices: pd.DataFrame, primary: str | None, seed: np.random.SeedSequence) -> Section:
    """``Section[Leaderboard]``: Skipped with fewer than three systems."""
    systems = {str(x) for col in ("focal", "other") for x in data.pairs[col].unique().tolist()}
    if len(systems) < 3:
        return Skipped(f"{len(systems)} systems: a leaderboard needs three or more")
    from contextlib import nullcontext

    from judge_transfer_audit.statistics.leaderboard.fit import bradley_terry_leaderboard

    n_boot = min(n_boot_of(spec), N_BOOT) if spec.uncertainty else 0
    # opened only when there are replicates to send it
    with task_runner(spec) if n_boot else nullcontext(None) as runner:
        return guarded(
            lambda: bradley_terry_leaderboard(
                data.votes,
                choices if primary is not None and len(choices) else None,
                pairs=data.pairs,
                judge=primary or "",
                level=spec.policy.transfer.level,
                n_boot=n_boot,
                rng=int_seed(seed),
                runner=runner,
            ),
            "leaderboard",
        )
