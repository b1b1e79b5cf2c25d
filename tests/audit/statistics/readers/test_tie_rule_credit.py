"""Every reader-side rate credits and counts a tie by the run's TieRule object.

Two rules are registered for these tests only: ``quarter`` (a tie credits 0.25) and
``abstain`` (ties leave the denominator). The expected figures are counted by hand from the
votes; the run-level test checks that the transfer table, the reader heat maps, agreement and
the report labels all follow the same rule.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.model.tie_rules import EVEN_SPLIT, RANDOM, STRICT, TIE_RULES, TieRule, credit_ties
from judge_transfer_audit.statistics.readers import analyse_readers
from judge_transfer_audit.statistics.readers._common import check_judge_credits, check_votes
from judge_transfer_audit.statistics.readers.divergence import divergent_pairs
from judge_transfer_audit.statistics.readers.groups import reader_groups
from judge_transfer_audit.statistics.readers.rates import HUMANS_POOLED, reader_rates
from judge_transfer_audit.statistics.readers.timing import leave_one_reader_out

QUARTER = TieRule("quarter", "a tie credits a quarter to the focal system", (0.25,))
ABSTAIN = TieRule("abstain", "ties are not counted at all", ())
#: rule -> the credit of a tie, or None when ties are not counted
TIE_CREDIT = {QUARTER: 0.25, ABSTAIN: None, EVEN_SPLIT: 0.5, STRICT: 0.0}


@pytest.fixture
def new_rules(monkeypatch):
    monkeypatch.setitem(TIE_RULES._items, "quarter", QUARTER)
    monkeypatch.setitem(TIE_RULES._items, "abstain", ABSTAIN)


def _votes() -> pd.DataFrame:
    """Three readers x four pairs, one criterion; reader r0 ties twice, r1 once, r2 never."""
    y = {
        "r0": [1.0, np.nan, np.nan, 0.0],
        "r1": [1.0, 1.0, np.nan, 0.0],
        "r2": [0.0, 1.0, 1.0, 1.0],
    }
    rows = [
        {
            "pair_id": f"p{i}",
            "reader_id": r,
            "criterion": "empathy",
            "matchup": "a vs b",
            "y": v,
            "reader_group": "g1" if r == "r0" else "g2",
        }
        for r, ys in y.items()
        for i, v in enumerate(ys)
    ]
    return check_votes(pd.DataFrame(rows))


def _hand_rate(ys, credit):
    ys = np.asarray(ys, float)
    wins, ties = float(np.sum(ys == 1)), int(np.isnan(ys).sum())
    n = int(np.sum(~np.isnan(ys))) + (ties if credit is not None else 0)
    return (wins + (credit or 0.0) * ties) / n, n, ties


def _judge() -> pd.DataFrame:
    outcome = ["win", "tie", "loss", "invalid"]
    return pd.DataFrame(
        {
            "pair_id": ["p0", "p1", "p2", "p3"],
            "matchup": "a vs b",
            "criterion": "empathy",
            "judge": "j",
            "outcome": outcome,
        }
    )


@pytest.mark.parametrize("rule", [QUARTER, ABSTAIN, EVEN_SPLIT, STRICT])
def test_reader_and_judge_rates_follow_the_rule(new_rules, rule):
    votes = _votes()
    judge = _judge()
    judge["credit"] = credit_ties(judge["outcome"].to_numpy(), rule, np.random.default_rng(0))
    res = reader_rates(votes, judge, fit_glmm_if_missing=False, pools={}, tie_rule=rule).rates
    for reader in ("r0", "r1", "r2"):
        row = res[(res["row_label"] == reader)].iloc[0]
        rate, n, ties = _hand_rate(votes.loc[votes["reader_id"] == reader, "y"], TIE_CREDIT[rule])
        assert (row["rate"], row["n"], row["n_ties"]) == (pytest.approx(rate), n, ties)
    pooled = res[res["row_label"] == HUMANS_POOLED].iloc[0]
    rate, n, ties = _hand_rate(votes["y"], TIE_CREDIT[rule])
    assert (pooled["rate"], pooled["n"], pooled["n_ties"]) == (pytest.approx(rate), n, 3)
    j = res[res["row_kind"] == "judge"].iloc[0]
    # win, tie, loss (the invalid output is left out, not a loss)
    credit = TIE_CREDIT[rule]
    expected = (1 + credit) / 3 if credit is not None else 1 / 2
    assert (j["rate"], j["n"], j["n_ties"]) == (pytest.approx(expected), 3 if credit is not None else 2, 1)


def test_an_uncounted_judge_tie_is_not_an_invalid_output(new_rules):
    judge = _judge()
    judge["credit"] = credit_ties(judge["outcome"].to_numpy(), ABSTAIN, np.random.default_rng(0))
    assert reader_rates(_votes(), judge, fit_glmm_if_missing=False, tie_rule=ABSTAIN).n_judge_invalid == 1


def test_credits_that_hide_ties_need_the_outcome_column(new_rules):
    judge = _judge()
    judge["credit"] = credit_ties(judge["outcome"].to_numpy(), STRICT, np.random.default_rng(0))
    # under strict a tie is credited 0 like a loss: without the outcome it cannot be told apart
    with pytest.raises(Exception, match="does not tell a tie"):
        check_judge_credits(judge.drop(columns="outcome"), STRICT)
    checked = check_judge_credits(judge, STRICT)
    assert list(checked["outcome"]) == ["win", "tie", "loss", "invalid"]
    # under quarter the credit 0.25 says "tie": the outcome is read off it
    judge["credit"] = credit_ties(judge["outcome"].to_numpy(), QUARTER, np.random.default_rng(0))
    assert list(check_judge_credits(judge.drop(columns="outcome"), QUARTER)["outcome"]) == list(judge["outcome"])


def test_a_judge_tie_credited_like_a_win_is_not_a_unanimous_verdict(new_rules):
    """Under strict (tie credit 0) the judge's tie on p1 must not count as "the judge chose the other"."""
    votes = _votes()
    judge = _judge()
    judge["credit"] = credit_ties(judge["outcome"].to_numpy(), STRICT, np.random.default_rng(0))
    res = divergent_pairs(votes, judge, tie_rule=STRICT)
    assert set(res.cells["pair_id"]) == {"p0", "p2"}  # p1 is a tie, p3 invalid
    p0 = res.cells.set_index("pair_id").loc["p0"]
    rate, n, _ = _hand_rate(votes.loc[votes["pair_id"] == "p0", "y"], 0.0)
    assert (p0["reader_rate"], p0["n_votes"]) == (pytest.approx(rate), n)


