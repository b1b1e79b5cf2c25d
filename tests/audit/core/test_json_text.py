"""judge_transfer_audit.core.json_text.dumps_indented writes json.dumps's indented text byte for byte, and
write_indented_items hands the same text to a file in bounded pieces."""

from __future__ import annotations

import contextlib
import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judge_transfer_audit.core import json_text
from judge_transfer_audit.core.json_text import dumps_indented, dumps_indented_items, write_indented_items
from judge_transfer_audit.core.serialize import _float_out, to_jsonable

# strings with the characters the table fast path splits on: brackets, commas, newlines, quotes, spaces
_text = st.text(alphabet=st.sampled_from(list('ab[],\n\t "\\{}:é') + ["\u2028"]), max_size=8)
_scalar = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False), _text
)
_row = st.lists(_scalar, min_size=0, max_size=5)
_json = st.recursive(
    _scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(_text, inner, max_size=4),
        st.lists(_row, max_size=4),  # frame data: lists of flat rows (empty rows included)
    ),
    max_leaves=30,
)


def _reference(data, indent):
    return json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False)


@settings(max_examples=400, deadline=None)
@given(_json, st.sampled_from([1, 2, 4]))
@pytest.mark.slow
def test_same_text_as_json_dumps(data, indent):
    assert dumps_indented(data, indent) == _reference(data, indent)


def test_tables_rows_and_nesting():
    cases = [
        [[1, 2]],
        [[1], ["a],\n  [", 2.5], [None, True, "]"]],
        {"data": [[1, "x"], [2, "y"]], "empty": [], "nested": {"rows": [[0.1], [1e300]]}},
        [[1, 2], []],  # an empty row: not the table path
        [[1, [2]]],
        [],
        {},
        "top",
        3.5,
    ]
    for data in cases:
        assert dumps_indented(data, 1) == _reference(data, 1)


def test_non_json_values_and_nan_raise_like_json():
    with pytest.raises(ValueError):
        dumps_indented({"x": [[math.nan, 1]]})
    with pytest.raises(TypeError):
        dumps_indented({"x": [object()]})


def test_frame_columns_as_value_by_value():
    frame = pd.DataFrame(
        {
            "f": [0.1, math.nan, math.inf, -math.inf],
            "f32": np.array([0.1, 2.0, math.nan, 1.5], dtype=np.float32),
            "i": [1, 2, 3, 2**40],
            "u": np.array([1, 2, 3, 4], dtype=np.uint8),
            "b": [True, False, True, False],
            "o": ["a", None, 3, math.nan],
            "s": pd.array(["x", None, "z", "w"], dtype="string"),
            "str": pd.Series(["x", None, "z\u00e9", ""], dtype="str"),  # pandas' default text: missing is NaN
            "python_str": pd.array(["x", None, "z", "w"], dtype=pd.StringDtype("python")),
            "nullable": pd.array([1, None, 3, 4], dtype="Int64"),
        }
    )
    data = to_jsonable(frame)["data"]
    by_value = [
        [_float_out(float(v)) if isinstance(v, float) else to_jsonable(v) for v in row]
        for row in frame.itertuples(index=False, name=None)
    ]
    assert data == by_value
    assert json.dumps(data) == json.dumps(by_value)  # the same types too (int vs float, bool vs int)
    assert [type(v) for v in data[0]] == [type(v) for v in by_value[0]]


def test_text_columns_in_one_call_as_value_by_value():
    """Arrow-backed text columns (one ``to_pylist``) write a missing value as the dtype's own missing value,
    as iterating the column does: ``"NaN"`` for pandas' default ``str``, ``null`` for ``string``."""
    frame = pd.DataFrame(
        {
            "str": pd.Series([None, "a", None], dtype="str"),
            "string": pd.Series([None, "a", None], dtype="string"),
            "clean": pd.Series(["b", "a", "c"], dtype="str"),
        }
    )
    assert to_jsonable(frame)["data"] == [["NaN", None, "b"], ["a", "a", "a"], ["NaN", None, "c"]]
    wide = pd.DataFrame({f"c{k}": pd.Series(["x", None], dtype="str") for k in range(50)})
    assert to_jsonable(wide)["data"] == [["x"] * 50, ["NaN"] * 50]


