"""Find the tables and dendrograms inside an optional section's payload.

Optional sections (uncertainty, readers, surface, dev) hold typed results when their module
is loaded and plain JSON data after ``result.json`` round-trips without it. The report must
read both, and must not break when a sibling module renames a field, so it locates data by
*shape* (the columns a frame has) rather than by attribute path, and shows every frame it
found as a table even when no figure uses it (nothing vanishes from the report).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterator

import numpy as np
import pandas as pd

MAX_DEPTH = 5


def as_frame(obj: Any) -> pd.DataFrame | None:
    """A DataFrame, a serialised frame (``{"columns", "data"}``) or None."""
    if isinstance(obj, pd.DataFrame):
        return obj
    if isinstance(obj, dict) and set(obj) >= {"columns", "data"} and isinstance(obj.get("columns"), list):
        try:
            return pd.DataFrame(obj["data"], columns=obj["columns"])
        except (ValueError, TypeError):
            return None
    return None


def field(obj: Any, name: str, default: Any = None) -> Any:
    """``obj.name`` for objects, ``obj[name]`` for dicts (payloads after a JSON round-trip)."""
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def walk(obj: Any, path: str = "", depth: int = 0) -> Iterator[tuple[str, Any]]:
    """Yield ``(path, value)`` for ``obj`` and everything nested in it (frames are leaves)."""
    yield path, obj
    if depth >= MAX_DEPTH or as_frame(obj) is not None:
        return
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            yield from walk(getattr(obj, f.name), _join(path, f.name), depth + 1)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from walk(v, _join(path, str(k)), depth + 1)
    elif isinstance(obj, (list, tuple)) and not _is_matrix(obj):
        for i, v in enumerate(obj):
            yield from walk(v, f"{path}[{i}]", depth + 1)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _is_matrix(obj: Any) -> bool:
    return bool(obj) and all(isinstance(r, (list, tuple)) and all(isinstance(v, (int, float)) for v in r) for r in obj)


def frames(payload: Any) -> list[tuple[str, pd.DataFrame]]:
    """Every non-empty frame in ``payload`` with its dotted path, in field order."""
    out = []
    for path, value in walk(payload):
        frame = as_frame(value)
        if frame is not None and len(frame.columns):
            out.append((path or "table", frame))
    return out


def find_frame(found: list[tuple[str, pd.DataFrame]], required: set[str], *, exclude: set[str] = frozenset(),
               prefer: str = "") -> tuple[str, pd.DataFrame] | None:
    """The first frame having all ``required`` columns and none of ``exclude``.

    ``prefer``: a substring of the path that wins over field order when several match.
    """
    hits = [(p, f) for p, f in found if required <= set(f.columns) and not (exclude & set(f.columns))]
    if prefer:
        hits.sort(key=lambda pf: prefer not in pf[0].lower())
    return hits[0] if hits else None


def dendrograms(payload: Any) -> list[tuple[str, np.ndarray, tuple[str, ...]]]:
    """Every ``(path, linkage, labels)`` in ``payload``: objects with a linkage and labels."""
    out = []
    for path, value in walk(payload):
        if as_frame(value) is not None or isinstance(value, (str, int, float, list, tuple)) or value is None:
            continue
        linkage = field(value, "linkage_matrix")
        if linkage is None or isinstance(linkage, str):
            linkage = field(value, "linkage")
        labels = field(value, "labels")
        if labels is None:
            labels = field(value, "leaves")
        if linkage is None or labels is None or isinstance(linkage, str):
            continue
        frame = as_frame(linkage)
        z = frame.to_numpy(dtype=float) if frame is not None else np.asarray(linkage, dtype=float)
        title = field(value, "title") or field(value, "name") or path
        out.append((str(title), z, tuple(str(x) for x in labels)))
    return out


def scalars(payload: Any) -> list[tuple[str, Any]]:
    """Top-level scalar fields of ``payload`` (seed, counts, flags, short notes)."""
    names = ([f.name for f in dataclasses.fields(payload)] if dataclasses.is_dataclass(payload)
             else list(payload) if isinstance(payload, dict) else [])
    out = []
    for name in names:
        value = field(payload, name)
        if isinstance(value, (bool, int, float, str)) and not (isinstance(value, str) and (len(value) > 300 or not value)):
            out.append((name, value))
        elif isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value) and len(value) <= 12:
            out.append((name, ", ".join(value)))
    return out


def sub_statuses(payload: Any) -> list[tuple[str, str, str]]:
    """``(name, status, reason)`` of the payload's parts that carry their own status."""
    names = ([f.name for f in dataclasses.fields(payload)] if dataclasses.is_dataclass(payload)
             else list(payload) if isinstance(payload, dict) else [])
    out = []
    for name in names:
        value = field(payload, name)
        if value is None or as_frame(value) is not None or isinstance(value, (str, int, float, list, tuple)):
            continue
        status = field(value, "status")
        if status is not None:
            out.append((name, str(getattr(status, "value", status)), str(field(value, "reason", "") or "")))
    return out
