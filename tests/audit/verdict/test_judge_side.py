import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.model.data import AuditData
from judge_transfer_audit.model.tie_rules import DECISIVE, EVEN_SPLIT, STRICT
from judge_transfer_audit.verdict.judge_side import judge_pair_outcomes, summarise_outcomes
from tests.audit.synthetic import make_audit_data


def _data(scores):
    pairs = pd.DataFrame(
        [
            {
                "pair_id": "p1",
                "system_a": "x",
                "system_b": "y",
                "focal": "x",
                "other": "y",
                "matchup": "x vs y",
                "group_id": "",
            },
            {
                "pair_id": "p2",
                "system_a": "x",
                "system_b": "y",
                "focal": "x",
                "other": "y",
                "matchup": "x vs y",
                "group_id": "",
            },
        ]
    )
    return AuditData(votes=pd.DataFrame(), pairs=pairs, judge_scores=pd.DataFrame(scores))


def _score(pid, system, crit, score, sample=0, judge="j"):
    return {
        "pair_id": pid,
        "system": system,
        "criterion": crit,
        "judge": judge,
        "sample": sample,
        "score": score,
        "line": 0,
    }


def test_outcomes_and_aggregate_from_scalar_scores():
    data = _data(
        [
            _score("p1", "x", "a", 4),
            _score("p1", "y", "a", 3),
            _score("p1", "x", "b", 2),
            _score("p1", "y", "b", 3),
            _score("p2", "x", "a", 3),
            _score("p2", "y", "a", 3),
            _score("p2", "x", "b", np.nan),
            _score("p2", "y", "b", 5),
        ]
    )
    out = judge_pair_outcomes(data, EVEN_SPLIT, np.random.default_rng(0)).set_index(["pair_id", "criterion"])
    assert out.loc[("p1", "a"), "outcome"] == "win"
    assert out.loc[("p1", "b"), "outcome"] == "loss"
    assert out.loc[("p2", "a"), "outcome"] == "tie" and out.loc[("p2", "a"), "credit"] == 0.5
    assert out.loc[("p2", "b"), "outcome"] == "invalid" and np.isnan(out.loc[("p2", "b"), "credit"])
    # aggregate: p1 mean 3.0 vs 3.0 -> tie; p2 has an invalid criterion -> invalid
    assert out.loc[("p1", "aggregate"), "outcome"] == "tie"
    assert out.loc[("p2", "aggregate"), "outcome"] == "invalid"


def test_samples_are_averaged_before_comparing():
    data = _data(
        [
            _score("p1", "x", "a", 5, 0),
            _score("p1", "x", "a", 1, 1),
            _score("p1", "y", "a", 2, 0),
            _score("p1", "y", "a", 2, 1),
        ]
    )
    out = judge_pair_outcomes(data, EVEN_SPLIT, np.random.default_rng(0))
    row = out[(out["criterion"] == "a")].iloc[0]
    assert row["focal_score"] == 3.0 and row["outcome"] == "win"


def test_pairwise_verdicts():
    pairs = _data([]).pairs
    verdicts = pd.DataFrame(
        [
            {"pair_id": "p1", "criterion": "a", "judge": "j", "sample": 0, "choice": "x", "line": 2},
            {"pair_id": "p1", "criterion": "a", "judge": "j", "sample": 1, "choice": "tie", "line": 3},
            {"pair_id": "p2", "criterion": "a", "judge": "j", "sample": 0, "choice": "y", "line": 4},
            {"pair_id": "p2", "criterion": "b", "judge": "j", "sample": 0, "choice": "invalid", "line": 5},
        ]
    )
    data = AuditData(votes=pd.DataFrame(), pairs=pairs, judge_verdicts=verdicts)
    out = judge_pair_outcomes(data, DECISIVE, np.random.default_rng(0)).set_index(["pair_id", "criterion"])
    assert out.loc[("p1", "a"), "outcome"] == "win"  # mean credit 0.75
    assert out.loc[("p2", "a"), "outcome"] == "loss"
    assert out.loc[("p2", "b"), "outcome"] == "invalid"


@pytest.mark.parametrize("rule, expected", [(EVEN_SPLIT, (6 + 1) / 10), (DECISIVE, 6 / 8), (STRICT, 6 / 10)])
def test_rates_under_each_rule(rule, expected):
    outcomes = pd.DataFrame({"outcome": ["win"] * 6 + ["loss"] * 2 + ["tie"] * 2})
    from judge_transfer_audit.model.tie_rules import credit_ties

    outcomes["credit"] = credit_ties(outcomes["outcome"].to_numpy(), rule, np.random.default_rng(0))
    s = summarise_outcomes(outcomes, rule)
    assert (s["wins"], s["losses"], s["ties"], s["invalid"]) == (6, 2, 2, 0)
    assert s["rate"] == pytest.approx(expected)


def test_synthetic_judge_prefers_focal():
    data = make_audit_data(n_pairs=40, judge_p=0.9, seed=3)
    out = judge_pair_outcomes(data, EVEN_SPLIT, np.random.default_rng(0))
    rate = out[out["criterion"] == "empathy"]["credit"].mean()
    assert 0.75 < rate <= 1.0
