"""run_audit on small synthetic data: cells, checks, verdict and the JSON interface."""

import json

import pytest

from judge_transfer_audit.engine.pipeline import choose_primary_judge, judge_criterion_for, run_audit
from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.model.spec import AuditSpec
from judge_transfer_audit.model.tie_rules import DECISIVE, EVEN_SPLIT, RANDOM
from judge_transfer_audit.results.result import AuditResult, result_from_json, result_to_json
from tests.audit.synthetic import make_audit_data

CORE = AuditSpec(uncertainty=False, readers=False, surface=False)


@pytest.fixture(scope="module")
def skewed():
    data = make_audit_data(n_pairs=20, n_readers=7, human_p=0.5, judge_p=0.95, matchups=("a vs b", "c vs d"))
    return run_audit(data, CORE)


def test_one_cell_per_matchup_and_criterion(skewed):
    keys = [(c.matchup, c.criterion) for c in skewed.cells]
    assert len(keys) == 6 and len(set(keys)) == 6
    cell = skewed.cells[0]
    assert (cell.n_pairs, cell.n_readers, cell.n_votes) == (20, 7, 140)
    assert cell.human.n_focal + cell.human.n_other == 140


def test_overall_is_compared_with_the_judge_aggregate(skewed):
    overall = [c for c in skewed.cells if c.criterion == "overall"]
    assert overall and all(c.judge.criterion == "aggregate" and c.judge.different_target for c in overall)
    others = [c for c in skewed.cells if c.criterion != "overall"]
    assert all(c.judge.criterion == c.criterion and not c.judge.different_target for c in others)


def test_skewed_judge_fails_the_gate():
    # readers who lean the other way (30%) and a judge at 95%: FAIL in every cell, after Holm
    data = make_audit_data(n_pairs=40, n_readers=7, human_p=0.3, judge_p=0.95, matchups=("a vs b", "c vs d"))
    result = run_audit(data, CORE)
    assert result.status is Status.FAIL and "does not transfer" in result.verdict
    assert result.counts["FAIL"] == 6
    failing = [c for c in result.failing() if c.name == "transfer.decision"]
    assert len(failing) == 6 and {c.scope for c in failing} == {f"{c.matchup}/{c.criterion}" for c in result.cells}


def test_cell_statuses_are_the_decision_checks(skewed):
    by_scope = {c.scope: c.status for c in skewed.checks if c.name == "transfer.decision"}
    assert by_scope == {f"{c.matchup}/{c.criterion}": c.transfer.status for c in skewed.cells}
    assert sum(skewed.counts.values()) == len(skewed.cells)


def test_judge_matching_humans_never_fails():
    data = make_audit_data(n_pairs=20, n_readers=7, human_p=0.5, seed=11, judge_follows_majority=True)
    result = run_audit(data, CORE)
    assert result.counts["FAIL"] == 0
    assessed = [c for c in result.cells if c.judge is not None]
    assert all(c.transfer.judge_vs_majority == 1.0 or c.transfer.below_reader_baseline is False for c in assessed)


def test_cells_do_not_depend_on_the_order_of_the_votes(skewed):
    from dataclasses import replace

    data = make_audit_data(n_pairs=20, n_readers=7, human_p=0.5, judge_p=0.95, matchups=("a vs b", "c vs d"))
    shuffled = replace(data, votes=data.votes.sample(frac=1.0, random_state=3).reset_index(drop=True))
    again = run_audit(shuffled, CORE)
    for a, b in zip(skewed.cells, again.cells):
        assert a.transfer.status == b.transfer.status
        assert a.transfer.difference.ci_low == pytest.approx(b.transfer.difference.ci_low, abs=1e-9)
        assert a.human.vote_share == b.human.vote_share


