"""Lossless conversion of frozen result dataclasses to JSON-ready data and back.

Rules (so every result type round-trips without hand-written code):

* dataclass -> dict of its fields (recursively);
* ``tuple``/``list`` -> list; ``dict`` -> dict with string keys;
* ``float`` NaN/inf -> the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"`` (JSON has none);
* ``enum.Enum`` -> its value;
* ``pandas.DataFrame`` -> ``{"columns": [...], "dtypes": [...], "data": [[...], ...]}``;
* numpy scalars -> Python scalars, numpy arrays -> lists;
* a type with ``__jsonable__(self)`` says what it is written as (a typed table: its frame), which
  is then converted by these rules, and a
  type with ``__from_jsonable__(args, data, load)`` reads itself back (``args`` its type
  arguments, ``load`` this module's :func:`from_jsonable`), e.g.
  :class:`judge_transfer_audit.model.section_result.Section`.

``to_jsonable(obj, lazy_tables=True)`` leaves the rows of a frame longer than one block as a
:class:`~judge_transfer_audit.core.json_text.RowBlocks`, made a block of rows at a time while
:mod:`judge_transfer_audit.core.json_text` writes them: the same text, without a million rows held as
Python lists at once. Only that module's writers read such data.

:func:`from_jsonable` reads a value back using the dataclass field type hints
(:class:`judge_transfer_audit.results.result.AuditResult` reads itself back, each section as the payload type
of its entry in the section table).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import math
import types
import typing
from typing import Any, BinaryIO, Callable, Iterable, Iterator

import numpy as np
import pandas as pd

from judge_transfer_audit.core import json_read, json_text
from judge_transfer_audit.core.json_text import RowBlocks

_SPECIAL_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_TEXT = frozenset((str, type(None)))  #: a text column read at once holds text, and None where missing
_EXACT = {"int64": int, "bool": bool}  #: the Python type every value of such a column has when it was written whole
_JSON_SCALARS = frozenset((str, int, float, bool, type(None)))


def _float_out(x: float) -> Any:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def _column_out(column: pd.Series) -> list:
    """A frame column's values as :func:`to_jsonable` writes each one: numpy numbers and booleans in one
    ``tolist``, their NaN and infinities spelled out; Arrow-backed text (pandas' default ``str``) in one
    ``to_pylist``, a missing value written as the dtype's own missing value (``NaN`` or ``None``), which is
    what iterating the column yields there; any other dtype value by value."""
    dtype = column.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "fiub":
        values = column.to_numpy()
        out = values.tolist()
        if dtype.kind == "f":
            for i in np.flatnonzero(~np.isfinite(values)).tolist():
                out[i] = _float_out(out[i])
        return out
    if isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
        text = column.array.__arrow_array__()
        out = text.to_pylist()  # str, or None where missing
        if text.null_count:
            missing = to_jsonable(dtype.na_value)
            out = [missing if v is None else v for v in out]
        return out
    return [to_jsonable(v) for v in column]


@functools.cache
def _field_names(tp: type) -> tuple[str, ...]:
    """A dataclass type's field names (``dataclasses.fields`` once per type, not once per object)."""
    return tuple(f.name for f in dataclasses.fields(tp))


def to_jsonable(obj: Any, *, lazy_tables: bool = False) -> Any:
    """Convert a result object (dataclasses, tuples, frames, ...) to JSON-ready data (``lazy_tables``: long
    frames' rows made while they are written, see the module's docstring)."""
    return _jsonable(obj, _frame_in_blocks if lazy_tables else _frame_out)


def _frame_out(frame: pd.DataFrame) -> dict[str, Any]:
    """A frame's JSON data: its column names, dtypes and rows."""
    columns = [_column_out(column) for _, column in frame.items()]  # by position: repeated labels too
    return {
        "columns": [str(c) for c in frame.columns],
        "dtypes": [str(t) for t in frame.dtypes],
        "data": list(map(list, zip(*columns))),
    }


def _frame_in_blocks(frame: pd.DataFrame) -> dict[str, Any]:
    """:func:`_frame_out`, the rows of a frame longer than one block left to be made block by block."""
    if len(frame) <= json_text.BLOCK_ITEMS:
        return _frame_out(frame)
    return {
        "columns": [str(c) for c in frame.columns],
        "dtypes": [str(t) for t in frame.dtypes],
        "data": RowBlocks(functools.partial(_row_blocks, frame)),
    }


def _row_blocks(frame: pd.DataFrame) -> Iterator[list[list]]:
    """The rows of :func:`_frame_out`, :data:`~judge_transfer_audit.core.json_text.BLOCK_ITEMS` at a time (each
    block's columns converted at once)."""
    size = json_text.BLOCK_ITEMS
    for start in range(0, len(frame), size):
        columns = [_column_out(column) for _, column in frame.iloc[start : start + size].items()]
        yield list(map(list, zip(*columns)))


def _jsonable(obj: Any, frame_out: Callable[[pd.DataFrame], Any]) -> Any:
    """:func:`to_jsonable`, frames written by ``frame_out``."""
    # the exact built-in types first (most of a large result's values: 10k cells), then the general rules
    tp = type(obj)
    if tp is float:
        return _float_out(obj)
    if tp is str or tp is bool or tp is int or obj is None:
        return obj
    if tp is list or tp is tuple:
        return [_jsonable(v, frame_out) for v in obj]
    if tp is dict:
        return {str(k): _jsonable(v, frame_out) for k, v in obj.items()}
    if isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, (int, np.integer)) and not isinstance(obj, (bool, np.bool_)):
        return int(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, (float, np.floating)):
        return _float_out(float(obj))
    write = getattr(type(obj), "__jsonable__", None)
    if write is not None:
        return _jsonable(write(obj), frame_out)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {name: _jsonable(getattr(obj, name), frame_out) for name in _field_names(tp)}
    if isinstance(obj, pd.DataFrame):
        return frame_out(obj)
    if isinstance(obj, np.ndarray):
        return [_jsonable(v, frame_out) for v in obj.tolist()]
    if isinstance(obj, dict):
        return {str(k): _jsonable(v, frame_out) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v, frame_out) for v in obj]
    if obj is pd.NA or obj is pd.NaT:
        return None
    raise TypeError(f"cannot serialise {type(obj).__name__}")


