"""judge_transfer_audit.verdict.hierarchy_study: the raw-p line under a row (what a rule deciding a cell on its own
evidence could reach)."""

from __future__ import annotations

import numpy as np

from judge_transfer_audit.verdict.hierarchy_study import raw_p_line


def test_the_raw_p_line_counts_the_far_cells_below_each_level():
    far_p = np.array([0.2, 0.04, 0.004, 0.0004, 1e-6, np.nan, 0.06, 0.03])
    line = raw_p_line({"far_p": far_p, "cells_per_study": 90, "matchups_per_study": 10}, 0.05)
    # below 0.05: 0.04, 0.004, 0.0004, 1e-6, 0.03 (5 of 8; NaN counts as not below); below 0.005: 3;
    # below 0.05 / 90: 2
    assert "(n = 8)" in line
    assert "< alpha (0.05) 0.625 ± 0.171" in line
    assert "< alpha/matchups (0.005) 0.375 ± 0.171" in line
    assert "< alpha/cells (0.00056) 0.250 ± 0.153" in line