def test_end_is_joined_after_the_text():
    data = {"data": [[1, "x"], [2, "y"]], "name": "é"}
    assert dumps_indented(data, 1, "\n") == _reference(data, 1) + "\n"
    assert dumps_indented(data, 1) == _reference(data, 1)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_text, _json, max_size=5), st.sampled_from([1, 2]))
def test_items_made_in_turn_give_the_text_of_the_whole_object(data, indent):
    made = []

    def maker(key):
        def make():
            made.append(key)
            return data[key]

        return make

    items = [(key, maker(key)) for key in data]
    assert dumps_indented_items(items, indent, "\n") == _reference(data, indent) + "\n"
    assert made == list(data)


@contextlib.contextmanager
def _small_blocks():
    """Blocks of 2 rows or items, and text handed on every 8 characters or 3 pieces, so that small objects
    cross every block and spill boundary."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(json_text, "BLOCK_ITEMS", 2)
        patch.setattr(json_text, "SPILL_CHARS", 8)
        patch.setattr(json_text, "_SPILL_PIECES", 3)
        yield


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_text, _json, max_size=5), st.sampled_from([1, 2]))
def test_text_written_in_pieces_joins_to_the_text_of_the_whole_object(data, indent):
    items = [(key, lambda key=key: data[key]) for key in data]
    pieces: list[str] = []
    with _small_blocks():
        write_indented_items(items, pieces.append, indent, "\n")
        assert dumps_indented_items(items, indent) == _reference(data, indent)
        assert dumps_indented(data, indent) == _reference(data, indent)
    assert "".join(pieces) == _reference(data, indent) + "\n"


def test_a_large_table_is_written_block_by_block_in_bounded_pieces(monkeypatch):
    """A table of 10,000 rows and a list of 10,000 numbers reach ``write`` in pieces of about SPILL_CHARS
    characters (a piece is at most one block past the bound), joined the same text as ``json.dumps``."""
    monkeypatch.setattr(json_text, "BLOCK_ITEMS", 100)
    monkeypatch.setattr(json_text, "SPILL_CHARS", 4096)
    rows = [[k, f"reader {k}", k / 7, k % 3 == 0, None] for k in range(10_000)]
    data = {"table": {"columns": ["a", "b", "c", "d", "e"], "data": rows}, "values": [k * 0.5 for k in range(10_000)]}
    pieces: list[str] = []
    write_indented_items([(key, lambda key=key: data[key]) for key in data], pieces.append, 1, "\n")
    assert "".join(pieces) == _reference(data, 1) + "\n"
    block = max(len(json.dumps(rows[-100:], indent=1)), len(json.dumps(data["values"][-100:], indent=1)))
    assert len(pieces) > 100
    assert max(map(len, pieces)) < 4096 + block


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(_row, _json), max_size=12), st.integers(1, 5), st.sampled_from([1, 2]))
def test_rows_made_block_by_block_give_the_text_of_the_list(rows, size, indent):
    """A RowBlocks (rows made a block at a time: flat rows, empty rows, any value) writes as its list of rows."""

    def blocks():
        return [rows[start : start + size] for start in range(0, len(rows), size)] + [[]]

    data = {"table": {"columns": ["a"], "data": json_text.RowBlocks(blocks)}, "after": rows[:1]}
    whole = {"table": {"columns": ["a"], "data": rows}, "after": rows[:1]}
    assert list(data["table"]["data"]) == rows
    with _small_blocks():
        assert dumps_indented(data, indent) == _reference(whole, indent)
