"""Length detector against hand counts."""

import pytest

from judge_transfer_audit.detectors.length import LengthDetector


@pytest.mark.parametrize(
    "text, words, chars",
    [
        ("The cat sat.", 3, 12),
        ("  Don't stop — now!  ", 3, 17),  # "Don't", "stop", "now!"; the lone dash is no word
        ("well-known 3.5 ... _", 2, 20),  # "..." and "_" are not words
        ("", 0, 0),
        ("“Go,” she said.", 3, 15),
        ("Zoë naïve café", 3, 14),
    ],
)
def test_length_matches_hand_counts(text, words, chars):
    out = LengthDetector().compute([text])
    assert out["n_words"].tolist() == [words]
    assert out["n_chars"].tolist() == [chars]


def test_length_is_one_row_per_text_in_order():
    out = LengthDetector().compute(["a b", "a", "a b c"])
    assert out["n_words"].tolist() == [2, 1, 3]
    assert list(out.columns) == list(LengthDetector.features)
