"""Who the readers are: reader heterogeneity, dimension weights, clustering, heat-map rates,
divergent pairs and annotation diagnostics (docs/readers.md).

Entry points: :func:`analyse_readers` (every analysis in one :class:`ReaderAnalysis`) and
:func:`reader_checks` (the ``readers.*`` checks).
"""

from audit.readers.analysis import ReaderAnalysis, analyse_readers
from audit.readers.clustering import Dendrogram, ReaderClustering, cluster_readers
from audit.readers.divergence import DivergentPair, DivergentPairs, ReaderComment, divergent_pairs
from audit.readers.firth import LogisticFit, fit_logistic
from audit.readers.groups import ReaderGroups, reader_groups
from audit.readers.policy import ReaderThresholds, reader_checks
from audit.readers.position import PositionBias, position_bias
from audit.readers.rates import ReaderRates, reader_rates
from audit.readers.timing import AnnotationTiming, annotation_timing, leave_one_reader_out
from audit.readers.weights import ReaderKappas, ReaderWeights, cohens_kappa, reader_kappas, reader_weights

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
