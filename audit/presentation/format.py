"""Rounding for display only (compute code never rounds): numbers, rates, intervals."""

from __future__ import annotations

import math
import numbers
import re
from typing import Any

DASH = "–"


def is_missing(x: Any) -> bool:
    if x is None:
        return True
    return isinstance(x, numbers.Real) and math.isnan(float(x))


def pct(x: Any, digits: int = 1) -> str:
    """0.5712 -> '57.1%'; missing -> '–'."""
    if is_missing(x):
        return DASH
    return f"{100 * float(x):.{digits}f}%"


def interval(lo: Any, hi: Any, digits: int = 1) -> str:
    """Probability-scale bounds -> '[48.2, 66.0]' (percent); missing -> '–'."""
    if is_missing(lo) or is_missing(hi):
        return DASH
    return f"[{100 * float(lo):.{digits}f}, {100 * float(hi):.{digits}f}]"


def num(x: Any, digits: int = 3) -> str:
    """A general number: 4 significant digits style for floats, ints as is."""
    if type(x) is float:  # the common case, without the generic checks below (same text)
        return _float_text(x, digits)
    if is_missing(x):
        return DASH
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int) or (
        hasattr(x, "is_integer") and isinstance(x, float) and x.is_integer() and abs(x) < 1e6 and digits == 0
    ):
        return str(int(x))
    if isinstance(x, str):  # a number written as text is formatted as the number; other text as is
        try:
            v = float(x)
        except ValueError:
            return x
    elif isinstance(x, numbers.Real):
        v = float(x)
    else:
        return str(x)
    if math.isinf(v):
        return "∞" if v > 0 else "−∞"
    if v != 0 and (abs(v) < 10**-digits or abs(v) >= 1e6):
        return f"{v:.{digits}g}"
    return f"{v:.{digits}f}"


def _float_text(v: float, digits: int) -> str:
    """:func:`num` of a Python float."""
    if v != v:
        return DASH
    if digits == 0 and v.is_integer() and abs(v) < 1e6:
        return str(int(v))
    if math.isinf(v):
        return "∞" if v > 0 else "−∞"
    if v != 0 and (abs(v) < 10**-digits or abs(v) >= 1e6):
        return f"{v:.{digits}g}"
    return f"{v:.{digits}f}"


def yes_no(x: Any) -> str:
    if x is None:
        return DASH
    return "yes" if bool(x) else "no"


def cell_value(x: Any) -> str:
    """Any table value as display text (tables of optional sections)."""
    kind = type(x)
    if kind is str:
        return x
    if kind is float:
        return _float_text(x, 3)
    if isinstance(x, bool):
        return yes_no(x)
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        return num(x)
    if hasattr(x, "item") and not isinstance(x, (str, bytes)):
        if getattr(x, "size", 1) == 1:  # a numpy scalar or one-element array; larger arrays fall through
            return cell_value(x.item())
    if is_missing(x):
        return DASH
    if hasattr(x, "value") and not isinstance(x, str):  # enums
        return str(x.value)
    return str(x)


#: column names that hold counts (pairs, readers, votes...): a whole number there prints as ``7``,
#: not ``7.000`` (a float column: a mean of readers per pair, or NaN where a count is missing)
_COUNT_NAME = re.compile(r"^(n|k)$|^n_|_n$|(^|_)(count|counts|pairs|readers|votes|rows|items|needed)(_|$)")


def is_count_name(name: Any) -> bool:
    """True for a column that holds counts (``n_pairs``, ``pairs_needed``, ``readers_per_pair``)."""
    return bool(_COUNT_NAME.search(str(name).lower()))


def count_or_value(x: Any) -> str:
    """A count column's value: a whole number as an integer (``7``), anything else as :func:`cell_value`."""
    if isinstance(x, float) and x == x and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    if hasattr(x, "item") and getattr(x, "size", 1) == 1 and not isinstance(x, (str, bytes)):
        return count_or_value(x.item())
    return cell_value(x)
