import enum
import json
import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.core.serialize import from_jsonable, to_jsonable


class Colour(enum.Enum):
    RED = "red"


@dataclass(frozen=True)
class Inner:
    x: float
    tags: tuple[str, ...]


@dataclass(frozen=True)
class Outer:
    name: str
    inner: Inner
    maybe: Inner | None
    counts: dict[str, int]
    colour: Colour
    frame: pd.DataFrame
    values: tuple[float, ...]


def _outer():
    frame = pd.DataFrame({"a": ["x", "y"], "b": [1.5, np.nan], "c": [1, 2], "d": [True, False]})
    frame["e"] = pd.Series(["p", None], dtype=object)
    return Outer("n", Inner(math.nan, ("a", "b")), None, {"k": 3}, Colour.RED, frame, (math.inf, -math.inf, 1.0))


def test_round_trip_through_json_text():
    obj = _outer()
    text = json.dumps(to_jsonable(obj), allow_nan=False)
    back = from_jsonable(Outer, json.loads(text))
    assert back.name == "n" and math.isnan(back.inner.x) and back.inner.tags == ("a", "b")
    assert back.maybe is None and back.counts == {"k": 3} and back.colour is Colour.RED
    assert back.values == (math.inf, -math.inf, 1.0)
    pd.testing.assert_frame_equal(back.frame, obj.frame)
    assert json.dumps(to_jsonable(back), allow_nan=False) == text


def test_numpy_scalars_become_python():
    assert to_jsonable({"a": np.int64(3), "b": np.float32(0.5), "c": np.bool_(True)}) == {"a": 3, "b": 0.5, "c": True}


def test_type_mismatch_is_reported():
    with pytest.raises(TypeError):
        from_jsonable(Inner, {"x": "not a number", "tags": []})


def test_frame_columns_read_at_once_or_value_by_value_alike():
    """int64 / bool columns whose values are all ints / bools are read in one numpy call; a column
    that is not (a bool column holding None) keeps the value-by-value
    reading it always had (pandas' cast of the object values)."""
    from judge_transfer_audit.core.serialize import _frame_in

    whole = _frame_in({"columns": ["i", "b"], "dtypes": ["int64", "bool"], "data": [[1, True], [-2, False]]})
    assert list(whole.dtypes) == [np.dtype("int64"), np.dtype("bool")]
    assert whole["i"].tolist() == [1, -2] and whole["b"].tolist() == [True, False]
    partial = _frame_in({"columns": ["b"], "dtypes": ["bool"], "data": [[True], [None]]})
    pd.testing.assert_series_equal(
        partial["b"], pd.Series([True, None], dtype=object).astype("bool"), check_names=False
    )


def test_text_columns_read_at_once_as_inferred_value_by_value():
    """A ``str`` column holding only text (and None) is read in one call, as inferring its values gives;
    any other content (all missing, empty, a number among the text) keeps the value-by-value inference."""
    from judge_transfer_audit.core.serialize import _frame_in

    cases = [["a", None, "NaN"], ["x", "y"], [None, None], ["a", 1], [1.5, "b"]]
    for values in cases:
        frame = _frame_in({"columns": ["t"], "dtypes": ["str"], "data": [[v] for v in values]})
        pd.testing.assert_series_equal(frame["t"], pd.Series(values, name="t"), check_exact=True)
    empty = _frame_in({"columns": ["t", "u"], "dtypes": ["str", "str"], "data": []})
    assert list(empty.dtypes) == [pd.Series([]).dtype] * 2 and len(empty) == 0
    wide = _frame_in(
        {"columns": [f"c{k}" for k in range(30)], "dtypes": ["str"] * 30, "data": [["v"] * 30, [None] * 30]}
    )
    assert wide.shape == (2, 30) and all(str(t) == "str" for t in wide.dtypes) and wide.isna().iloc[1].all()


class Level(enum.Enum):
    LOW = 1
    HIGH = "high"


def test_enum_values_read_by_value_and_refused_as_the_enum_refuses():
    assert from_jsonable(Level, 1) is Level.LOW and from_jsonable(Level, "high") is Level.HIGH
    for bad in ("low", 2, ["high"]):
        with pytest.raises(Exception) as ours:
            from_jsonable(Level, bad)
        with pytest.raises(Exception) as theirs:
            Level(bad)
        assert type(ours.value) is type(theirs.value) and str(ours.value) == str(theirs.value)


@dataclass(frozen=True)
class Node:
    label: str
    children: tuple["Node", ...] = ()
    weight: float | int | None = None


def test_a_type_that_nests_itself_and_unions_read_back():
    data = {"label": "a", "children": [{"label": "b", "weight": 2}, {"label": "c", "weight": "NaN"}]}
    node = from_jsonable(Node, data)
    assert node.children[0] == Node("b", (), 2.0) and math.isnan(node.children[1].weight)
    assert node.weight is None
    with pytest.raises(TypeError, match="no member of"):
        from_jsonable(Node, {"label": "a", "weight": "heavy"})
    with pytest.raises(TypeError, match="Node expects an object"):
        from_jsonable(Node, {"label": "a", "children": ["b"]})