def test_nothing_compared_is_an_error():
    from dataclasses import replace

    data = make_audit_data(n_pairs=12, n_readers=4)
    # judge criteria spelled differently, and no human overall question the aggregate could answer
    renamed = replace(
        data,
        judge_scores=data.judge_scores.assign(criterion=data.judge_scores["criterion"] + "!"),
        votes=data.votes[data.votes["criterion"] != "overall"].reset_index(drop=True),
    )
    result = run_audit(renamed, CORE)
    assert result.status is Status.ERROR and result.counts["INSUFFICIENT"] == len(result.cells)
    assert any(c.name == "transfer.assessed" and c.status is Status.ERROR for c in result.failing())
    ties = replace(data, votes=data.votes.assign(y=float("nan"), choice="tie"))
    result = run_audit(ties, CORE)
    assert result.status is Status.ERROR and result.counts["ERROR"] == len(result.cells)
    assert "tie" in result.verdict


def test_json_has_the_documented_fields(skewed):
    data = json.loads(result_to_json(skewed))
    assert data["schema_version"] == "2.5"
    assert data["status"] in ("PASS", "FAIL", "INCONCLUSIVE", "ERROR", "WARN")
    assert set(data["counts"]) == {"PASS", "FAIL", "INCONCLUSIVE", "INSUFFICIENT", "ERROR"}
    cell = data["cells"][0]
    for key in ("matchup", "criterion", "focal", "n_pairs", "n_readers", "n_votes"):
        assert key in cell
    assert {
        "estimate",
        "ci_low",
        "ci_high",
        "b0",
        "se",
        "sd_pair",
        "sd_reader",
        "singular",
        "degenerate",
        "majority_plugin",
    } <= set(cell["human"]["glmm"])
    assert "rate" in cell["human"]
    for key in ("vote_share", "majority_rate"):
        assert {"estimate", "ci_low", "ci_high"} <= set(cell["human"][key])
    assert {"rate", "wins", "losses", "ties", "tie_rule"} <= set(cell["judge"])
    t = cell["transfer"]
    assert t["status"] in ("PASS", "FAIL", "INCONCLUSIVE", "INSUFFICIENT", "ERROR")
    assert {"estimate", "ci_low", "ci_high"} <= set(t["difference"])
    assert "margin" in t and "pairs_needed" in t
    assert "difference_vote_share" in t and "difference_majority" in t
    assert "agreement" in data
    assert {"name", "status", "value", "threshold", "reason"} <= set(data["checks"][0])
    # schema 2.2: the label budget, one row per cell with its pairs-vs-readers designs
    budget = data["label_budget"]["payload"]
    assert {"power", "alpha", "fail_level", "margin", "cells"} <= set(budget)
    assert len(budget["cells"]) == len(data["cells"])
    assert {"state", "target", "pairs", "readers", "votes", "min_detectable_distance", "designs"} <= set(
        budget["cells"][0]
    )


def test_json_round_trip_is_lossless(skewed):
    text = result_to_json(skewed)
    again = result_from_json(text)
    assert isinstance(again, AuditResult)
    assert result_to_json(again) == text
    assert again.cells == skewed.cells


def test_same_seed_gives_byte_identical_json():
    data = make_audit_data(n_pairs=10, n_readers=4, ties_every=3)
    spec = AuditSpec(uncertainty=False, readers=False, surface=False, tie_rule=RANDOM, seed=5)
    assert result_to_json(run_audit(data, spec)) == result_to_json(run_audit(data, spec))


def test_tie_rule_changes_rates_and_is_recorded():
    data = make_audit_data(n_pairs=12, n_readers=4, judge_p=1.0, ties_every=2)
    even = run_audit(data, AuditSpec(uncertainty=False, readers=False, surface=False))
    decisive = run_audit(data, AuditSpec(uncertainty=False, readers=False, surface=False, tie_rule=DECISIVE))
    e, d = even.cells[0].judge, decisive.cells[0].judge
    assert e.ties == d.ties == 6
    assert e.rate == pytest.approx((6 + 3) / 12) and d.rate == pytest.approx(1.0)
    assert d.tie_rule == "decisive" and decisive.provenance.tie_rule == "decisive"


def test_primary_judge_choice():
    assert choose_primary_judge(("a", "ensemble"), None) == "ensemble"
    assert choose_primary_judge(("b", "a"), None) == "b"
    assert choose_primary_judge(("b", "a"), "a") == "a"
    from judge_transfer_audit.core.errors import InputError

    with pytest.raises(InputError, match="use one of: b, a"):
        choose_primary_judge(("b", "a"), "zzz")


