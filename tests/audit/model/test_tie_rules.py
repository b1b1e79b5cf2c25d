import numpy as np
import pytest

from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.model.tie_rules import DECISIVE, EVEN_SPLIT, RANDOM, STRICT, TIE_RULES, credit_ties

OUTCOMES = np.array(["win", "tie", "loss", "tie", "invalid", "win"], dtype=object)


def test_even_split_credits_half():
    credit = credit_ties(OUTCOMES, EVEN_SPLIT, np.random.default_rng(0))
    np.testing.assert_array_equal(credit[[0, 1, 2, 3, 5]], [1, 0.5, 0, 0.5, 1])
    assert np.isnan(credit[4])


def test_decisive_excludes_ties_and_strict_counts_them_against():
    decisive = credit_ties(OUTCOMES, DECISIVE, np.random.default_rng(0))
    assert np.isnan(decisive[[1, 3, 4]]).all()
    assert np.nanmean(decisive) == pytest.approx(2 / 3)
    strict = credit_ties(OUTCOMES, STRICT, np.random.default_rng(0))
    assert np.nanmean(strict) == pytest.approx(2 / 5)


def test_random_rule_is_seeded_and_binary():
    many = np.array(["tie"] * 400, dtype=object)
    a = credit_ties(many, RANDOM, np.random.default_rng(7))
    b = credit_ties(many, RANDOM, np.random.default_rng(7))
    np.testing.assert_array_equal(a, b)
    assert set(np.unique(a)) == {0.0, 1.0}
    assert 0.4 < a.mean() < 0.6


def test_unknown_rule_lists_known_ones():
    with pytest.raises(InputError) as info:
        TIE_RULES.get("coin")
    assert "even-split" in str(info.value) and "decisive" in str(info.value)


# ----------------------------------------------------------------- rules as objects
from judge_transfer_audit.model.tie_rules import TieRule, resolve_tie_rule  # noqa: E402


def test_each_rule_says_what_it_counts():
    assert [r.denominator(6, 2, 2) for r in (EVEN_SPLIT, DECISIVE, STRICT, RANDOM)] == [10, 8, 10, 10]
    assert DECISIVE.credit_values == {0.0, 1.0} and not DECISIVE.counts_ties
    assert EVEN_SPLIT.credit_values == {0.0, 0.5, 1.0}
    assert RANDOM.credit_values == {0.0, 1.0} and RANDOM.counts_ties


def test_a_rule_is_checked_when_made_and_when_it_draws():
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        TieRule("bad", "", (1.5,))
    with pytest.raises(ValueError, match="need a draw"):
        TieRule("bad", "", (0.0, 1.0))
    liar = TieRule("liar", "", (0.0, 1.0), draw=lambda n, rng: np.full(n, 0.5))
    with pytest.raises(ValueError, match="outside its tie_credits"):
        credit_ties(OUTCOMES, liar, np.random.default_rng(0))


def test_an_unknown_or_mistyped_rule_is_an_input_error():
    with pytest.raises(InputError, match="unknown tie rule 'coin'"):
        resolve_tie_rule("coin")
    with pytest.raises(InputError, match="a tie rule is a name"):
        resolve_tie_rule(0.5)
    assert resolve_tie_rule("decisive") is DECISIVE and resolve_tie_rule(STRICT) is STRICT


QUARTER = TieRule("quarter", "a tie credits 0.25 to the focal system", (0.25,))
ABSTAIN = TieRule("abstain", "ties are not counted (a second decisive-like rule)", ())


@pytest.fixture
def new_rules(monkeypatch):
    """Two rules registered for the test (the registry is restored afterwards)."""
    monkeypatch.setitem(TIE_RULES._items, "quarter", QUARTER)
    monkeypatch.setitem(TIE_RULES._items, "abstain", ABSTAIN)


