"""ICC against psych::ICC (tests/reference/icc) and the published Shrout & Fleiss example."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.core.serialize import from_jsonable, to_jsonable
from judge_transfer_audit.statistics.reliability.icc import ICCResult, icc, icc_from_matrix

REF = Path(__file__).parents[3] / "reference" / "icc"
QUANTITY_FIELD = {
    "ICC": "icc",
    "F": "f",
    "df1": "df1",
    "df2": "df2",
    "p": "p",
    "lower bound": "ci_low",
    "upper bound": "ci_high",
}
# Closed forms: agreement to rounding; p and F-quantile-based bounds: scipy vs R quantiles.
TOLERANCE = {"ICC": 1e-12, "F": 1e-10, "df1": 0, "df2": 0, "p": 1e-10, "lower bound": 1e-9, "upper bound": 1e-9}


def reference():
    return pd.read_csv(REF / "reference.csv")


def ours(dataset):
    return icc_from_matrix(pd.read_csv(REF / f"input_{dataset}.csv").to_numpy())


@pytest.mark.parametrize("quantity", list(QUANTITY_FIELD))
def test_matches_psych_icc(quantity):
    ref = reference()
    ref = ref[ref.quantity == quantity]
    assert len(ref) == 30
    for dataset, sub in ref.groupby("dataset"):
        result = ours(dataset)
        for row in sub.itertuples():
            got = getattr(result.get(row.type), QUANTITY_FIELD[quantity])
            assert got == pytest.approx(row.value, abs=TOLERANCE[quantity], rel=1e-9), (dataset, row.type)


def test_shrout_fleiss_published_values():
    """Shrout & Fleiss (1979), Psychological Bulletin 86:420-428, Table 4 (two decimals)."""
    result = ours("shrout_fleiss")
    published = {"ICC1": 0.17, "ICC2": 0.29, "ICC3": 0.71, "ICC1k": 0.44, "ICC2k": 0.62, "ICC3k": 0.91}
    for t, v in published.items():
        assert result.get(t).icc == pytest.approx(v, abs=0.005)


def test_long_frame_leaves_out_incomplete_targets():
    x = pd.read_csv(REF / "input_likert_20x5.csv")
    long = x.rename_axis("item_id").reset_index().melt(id_vars="item_id", var_name="reader_id", value_name="rating")
    long.loc[(long.item_id == 3) & (long.reader_id == "r2"), "rating"] = np.nan
    long = long[~((long.item_id == 7) & (long.reader_id == "r5"))]
    result = icc(long)
    assert result.n_targets == 18 and result.n_targets_excluded == 2
    expected = icc_from_matrix(x.drop(index=[3, 7]).to_numpy())
    assert result.get("ICC2k").icc == pytest.approx(expected.get("ICC2k").icc)


def test_degenerate_inputs_are_values_not_crashes():
    assert np.isnan(icc_from_matrix(np.ones((5, 3))).get("ICC1").icc)
    assert "at least 2" in icc_from_matrix(np.ones((1, 3))).reason


def test_round_trip():
    result = ours("likert_20x5")
    back = from_jsonable(ICCResult, json.loads(json.dumps(to_jsonable(result))))
    assert back == result
    assert "ICC3k" in str(result)


@pytest.mark.r
def test_live_rerun_of_psych_reproduces_stored_reference(tmp_path):
    if shutil.which("Rscript") is None:
        pytest.skip("Rscript not on PATH")
    for f in REF.glob("input_*.csv"):
        shutil.copy(f, tmp_path)
    shutil.copy(REF / "make_reference.R", tmp_path)
    subprocess.run(["Rscript", "make_reference.R"], cwd=tmp_path, check=True, capture_output=True)
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "reference.csv"), reference())


def test_icc_invariant_to_target_and_rater_order():
    rng = np.random.default_rng(3)
    x = pd.read_csv(REF / "input_likert_20x5.csv").to_numpy()
    a = icc_from_matrix(x).to_frame()
    b = icc_from_matrix(x[rng.permutation(20)][:, rng.permutation(5)]).to_frame()
    pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=1e-10)
