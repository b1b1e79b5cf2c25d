"""Surface features against judge scores and human preferences (paper 002, Appendix C).

``surface_associations(features, judge_scores, pairs, votes) -> SurfaceResult`` and
``surface_checks(result, thresholds) -> list[Check]``. See docs/detectors.md.
"""

from audit.surface.associations import POOLED, SurfaceResult, surface_associations
from audit.surface.checks import DEFAULT_SURFACE_THRESHOLDS, surface_checks

__all__ = ["POOLED", "SurfaceResult", "surface_associations", "surface_checks", "DEFAULT_SURFACE_THRESHOLDS"]
