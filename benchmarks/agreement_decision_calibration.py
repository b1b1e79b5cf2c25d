"""Calibration of the agreement decision: prints the table of docs/agreement.md ("Calibration").

    python benchmarks/agreement_decision_calibration.py --studies 100 --designs 7x20,7x60
    python benchmarks/agreement_decision_calibration.py --studies 100 --designs 7x60 --panel weak
    python benchmarks/agreement_decision_calibration.py --studies 100 --designs paper,ties
    python benchmarks/agreement_decision_calibration.py --studies 60 --designs 150x12
    python benchmarks/agreement_decision_calibration.py --studies 40 --designs 90cells
    python benchmarks/agreement_decision_calibration.py --studies 40 --designs arena5k
    python benchmarks/agreement_decision_calibration.py --studies 20 --designs arena50k
    python benchmarks/agreement_decision_calibration.py --studies 1000 --designs paper --judges reader-like --margin 0

Per design (readers x pairs per matchup x 3 matchups) and judge kind: the share of studies whose
study-level agreement decision FAILs (with the count), FAILs at any level, the share of cells
FAILed and the share of studies PASSed, each with its binomial standard error
(:mod:`judge_transfer_audit.verdict.agreement_calibration`). The named designs (paper, 150x12, ties, 90cells, arena5k,
arena50k: :data:`judge_transfer_audit.verdict.agreement_calibration.STUDY_DESIGNS`) add the share of matchups FAILed.
"""

from __future__ import annotations

import sys

from judge_transfer_audit.verdict.agreement_calibration import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
