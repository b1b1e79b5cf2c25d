"""The reader section: who the readers are, how they agree, where they split from the judge
(:func:`judge_transfer_audit.statistics.readers.analyse_readers`), and its checks
(:func:`judge_transfer_audit.statistics.readers.reader_checks`)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from judge_transfer_audit.model.checks import Check
from judge_transfer_audit.model.policy import Policy
from judge_transfer_audit.model.section_result import Section
from judge_transfer_audit.sections._guard import guarded, int_seed

NAME = "readers"


def compute(data, spec, *, credits: pd.DataFrame, cells, seed: np.random.SeedSequence) -> Section:
    """``Section[ReaderAnalysis]``; ``credits`` are every judge configuration's (divergent pairs
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
            credits if len(credits) else None,
            glmm_estimates=estimates,
            linkage=spec.linkage,
            rng=int_seed(seed),
            stories=data.stories,
            pools=pools,
            tie_rule=spec.tie_rule,
        ),
        "reader analysis",
    )


def families(section: Section) -> int:
    """The check families this section tests (its share of the run's family-wise error budget)."""
    if not section.computed:
        return 0
    from judge_transfer_audit.statistics.readers.policy import reader_check_families

    return reader_check_families(section.payload)


def checks(
    section: Section,
    policy: Policy,
    *,
    families: int,
    primary: str | None = None,
    focal: Mapping[str, str] | None = None,
) -> list[Check]:
    """The reader checks, each with an equal share of ``families`` (the reader and surface check
    families together); those scoped ``cell [judge]`` kept for the ``primary`` judge only.
    ``focal``: each matchup's focal system (the reasons name what a rate is of)."""
    if not section.computed:
        return []
    from judge_transfer_audit.statistics.readers import reader_checks

    return _primary_judge_only(reader_checks(section.payload, policy.readers, families=families, focal=focal), primary)


def _primary_judge_only(checks: list[Check], primary: str | None) -> list[Check]:
    """Reader checks scoped ``cell [judge]`` are kept for the primary judge only; the other
    configurations stay visible in the heat maps and tables without multiplying the gate."""
    if not primary:
        return checks
    return [c for c in checks if not c.scope.endswith("]") or c.scope.endswith(f"[{primary}]")]
