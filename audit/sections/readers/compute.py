"""The reader section: who the readers are, how they agree, where they split from the judge
(:func:`judge_transfer_audit.statistics.readers.analyse_readers`) (its checks: checks.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_transfer_audit.model.section_result import Section
from judge_transfer_audit.sections._guard import guarded, int_seed

NAME = "readers"


def compute(data, spec, *, judge_credits: pd.DataFrame, cells, seed: np.random.SeedSequence) -> Section:
    """``Section[ReaderAnalysis]``; ``judge_credits`` are every judge configuration's (divergent pairs
    need the judge to be unanimous *across configurations*, and the heat maps show each one)."""
    from judge_transfer_audit.statistics.readers import analyse_readers
    from judge_transfer_audit.verdict.human_side import fit_cell_glmm

    rows = [
        {
            "matchup": c.matchup,
            "criterion": c.criterion,
            "estimate": c.human.glmm.estimate,
            "lo": c.human.glmm.ci_low,
            "hi": c.human.glmm.ci_high,
        }
        for c in cells
    ]
    # pooled heat maps only over matchups whose focal system means one thing
    # (judge_transfer_audit.model.data.pooling_scopes);
    # each gets its own GLMM row (pair + reader, per criterion)
    pools = data.pooling_scopes()
    for label, matchups in pools.items():
        pooled = data.votes[data.votes["matchup"].isin(list(matchups))]
        for criterion, votes in pooled.groupby("criterion", sort=False):
            g = fit_cell_glmm(votes, level=spec.policy.transfer.level, backend=spec.glmm_backend)
            rows.append(
                {"matchup": label, "criterion": criterion, "estimate": g.estimate, "lo": g.ci_low, "hi": g.ci_high}
            )
    estimates = pd.DataFrame(rows)
    return guarded(
        lambda: analyse_readers(
            data.votes,
            judge_credits if len(judge_credits) else None,
            glmm_estimates=estimates,
            linkage=spec.linkage,
            rng=int_seed(seed),
            stories=data.stories,
            pools=pools,
            tie_rule=spec.tie_rule,
        ),
        "reader analysis",
    )
