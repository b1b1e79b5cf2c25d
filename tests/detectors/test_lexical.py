"""Lexical detector against lexicalrichness called directly."""

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lexicalrichness import LexicalRichness

from judge_transfer_audit.detectors.lexical import LexicalDetector, lexical_tokens

VOCAB = (
    "the a cat dog ran quickly over moon she he said whispered light dark river stone "
    "old new don't well-known 42 “quote” It's Zoë"
).split()


def _random_texts(seed, n):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words = VOCAB[: rng.randint(2, len(VOCAB))]
        out.append(" ".join(rng.choice(words) for _ in range(rng.randint(1, 300))) + rng.choice(["", ".", " !!"]))
    return out


def test_tokens_equal_lexicalrichness_wordlist():
    for text in _random_texts(0, 100) + ["Well—known–fact: x-ray 3D, 'quoted' (yes)! “Curly”"]:
        assert lexical_tokens(text) == LexicalRichness(text).wordlist


@pytest.mark.parametrize("window", [1, 7, 50, 100])
def test_mattr_equals_lexicalrichness_exactly(window):
    texts = _random_texts(window, 60)
    ours = LexicalDetector(mattr_window=window).compute(texts)["mattr"]
    for text, value in zip(texts, ours):
        lr = LexicalRichness(text)
        if lr.words < window:
            assert math.isnan(value)
        else:
            assert value == lr.mattr(window_size=window)


@pytest.mark.parametrize("threshold", [0.72, 0.5, 0.9])
def test_mtld_equals_lexicalrichness_exactly(threshold):
    texts = _random_texts(int(threshold * 100), 60) + ["unique words only here", "a a a a a"]
    ours = LexicalDetector(mtld_threshold=threshold).compute(texts)["mtld"]
    for text, value in zip(texts, ours):
        assert value == LexicalRichness(text).mtld(threshold=threshold)


def test_empty_text_is_nan():
    out = LexicalDetector().compute(["", "!!!"])
    assert out.isna().all().all()


def test_bad_parameters_are_rejected():
    with pytest.raises(ValueError):
        LexicalDetector(mattr_window=0)
    with pytest.raises(ValueError):
        LexicalDetector(mtld_threshold=1.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=200), st.integers(1, 60))
def test_mattr_in_unit_interval(words, window):
    value = LexicalDetector(mattr_window=window).compute([" ".join(words)])["mattr"].iloc[0]
    assert np.isnan(value) or 0 < value <= 1
