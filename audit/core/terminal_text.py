"""Text from inputs made safe to print on a terminal: ``printable(text) -> str``.

A column name, a system name, a server's error text or a file name can hold escape
sequences (``ESC [ 31 m`` recolours, ``ESC ] 0 ; title BEL`` retitles the window, OSC 8 makes
links, a bare CR rewrites the line) or bidirectional overrides that make a line read
differently from what it holds. Every such character is shown as a visible escape instead
(``\\x1b``, ``\\u202e``), so the user sees exactly what the input contains and the terminal
is never driven by it. Printable text, accents and emoji are left alone.
"""

from __future__ import annotations

import re

# C0 controls (tab and newline included), DEL, C1 controls, the bidirectional
# embeddings/overrides/isolates, line/paragraph separators, zero-width marks and the BOM.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: object, *, keep_newlines: bool = False) -> str:
    """``str(text)`` with every control or direction-changing character escaped.

    Parameters
    ----------
    text : object
        Anything; converted with ``str``.
    keep_newlines : bool
        Keep ``\\n`` (for multi-line messages the program itself composed); every other
        control character is still escaped.
    """
    value = str(text)
    if keep_newlines:
        return "\n".join(_UNPRINTABLE.sub(_escape, line) for line in value.split("\n"))
    return _UNPRINTABLE.sub(_escape, value)


__all__ = ["printable"]
