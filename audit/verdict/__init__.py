"""The verdict: does the judge reproduce the humans, cell by cell, and overall?

Modules (docs/audit.md, sections 4 and 6, says what each computes and why):

* :mod:`~audit.verdict.tables` -- a cell's compared pairs as pair x reader tables
* :mod:`~audit.verdict.estimands` -- the judge's rate J, the vote share V, the majority rate M
* :mod:`~audit.verdict.paired_bootstrap` -- their joint paired bootstrap (pairs + reader shift)
* :mod:`~audit.verdict.intervals` -- intervals and p-values read from the replicates
* :mod:`~audit.verdict.compare` -- one cell: INSUFFICIENT / ERROR, or its tests
* :mod:`~audit.verdict.decision` -- PASS / FAIL / INCONCLUSIVE with the multiplicity adjustment
* :mod:`~audit.verdict.assess` -- the entry point the pipeline calls
* :mod:`~audit.verdict.degenerate` -- degenerate GLMM fits
* :mod:`~audit.verdict.checks` -- the checks, cell counts and the verdict sentence
* :mod:`~audit.verdict.simulate`, :mod:`~audit.verdict.calibration` -- the calibration study
"""

from audit.verdict.assess import assess_transfers
from audit.verdict.checks import cell_checks, cell_counts, overall_status, summary_checks, verdict_sentence

__all__ = ["assess_transfers", "cell_checks", "cell_counts", "overall_status", "summary_checks", "verdict_sentence"]
