"""Indented JSON text, byte for byte what ``json.dumps(data, indent=n, ensure_ascii=False, allow_nan=False)``
writes, at the speed of the C encoder (issue 15: a result of a million votes holds tables of 10^5 rows).

The standard library encodes with its C accelerator only without ``indent``; with it, every value goes
through the pure-Python encoder. Here the containers are walked in Python, and every container whose items
are all scalars (a table row, a list of numbers) is written in one call of the C encoder, its item separator
carrying the newline and the indentation of its depth; only its brackets are re-indented. Keys are not sorted
(as ``json.dumps``'s default); NaN and infinities raise ``ValueError`` as ``allow_nan=False`` does.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

_SCALARS = (str, int, float, bool, type(None))


@cache
def _leaf_encoder(pad: str) -> json.JSONEncoder:
    """An encoder writing a flat container's items separated by a newline and ``pad``."""
    return json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=("," + pad, ": "))


@cache
def _scalar_encoder() -> json.JSONEncoder:
    return json.JSONEncoder(ensure_ascii=False, allow_nan=False)


def _is_flat(values) -> bool:
    for v in values:
        if not isinstance(v, _SCALARS):
            return False
    return True


def _is_table(rows) -> bool:
    """A list of non-empty lists of scalars (a frame's ``data``)."""
    for row in rows:
        if not (isinstance(row, (list, tuple)) and row and _is_flat(row)):
            return False
    return True


def _table_text(rows, depth: int, indent: int) -> str:
    """A list of non-empty flat lists at ``depth`` in one call of the C encoder.

    Every item is written with the separator of the rows' items (``,`` newline, the padding of
    ``depth + 2``); the C encoder escapes newlines inside strings, so a newline in its text is
    always a separator, and one followed by ``[`` after a ``]`` is always between two rows: those
    are re-indented to the padding of ``depth + 1``, and so are the outer brackets.
    """
    outer, row_pad, item_pad = (" " * (indent * d) for d in (depth, depth + 1, depth + 2))
    text = _leaf_encoder("\n" + item_pad).encode([list(r) for r in rows])
    body = text[2:-2].replace("],\n" + item_pad + "[", "\n" + row_pad + "],\n" + row_pad + "[\n" + item_pad)
    return "[\n" + row_pad + "[\n" + item_pad + body + "\n" + row_pad + "]\n" + outer + "]"


def _encode(obj: Any, depth: int, indent: int, out: list[str]) -> None:
    if isinstance(obj, dict):
        if not obj:
            out.append("{}")
            return
        inner = "\n" + " " * (indent * (depth + 1))
        if _is_flat(obj.values()) and all(isinstance(k, str) for k in obj):
            text = _leaf_encoder(inner).encode(obj)
            out.append("{" + inner + text[1:-1] + "\n" + " " * (indent * depth) + "}")
            return
        key_text = _scalar_encoder().encode
        out.append("{")
        first = True
        for key, value in obj.items():
            out.append(inner if first else "," + inner)
            first = False
            out.append(key_text(_json_key(key)))
            out.append(": ")
            _encode(value, depth + 1, indent, out)
        out.append("\n" + " " * (indent * depth) + "}")
        return
    if isinstance(obj, (list, tuple)):
        if not obj:
            out.append("[]")
            return
        inner = "\n" + " " * (indent * (depth + 1))
        if _is_flat(obj):
            text = _leaf_encoder(inner).encode(list(obj))
            out.append("[" + inner + text[1:-1] + "\n" + " " * (indent * depth) + "]")
            return
        if _is_table(obj):
            out.append(_table_text(obj, depth, indent))
            return
        out.append("[")
        first = True
        for value in obj:
            out.append(inner if first else "," + inner)
            first = False
            _encode(value, depth + 1, indent, out)
        out.append("\n" + " " * (indent * depth) + "]")
        return
    out.append(_scalar_encoder().encode(obj))


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


def dumps_indented(data: Any, indent: int = 1) -> str:
    """``json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False)``, the same text, faster.

    ``data`` holds only JSON types (dict, list, tuple, str, int, float, bool, None), as
    :func:`audit.serialize.to_jsonable` returns; anything else raises ``TypeError``.
    """
    out: list[str] = []
    _encode(data, 0, indent, out)
    return "".join(out)


__all__ = ["dumps_indented"]
