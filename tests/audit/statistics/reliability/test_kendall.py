"""Kendall's W against base R friedman.test (tests/reference/kendall_w)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.core.serialize import from_jsonable, to_jsonable
from judge_transfer_audit.statistics.reliability.kendall import KendallW, kendall_w

REF = Path(__file__).parents[3] / "reference" / "kendall_w"


def reference():
    return pd.read_csv(REF / "reference.csv")


@pytest.mark.parametrize(
    "quantity, field, tol", [("w", "w", 1e-12), ("chi2", "chi2", 1e-10), ("df", "df", 0), ("p", "p", 1e-10)]
)
def test_matches_friedman_test(quantity, field, tol):
    ref = reference()
    ref = ref[ref.quantity == quantity]
    assert len(ref) == 4
    for row in ref.itertuples():
        got = getattr(kendall_w(pd.read_csv(REF / f"input_{row.dataset}.csv")), field)
        assert got == pytest.approx(row.value, abs=tol, rel=1e-10), row.dataset


def test_ties_detected_and_correction_raises_w():
    tied = kendall_w(pd.read_csv(REF / "input_likert_ties_15x5.csv"))
    assert tied.n_tied_groups > 0 and tied.w > tied.w_uncorrected
    plain = kendall_w(pd.read_csv(REF / "input_continuous_10x4.csv"))
    assert plain.n_tied_groups == 0 and plain.w == pytest.approx(plain.w_uncorrected)


def test_perfect_concordance_is_one():
    x = np.tile(np.arange(6.0)[:, None], (1, 4))
    assert kendall_w(x).w == pytest.approx(1.0)


def test_incomplete_objects_left_out_and_degenerate():
    x = pd.read_csv(REF / "input_continuous_10x4.csv")
    x.iloc[2, 1] = np.nan
    result = kendall_w(x)
    assert result.n_objects == 9 and result.n_objects_excluded == 1
    assert "same score" in kendall_w(np.ones((4, 3))).reason


def test_round_trip():
    result = kendall_w(pd.read_csv(REF / "input_likert_ties_8x16.csv"))
    assert from_jsonable(KendallW, json.loads(json.dumps(to_jsonable(result)))) == result


@pytest.mark.r
def test_live_rerun_of_friedman_reproduces_stored_reference(tmp_path):
    if shutil.which("Rscript") is None:
        pytest.skip("Rscript not on PATH")
    for f in REF.glob("input_*.csv"):
        shutil.copy(f, tmp_path)
    shutil.copy(REF / "make_reference.R", tmp_path)
    subprocess.run(["Rscript", "make_reference.R"], cwd=tmp_path, check=True, capture_output=True)
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "reference.csv"), reference())
