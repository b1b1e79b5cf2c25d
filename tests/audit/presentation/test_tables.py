"""judge_transfer_audit.presentation.tables.table converts only the rows and columns it shows (a case study's vote
table is 1,000 criteria wide), with the display strings of converting the whole sorted frame.

The reference below is the whole-frame conversion ``table`` did before: sort every column, take the head,
select the columns, convert. Both run on seeded frames with mixed dtypes (floats with NaN, ints, text with
missing values, booleans), ties in the sort keys, a non-default index, wide frames, a column subset in
another order, and repeated column labels.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.presentation.format import cell_value
from judge_transfer_audit.presentation.tables import MAX_TABLE_COLUMNS, table


def _reference_rows(frame, columns=None, max_rows=80, sort_by=()):
    keys = [(c, asc) for c, asc in sort_by if c in frame.columns]
    if keys and len(frame) > 1:
        frame = frame.sort_values(
            [c for c, _ in keys], ascending=[a for _, a in keys], kind="mergesort", na_position="last"
        )
    cols = [c for c in (columns or list(frame.columns)) if c in frame.columns][:MAX_TABLE_COLUMNS]
    shown = frame.head(max_rows)
    if cols != list(frame.columns) or not frame.columns.is_unique:
        shown = shown[cols]
    return [[cell_value(v) for v in row] for row in shown.to_numpy(dtype=object).tolist()]


def _frame(rng: np.random.Generator, n_rows: int, n_extra: int) -> pd.DataFrame:
    text = np.array(["a", "b", "c", None], dtype=object)
    frame = pd.DataFrame(
        {
            "score": np.where(rng.random(n_rows) < 0.2, np.nan, rng.integers(0, 4, n_rows) / 4),
            "n": rng.integers(0, 3, n_rows),
            "name": pd.Series(text[rng.integers(0, 4, n_rows)], dtype="str"),
            "flag": rng.random(n_rows) < 0.5,
        },
        index=rng.permutation(n_rows) + 100,
    )
    for k in range(n_extra):
        frame[f"x{k}"] = pd.Series(text[rng.integers(0, 4, n_rows)], dtype="str", index=frame.index)
    return frame


SORTS = [
    (),
    (("score", True),),
    (("score", False), ("n", True)),
    (("name", True), ("score", False)),
    (("flag", False), ("absent", True), ("n", False)),
]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("sort_by", SORTS)
def test_the_rows_shown_are_the_whole_frame_conversions(seed, sort_by):
    rng = np.random.default_rng(seed)
    frame = _frame(rng, n_rows=int(rng.integers(0, 120)), n_extra=[0, 3, 60][seed % 3])
    for max_rows in (1, 7, 80, 500):
        for columns in (None, ["name", "absent", "score"], ["x2", "n", "flag"] if "x2" in frame else None):
            got = table(frame, columns=columns, max_rows=max_rows, sort_by=sort_by)
            assert got["rows"] == _reference_rows(frame, columns, max_rows, sort_by)
            assert got["truncated"] == max(0, len(frame) - max_rows)


def test_repeated_column_labels_take_the_whole_frame_path():
    frame = pd.DataFrame([[2, "x", 0.5], [1, "y", np.nan], [1, None, 0.25]], columns=["n", "v", "v"])
    for sort_by in ((), (("n", False),)):
        assert table(frame, sort_by=sort_by)["rows"] == _reference_rows(frame, sort_by=sort_by)
    with pytest.raises(ValueError):  # sorting on a repeated label is refused, as before
        table(frame, sort_by=(("v", True),))


def test_the_reference_sees_a_wrong_order():
    """The comparison can fail: the unsorted rows differ from the sorted ones on these frames."""
    frame = _frame(np.random.default_rng(1), 50, 2)
    assert table(frame)["rows"] != _reference_rows(frame, sort_by=(("score", True),))
