"""Surface features against judge scores and human preferences (paper 002, Appendix C).

``surface_associations(features, judge_scores, pairs, votes) -> SurfaceResult`` and
``surface_checks(result, thresholds) -> list[Check]``. See docs/detectors.md.
"""

from judge_transfer_audit.statistics.surface.associations import POOLED, SurfaceResult, surface_associations
from judge_transfer_audit.statistics.surface.checks import DEFAULT_SURFACE_THRESHOLDS, surface_checks

__all__ = ["POOLED", "SurfaceResult", "surface_associations", "surface_checks", "DEFAULT_SURFACE_THRESHOLDS"]
