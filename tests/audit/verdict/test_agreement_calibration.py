"""The agreement decision's calibration, small (marker ``slow``; the full table is
benchmarks/agreement_decision_calibration.py, docs/agreement.md)."""

from __future__ import annotations

import pytest

from judge_transfer_audit.verdict.agreement_calibration import ALIGNED, calibrate

pytestmark = pytest.mark.slow


def test_the_coin_fails_and_the_judges_that_follow_the_readers_do_not():
    table = calibrate(designs=((7, 60),), studies=12, seed=11, n_boot=199).set_index("judge")
    for judge in ALIGNED:
        assert table.loc[judge, "any_fail"] <= 1 / 12, judge  # at most one false FAIL in 12 studies
    for judge in ("coin", "biased", "wrong-side"):
        assert table.loc[judge, "study_fail"] >= 10 / 12, judge
    assert table.loc["majority", "study_pass"] >= 10 / 12
