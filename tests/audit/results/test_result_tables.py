"""audit/results/tables.py: the typed agreement, reader baseline and judge pairs of a result, written
to result.json as the frames they were before they were typed, and read back as typed tables."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.core.serialize import from_jsonable, to_jsonable
from judge_transfer_audit.results.tables import JUDGE_PAIR_COLUMNS, AgreementRows, BaselineRows, JudgePairs
from judge_transfer_audit.statistics.agreement import AgreementRow, BaselineRow, agreement_table, reader_baseline


def _votes(seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(12):
        for r in range(5):
            rows.append(
                {
                    "pair_id": f"p{p}",
                    "reader_id": f"r{r}",
                    "matchup": "A-B" if p < 6 else "A-C",
                    "criterion": "overall",
                    "y": float(rng.choice([0.0, 1.0, np.nan], p=[0.4, 0.5, 0.1])),
                }
            )
    return pd.DataFrame(rows)


def _choices(votes: pd.DataFrame) -> pd.DataFrame:
    pairs = votes[["pair_id", "criterion"]].drop_duplicates()
    return pairs.assign(y_judge=[1.0 if i % 3 else 0.0 for i in range(len(pairs))])


def _round_trip(table):
    return from_jsonable(type(table), json.loads(json.dumps(to_jsonable(table), allow_nan=False)))


def test_agreement_rows_are_the_agreement_table_and_round_trip():
    table = agreement_table(_votes())
    rows = AgreementRows(table.rows)
    pd.testing.assert_frame_equal(rows.to_frame(), table.to_frame())  # the frame the result always had
    assert to_jsonable(rows) == to_jsonable(table.to_frame())  # the JSON is unchanged
    back = _round_trip(rows)
    assert type(back) is AgreementRows and all(isinstance(r, AgreementRow) for r in back.rows)
    pd.testing.assert_frame_equal(back.to_frame(), rows.to_frame())
    assert back.row("all", "overall").n_votes == table.row("all", "overall").n_votes


def test_baseline_rows_are_the_reader_baseline_and_round_trip():
    votes = _votes()
    baseline = reader_baseline(votes, _choices(votes))
    rows = BaselineRows(baseline.rows)
    pd.testing.assert_frame_equal(rows.to_frame(), baseline.to_frame())
    assert to_jsonable(rows) == to_jsonable(baseline.to_frame())
    back = _round_trip(rows)
    assert type(back) is BaselineRows and all(isinstance(r, BaselineRow) for r in back.rows)
    pd.testing.assert_frame_equal(back.to_frame(), rows.to_frame())
    assert len(back) == len(baseline.rows)


def test_a_table_with_other_columns_is_refused_with_the_columns_named():
    data = to_jsonable(AgreementRows(agreement_table(_votes()).rows))
    data["columns"] = [c for c in data["columns"] if c != "krippendorff_alpha"] + ["alpha"]
    with pytest.raises(ValueError, match=r"missing krippendorff_alpha.*unknown alpha"):
        from_jsonable(AgreementRows, data)
    with pytest.raises(TypeError, match="written as a table"):
        from_jsonable(BaselineRows, [1, 2])


def _pairs_frame() -> pd.DataFrame:
    return pd.DataFrame(
        [
            ["p1", "A-B", "A", "B", "overall", "j1", 7.0, 5.0, "win", 1.0],
            ["p1", "A-B", "A", "B", "overall", "j2", 5.0, 5.0, "tie", 0.5],
            ["p2", "A-B", "A", "B", "overall", "j1", np.nan, 4.0, "invalid", np.nan],
        ],
        columns=list(JUDGE_PAIR_COLUMNS),
    )


def test_judge_pairs_keep_the_frame_and_round_trip():
    pairs = JudgePairs(_pairs_frame())
    assert pairs.judges() == ("j1", "j2") and len(pairs) == 3
    frame = pairs.to_frame()
    frame.loc[0, "credit"] = 0.0  # a copy: the result does not change under the user
    assert pairs.to_frame().loc[0, "credit"] == 1.0
    assert to_jsonable(pairs) == to_jsonable(_pairs_frame())
    back = _round_trip(pairs)
    assert back == pairs and type(back) is JudgePairs
    assert JudgePairs() == JudgePairs(pd.DataFrame(columns=list(JUDGE_PAIR_COLUMNS)))


def test_judge_pairs_with_other_columns_are_refused():
    with pytest.raises(ValueError, match="JudgePairs columns are"):
        JudgePairs(_pairs_frame().drop(columns="outcome"))
    with pytest.raises(TypeError, match="holds a DataFrame"):
        JudgePairs([1, 2])  # type: ignore[arg-type]
