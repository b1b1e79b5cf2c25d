"""Estimated CPU seconds of the audit's steps, from the run's shape: what ranks them on a pool.

The task graph (:mod:`judge_transfer_audit.engine.task_graph`) gives a free worker the queued step whose chain of
estimated seconds to the end of the run is longest; only the order of the estimates matters, not
their scale. Each estimate is a sum of terms over the run's shape (:class:`RunShape`), with one
coefficient per term in :data:`COSTS`, the one table to retune when a step gets faster.
``python benchmarks/parallel_bound.py`` prints each step's measured CPU beside its estimate.
"""

from __future__ import annotations

from dataclasses import dataclass

#: CPU seconds per unit of each term of the run's shape (RunShape.term), per step. Fitted on the
#: in-order runs of the fixture, the 100k and 1k-criteria studies, MT-Bench and HANNA (main 3bbf8d5 + the
#: task graph; `python benchmarks/parallel_bound.py -- STUDY` prints each step's CPU beside its estimate).
#: The ``pairs`` terms are the difference between two studies of the same votes,
#: cells and readers that differ only in pairs: the Chatbot-Arena shape (100k pairs of one vote) and
#: arena-100k (5k pairs of 20 votes)
COSTS: dict[str, dict[str, float]] = {
    "verdict": {"cells": 0.01, "votes": 1e-5, "pairs": 5e-5},  # the primary judge alone
    "configurations": {"judge_cells": 0.012, "judge_votes": 5.5e-5},  # the other configurations, apart
    "glmm": {"fixed": 0.15, "cells": 0.003, "votes": 1e-5},
    "uncertainty": {"fixed": 0.5, "cells": 0.005, "votes": 2e-5, "judge_votes": 2e-5},  # with its farmed tasks
    "readers": {"fixed": 0.25, "cells": 0.0008, "votes": 1e-6, "judge_cells": 0.002},
    "surface": {"texts": 0.0047},
    "judge_configurations": {
        "fixed": 0.2,
        "cells": 0.0003,
        "votes": 3e-6,
        "judge_cells": 0.006,
        "judge_votes": 2e-5,
        "pairs": 7e-5,
    },
    "dev": {"dev_rows": 0.00045},
    "judge_agreement": {"cells": 0.0075, "votes": 8e-6, "pairs": 2e-4},
    "judge_position": {"fixed": 0.01},
    "agreement_decision": {"fixed": 0.1, "votes": 5e-5},  # fixture: 0.34 CPU-s for 6,300 votes
    # with its farmed bootstrap blocks; refitted on SummEval (36k votes per
    # criterion, ~26 CPU-s) and arena-100k (100k votes, ~77 CPU-s), the replicates warm-started
    "leaderboard": {"ranked": 1.0, "ranked_votes": 7.5e-4},
    "provenance": {"fixed": 0.1},
}


@dataclass(frozen=True)
class RunShape:
    """What the steps' costs grow with: ``votes``, ``cells`` (matchup x criterion with votes),
    ``judges`` (judge configurations besides the primary), ``texts`` (the stories' texts, for surface
    features), ``dev_rows`` (development-set rows), ``ranked_votes`` (the votes per criterion when a
    leaderboard can be fitted: three or more systems, linked by the pairs; else 0), ``pairs`` (the
    pairs times the criteria: the units the bootstraps resample; Chatbot-Arena-style data has one
    vote per pair, so many more of them per vote than a panel of readers). Derived terms:
    ``fixed`` (1), ``judge_cells`` and ``judge_votes`` (the configurations' cells and votes),
    ``ranked`` (1 when a leaderboard can be fitted)."""

    votes: int
    cells: int
    judges: int = 0
    texts: int = 0
    dev_rows: int = 0
    ranked_votes: float = 0.0
    pairs: int = 0

    def term(self, name: str) -> float:
        if name == "fixed":
            return 1.0
        if name == "judge_cells":
            return float(self.judges * self.cells)
        if name == "judge_votes":
            return float(self.judges * self.votes)
        if name == "ranked":
            return float(self.ranked_votes > 0)
        return float(getattr(self, name))


def estimate(step: str, shape: RunShape) -> float:
    """Estimated CPU seconds of ``step`` on ``shape`` (0 for a step :data:`COSTS` does not list)."""
    return sum(coef * shape.term(term) for term, coef in COSTS.get(step, {}).items())


@dataclass(frozen=True)
class CellCosts:
    """The cell steps' estimates, and whether the configurations are decided inside the verdict's
    step (less CPU: they share its cell bootstraps) or beside it (shorter chain)."""

    verdict: float
    configurations: float
    glmm: float
    decide_together: bool

    @property
    def verdict_with_configurations(self) -> float:
        return self.verdict + self.configurations


def cell_costs(shape: RunShape, jobs: int, other_work: float) -> CellCosts:
    """The cell steps' estimates for ``jobs`` workers. Deciding the configurations inside the verdict
    saves about a fifth of their CPU but makes one long step: it is done when that step and the
    judge configurations' section after it still end before the rest of the work on ``jobs`` workers
    would (``other_work``: every other step's estimate)."""
    verdict, configurations, glmm = (estimate(s, shape) for s in ("verdict", "configurations", "glmm"))
    shared = 0.8 * configurations  # what deciding them on the verdict's bootstraps costs
    chain = verdict + shared + estimate("judge_configurations", shape)
    total = verdict + shared + glmm + other_work
    return CellCosts(verdict, configurations, glmm, decide_together=chain <= total / max(1, jobs))


__all__ = ["COSTS", "RunShape", "estimate", "CellCosts", "cell_costs"]