@functools.cache
def _field_hints(tp: type) -> tuple[tuple[str, Any], ...]:
    """A dataclass's fields and their resolved type hints (resolved once per type: most of a load's time)."""
    hints = typing.get_type_hints(tp)
    return tuple((f.name, hints[f.name]) for f in dataclasses.fields(tp))


@functools.cache
def _text_dtype():
    """pandas' ``str`` dtype (resolved once: a name is looked up among every registered dtype)."""
    return pd.api.types.pandas_dtype("str")


def _frame_in(data: dict) -> pd.DataFrame:
    columns = data["columns"]
    dtypes = data.get("dtypes") or ["object"] * len(columns)
    rows = data["data"]
    if rows and all(len(row) == len(columns) for row in rows):
        by_column = [list(col) for col in zip(*rows)]  # one pass over the rows, not one per column
    else:
        by_column = [[row[j] for row in rows] for j in range(len(columns))]  # a short row raises here
    series: dict[str, Any] = {}
    for col, dtype, values in zip(columns, dtypes, by_column):
        if dtype.startswith("float"):
            try:  # numpy reads "NaN" / "Infinity" / "-Infinity" and None (NaN) as the mapping below does
                series[col] = np.asarray(values, dtype=dtype)
                continue
            except (TypeError, ValueError):
                pass
        elif dtype in ("int64", "bool") and all(type(v) is _EXACT[dtype] for v in values):
            series[col] = np.array(values, dtype=dtype)  # the common case, read at once
            continue
        if dtype.startswith(("float", "int", "bool")):
            values = [_SPECIAL_FLOATS.get(v, v) if isinstance(v, str) else v for v in values]
            column = pd.Series(values, dtype=object)
            try:
                column = column.astype(dtype)
            except (TypeError, ValueError):
                # e.g. a bool column holding None; keep the values as written
                pass
        elif dtype == "object":
            # pandas >= 3 would infer a string dtype; keep what was written
            column = pd.Series(values, dtype=object)
        else:
            kinds = set(map(type, values))
            if dtype == "str" and str in kinds and kinds <= _TEXT:  # what inferring text gives, at once
                series[col] = pd.array(values, dtype=_text_dtype())
                continue
            column = pd.Series(values)
        series[col] = column
    return pd.DataFrame(series, columns=columns) if columns else pd.DataFrame(index=range(len(rows)))


