"""Sentence detector: sentence count and the moments of sentence length (in words)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from detectors.base import DETECTORS, Detector
from detectors.length import WORD_PATTERN


@lru_cache(maxsize=1)
def _sentencizer():
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    # spaCy refuses texts over 1,000,000 characters to protect the parser's memory; a blank
    # pipeline with the rule-based sentencizer only tokenises, so a whole novel is fine.
    nlp.max_length = 50_000_000
    return nlp


def sentence_lengths(texts: list[str], batch_size: int = 256) -> list[np.ndarray]:
    """Words per sentence for each text (sentences without any word are left out).

    Sentences come from spaCy's rule-based ``sentencizer`` on ``spacy.blank("en")`` (no
    model download); words are :data:`detectors.length.WORD_PATTERN` matches, each
    assigned to the sentence its first letter or digit falls in.
    """
    nlp = _sentencizer()
    out = []
    for text, doc in zip(texts, nlp.pipe(texts, batch_size=batch_size)):
        starts = np.fromiter((s.start_char for s in doc.sents), dtype=np.int64)
        words = np.fromiter((m.start() for m in WORD_PATTERN.finditer(text)), dtype=np.int64)
        if len(starts) == 0 or len(words) == 0:
            out.append(np.zeros(0, dtype=np.int64))
            continue
        which = np.searchsorted(starts, words, side="right") - 1
        counts = np.bincount(np.maximum(which, 0), minlength=len(starts))
        out.append(counts[counts > 0])
    return out


def length_moments(lengths: list[np.ndarray]) -> pd.DataFrame:
    """Count, mean, sd, skewness and excess kurtosis of each array, vectorised over arrays.

    Definitions (the same as pandas ``Series.mean/std/skew/kurt``):
    sd is the sample standard deviation (ddof = 1, needs n >= 2); skewness is the adjusted
    Fisher-Pearson coefficient G1 = sqrt(n(n-1))/(n-2) * m3/m2^1.5 (n >= 3); kurtosis is the
    bias-adjusted *excess* kurtosis G2 = (n-1)/((n-2)(n-3)) * ((n+1) g2 + 6) with
    g2 = m4/m2^2 - 3 (n >= 4), where mk are population central moments. Below those n, or
    when all lengths are equal (m2 = 0), the statistic is NaN (undefined), not 0.
    """
    n = np.fromiter((len(a) for a in lengths), dtype=float, count=len(lengths))
    idx = np.repeat(np.arange(len(lengths)), n.astype(np.int64))
    x = np.concatenate(lengths).astype(float) if len(lengths) else np.zeros(0)
    k = len(lengths)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.bincount(idx, weights=x, minlength=k) / n
        dev = x - mean[idx]
        m2 = np.bincount(idx, weights=dev**2, minlength=k) / n
        m3 = np.bincount(idx, weights=dev**3, minlength=k) / n
        m4 = np.bincount(idx, weights=dev**4, minlength=k) / n
        sd = np.sqrt(m2 * n / (n - 1))
        g1 = m3 / m2**1.5
        g2 = m4 / m2**2 - 3.0
        skew = np.sqrt(n * (n - 1)) / (n - 2) * g1
        kurt = (n - 1) / ((n - 2) * (n - 3)) * ((n + 1) * g2 + 6.0)
    mean[n < 1] = np.nan
    sd[n < 2] = np.nan
    flat = m2 <= 0
    skew[(n < 3) | flat] = np.nan
    kurt[(n < 4) | flat] = np.nan
    return pd.DataFrame(
        {
            "n_sentences": n,
            "sentence_length_mean": mean,
            "sentence_length_sd": sd,
            "sentence_length_skewness": skew,
            "sentence_length_kurtosis": kurt,
        }
    )


@DETECTORS.register("sentences")
class SentenceDetector(Detector):
    """Sentence count and sentence-length mean, sd, skewness and excess kurtosis.

    Sentence length is counted in words (see :func:`sentence_lengths`); the moment
    definitions are those of :func:`length_moments`. Validated against hand-counted
    sentence lengths on small texts and against pandas' ``std/skew/kurt`` on them
    (tests/detectors/test_sentences.py).
    """

    name = "sentences"
    version = "1"
    parallel_safe = True
    features = (
        "n_sentences",
        "sentence_length_mean",
        "sentence_length_sd",
        "sentence_length_skewness",
        "sentence_length_kurtosis",
    )

    def __init__(self, batch_size: int = 256):
        self.batch_size = int(batch_size)

    def params(self) -> dict[str, Any]:
        # The installed version from its metadata, not ``spacy.__version__``: importing spaCy
        # takes ~3 s, which would dominate a fully cached re-run.
        from importlib.metadata import version

        return {
            "segmenter": "spacy.blank('en') + sentencizer",
            "spacy": version("spacy").rsplit(".", 1)[0],
            "unit": "words (detectors.length.WORD_PATTERN), placed by first letter or digit",
            "sd": "sample (ddof=1)",
            "skewness": "adjusted Fisher-Pearson G1",
            "kurtosis": "bias-adjusted excess G2",
        }

    def compute(self, texts: list[str]) -> pd.DataFrame:
        return length_moments(sentence_lengths(texts, batch_size=self.batch_size))
