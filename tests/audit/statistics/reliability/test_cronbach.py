"""Cronbach's alpha against psych::alpha (tests/reference/cronbach)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.core.serialize import from_jsonable, to_jsonable
from judge_transfer_audit.statistics.reliability.cronbach import CronbachAlpha, cronbach_alpha

REF = Path(__file__).parents[3] / "reference" / "cronbach"


def reference():
    return pd.read_csv(REF / "reference.csv")


def ours(dataset):
    return cronbach_alpha(pd.read_csv(REF / f"input_{dataset}.csv"))


@pytest.mark.parametrize(
    "quantity, field, tol",
    [
        ("raw_alpha", "alpha", 1e-12),
        ("std_alpha", "std_alpha", 1e-12),
        ("feldt_lower", "ci_low", 1e-9),  # F quantiles: scipy vs R
        ("feldt_upper", "ci_high", 1e-9),
    ],
)
def test_matches_psych_alpha(quantity, field, tol):
    ref = reference()
    ref = ref[ref.quantity == quantity]
    assert len(ref) == 5
    for row in ref.itertuples():
        assert getattr(ours(row.dataset), field) == pytest.approx(row.value, abs=tol), row.dataset


def test_alpha_if_dropped_matches_psych():
    ref = reference()
    ref = ref[ref.quantity.str.startswith("drop_")]
    for dataset, sub in ref.groupby("dataset"):
        dropped = ours(dataset).item_dropped.set_index("variable")["alpha_if_dropped"]
        for row in sub.itertuples():
            assert dropped[row.quantity.removeprefix("drop_")] == pytest.approx(row.value, abs=1e-12)


def test_missing_cells_counted_and_empty_rows_dropped():
    x = pd.read_csv(REF / "input_scale_missing_50x5.csv")
    with_empty = pd.concat([x, pd.DataFrame([[np.nan] * 5], columns=x.columns)], ignore_index=True)
    result = cronbach_alpha(with_empty)
    assert result.n_observations == 50 and result.n_observations_excluded == 1
    assert result.n_missing == int(x.isna().sum().sum()) > 0
    assert result.alpha == pytest.approx(ours("scale_missing_50x5").alpha)


def test_degenerate_inputs():
    assert "at least 2" in cronbach_alpha(np.ones((4, 1))).reason
    assert np.isnan(cronbach_alpha(np.ones((4, 3))).alpha)


def test_round_trip():
    result = ours("scale_60x6")
    back = from_jsonable(CronbachAlpha, json.loads(json.dumps(to_jsonable(result))))
    assert back.to_frame().equals(result.to_frame())
    pd.testing.assert_frame_equal(back.item_dropped, result.item_dropped)


@pytest.mark.r
def test_live_rerun_of_psych_reproduces_stored_reference(tmp_path):
    if shutil.which("Rscript") is None:
        pytest.skip("Rscript not on PATH")
    for f in REF.glob("input_*.csv"):
        shutil.copy(f, tmp_path)
    shutil.copy(REF / "make_reference.R", tmp_path)
    subprocess.run(["Rscript", "make_reference.R"], cwd=tmp_path, check=True, capture_output=True)
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "reference.csv"), reference())


def test_constant_total_with_rounding_error_is_undefined_not_huge():
    """x2 = 0.3 - x1: the total is constant but its variance comes out ~1e-17, and the
    alpha formula would return about -1e15 instead of "undefined"."""
    x = np.array([[0.1, 0.2], [0.2, 0.1], [0.3, 0.0], [0.7, -0.4]])
    result = cronbach_alpha(x)
    assert np.isnan(result.alpha) and "zero" in result.reason
