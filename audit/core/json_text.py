"""Indented JSON text, byte for byte what ``json.dumps(data, indent=n, ensure_ascii=False, allow_nan=False)``
writes, at the speed of the C encoder (a result of a million votes holds tables of 10^5 rows; one of
10k criteria holds 10^5 small objects).

The standard library encodes with its C accelerator only without ``indent``; with it, every value goes
through the pure-Python encoder. Here the containers are walked in Python, and every container whose items
are all scalars (a table row, a list of numbers, a cell's interval) is written in one call of the C encoder,
its item separator carrying the newline and the indentation of its depth; only its brackets are re-indented.
The other containers' scalars are spelled here as the encoder spells them (``str`` through its string
escaper, ``int.__repr__``, ``float.__repr__``, ``true``/``false``/``null``); a subclass of a JSON type (an
``IntEnum``, ``numpy.float64``) goes to the encoder itself. Keys are not sorted (as ``json.dumps``'s
default); NaN and infinities raise ``ValueError`` as ``allow_nan=False`` does, and a value of no JSON type
``TypeError``.

:func:`write_indented_items` hands the text to a ``write`` callable (a file's) a bounded piece at a time:
about :data:`SPILL_CHARS` characters, however large the object; a table or a flat list of many items is
written a block of :data:`BLOCK_ITEMS` items at a time, each block in one call of the C encoder.
"""

from __future__ import annotations

import json
import math
from functools import cache
from itertools import chain
from json.encoder import encode_basestring
from typing import Any, Callable, Iterable, Iterator

try:  # the C encoder json.dumps uses without indent; CPython has it, other interpreters may not
    from json.encoder import c_make_encoder
except ImportError:  # pragma: no cover
    c_make_encoder = None

#: the exact types written as scalars here and in one call of the C encoder (subclasses go to the encoder)
_SCALAR_TYPES = frozenset((str, int, float, bool, type(None)))
_LITERALS = {True: "true", False: "false"}
_STR = frozenset((str,))
_ROW_TYPES = frozenset((list, tuple))

#: characters of text gathered before they are handed to ``write`` (and the most of one block's text
#: gathered before it is): the text held besides the data, however large the object
SPILL_CHARS = 1 << 20
#: pieces gathered before they are handed to ``write`` whatever their length (most are a few characters)
_SPILL_PIECES = 1 << 12
#: a table's rows (a flat list's items) encoded in one call of the C encoder
BLOCK_ITEMS = 1 << 12


class _Pieces(list):
    """The pieces of text written so far, handed joined to ``write`` once they hold about
    :data:`SPILL_CHARS` characters (``size`` counts the large pieces, :data:`_SPILL_PIECES` bounds the small)."""

    __slots__ = ("write", "size")

    def __init__(self, write: Callable[[str], Any]):
        super().__init__()
        self.write = write
        self.size = 0

    def add_large(self, text: str) -> None:
        """Append a piece that may be long (a block of a table), spilling once the pieces are long enough."""
        self.append(text)
        self.size += len(text)
        if self.size >= SPILL_CHARS:
            self.spill()

    def spill(self) -> None:
        """Hand the pieces to ``write`` as one text and start again."""
        if self:
            self.write("".join(self))
            self.clear()
        self.size = 0


class RowBlocks:
    """A table's rows made a block at a time while they are written: ``blocks()`` yields lists of rows (a
    frame's, :data:`BLOCK_ITEMS` rows each), written as the list of all of them would be. A table of a
    million rows is then never held whole as Python lists (``to_jsonable(..., lazy_tables=True)``)."""

    __slots__ = ("blocks",)

    def __init__(self, blocks: Callable[[], Iterable[list]]):
        self.blocks = blocks

    def __iter__(self) -> Iterator:
        for block in self.blocks():
            yield from block


@cache
def _flat_writer(pad: str) -> Callable[[Any], str]:
    """The C encoder writing a flat container's items separated by ``,`` newline ``pad`` (``json.dumps``'s
    own encoder, built once per padding: building it is most of the cost of encoding a small object)."""
    encoder = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=("," + pad, ": "))
    if c_make_encoder is None:  # pragma: no cover
        return encoder.encode
    make = c_make_encoder(None, encoder.default, encode_basestring, None, ": ", "," + pad, False, False, False)
    return lambda obj: "".join(make(obj, 0))


@cache
def _scalar_encoder() -> json.JSONEncoder:
    return json.JSONEncoder(ensure_ascii=False, allow_nan=False)


