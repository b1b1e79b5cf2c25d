"""Surface-feature detectors: a registry of named, versioned text detectors.

``compute_features(stories) -> FeatureTable`` runs them (length, sentences, lexical, and
perplexity when a language model is configured) with an on-disk cache. See docs/detectors.md.
"""

from judge_transfer_audit.detectors import length, lexical, sentences  # noqa: F401  (register the detectors)
from judge_transfer_audit.detectors.base import DEFAULT_DETECTORS, DETECTORS, Detector
from judge_transfer_audit.detectors.features import DetectorRecord, DetectorRun, FeatureTable, compute_features
from judge_transfer_audit.detectors.perplexity import PerplexityConfig, make_perplexity_detector

__all__ = [
    "DETECTORS",
    "DEFAULT_DETECTORS",
    "Detector",
    "DetectorRecord",
    "DetectorRun",
    "FeatureTable",
    "PerplexityConfig",
    "compute_features",
    "make_perplexity_detector",
]
