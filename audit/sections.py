"""The optional parts of an audit, each computed, SKIPPED or ERROR with a reason.

Each function reads the validated data and the spec and returns a
:class:`~audit.result.Section`; a missing input makes it SKIPPED (the report says why), an
:class:`~audit.errors.AuditError` inside it makes it ERROR (the rest of the audit goes on).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd

from audit.checks import Check, Status
from audit.errors import AuditError
from audit.policy import Policy
from audit.result import Section

SectionFn = Callable[[], object]


def not_requested(flag: str) -> Section:
    return Section(Status.SKIPPED, f"not requested ({flag})")


def _guarded(compute: SectionFn, what: str) -> Section:
    try:
        payload = compute()
    except AuditError as exc:
        return Section(Status.ERROR, f"{what} could not be computed: {exc}")
    return Section(Status.PASS, "", payload)


def judge_credits(outcomes: pd.DataFrame) -> pd.DataFrame:
    """The judge-credit frame the uncertainty and reader analyses read."""
    return outcomes[["pair_id", "matchup", "criterion", "judge", "credit"]].copy()


def dev_section(data, spec, seed: np.random.SeedSequence) -> Section:
    if data.dev_judge is None or data.dev_humans is None:
        return Section(Status.SKIPPED, "no development set given (--dev-judge and --dev-humans)")
    from audit.devset import dev_validity

    return _guarded(lambda: dev_validity(data.dev_judge, data.dev_humans, rng=np.random.default_rng(seed)),
                    "dev-set validity")


def uncertainty_section(data, spec, outcomes: pd.DataFrame, seed: np.random.SeedSequence) -> Section:
    from audit.uncertainty import analyse_uncertainty

    n_boot = spec.n_boot if spec.n_boot is not None else spec.policy.uncertainty.n_boot
    return _guarded(lambda: analyse_uncertainty(data.votes, judge_credits(outcomes), n_boot=n_boot,
                                                rng=np.random.default_rng(seed)), "uncertainty")


def readers_section(data, spec, outcomes: pd.DataFrame, cells, seed: np.random.SeedSequence) -> Section:
    from audit.readers import analyse_readers

    estimates = pd.DataFrame([{"matchup": c.matchup, "criterion": c.criterion, "estimate": c.human.glmm.estimate}
                              for c in cells])
    return _guarded(lambda: analyse_readers(data.votes, judge_credits(outcomes), glmm_estimates=estimates,
                                            rng=np.random.default_rng(seed)), "reader analysis")


def surface_section(data, spec, seed: np.random.SeedSequence) -> Section:
    if data.stories is None:
        return Section(Status.SKIPPED, "no stories given (--stories): surface features need the texts")
    if data.judge_scores is None:
        return Section(Status.SKIPPED, "the judge gives pairwise verdicts, not scores: no score-feature association")
    from audit.surface import surface_associations
    from detectors import compute_features

    def compute():
        features = compute_features(data.stories, perplexity=_perplexity_config(spec), cache=spec.features_cache)
        return surface_associations(features, data.judge_scores, data.pairs, data.votes,
                                    rng=np.random.default_rng(seed))

    return _guarded(compute, "surface features")


def _perplexity_config(spec):
    if spec.perplexity.model is None and spec.perplexity.url is None:
        return None
    from detectors import PerplexityConfig

    return PerplexityConfig(model=spec.perplexity.model, url=spec.perplexity.url,
                            server_model=spec.perplexity.server_model,
                            allow_download=spec.perplexity.allow_download)


def section_checks(policy: Policy, **sections: Section) -> list[Check]:
    checks: list[Check] = []
    for name, section in sections.items():
        if section.status is Status.ERROR:
            checks.append(Check(f"{name}.computed", Status.ERROR, reason=section.reason))
    return checks