def _scalar_text(obj: Any) -> str:
    """One scalar as ``json.dumps`` writes it (the exact JSON types here, anything else by the encoder)."""
    tp = type(obj)
    if tp is str:
        return encode_basestring(obj)
    if tp is float and math.isfinite(obj):
        return float.__repr__(obj)
    if tp is int:
        return int.__repr__(obj)
    if tp is bool:
        return _LITERALS[obj]
    if obj is None:
        return "null"
    return _scalar_encoder().encode(obj)  # NaN and infinities raise there, as json.dumps raises


def _is_flat(values) -> bool:
    """Every value of an exact scalar type (C-level: one set test over the values' types)."""
    return _SCALAR_TYPES.issuperset(map(type, values))


def _is_table(rows) -> bool:
    """A list of non-empty lists of scalars (a frame's ``data``): three passes in C over the rows and their items."""
    return (
        _ROW_TYPES.issuperset(map(type, rows))
        and all(rows)
        and _SCALAR_TYPES.issuperset(map(type, chain.from_iterable(rows)))
    )


def _rows_text(rows, depth: int, indent: int) -> str:
    """Non-empty flat lists at ``depth + 1`` (a table's rows, without its brackets) in one call of the C encoder.

    Every item is written with the separator of the rows' items (``,`` newline, the padding of
    ``depth + 2``); the C encoder escapes newlines inside strings, so a newline in its text is
    always a separator, and one followed by ``[`` after a ``]`` is always between two rows: those
    are re-indented to the padding of ``depth + 1``, and so are the rows' outer brackets.
    """
    row_pad, item_pad = " " * (indent * (depth + 1)), " " * (indent * (depth + 2))
    text = _flat_writer("\n" + item_pad)(rows)  # the C encoder writes tuples as lists
    body = text[2:-2].replace("],\n" + item_pad + "[", "\n" + row_pad + "],\n" + row_pad + "[\n" + item_pad)
    return "[\n" + item_pad + body + "\n" + row_pad + "]"


def _write_table(rows, depth: int, indent: int, out: _Pieces) -> None:
    """A list of non-empty flat lists at ``depth``, :data:`BLOCK_ITEMS` rows per call of the C encoder."""
    inner = "\n" + " " * (indent * (depth + 1))
    separator = "[" + inner
    for start in range(0, len(rows), BLOCK_ITEMS):
        out.add_large(separator + _rows_text(rows[start : start + BLOCK_ITEMS], depth, indent))
        separator = "," + inner
    out.append("\n" + " " * (indent * depth) + "]")


def _write_row_blocks(table: RowBlocks, depth: int, indent: int, out: _Pieces) -> None:
    """The rows of ``table`` at ``depth``, block by block: a block of non-empty flat rows in one call of the
    C encoder, any other block item by item; the same text as the list of every row."""
    inner = "\n" + " " * (indent * (depth + 1))
    separator = "[" + inner
    for block in table.blocks():
        if not block:
            continue
        if _is_table(block):
            out.add_large(separator + _rows_text(block, depth, indent))
            separator = "," + inner
            continue
        for value in block:
            out.append(separator)
            separator = "," + inner
            _encode_item(value, depth, indent, out)
    out.append("[]" if separator[0] == "[" else "\n" + " " * (indent * depth) + "]")


def _write_flat(values, inner: str, outer: str, brackets: str, out: _Pieces) -> None:
    """A container of exact scalars (a dict only when its keys are all ``str``), its items separated by ``,``
    and ``inner``; a list :data:`BLOCK_ITEMS` items per call of the C encoder."""
    write_items = _flat_writer(inner)
    if isinstance(values, dict) or len(values) <= BLOCK_ITEMS:
        out.add_large(brackets[0] + inner + write_items(values)[1:-1] + outer + brackets[1])
        return
    separator = brackets[0] + inner
    for start in range(0, len(values), BLOCK_ITEMS):
        out.add_large(separator + write_items(values[start : start + BLOCK_ITEMS])[1:-1])
        separator = "," + inner
    out.append(outer + brackets[1])


def _encode_item(value: Any, depth: int, indent: int, out: _Pieces) -> None:
    """One member of a container at ``depth``: a scalar's text, or the value encoded one level deeper; the
    pieces handed on once there are :data:`_SPILL_PIECES` of them."""
    if type(value) in _SCALAR_TYPES:
        out.append(_scalar_text(value))
    else:
        _encode(value, depth + 1, indent, out)
    if len(out) >= _SPILL_PIECES:
        out.spill()


