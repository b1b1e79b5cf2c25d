"""Sentence detector against hand-counted sentence lengths and pandas' moment definitions."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from detectors.sentences import SentenceDetector, length_moments, sentence_lengths

# Hand-counted: words are whitespace-separated chunks with a letter or digit in them.
HAND = [
    ("The cat sat on the mat. It was happy! Was it? Yes, very much so.", [6, 3, 2, 4]),
    ('It cost 3.5 dollars. Wait... what? She said "run" and ran.', [4, 2, 5]),
    ("No punctuation at all here", [5]),
    ("“Go,” she said. “Now!” He ran — fast. Don’t stop.", [3, 1, 3, 2]),
    ("Hello.\n\nA new paragraph without a stop\nAnother line.", [1, 8]),
    ("", []),
    ("... !!!", []),
]


@pytest.mark.parametrize("text, lengths", HAND)
def test_sentence_lengths_match_hand_counts(text, lengths):
    assert sentence_lengths([text])[0].tolist() == lengths


def test_moments_match_pandas_definitions():
    frame = SentenceDetector().compute([HAND[0][0], HAND[1][0], HAND[3][0]])
    for row, (_, lengths) in zip(frame.itertuples(), [HAND[0], HAND[1], HAND[3]]):
        s = pd.Series(lengths, dtype=float)
        assert row.n_sentences == len(lengths)
        assert row.sentence_length_mean == pytest.approx(s.mean(), rel=1e-12)
        assert row.sentence_length_sd == pytest.approx(s.std(ddof=1), rel=1e-12)
        assert row.sentence_length_skewness == pytest.approx(s.skew(), rel=1e-10)
        if len(lengths) >= 4:
            assert row.sentence_length_kurtosis == pytest.approx(s.kurt(), rel=1e-10)
        else:
            assert np.isnan(row.sentence_length_kurtosis)


def test_hand_computed_moments():
    # lengths 6, 3, 2, 4: mean 3.75, sample sd sqrt(8.75/3); G1, G2 worked by hand below.
    x = np.array([6, 3, 2, 4.0])
    m2, m3, m4 = (np.mean((x - 3.75) ** k) for k in (2, 3, 4))
    g1, g2 = m3 / m2**1.5, m4 / m2**2 - 3
    out = length_moments([x.astype(int)]).iloc[0]
    assert out["sentence_length_sd"] == pytest.approx(np.sqrt(8.75 / 3), rel=1e-12)
    assert out["sentence_length_skewness"] == pytest.approx(np.sqrt(12) / 2 * g1, rel=1e-12)
    assert out["sentence_length_kurtosis"] == pytest.approx(3 / 2 * (5 * g2 + 6), rel=1e-12)


def test_undefined_moments_are_nan_not_zero():
    out = length_moments([np.array([], dtype=int), np.array([5]), np.array([4, 4, 4, 4])])
    assert np.isnan(out.loc[0, "sentence_length_mean"])
    assert np.isnan(out.loc[1, "sentence_length_sd"])
    assert out.loc[2, "sentence_length_sd"] == 0
    assert np.isnan(out.loc[2, "sentence_length_skewness"]) and np.isnan(out.loc[2, "sentence_length_kurtosis"])


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(st.integers(1, 60), min_size=0, max_size=40), min_size=1, max_size=5))
def test_vectorised_moments_equal_per_array_pandas(arrays):
    out = length_moments([np.array(a, dtype=int) for a in arrays])
    for k, a in enumerate(arrays):
        s = pd.Series(a, dtype=float)
        if len(a) >= 3 and s.var() > 0:
            assert out.loc[k, "sentence_length_skewness"] == pytest.approx(s.skew(), rel=1e-9, abs=1e-9)
        if len(a) >= 4 and s.var() > 0:
            assert out.loc[k, "sentence_length_kurtosis"] == pytest.approx(s.kurt(), rel=1e-9, abs=1e-9)


def test_text_longer_than_spacy_default_limit():
    """spaCy's 1,000,000-character guard is for its parser; the sentencizer handles a novel."""
    text = "The cat sat down. It slept well! " * 32_000  # ~1.09 million characters
    assert len(text) > 1_000_000
    out = SentenceDetector().compute([text]).iloc[0]
    assert out["n_sentences"] == 64_000 and out["sentence_length_mean"] == 3.5


def test_cache_key_does_not_import_spacy():
    """A fully cached re-run must not pay spaCy's ~3 s import just to build the cache key."""
    import subprocess
    import sys

    code = (
        "import sys; from detectors.sentences import SentenceDetector; key = SentenceDetector().cache_key(); "
        "assert key['params']['spacy'], key; print('spacy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
