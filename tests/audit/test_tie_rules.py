import numpy as np
import pytest

from audit.errors import InputError
from audit.tie_rules import TIE_RULES, credit_ties

OUTCOMES = np.array(["win", "tie", "loss", "tie", "invalid", "win"], dtype=object)


def test_even_split_credits_half():
    credit = credit_ties(OUTCOMES, "even-split", np.random.default_rng(0))
    np.testing.assert_array_equal(credit[[0, 1, 2, 3, 5]], [1, 0.5, 0, 0.5, 1])
    assert np.isnan(credit[4])


def test_decisive_excludes_ties_and_strict_counts_them_against():
    decisive = credit_ties(OUTCOMES, "decisive", np.random.default_rng(0))
    assert np.isnan(decisive[[1, 3, 4]]).all()
    assert np.nanmean(decisive) == pytest.approx(2 / 3)
    strict = credit_ties(OUTCOMES, "strict", np.random.default_rng(0))
    assert np.nanmean(strict) == pytest.approx(2 / 5)


def test_random_rule_is_seeded_and_binary():
    many = np.array(["tie"] * 400, dtype=object)
    a = credit_ties(many, "random", np.random.default_rng(7))
    b = credit_ties(many, "random", np.random.default_rng(7))
    np.testing.assert_array_equal(a, b)
    assert set(np.unique(a)) == {0.0, 1.0}
    assert 0.4 < a.mean() < 0.6


def test_unknown_rule_lists_known_ones():
    with pytest.raises(InputError) as info:
        TIE_RULES.get("coin")
    assert "even-split" in str(info.value) and "decisive" in str(info.value)