def _encode(obj: Any, depth: int, indent: int, out: _Pieces) -> None:
    tp = type(obj)
    if tp is dict or (tp is not list and tp is not tuple and isinstance(obj, dict)):
        if not obj:
            out.append("{}")
            return
        inner = "\n" + " " * (indent * (depth + 1))
        if _is_flat(obj.values()) and _STR.issuperset(map(type, obj)):
            _write_flat(obj, inner, "\n" + " " * (indent * depth), "{}", out)
            return
        out.append("{")
        separator = inner
        for key, value in obj.items():
            out.append(separator)
            separator = "," + inner
            out.append(encode_basestring(key) if type(key) is str else _scalar_encoder().encode(_json_key(key)))
            out.append(": ")
            _encode_item(value, depth, indent, out)
        out.append("\n" + " " * (indent * depth) + "}")
        return
    if tp is list or tp is tuple or isinstance(obj, (list, tuple)):
        if not obj:
            out.append("[]")
            return
        inner = "\n" + " " * (indent * (depth + 1))
        if _is_flat(obj):
            _write_flat(obj, inner, "\n" + " " * (indent * depth), "[]", out)
            return
        if _is_table(obj):
            _write_table(obj, depth, indent, out)
            return
        out.append("[")
        separator = inner
        for value in obj:
            out.append(separator)
            separator = "," + inner
            _encode_item(value, depth, indent, out)
        out.append("\n" + " " * (indent * depth) + "]")
        return
    if tp is RowBlocks:
        _write_row_blocks(obj, depth, indent, out)
        return
    out.append(_scalar_text(obj))


def write_indented_items(
    items: Iterable[tuple[str, Callable[[], Any]]], write: Callable[[str], Any], indent: int = 1, end: str = ""
) -> None:
    """:func:`dumps_indented_items`'s text handed to ``write`` in pieces (joined, they are that text) of about
    :data:`SPILL_CHARS` characters: a file of any size is written holding one top-level entry's data and a
    bounded piece of its text.

    Examples
    --------
    >>> import io
    >>> sink = io.StringIO()
    >>> write_indented_items([("a", lambda: [1, 2]), ("b", lambda: None)], sink.write, end="\\n")
    >>> print(sink.getvalue(), end="")
    {
     "a": [
      1,
      2
     ],
     "b": null
    }
    """
    out = _Pieces(write)
    inner = "\n" + " " * indent
    separator = "{" + inner
    for key, make in items:
        out.append(separator)
        separator = "," + inner
        out.append(encode_basestring(key))
        out.append(": ")
        value = make()
        if type(value) in _SCALAR_TYPES:
            out.append(_scalar_text(value))
        else:
            _encode(value, 1, indent, out)
        del value
    out.append("{}" if separator[0] == "{" else "\n}")
    out.append(end)
    out.spill()


def dumps_indented_items(items: Iterable[tuple[str, Callable[[], Any]]], indent: int = 1, end: str = "") -> str:
    """:func:`dumps_indented` of the object ``{key: make() for key, make in items}``, the same text, each value
    made and encoded in turn and dropped before the next is made: a large result's JSON data (several times
    the size of its text) is held one top-level entry at a time."""
    parts: list[str] = []
    write_indented_items(items, parts.append, indent, end)
    return "".join(parts)


def _json_key(key: Any) -> str:
    """A dict key as ``json.dumps`` writes it (str, or a scalar turned into its JSON spelling)."""
    if isinstance(key, str):
        return key
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, float):
        return _scalar_encoder().encode(key)
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def dumps_indented(data: Any, indent: int = 1, end: str = "") -> str:
    """``json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False) + end``, the same text, faster.

    ``data`` holds only JSON types (dict, list, tuple, str, int, float, bool, None), as
    :func:`judge_transfer_audit.core.serialize.to_jsonable` returns; anything else raises ``TypeError``.
    ``end`` (a file's final newline) is joined with the rest: adding it afterwards would copy the whole text.
    """
    parts: list[str] = []
    out = _Pieces(parts.append)
    _encode(data, 0, indent, out)
    out.append(end)
    out.spill()
    return "".join(parts)


__all__ = ["BLOCK_ITEMS", "SPILL_CHARS", "RowBlocks", "dumps_indented", "dumps_indented_items", "write_indented_items"]
