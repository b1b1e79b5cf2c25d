"""judge_transfer_audit.verdict.judge_configurations and ``--judge auto``: ranking, the closest named, the panel
summaries, the per-configuration transfer summary, JSON round trip."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.engine.pipeline import run_audit
from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.model.spec import AuditSpec
from judge_transfer_audit.model.tie_rules import EVEN_SPLIT
from judge_transfer_audit.results.result import result_from_json, result_to_json
from tests.audit.synthetic import make_audit_data

SPEC = AuditSpec(uncertainty=True, readers=False, surface=False, n_boot=50)


def _panel():
    """'ensemble' prefers the focal story 95% of the time; 'follower' sides with the majority
    of the readers on every criterion; 'coin' is random."""
    data = make_audit_data(n_pairs=16, n_readers=5, human_p=0.5, judge_p=0.8, matchups=("a vs b", "c vs d"))
    rng = np.random.default_rng(8)
    votes = data.votes
    majority = votes.groupby(["pair_id", "criterion"])["y"].mean()
    scores = data.judge_scores
    follower, coin = scores.copy(), scores.copy()
    focal_row = scores["system"] == scores["pair_id"].map(data.pairs.set_index("pair_id")["focal"])
    wins = np.array([majority.get((p, c), 0.5) > 0.5 for p, c in zip(scores["pair_id"], scores["criterion"])])
    follower["score"] = np.where(focal_row == wins, 4.0, 3.0)
    follower["judge"] = "follower"
    coin["score"] = rng.integers(1, 6, len(coin)).astype(float)
    coin["judge"] = "coin"
    return dataclasses.replace(data, judge_scores=pd.concat([scores, follower, coin], ignore_index=True))


@pytest.fixture(scope="module")
def audited():
    data = _panel()
    return run_audit(data, SPEC), run_audit(data, dataclasses.replace(SPEC, judge="auto"))


def test_configurations_ranked_and_the_closest_named(audited):
    default, _ = audited
    section = default.judge_configurations
    assert section.status is Status.PASS
    configs = section.payload
    assert [r.judge for r in configs.rows][0] == "follower" and configs.selected == "follower"
    assert configs.primary == "ensemble" and not configs.auto and not configs.selected_on_same_data
    kappas = [r.kappa_majority.estimate for r in configs.rows]
    assert kappas == sorted(kappas, reverse=True)
    assert [r.rank for r in configs.rows] == [1, 2, 3]
    follower = configs.rows[0]
    assert follower.kappa_majority.estimate > 0.5 and follower.n_cells == 6
    assert follower.kappa_majority.ci_low < follower.kappa_majority.estimate < follower.kappa_majority.ci_high
    assert sum(follower.decisions.values()) == 6 and follower.decisions["FAIL"] == 0
    assert set(follower.decisions) == {"PASS", "FAIL", "INCONCLUSIVE", "INSUFFICIENT", "ERROR"}


@pytest.mark.slow
def test_each_configuration_is_decided_as_if_it_were_the_primary_judge(audited):
    """The configuration rows count the cell decisions the audit gives that configuration
    when it is the audited judge (same rule, same family, same seeded streams)."""
    default, _ = audited
    data = _panel()
    rows = {r.judge: r for r in default.judge_configurations.payload.rows}
    primary_counts = {k: v for k, v in default.counts.items() if k in rows["ensemble"].decisions}
    assert rows["ensemble"].decisions == {k: primary_counts.get(k, 0) for k in rows["ensemble"].decisions}
    for judge in ("follower", "coin"):
        alone = run_audit(data, dataclasses.replace(SPEC, judge=judge))
        expected = {k: sum(c.transfer.status.value == k for c in alone.cells) for k in rows[judge].decisions}
        assert rows[judge].decisions == expected, judge
        assessed = [
            abs(c.transfer.difference.estimate)
            for c in alone.cells
            if c.transfer.status.value in ("PASS", "FAIL", "INCONCLUSIVE")
        ]
        assert rows[judge].mean_abs_distance == pytest.approx(np.mean(assessed))
    assert rows["ensemble"].decisions["FAIL"] >= rows["follower"].decisions["FAIL"]


def test_panel_of_three_has_dawid_skene_and_effective_number(audited):
    configs = audited[0].judge_configurations.payload
    assert configs.dawid_skene is not None and set(configs.dawid_skene.accuracy) == {"ensemble", "follower", "coin"}
    assert 1.0 <= configs.effective.nyholt <= 3.0 and configs.effective.n_judges == 3
    assert np.isfinite(configs.dawid_skene_kappa.estimate)


def test_judge_auto_picks_the_closest_and_says_so(audited):
    _, auto = audited
    assert auto.provenance.primary_judge == "follower"
    configs = auto.judge_configurations.payload
    assert configs.auto and configs.selected_on_same_data and configs.primary == "follower"
    assert "picked by --judge auto, on the same data" in str(configs)
    from judge_transfer_audit.reports.terminal import render_summary

    assert "selected on the same data" in render_summary(auto)
    assert auto.judge_agreement.payload.judge == "follower"
    from judge_transfer_audit.reports.html import render_html

    html = render_html(auto)
    assert 'id="judge-configurations"' in html and "picked by --judge auto on the same data" in html


def test_json_round_trip(audited):
    text = result_to_json(audited[0])
    payload = json.loads(text)["judge_configurations"]["payload"]
    assert payload["selected"] == "follower" and len(payload["rows"]) == 3
    assert set(payload["rows"][0]["kappa_majority"]) == {"estimate", "ci_low", "ci_high"}
    back = result_from_json(text)
    assert back.judge_configurations.payload.to_frame().equals(audited[0].judge_configurations.payload.to_frame())
    assert result_to_json(back) == text


def test_one_configuration_has_no_panel_summaries():
    res = run_audit(make_audit_data(n_pairs=8, n_readers=3), AuditSpec(uncertainty=False, readers=False, surface=False))
    configs = res.judge_configurations.payload
    assert configs.dawid_skene is None and configs.effective is None and configs.selected == "ensemble"


def test_shared_arrays_decide_as_assess_transfers_does():
    """A configuration is decided on the shared human arrays exactly as ``assess_transfers`` decides it."""
    from judge_transfer_audit.model.policy import TransferPolicy
    from judge_transfer_audit.verdict import assess_transfers
    from judge_transfer_audit.verdict.judge_configurations import _summary, configuration_decisions

    data = make_audit_data(n_pairs=16, n_readers=5, human_p=0.5, judge_p=0.8, matchups=("a vs b", "c vs d"))
    rng = np.random.default_rng(3)
    policy = TransferPolicy()
    cells, choices = [], []
    for (matchup, criterion), part in data.votes.groupby(["matchup", "criterion"], sort=False):
        pairs = part["pair_id"].unique()
        judged = pd.DataFrame(
            {"pair_id": pairs[: len(pairs) - 2], "credit": rng.choice([0.0, 0.5, 1.0], len(pairs) - 2)}
        )
        cells.append((str(matchup), str(criterion), part, judged))
        choices.append(judged.rename(columns={"credit": "y_judge"}).assign(criterion=criterion))
    expected = [t for t, _ in assess_transfers(cells, tie_rule=EVEN_SPLIT, policy=policy, seed=11)]
    got = configuration_decisions(
        data.votes, {"second": pd.concat(choices)}, tie_rule=EVEN_SPLIT, policy=policy, seed=11
    )
    assert len(expected) == 6
    assert got["second"] == _summary(expected)
    assert sum(got["second"][0].values()) == 6
