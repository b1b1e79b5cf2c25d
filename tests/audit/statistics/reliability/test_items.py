"""Per-item alpha and W: the array path equals the validated single-item functions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.statistics.reliability.cronbach import cronbach_alpha
from judge_transfer_audit.statistics.reliability.items import item_reliability
from judge_transfer_audit.statistics.reliability.kendall import kendall_w
from judge_transfer_audit.statistics.reliability.ratings import validate_ratings


def ratings(seed=0, n_items=40, n_readers=5, n_questions=6):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        quality = rng.normal()
        for r in range(n_readers):
            for q in range(n_questions):
                rows.append(
                    dict(
                        item_id=f"t{i}",
                        reader_id=f"r{r}",
                        criterion=f"Q{q}",
                        rating=str(int(np.clip(np.round(3 + quality + rng.normal()), 1, 5))),
                    )
                )
    return pd.DataFrame(rows)


def test_array_path_equals_single_item_functions():
    raw = ratings()
    raw.loc[(raw.item_id == "t1") & (raw.reader_id == "r2") & (raw.criterion == "Q3"), "rating"] = ""  # one hole
    raw = raw[~((raw.item_id == "t2") & (raw.reader_id == "r4"))]  # a reader skipped an item
    raw = raw[~((raw.item_id == "t3") & (raw.criterion == "Q5"))]  # an item lacks a question
    raw.loc[raw.item_id == "t4", "rating"] = "3"  # constant item: alpha undefined
    data = validate_ratings(raw)
    fast = pd.DataFrame(item_reliability(data, "all", 0.9))
    slow = pd.DataFrame(item_reliability(data, "all", 0.9, batch=False))
    pd.testing.assert_frame_equal(fast, slow, check_exact=False, rtol=1e-10, atol=1e-12)
    assert fast["item_id"].tolist() == [f"t{i}" for i in range(40)]
    row = fast.set_index("item_id")
    assert row.loc["t2", "n_readers"] == 4 and row.loc["t3", "n_questions"] == 5 and row.loc["t1", "n_missing"] == 1
    assert np.isnan(row.loc["t4", "cronbach_alpha"]) and "zero" in row.loc["t4", "reason"]


def test_complete_item_equals_the_validated_functions_directly():
    data = validate_ratings(ratings(seed=3, n_items=5))
    fast = pd.DataFrame(item_reliability(data, "g", 0.95)).set_index("item_id")
    one = data[data.item_id == "t2"].pivot(index="reader_id", columns="criterion", values="rating")
    ca, w = cronbach_alpha(one), kendall_w(one.T)
    assert fast.loc["t2", "cronbach_alpha"] == pytest.approx(ca.alpha, rel=1e-12)
    assert (fast.loc["t2", "ci_low"], fast.loc["t2", "ci_high"]) == pytest.approx((ca.ci_low, ca.ci_high), rel=1e-12)
    assert fast.loc["t2", "kendall_w"] == pytest.approx(w.w, rel=1e-12)
    assert fast.loc["t2", "kendall_p"] == pytest.approx(w.p, rel=1e-10)
    assert (fast["reader_group"] == "g").all()
