"""Length detector: words and characters per story."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from detectors.base import DETECTORS, Detector

#: A word is a maximal run of non-whitespace characters containing at least one letter or
#: digit (Unicode-aware): "don't" and "well-known" are one word each, a dash standing
#: alone between spaces or "..." is not a word. Shared with the sentence detector so that
#: sentence lengths sum to the word count. Group 1 is the word's first letter or digit: the
#: sentence detector assigns a word to the sentence that character falls in, so an opening
#: quote glued to a word ("“Now!”") does not pull it into the previous sentence.
WORD_PATTERN = re.compile(r"(?:(?!\s)[\W_])*([^\W_])\S*")


@DETECTORS.register("length")
class LengthDetector(Detector):
    """Word count and character count.

    ``n_words``: number of words as defined by :data:`WORD_PATTERN`.
    ``n_chars``: number of Unicode code points after stripping leading and trailing
    whitespace (inner spaces and punctuation count).

    Validated against hand counts on small texts (tests/detectors/test_length.py).
    """

    name = "length"
    version = "1"
    features = ("n_words", "n_chars")

    def params(self) -> dict[str, Any]:
        return {"word": WORD_PATTERN.pattern, "chars": "code points of text.strip()"}

    def compute(self, texts: list[str]) -> pd.DataFrame:
        n_words = np.fromiter((len(WORD_PATTERN.findall(t)) for t in texts), dtype=float, count=len(texts))
        n_chars = np.fromiter((len(t.strip()) for t in texts), dtype=float, count=len(texts))
        return pd.DataFrame({"n_words": n_words, "n_chars": n_chars})