def test_long_frames_written_block_by_block_give_the_same_text(monkeypatch):
    """``lazy_tables``: a frame longer than one block keeps its rows to be made block by block while the text
    is written (every dtype converted per block as the whole frame is: NaN, missing text, objects, nested values),
    and the text is the same as from the whole frame's rows; a frame of one block is converted at once."""
    from judge_transfer_audit.core import json_text
    from judge_transfer_audit.core.json_text import RowBlocks, dumps_indented

    monkeypatch.setattr(json_text, "BLOCK_ITEMS", 3)
    n = 10
    frame = pd.DataFrame(
        {
            "f": [math.nan if k % 4 == 0 else k / 3 for k in range(n)],
            "i": list(range(n)),
            "b": [k % 2 == 0 for k in range(n)],
            "s": pd.Series([None if k % 3 == 0 else f"r\u00e9{k}" for k in range(n)], dtype="str"),
            "o": pd.Series([[k] if k == 5 else None if k == 6 else "x" for k in range(n)], dtype=object),
        }
    )
    data = {"long": Outer("n", Inner(1.0, ()), None, {}, Colour.RED, frame, ()), "short": frame.iloc[:3]}
    lazy = to_jsonable(data, lazy_tables=True)
    assert isinstance(lazy["long"]["frame"]["data"], RowBlocks)
    assert isinstance(lazy["short"]["data"], list)
    assert list(lazy["long"]["frame"]["data"]) == to_jsonable(frame)["data"]
    whole = json.dumps(to_jsonable(data), indent=1, ensure_ascii=False)
    assert dumps_indented(lazy, 1) == dumps_indented(to_jsonable(data), 1) == whole
    no_columns = pd.DataFrame(index=range(n))  # rows of nothing: no data
    text = json.dumps(to_jsonable(no_columns), indent=1)
    assert dumps_indented(to_jsonable(no_columns, lazy_tables=True), 1) == text


@dataclass(frozen=True)
class Tables:
    name: str
    frame: pd.DataFrame
    inner: tuple[Outer, ...]
    anything: Any = None


def _every_dtype(n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "f": [math.nan if k % 4 == 0 else math.inf if k == 5 else k / 3 for k in range(n)],
            "g": np.asarray([k / 7 for k in range(n)], dtype="float32"),
            "i": list(range(n)),
            "b": [k % 2 == 0 for k in range(n)],
            "s": pd.Series([None if k % 3 == 0 else f"r\u00e9\n{k}" for k in range(n)], dtype="str"),
            "o": pd.Series([[k] if k == 5 else None if k == 6 else "x" for k in range(n)], dtype=object),
        }
    )


def _read_both(value, tp, monkeypatch, chunk):
    """``read_jsonable`` of the indented text in small chunks and blocks, and ``from_jsonable`` of it whole."""
    import io

    from judge_transfer_audit.core import json_read
    from judge_transfer_audit.core.json_text import dumps_indented
    from judge_transfer_audit.core.serialize import read_jsonable

    monkeypatch.setattr(json_read, "BLOCK_ROWS", 4)
    monkeypatch.setattr(json_read, "CHUNK_BYTES", chunk)
    text = dumps_indented(to_jsonable(value), 1, "\n")
    return read_jsonable(tp, io.BytesIO(text.encode())), from_jsonable(tp, json.loads(text))


@pytest.mark.parametrize("chunk", [16, 300, 1 << 22])
def test_read_jsonable_reads_long_tables_in_blocks_as_the_whole_text_reads(monkeypatch, chunk):
    """Every dtype of a long frame, at two depths, read a block of rows at a time: the same frames (dtypes,
    values, NaN and missing text, the objects of an object column) as from the whole text."""
    frame = _every_dtype(23)
    value = Tables("t", frame, (_outer(), replace(_outer(), frame=frame.iloc[3:])), {"k": [1, 2]})
    blockwise, whole = _read_both(value, Tables, monkeypatch, chunk)
    for ours, theirs in ((blockwise.frame, whole.frame), (blockwise.inner[1].frame, whole.inner[1].frame)):
        pd.testing.assert_frame_equal(ours, theirs, check_exact=True, check_column_type=True)
        assert [type(v) for v in ours["o"]] == [type(v) for v in theirs["o"]]
    assert json.dumps(to_jsonable(blockwise)) == json.dumps(to_jsonable(whole))


def test_a_long_table_read_as_something_else_than_a_frame_is_not_blockwise(monkeypatch):
    from judge_transfer_audit.core.serialize import NotBlockwise

    with pytest.raises(NotBlockwise):
        _read_both(Tables("any", pd.DataFrame(), (), _every_dtype(9)), Tables, monkeypatch, 64)


@pytest.mark.parametrize(
    "table",
    [
        {"columns": ["b"], "dtypes": ["bool"], "data": [[True]] * 8 + [[None]]},  # cast value by value
        {"columns": ["s"], "dtypes": ["str"], "data": [[None]] * 9},  # no text: inferred
        {"columns": ["s"], "dtypes": ["str"], "data": [["a"]] * 8 + [[1]]},  # a number among the text: inferred
        {"columns": ["c"], "dtypes": ["category"], "data": [["a"]] * 9},  # inferred
        {"columns": ["f"], "dtypes": ["float64"], "data": [[0.5]] * 8 + [["half"]]},  # kept as written
        {"columns": ["f", "f"], "dtypes": ["float64", "float64"], "data": [[0.5, 1.0]] * 9},
    ],
    ids=["bool and null", "no text", "text and a number", "category", "float and text", "repeated column"],
)
def test_a_table_read_whole_otherwise_than_in_blocks_is_not_blockwise(monkeypatch, table):
    """Columns (other writers') that reading the rows whole reads value by value or by inference, and
    repeated columns: not read in blocks (the caller reads the text whole)."""
    import io

    from judge_transfer_audit.core import json_read
    from judge_transfer_audit.core.json_text import dumps_indented
    from judge_transfer_audit.core.serialize import NotBlockwise, read_jsonable

    monkeypatch.setattr(json_read, "BLOCK_ROWS", 4)
    text = dumps_indented({"name": "t", "frame": table, "inner": []})
    with pytest.raises(NotBlockwise):
        read_jsonable(Tables, io.BytesIO(text.encode()))
