"""Who the readers are: reader heterogeneity, dimension weights, clustering, heat-map rates,
divergent pairs and annotation diagnostics (docs/readers.md).

Entry points: :func:`analyse_readers` (every analysis in one :class:`ReaderAnalysis`) and
:func:`reader_checks` (the ``readers.*`` checks).
"""

from judge_transfer_audit.statistics.readers.analysis import ReaderAnalysis, analyse_readers
from judge_transfer_audit.statistics.readers.clustering import Dendrogram, ReaderClustering, cluster_readers
from judge_transfer_audit.statistics.readers.divergence import (
    DivergentPair,
    DivergentPairs,
    ReaderComment,
    divergent_pairs,
)
from judge_transfer_audit.statistics.readers.firth import LogisticFit, fit_logistic
from judge_transfer_audit.statistics.readers.groups import ReaderGroups, reader_groups
from judge_transfer_audit.statistics.readers.policy import ReaderThresholds, reader_checks
from judge_transfer_audit.statistics.readers.position import PositionBias, position_bias
from judge_transfer_audit.statistics.readers.rates import ReaderRates, reader_rates
from judge_transfer_audit.statistics.readers.timing import AnnotationTiming, annotation_timing, leave_one_reader_out
from judge_transfer_audit.statistics.readers.weights import (
    ReaderKappas,
    ReaderWeights,
    cohens_kappa,
    reader_kappas,
    reader_weights,
)

__all__ = [
    "AnnotationTiming",
    "Dendrogram",
    "DivergentPair",
    "DivergentPairs",
    "LogisticFit",
    "PositionBias",
    "ReaderAnalysis",
    "ReaderClustering",
    "ReaderComment",
    "ReaderGroups",
    "ReaderKappas",
    "ReaderRates",
    "ReaderThresholds",
    "ReaderWeights",
    "analyse_readers",
    "annotation_timing",
    "cluster_readers",
    "cohens_kappa",
    "divergent_pairs",
    "fit_logistic",
    "leave_one_reader_out",
    "position_bias",
    "reader_checks",
    "reader_groups",
    "reader_kappas",
    "reader_rates",
    "reader_weights",
]
