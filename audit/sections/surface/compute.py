"""The surface-feature section: which features of the texts the judge's scores track
(:func:`judge_transfer_audit.statistics.surface.surface_associations`) (its checks: checks.py)."""

from __future__ import annotations

import numpy as np

from judge_transfer_audit.model.section_result import Section, Skipped
from judge_transfer_audit.sections._guard import guarded, int_seed, n_boot_of

NAME = "surface"


def compute(data, spec, *, primary: str | None, seed: np.random.SeedSequence) -> Section:
    """``Section[SurfaceResult]``: Skipped without the stories or without judge scores."""
    if data.stories is None:
        return Skipped("no stories given (--stories): surface features need the texts")
    if data.judge_scores is None:
        return Skipped("the judge gives pairwise verdicts, not scores: no score-feature association")
    from judge_transfer_audit.detectors import compute_features
    from judge_transfer_audit.statistics.surface import surface_associations

    n_boot = n_boot_of(spec)

    def run():
        features = compute_features(data.stories, perplexity=_perplexity_config(spec), cache=spec.features_cache)
        if spec.timings is not None:  # seconds and cache use: timings.json, not the result
            spec.timings.detector_runs(features.detectors)
        return surface_associations(
            features, data.judge_scores, data.pairs, data.votes, judge=primary, n_boot=n_boot, rng=int_seed(seed)
        )

    return guarded(run, "surface features")


def _perplexity_config(spec):
    return spec.perplexity if spec.perplexity is not None and spec.perplexity.configured else None
