"""How sure are we: cluster bootstraps, leave-one-reader-out, multiplicity, coverage.

Public API (see docs/uncertainty.md):

* :func:`cluster_bootstrap` -- pairs / readers / two-way cluster bootstrap of every cell.
* :func:`leave_one_reader_out` -- every cell (and the pooled aggregate) without each reader.
* :func:`significance_tally` -- significant cells per method, with Holm / BH options.
* :func:`judge_configuration_rates` -- judge rates per configuration; does the skew survive?
* :func:`parametric_bootstrap` -- GLMM parametric bootstrap (like lme4's ``bootMer``).
* :func:`glmm_cells` -- the crossed GLMM of every cell, as one tidy frame.
"""

from judge_transfer_audit.statistics.uncertainty.bootstrap import BootstrapResult, cluster_bootstrap
from judge_transfer_audit.statistics.uncertainty.glmm_cells import glmm_cells
from judge_transfer_audit.statistics.uncertainty.judge_configs import JudgeConfigRates, judge_configuration_rates
from judge_transfer_audit.statistics.uncertainty.loro import LoroResult, leave_one_reader_out
from judge_transfer_audit.statistics.uncertainty.multiplicity import (
    SignificanceTally,
    benjamini_hochberg,
    holm,
    significance_tally,
)

__all__ = [
    "BootstrapResult",
    "cluster_bootstrap",
    "glmm_cells",
    "JudgeConfigRates",
    "judge_configuration_rates",
    "LoroResult",
    "leave_one_reader_out",
    "SignificanceTally",
    "significance_tally",
    "holm",
    "benjamini_hochberg",
]
