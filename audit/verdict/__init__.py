"""The verdict: does the judge reproduce the humans, cell by cell, and overall?

Modules (docs/audit.md, sections 4 and 6, says what each computes and why):

* :mod:`~judge_transfer_audit.verdict.tables` -- a cell's compared pairs as pair x reader tables
* :mod:`~judge_transfer_audit.statistics.estimands` -- the judge's rate J, the vote share V, the majority rate M
* :mod:`~judge_transfer_audit.verdict.paired_bootstrap` -- their joint paired bootstrap (pairs + reader shift)
* :mod:`~judge_transfer_audit.verdict.intervals` -- intervals and p-values read from the replicates
* :mod:`~judge_transfer_audit.verdict.compare` -- one cell: INSUFFICIENT / ERROR, or its tests
* :mod:`~judge_transfer_audit.verdict.decision` -- PASS / FAIL / INCONCLUSIVE with the multiplicity adjustment
* :mod:`~judge_transfer_audit.verdict.assess` -- the entry point the pipeline calls
* :mod:`~judge_transfer_audit.verdict.degenerate` -- degenerate GLMM fits
* :mod:`~judge_transfer_audit.verdict.checks` -- the checks, cell counts and the verdict sentence
* :mod:`~judge_transfer_audit.verdict.simulate`, :mod:`~judge_transfer_audit.verdict.calibration` -- the calibration
study
"""

from judge_transfer_audit.verdict.assess import assess_transfers
from judge_transfer_audit.verdict.checks import (
    cell_checks,
    cell_counts,
    overall_status,
    summary_checks,
    verdict_sentence,
)

__all__ = ["assess_transfers", "cell_checks", "cell_counts", "overall_status", "summary_checks", "verdict_sentence"]
