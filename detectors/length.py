"""Length detector: words and characters per story."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from judge_transfer_audit.detectors.base import DETECTORS, Detector

#: A word is a maximal run of non-whitespace characters containing at least one letter or
#: digit (Unicode-aware): "don't" and "well-known" are one word each, a dash standing
#: alone between spaces or "..." is not a word. Shared with the sentence detector so that
#: sentence lengths sum to the word count. The pattern matches each such run once, from its
#: first letter or digit to its end (leading punctuation such as an opening quote is not
#: part of the match), so ``len(findall)`` counts words and ``match.start()`` is the
#: position the sentence detector uses to place the word: "“Now!”" after a full stop
#: belongs to the new sentence.
WORD_PATTERN = re.compile(r"[^\W_]\S*")


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
    parallel_safe = True
    features = ("n_words", "n_chars")

    def params(self) -> dict[str, Any]:
        return {"word": WORD_PATTERN.pattern, "chars": "code points of text.strip()"}

    def compute(self, texts: list[str]) -> pd.DataFrame:
        n_words = np.fromiter((len(WORD_PATTERN.findall(t)) for t in texts), dtype=float, count=len(texts))
        n_chars = np.fromiter((len(t.strip()) for t in texts), dtype=float, count=len(texts))
        return pd.DataFrame({"n_words": n_words, "n_chars": n_chars})
