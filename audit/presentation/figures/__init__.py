"""Report figures: each function takes tidy frames plus labels and returns inline SVG.

Figure functions never compute statistics (they draw what the result holds) and never touch
global matplotlib state; see :mod:`judge_transfer_audit.presentation.figures._svg` for the rendering guarantees
(byte-stable, inline-safe, ids prefixed per figure).
"""

from judge_transfer_audit.presentation.figures._svg import UnsafeSvgError, empty_svg, figure_to_svg, verify_svg
from judge_transfer_audit.presentation.figures.bootstrap import bootstrap_comparison_svg
from judge_transfer_audit.presentation.figures.clusters import ClusterPanel, cluster_heatmap_svg
from judge_transfer_audit.presentation.figures.dendrogram import DendrogramPanel, dendrogram_svg
from judge_transfer_audit.presentation.figures.distance_map import distance_map_svg
from judge_transfer_audit.presentation.figures.heatmap import reader_heatmap_svg
from judge_transfer_audit.presentation.figures.loro import loro_shift_svg
from judge_transfer_audit.presentation.figures.preference import preference_svg
from judge_transfer_audit.presentation.figures.surface import feature_scatter_svg
from judge_transfer_audit.presentation.figures.timing import timing_svg

__all__ = [
    "ClusterPanel",
    "cluster_heatmap_svg",
    "DendrogramPanel",
    "UnsafeSvgError",
    "bootstrap_comparison_svg",
    "dendrogram_svg",
    "distance_map_svg",
    "empty_svg",
    "feature_scatter_svg",
    "figure_to_svg",
    "loro_shift_svg",
    "preference_svg",
    "reader_heatmap_svg",
    "timing_svg",
    "verify_svg",
]
