"""How sure are we: cluster bootstraps, leave-one-reader-out, multiplicity, coverage.

Public API (see docs/uncertainty.md):

* :func:`cluster_bootstrap` -- pairs / readers / two-way cluster bootstrap of every cell.
* :func:`leave_one_reader_out` -- every cell (and the pooled aggregate) without each reader.
* :func:`significance_tally` -- significant cells per method, with Holm / BH options.
* :func:`judge_configuration_rates` -- judge rates per configuration; does the skew survive?
* :func:`parametric_bootstrap` -- GLMM parametric bootstrap (like lme4's ``bootMer``).
"""

from audit.uncertainty.bootstrap import BootstrapResult, cluster_bootstrap

__all__ = ["BootstrapResult", "cluster_bootstrap"]
