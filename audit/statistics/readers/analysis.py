"""``analyse_readers``: every reader analysis in one frozen result."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judge_transfer_audit.core.rng import resolve_rng
from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.model.data import HUMAN_OVERALL
from judge_transfer_audit.model.tie_rules import EVEN_SPLIT, TieRule
from judge_transfer_audit.statistics.readers._common import COMPUTED, check_judge_credits, check_votes, credited_votes
from judge_transfer_audit.statistics.readers.clustering import ReaderClustering, check_linkage, cluster_readers
from judge_transfer_audit.statistics.readers.divergence import DivergentPairs, divergent_pairs
from judge_transfer_audit.statistics.readers.groups import ReaderGroups, reader_groups
from judge_transfer_audit.statistics.readers.position import PositionBias, position_bias
from judge_transfer_audit.statistics.readers.rates import ReaderRates, reader_rates
from judge_transfer_audit.statistics.readers.timing import (
    DEFAULT_FAST_READER_FACTOR,
    DEFAULT_SECONDS_CAP,
    AnnotationTiming,
    annotation_timing,
)
from judge_transfer_audit.statistics.readers.weights import (
    ReaderKappas,
    ReaderWeights,
    criteria_and_overall,
    reader_kappas,
    reader_weights,
    wide_votes,
)

SUB_RESULTS = ("weights", "kappas", "clustering", "rates", "divergent_pairs", "timing", "position_bias", "groups")


@dataclass(frozen=True, eq=False)
class ReaderAnalysis:
    """Who the readers are: weights, kappas, clusters, heat-map rates, divergent pairs,
    timing, position bias and groups. Each sub-result has a ``status`` (PASS = computed,
    SKIPPED/ERROR with a ``reason``).

    Attributes
    ----------
    n_readers, n_pairs, n_votes : int
    linkage : str
    seed : int | None
        Seed used for the permutation tests (None when a Generator was passed).
    """

    weights: ReaderWeights
    kappas: ReaderKappas
    clustering: ReaderClustering
    rates: ReaderRates
    divergent_pairs: DivergentPairs
    timing: AnnotationTiming
    position_bias: PositionBias
    groups: ReaderGroups
    n_readers: int
    n_pairs: int
    n_votes: int
    linkage: str
    seed: int | None = None

    def statuses(self) -> dict[str, tuple[Status, str]]:
        """``{sub-result name: (status, reason)}``."""
        return {name: (getattr(self, name).status, getattr(self, name).reason) for name in SUB_RESULTS}

    def to_frame(self) -> pd.DataFrame:
        """One row per sub-result: part, status, reason."""
        return pd.DataFrame(
            [[n, s.value, r] for n, (s, r) in self.statuses().items()], columns=["part", "status", "reason"]
        )

    def __str__(self) -> str:
        head = (
            f"Reader analysis: {self.n_readers} readers, {self.n_pairs} pairs, {self.n_votes} votes (seed {self.seed})"
        )
        parts = [str(getattr(self, name)) for name in SUB_RESULTS]
        return "\n".join([head, *parts])


def analyse_readers(
    votes: pd.DataFrame,
    judge_credits: pd.DataFrame | None = None,
    *,
    glmm_estimates: pd.DataFrame | None = None,
    linkage: str = "average",
    seconds_cap: float = DEFAULT_SECONDS_CAP,
    fast_reader_factor: float = DEFAULT_FAST_READER_FACTOR,
    rng: int | np.random.Generator | None = None,
    fit_glmm_if_missing: bool = True,
    top_k_pairs: int = 5,
    stories: pd.DataFrame | None = None,
    pools: Mapping[str, Sequence[str]] | None = None,
    tie_rule: TieRule = EVEN_SPLIT,
) -> ReaderAnalysis:
    """Run every reader analysis.

    Parameters
    ----------
    votes : DataFrame
        ``AuditData.votes`` (pair_id, reader_id, criterion, matchup, focal, other, y, and the
        optional seconds, comment, shown_first, reader_group, order).
    judge_credits : DataFrame, optional
        pair_id, matchup, criterion, judge, credit (1 / 0 / a tie's credit / NaN), computed by the
        pipeline under its tie rule. Without it the judge rows, the outside-range check and
        the divergent pairs are skipped.
    glmm_estimates : DataFrame, optional
        Precomputed human GLMM estimates (matchup, criterion, estimate [, lo, hi]) for the
        heat map; fitted with :mod:`judge_transfer_audit.statistics.glmm` when absent and ``fit_glmm_if_missing``.
    linkage : str
        scipy linkage method for the clusterings (default ``average``).
    seconds_cap, fast_reader_factor : float
        See :mod:`judge_transfer_audit.statistics.readers.timing` (defaults 600 s and 0.5).
    rng : int, numpy Generator or None
        For the group permutation tests; the seed is recorded.
    stories : DataFrame, optional
        Story texts (pair_id, system, text): the divergent pairs then carry story excerpts.
    top_k_pairs : int
        Divergent pairs given in detail.
    pools : mapping of label to matchups, optional
        Which matchups the pooled heat-map rows, group comparisons and leave-one-reader-out
        rates average
        (:meth:`judge_transfer_audit.model.data.AuditData.pooling_scopes`: only matchups whose focal system means
        one thing). Default: every matchup under ``(all matchups)``.
    tie_rule : TieRule
        The run's tie rule (:mod:`judge_transfer_audit.model.tie_rules`): ``judge_credits`` were computed under it
        (a credit it cannot give is an input error), and every reader-side rate (heat maps,
        divergent pairs, groups, leave-one-reader-out) credits and counts a tied vote by it.
        A rule that draws (``random``) draws each tied vote's credit once, from ``rng``.

    Returns
    -------
    ReaderAnalysis

    Raises
    ------
    InputError
        Missing required columns, bad ``y`` or credit values, an unknown linkage, a reader
        in several groups.
    """
    votes = check_votes(votes)
    check_linkage(linkage)
    credits = check_judge_credits(judge_credits, tie_rule) if judge_credits is not None else None
    generator, seed = resolve_rng(rng)
    # the tie draws get their own stream: the permutation tests' draws do not depend on the rule
    votes = credited_votes(votes, tie_rule, generator.spawn(1)[0])
    crits, missing = criteria_and_overall(votes)
    wide = None if missing else wide_votes(votes, crits, HUMAN_OVERALL)  # read by the weights and the kappas
    weights = reader_weights(votes, wide=wide)
    kappas = reader_kappas(votes, wide=wide)
    return ReaderAnalysis(
        weights=weights,
        kappas=kappas,
        clustering=cluster_readers(votes, weights, kappas, linkage=linkage),
        rates=reader_rates(
            votes,
            credits,
            glmm_estimates=glmm_estimates,
            fit_glmm_if_missing=fit_glmm_if_missing,
            pools=pools,
            tie_rule=tie_rule,
        ),
        divergent_pairs=divergent_pairs(votes, credits, top_k=top_k_pairs, stories=stories, tie_rule=tie_rule),
        timing=annotation_timing(
            votes, seconds_cap=seconds_cap, fast_reader_factor=fast_reader_factor, pools=pools, tie_rule=tie_rule
        ),
        position_bias=position_bias(votes),
        groups=reader_groups(votes, rng=generator, pools=pools, tie_rule=tie_rule),
        n_readers=int(votes["reader_id"].nunique()),
        n_pairs=int(votes["pair_id"].nunique()),
        n_votes=len(votes),
        linkage=linkage,
        seed=seed,
    )


__all__ = ["ReaderAnalysis", "analyse_readers", "SUB_RESULTS", "COMPUTED"]