@pytest.mark.parametrize("rule", [QUARTER, ABSTAIN])
def test_divergence_groups_and_leave_one_out_follow_the_rule(new_rules, rule):
    votes = _votes()
    credit = TIE_CREDIT[rule]
    judge = _judge()
    judge["credit"] = credit_ties(judge["outcome"].to_numpy(), rule, np.random.default_rng(0))
    p2 = divergent_pairs(votes, judge, tie_rule=rule).cells.set_index("pair_id").loc["p2"]
    rate, n, _ = _hand_rate(votes.loc[votes["pair_id"] == "p2", "y"], credit)
    assert (p2["reader_rate"], p2["n_votes"]) == (pytest.approx(rate), n)

    groups = reader_groups(votes, rng=0, pools={}, tie_rule=rule).by_group.set_index("group")
    for group, readers in (("g1", ["r0"]), ("g2", ["r1", "r2"])):
        mine = votes[votes["reader_id"].isin(readers)]
        rate, n, _ = _hand_rate(mine["y"], credit)
        assert groups.loc[group, "vote_rate"] == pytest.approx(rate)
        assert groups.loc[group, "n_votes"] == n

    loo = leave_one_reader_out(votes, pools={}, tie_rule=rule).set_index("reader_id")
    rate_all, _, _ = _hand_rate(votes["y"], credit)
    without, _, _ = _hand_rate(votes.loc[votes["reader_id"] != "r0", "y"], credit)
    assert loo.loc["r0", "rate_all"] == pytest.approx(rate_all)
    assert loo.loc["r0", "rate_without"] == pytest.approx(without)


def test_the_analysis_draws_a_random_rule_once_and_reproducibly():
    votes = _votes()
    a = analyse_readers(votes, None, fit_glmm_if_missing=False, rng=3, tie_rule=RANDOM, pools={})
    b = analyse_readers(votes, None, fit_glmm_if_missing=False, rng=3, tie_rule=RANDOM, pools={})
    pd.testing.assert_frame_equal(a.rates.rates, b.rates.rates)
    # every tie got 0 or 1: the pooled rate is a count of wins over all 12 votes
    pooled = a.rates.rates.set_index("row_label").loc[HUMANS_POOLED]
    assert pooled["n"] == 12 and (pooled["rate"] * 12) == pytest.approx(round(pooled["rate"] * 12))
    # the readers' rates are drawn from the same credits as the pooled one
    readers = a.rates.rates[a.rates.rates["row_kind"] == "reader"]
    assert (readers["rate"] * readers["n"]).sum() == pytest.approx(pooled["rate"] * 12)


@pytest.mark.slow
def test_a_run_under_a_new_rule_is_consistent_in_every_section(new_rules):
    """Transfer, the reader heat maps, agreement and the report labels follow one rule."""
    from judge_transfer_audit.engine.pipeline import run_audit
    from judge_transfer_audit.model.spec import AuditSpec
    from judge_transfer_audit.reports.html import render_html
    from judge_transfer_audit.reports.terminal import judge_line
    from tests.audit.synthetic import make_audit_data

    data = make_audit_data(n_pairs=16, n_readers=4, seed=5, ties_every=3)
    votes = data.votes
    tied = votes.index[::5]
    votes.loc[tied, "y"] = np.nan
    votes.loc[tied, "choice"] = "tie"
    results = {
        rule: run_audit(data, AuditSpec(tie_rule=rule, uncertainty=False, surface=False, n_boot=200))
        for rule in (QUARTER, ABSTAIN)
    }
    for rule, result in results.items():
        rates = result.readers.payload.rates.rates
        for cell in result.cells:
            if cell.judge is None:
                continue
            scope = (rates["matchup"] == cell.matchup) & (rates["criterion"] == cell.criterion)
            judge_row = rates[scope & (rates["row_kind"] == "judge") & (rates["row_label"] == "ensemble")].iloc[0]
            # the heat map's judge rate is the transfer table's judge rate
            assert judge_row["rate"] == pytest.approx(cell.judge.rate)
            n_credited = rule.denominator(cell.judge.wins, cell.judge.losses, cell.judge.ties)
            assert judge_row["n"] == n_credited and judge_row["n_ties"] == cell.judge.ties
            human = votes[(votes["matchup"] == cell.matchup) & (votes["criterion"] == cell.criterion)]
            pooled = rates[scope & (rates["row_label"] == HUMANS_POOLED)].iloc[0]
            rate, n, ties = _hand_rate(human["y"], TIE_CREDIT[rule])
            assert (pooled["rate"], pooled["n"], pooled["n_ties"]) == (pytest.approx(rate), n, ties)
        assert rule.summary in judge_line(result)
        assert rule.summary in render_html(result)
    # agreement reads the judge's choice (a tie is a tie), not its credit: the same under both rules
    pd.testing.assert_frame_equal(results[QUARTER].agreement.to_frame(), results[ABSTAIN].agreement.to_frame())
