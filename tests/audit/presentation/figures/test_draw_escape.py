"""The SVG canvas escapes text exactly as ``xml.sax.saxutils`` does, without importing it.

``audit/presentation/figures/_draw.py`` has its own ``escape`` and ``quoteattr`` (saxutils pulls urllib.request,
http.client and email into every ``audit report``); the standard library's are the reference.
"""

from __future__ import annotations

from xml.sax.saxutils import escape as sax_escape
from xml.sax.saxutils import quoteattr as sax_quoteattr

import pytest

from judge_transfer_audit.presentation.figures._draw import escape, quoteattr

TEXTS = [
    "",
    "plain",
    "a<b>&c",
    'say "hi"',
    "it's",
    "both \" and ' here",
    "tab\tnew\nline\rret",
    "&amp; already",
    "é ü 中",
]


@pytest.mark.parametrize("text", TEXTS)
def test_escape_matches_saxutils(text):
    assert escape(text) == sax_escape(text)


@pytest.mark.parametrize("text", TEXTS)
def test_quoteattr_matches_saxutils(text):
    assert quoteattr(text) == sax_quoteattr(text)


def test_quoteattr_escapes_what_would_break_the_attribute():
    assert quoteattr("a\"b'c<") == '"a&quot;b\'c&lt;"'