def test_judge_side_honours_a_new_rule(new_rules):
    import pandas as pd

    from judge_transfer_audit.verdict.judge_side import summarise_outcomes

    outcomes = pd.DataFrame({"outcome": ["win"] * 6 + ["loss"] * 2 + ["tie"] * 2 + ["invalid"]})
    for rule, rate, n in ((QUARTER, (6 + 0.5) / 10, 10), (ABSTAIN, 6 / 8, 8)):
        outcomes["credit"] = credit_ties(outcomes["outcome"].to_numpy(), rule, np.random.default_rng(0))
        s = summarise_outcomes(outcomes, rule)
        assert (s["rate"], s["n_credited"], s["ties"], s["invalid"]) == (pytest.approx(rate), n, 2, 1)
    # credits computed under one rule and summarised under another are refused, not mixed
    with pytest.raises(ValueError, match="'quarter' tie rule"):
        summarise_outcomes(outcomes, QUARTER)


def test_cell_comparison_credits_human_ties_by_a_new_rule(new_rules):
    from judge_transfer_audit.verdict.tables import human_credits

    y = np.array([1.0, np.nan, 0.0, np.nan])
    np.testing.assert_array_equal(human_credits(y, QUARTER, np.random.default_rng(0)), [1, 0.25, 0, 0.25])
    assert np.isnan(human_credits(y, ABSTAIN, np.random.default_rng(0))[[1, 3]]).all()


def test_readers_accept_the_credits_of_a_new_rule_and_only_those(new_rules):
    import pandas as pd

    from judge_transfer_audit.statistics.readers._common import check_judge_credits

    credits = pd.DataFrame(
        {
            "pair_id": ["p1", "p2", "p3"],
            "matchup": "m",
            "criterion": "empathy",
            "judge": "j",
            "credit": [1.0, 0.25, np.nan],
        }
    )
    assert check_judge_credits(credits, QUARTER)["credit"].iloc[1] == 0.25
    with pytest.raises(InputError, match="'even-split' tie rule .* 0, 0.5, 1"):
        check_judge_credits(credits)
    with pytest.raises(InputError, match="'abstain' tie rule"):
        check_judge_credits(credits, ABSTAIN)


def test_a_run_under_a_new_rule_uses_it_in_transfer_and_readers(new_rules):
    from judge_transfer_audit.engine.pipeline import run_audit
    from judge_transfer_audit.model.checks import Status
    from judge_transfer_audit.model.spec import AuditSpec
    from tests.audit.synthetic import make_audit_data

    data = make_audit_data(n_pairs=16, n_readers=4, seed=5, ties_every=3)
    result = run_audit(data, AuditSpec(tie_rule=QUARTER, uncertainty=False, surface=False, n_boot=200))
    assert result.provenance.tie_rule == "quarter"
    assert result.readers.status is Status.PASS, result.readers.reason
    judged = [c.judge for c in result.cells if c.judge is not None]
    assert judged and any(j.ties for j in judged)
    for j in judged:
        assert j.tie_rule == "quarter"
        assert j.rate == pytest.approx((j.wins + 0.25 * j.ties) / (j.wins + j.losses + j.ties))
    credits = set(result.judge_pairs.to_frame()["credit"].dropna())
    assert 0.25 in credits and 0.5 not in credits


def test_agreement_sees_the_judges_choice_not_its_credit():
    # a strict rule credits a tie 0, but the judge did not prefer the other system
    import pandas as pd

    from judge_transfer_audit.engine.pipeline import judge_choices

    outcomes = pd.DataFrame(
        {
            "pair_id": ["p1", "p2", "p3", "p4"],
            "criterion": "empathy",
            "judge": "j",
            "outcome": ["win", "tie", "loss", "invalid"],
        }
    )
    for rule in (STRICT, DECISIVE, EVEN_SPLIT):
        outcomes["credit"] = credit_ties(outcomes["outcome"].to_numpy(), rule, np.random.default_rng(0))
        y = judge_choices(outcomes, "j", ("empathy",))["y_judge"].to_numpy(float)
        np.testing.assert_array_equal(y[:3], [1.0, 0.5, 0.0])
        assert np.isnan(y[3])