class NotBlockwise(ValueError):
    """Text that :func:`read_jsonable` cannot read exactly as ``from_jsonable(tp, json.loads(text))`` does: read
    it that way instead (which reports what is wrong with it, if anything is)."""


class _TableFrame:
    """A long table read a block of rows at a time (:func:`_frame_from_blocks`), until the DataFrame reader
    takes its frame (:meth:`take`): a table read as anything else is left here."""

    __slots__ = ("frame",)

    def __init__(self, frame: pd.DataFrame):
        self.frame: pd.DataFrame | None = frame

    def take(self) -> pd.DataFrame:
        frame, self.frame = self.frame, None
        if frame is None:
            raise TypeError("a table read twice")
        return frame


def _block_column(dtype: str, values: list, kinds: set[type]) -> Any:
    """One block of a column's values (of the Python types ``kinds``) as :func:`_frame_in` reads the whole
    column, for the dtypes it reads in one call whatever the column's length (numbers, booleans, text;
    object); anything else is NotBlockwise. A column of text must hold some text: the caller checks that."""
    if dtype.startswith("float") and kinds <= _JSON_SCALARS:
        try:  # numpy reads each value on its own: the blocks' arrays make the whole column's
            return np.asarray(values, dtype=dtype)
        except (TypeError, ValueError):
            pass
    elif dtype in _EXACT and kinds == {_EXACT[dtype]}:
        return np.array(values, dtype=dtype)
    elif dtype == "str" and kinds <= _TEXT:
        return pd.array(values, dtype=_text_dtype())
    elif dtype == "object":
        return pd.Series(values, dtype=object)
    raise NotBlockwise(f"a column of dtype {dtype} read in blocks")


def _frame_from_blocks(columns: list, dtypes: list, blocks: Iterable[list]) -> _TableFrame:
    """The frame :func:`_frame_in` makes of a long table, its rows read a block at a time
    (:func:`judge_transfer_audit.core.json_read.load_with_tables`): each block's columns converted at once, the
    blocks' frames concatenated. NotBlockwise when that could differ from reading the rows whole."""
    if not (isinstance(columns, list) and isinstance(dtypes, list) and len(dtypes) == len(columns)):
        raise NotBlockwise("a table's dtypes do not match its columns")
    if not columns or len(set(columns)) < len(columns) or not all(type(d) is str for d in dtypes):
        raise NotBlockwise("a table without columns, with repeated columns or with dtypes that are not names")
    frames = []
    holds_text = dict.fromkeys((col for col, dtype in zip(columns, dtypes) if dtype == "str"), False)
    for rows in blocks:
        if set(map(type, rows)) != {list} or set(map(len, rows)) != {len(columns)}:
            raise NotBlockwise("a table's rows are not lists as long as its columns")
        series = {}
        for col, dtype, values in zip(columns, dtypes, map(list, zip(*rows))):
            kinds = set(map(type, values))
            series[col] = _block_column(dtype, values, kinds)
            if col in holds_text and str in kinds:
                holds_text[col] = True
        frames.append(pd.DataFrame(series, columns=columns))
    if not all(holds_text.values()):
        raise NotBlockwise("a column of text with no text")
    return _TableFrame(pd.concat(frames, ignore_index=True))


def read_jsonable(tp: Any, stream: BinaryIO) -> Any:
    """``from_jsonable(tp, json.loads(text))`` of the JSON text in ``stream`` (a binary file), the same value,
    without the whole text or its long tables' rows held at once: a table (a frame's data) of more than
    :data:`~judge_transfer_audit.core.json_read.BLOCK_ROWS` rows in text laid out as
    :mod:`judge_transfer_audit.core.json_text` writes it is read a block of rows at a time into its columns.

    Raises :class:`NotBlockwise` when the value could differ from reading the text whole, or that would raise:
    text that is not JSON, not of ``tp``, a long table read as something other than a DataFrame, a column of
    a dtype that is read only whole (the caller then reads the text whole)."""
    try:
        data, tables = json_read.load_with_tables(stream, _frame_from_blocks)
        value = from_jsonable(tp, data)
    except (TypeError, ValueError, KeyError, AttributeError, IndexError, RecursionError) as exc:
        raise NotBlockwise(f"{type(exc).__name__}: {exc}") from None
    if any(table.frame is not None for table in tables):
        raise NotBlockwise("a long table read as something other than a DataFrame")
    return value