def test_criterion_mapping():
    assert judge_criterion_for("overall", {"aggregate", "x"}) == ("aggregate", True)
    assert judge_criterion_for("overall", {"overall", "aggregate"}) == ("overall", False)
    assert judge_criterion_for("empathy", {"x"}) == (None, False)


def test_cell_grouped_judge_summaries_equal_the_per_group_ones():
    # the one-pass summaries and credit gathering give what a filter per cell and judge gives
    import numpy as np
    import pandas as pd

    from judge_transfer_audit.engine.pipeline import _outcome_summaries, judge_choices
    from judge_transfer_audit.model.data import JUDGE_AGGREGATE
    from judge_transfer_audit.verdict.judge_side import judge_pair_outcomes, summarise_outcomes

    data = make_audit_data(n_pairs=15, n_readers=4, matchups=("a vs b", "c vs d"))
    outcomes = judge_pair_outcomes(data, EVEN_SPLIT, np.random.default_rng(0))
    flipped = outcomes["outcome"].map({"win": "loss", "loss": "win"}).fillna(outcomes["outcome"])
    outcomes = pd.concat(
        [outcomes, outcomes.assign(judge="second", credit=1 - outcomes["credit"], outcome=flipped)], ignore_index=True
    ).sample(frac=1.0, random_state=3)
    outcomes.iloc[:5, outcomes.columns.get_loc("credit")] = np.nan  # five invalid outputs
    outcomes.iloc[:5, outcomes.columns.get_loc("outcome")] = "invalid"
    got = _outcome_summaries(outcomes, EVEN_SPLIT)
    assert len(got) == outcomes.groupby(["matchup", "criterion"]).ngroups
    for (m, c, j), part in outcomes.groupby(["matchup", "criterion", "judge"], sort=False):
        want, have = summarise_outcomes(part, EVEN_SPLIT), got[(m, c)][j]
        assert have == pytest.approx(want, nan_ok=True), (m, c, j)
    assert list(got[next(iter(got))]) == list(
        dict.fromkeys(
            outcomes[(outcomes["matchup"] == next(iter(got))[0]) & (outcomes["criterion"] == next(iter(got))[1])][
                "judge"
            ]
        )
    )
    primary = outcomes["judge"].iloc[0]
    choices = judge_choices(outcomes, primary, data.criteria)
    mine = outcomes[outcomes["judge"] == primary]
    for crit in data.criteria:
        jc = crit if crit in set(mine["criterion"]) else JUDGE_AGGREGATE
        want = mine[mine["criterion"] == jc]
        have = choices[choices["criterion"] == crit]
        assert have["pair_id"].tolist() == want["pair_id"].tolist()
        # under even-split the judge's verdict (1 / 0.5 / 0 / NaN) equals its credit
        np.testing.assert_array_equal(have["y_judge"].to_numpy(float), want["credit"].to_numpy(float))


@pytest.fixture(scope="module")
def deployment():
    from judge_transfer_audit.inputs import load_audit_data
    from tests.support.fixture_run import DEPLOY

    return load_audit_data(str(DEPLOY / "judge.csv"), str(DEPLOY / "humans.csv"), pairs=str(DEPLOY / "pairs.csv"))


@pytest.mark.slow
def test_the_task_graph_on_two_workers_equals_the_run_in_order(deployment):
    """On a pool of two workers: the same result.json as the steps run in order (the surface and
    dev-set sections are left out for time; tests/audit/cli/test_run_jobs.py runs the command)."""
    from judge_transfer_audit.core.timings import RunTimings

    spec = AuditSpec(surface=False, n_boot=200)
    one = result_to_json(run_audit(deployment, spec))
    stages, timings = [], RunTimings()
    two = run_audit(deployment, AuditSpec(surface=False, n_boot=200, jobs=2, progress=stages.append, timings=timings))
    assert result_to_json(two) == one
    assert "the statistics on 2 workers" in stages and "reader analysis" not in stages
    tasks = {t["task"] for t in timings.tasks}
    assert {"verdict", "human GLMMs", "uncertainty", "readers", "judge_configurations", "leaderboard"} <= tasks
    assert "configurations" not in tasks  # decided in the verdict's step, on its cell bootstraps
