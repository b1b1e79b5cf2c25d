"""The prediction-powered section's typed result (the payload of ``AuditResult.prediction_powered``)."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import pandas as pd

ALL_CRITERIA = "(all criteria)"  #: the label of a matchup's figure pooled over its criteria


@dataclass(frozen=True)
class CorrectedRow:
    """One estimand of one matchup x criterion (or a matchup pooled over its criteria):
    the prediction-powered figure beside the human-only and the judge-only ones."""

    matchup: str
    criterion: str  #: a human criterion, or "(all criteria)"
    estimand: str  #: "vote_share" or "majority_rate"
    estimate: float
    ci_low: float
    ci_high: float
    lam: float  #: the power-tuning parameter (0: the judge is not used)
    human_estimate: float  #: from the voted pairs alone (lam = 0)
    human_ci_low: float
    human_ci_high: float
    judge_estimate: float  #: the judge's rate over every judged pair (voted and judge-only)
    judge_ci_low: float
    judge_ci_high: float
    n_pairs_voted: int
    n_votes: int
    n_pairs_judge_only: int
    width_ratio: float  #: the corrected interval's width over the human-only one
    effective_votes: float  #: human votes the human-only figure would need for the corrected width
    judge_worth_votes: float  #: effective_votes - n_votes (clipped at 0)
    se: float = math.nan  #: the corrected figure's standard error
    human_se: float = math.nan
    imputed_variance: float = math.nan  #: the judge-only pairs' part of se^2 (vote share only)
    quantile: float = math.nan  #: the corrected interval's quantile (normal, or t on crossed designs)


@dataclass(frozen=True)
class CorrectedStrength:
    """One system of the prediction-powered Bradley-Terry leaderboard (centred logit strengths)."""

    system: str
    strength: float
    ci_low: float
    ci_high: float
    rank: int
    rank_low: float
    rank_high: float
    human_strength: float
    human_ci_low: float
    human_ci_high: float
    human_rank: int
    human_rank_low: float
    human_rank_high: float


@dataclass(frozen=True)
class CorrectedLeaderboard:
    criterion: str
    lam: float
    n_pairs_voted: int
    n_pairs_judge_only: int
    systems: tuple[CorrectedStrength, ...]
    n_draws: int  #: normal draws of the strengths behind the rank intervals

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([{f.name: getattr(s, f.name) for f in fields(s)} for s in self.systems])


@dataclass(frozen=True)
class PredictionPowered:
    """What the readers would say: the humans' figures estimated from the judge on every pair
    and the votes on a sample (docs/prediction-powered.md)."""

    judge: str
    sampling: str  #: the policy's claim of how the voted pairs were drawn ("random" / "stratified")
    level: float
    n_pairs_voted: int
    n_pairs_judge_only: int
    rows: tuple[CorrectedRow, ...]
    leaderboard: CorrectedLeaderboard | None
    seed: int | None
    notes: tuple[str, ...] = ()

    def to_frame(self) -> pd.DataFrame:
        columns = [f.name for f in fields(CorrectedRow)]
        return pd.DataFrame([{c: getattr(r, c) for c in columns} for r in self.rows], columns=columns)

    @property
    def validity(self) -> str:
        """The condition the intervals rest on, in words."""
        how = (
            "a simple random sample of each matchup's judged pairs"
            if self.sampling == "random"
            else "a random sample within each matchup (stratified by matchup)"
        )
        return (
            f'The voted pairs are {how} (policy [prediction_powered] sampling = "{self.sampling}"): '
            "prediction-powered intervals are valid only when which pairs got human votes does not "
            "depend on the pairs' content or on the judge's verdicts."
        )

    def __str__(self) -> str:
        shown = [r for r in self.rows if r.estimand == "vote_share"]
        lines = [f"Prediction-powered estimates ({self.n_pairs_judge_only} judge-only pairs)"]
        for r in shown:
            ratio = "" if math.isnan(r.width_ratio) else f", width x{r.width_ratio:.2f}"
            lines.append(f"  {r.matchup} / {r.criterion}: {r.estimate:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]{ratio}")
        return "\n".join(lines)