def from_jsonable(tp: Any, data: Any) -> Any:
    """Rebuild a value of type ``tp`` (a dataclass or a typing annotation) from JSON data.

    The rules are decided once per annotation (:func:`_reader`, cached), not once per value: a result of
    1,000 criteria holds 300,000 values of a few dozen annotations."""
    return _reader(tp)(data)


_READERS: dict[Any, Any] = {}


def _reader(tp: Any):
    """The function reading JSON data as ``tp``: :func:`from_jsonable`'s rules for that annotation."""
    try:
        return _READERS[tp]
    except KeyError:
        read = _READERS[tp] = _make_reader(tp)
        return read
    except TypeError:  # an annotation that cannot be hashed: decided afresh each time
        return _make_reader(tp)


def _any(data: Any) -> Any:
    return data


def _float(data: Any) -> float:
    if type(data) is float:
        return data
    if isinstance(data, str):
        if data in _SPECIAL_FLOATS:
            return _SPECIAL_FLOATS[data]
        raise TypeError(f"not a float: {data!r}")
    if isinstance(data, bool) or not isinstance(data, (int, float)):
        raise TypeError(f"not a float: {data!r}")
    return float(data)


def _int(data: Any) -> int:
    if isinstance(data, bool) or not isinstance(data, int):
        raise TypeError(f"not an int: {data!r}")
    return data


def _bool(data: Any) -> bool:
    if not isinstance(data, bool):
        raise TypeError(f"not a bool: {data!r}")
    return data


def _str(data: Any) -> str:
    if not isinstance(data, str):
        raise TypeError(f"not a string: {data!r}")
    return data


def _frame(data: Any) -> pd.DataFrame:
    if type(data) is _TableFrame:
        return data.take()
    if not isinstance(data, dict):
        raise TypeError("DataFrame expects an object")
    return _frame_in(data)


def _make_reader(tp: Any):
    origin = typing.get_origin(tp)
    if tp is Any:
        return _any
    hook = getattr(origin if origin is not None else tp, "__from_jsonable__", None)
    if hook is not None:
        hook_args = typing.get_args(tp)
        return lambda data: hook(hook_args, data, from_jsonable)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        optional = type(None) in args
        members = [arg for arg in args if arg is not type(None)]

        def read_union(data: Any) -> Any:
            if data is None and optional:
                return None
            last_error: Exception | None = None
            for arg in members:
                try:
                    return _reader(arg)(data)
                except (TypeError, ValueError, KeyError) as exc:
                    last_error = exc
            raise TypeError(f"no member of {tp} accepts {data!r}") from last_error

        return read_union
    if dataclasses.is_dataclass(tp):
        fields: list[tuple[str, Any]] = []  # the fields' readers, on first use (a type may nest itself)

        def read_dataclass(data: Any) -> Any:
            if not isinstance(data, dict):
                raise TypeError(f"{tp.__name__} expects an object, got {type(data).__name__}")
            if not fields:
                fields.extend([(name, _reader(hint)) for name, hint in _field_hints(tp)])
            return tp(**{name: read(data[name]) for name, read in fields if name in data})

        return read_dataclass
    if tp is pd.DataFrame:
        return _frame
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        members = {m.value: m for m in tp}

        def read_enum(data: Any) -> enum.Enum:
            try:
                return members[data]
            except (KeyError, TypeError):  # not a value (or not hashable): the enum's own lookup and error
                return tp(data)

        return read_enum
    for scalar, read in ((float, _float), (int, _int), (bool, _bool), (str, _str)):
        if tp is scalar:
            return read
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            item = args[0]
            return lambda data: tuple(map(_reader(item), data))
        return lambda data: tuple(_reader(a)(v) for a, v in zip(args, data))
    if origin is list:
        (arg,) = typing.get_args(tp)
        return lambda data: [_reader(arg)(v) for v in data]
    if origin is dict:
        _, val = typing.get_args(tp)
        return lambda data: {k: _reader(val)(v) for k, v in data.items()}
    if tp in (dict, list, tuple):
        return tp

    def unknown(data: Any) -> Any:
        raise TypeError(f"cannot deserialise into {tp!r}")

    return unknown
