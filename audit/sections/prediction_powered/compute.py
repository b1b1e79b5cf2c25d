"""The prediction-powered section, "What the readers would say": the humans' vote share,
majority rate and leaderboard from the judge on every pair (voted and judge-only) corrected by
the votes (:func:`judge_transfer_audit.statistics.prediction_powered.corrected_estimates`). No checks."""

from __future__ import annotations

import dataclasses

import numpy as np

from judge_transfer_audit.model.section_result import Section, Skipped
from judge_transfer_audit.sections._guard import guarded, int_seed

NAME = "prediction_powered"


def compute(data, spec, *, choices, primary: str | None, seed: np.random.SeedSequence) -> Section:
    """``Section[PredictionPowered]``: Skipped without judge-only pairs or without a judge."""
    if data.n_judge_only_pairs == 0:
        return Skipped("no pair carries only the judge (every judged pair has human votes)")
    if primary is None or not len(choices):
        return Skipped("no judge verdict on a human criterion")

    def run():
        from judge_transfer_audit.model.tie_rules import EVEN_SPLIT, credit_votes
        from judge_transfer_audit.statistics.prediction_powered import corrected_estimates
        from judge_transfer_audit.verdict.judge_side import judge_choices, judge_pair_outcomes

        tie_seed, own_seed = seed.spawn(2)
        only = dataclasses.replace(
            data,
            pairs=data.judge_only_pairs,
            judge_scores=data.judge_only_scores,
            judge_verdicts=data.judge_only_verdicts,
        )
        outcomes = judge_pair_outcomes(only, EVEN_SPLIT, np.random.default_rng(tie_seed))
        judge_only = judge_choices(outcomes, primary, data.criteria)
        credit = credit_votes(data.votes["y"].to_numpy(float), spec.tie_rule, np.random.default_rng(tie_seed))
        return corrected_estimates(
            data.votes,
            data.pairs,
            choices,
            judge_only,
            data.judge_only_pairs,
            credit=credit,
            judge=primary,
            sampling=spec.policy.prediction_powered.sampling,
            level=spec.policy.transfer.level,
            rng=int_seed(own_seed),
        )

    return guarded(run, "prediction-powered estimates")
