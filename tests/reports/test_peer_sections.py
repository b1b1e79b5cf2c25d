"""The judge-agreement and leaderboard sections in run_audit: computed, JSON round trip, terminal, report."""

from __future__ import annotations

import json
import math

import pytest

from judge_transfer_audit.engine.pipeline import run_audit
from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.model.spec import AuditSpec
from judge_transfer_audit.results.result import result_from_json, result_to_json
from tests.audit.synthetic import make_audit_data

SPEC = AuditSpec(uncertainty=True, readers=False, surface=False, n_boot=200)


@pytest.fixture(scope="module")
def result():
    data = make_audit_data(n_pairs=15, n_readers=5, human_p=0.6, judge_p=0.7, matchups=("a vs b", "c vs d"))
    return run_audit(data, SPEC)


def test_judge_agreement_is_computed_per_scope(result):
    section = result.judge_agreement
    assert section.status is Status.PASS
    scopes = [r.scope for r in section.payload.rows]
    assert scopes[-1] == "all/all" and "a vs b/empathy" in scopes and "all/empathy" in scopes
    assert section.payload.judge == "ensemble" and section.payload.n_boot == 200


def test_json_fields_and_lossless_round_trip(result):
    text = result_to_json(result)
    row = json.loads(text)["judge_agreement"]["payload"]["rows"][-1]
    assert row["scope"] == "all/all"
    for name in ("kappa_majority", "alpha_difference"):
        assert set(row[name]) == {"estimate", "ci_low", "ci_high"}
    back = result_from_json(text)
    assert type(back.judge_agreement.payload) is type(result.judge_agreement.payload)
    assert back.judge_agreement.payload.to_frame().equals(result.judge_agreement.payload.to_frame())
    assert result_to_json(back) == text


def test_no_uncertainty_gives_estimates_without_intervals():
    data = make_audit_data(n_pairs=10, n_readers=4)
    res = run_audit(data, AuditSpec(uncertainty=False, readers=False, surface=False))
    row = res.judge_agreement.payload.row()
    assert row.scheme == "none" and row.kappa_majority.ci_low != row.kappa_majority.ci_low  # NaN


def test_terminal_and_report_show_the_section(result):
    from judge_transfer_audit.reports.html import render_html
    from judge_transfer_audit.reports.terminal import render_summary

    assert "Judge agreement (all/all): kappa vs reader majority" in render_summary(result)
    html = render_html(result)
    # column headers may break after an underscore (<wbr>, for the printed page)
    assert 'id="judge-agreement"' in html and "kappa_majority" in html.replace("<wbr>", "")


def test_disconnected_systems_leaderboard_says_which(result):
    board = result.leaderboard.payload
    assert result.leaderboard.status is Status.PASS and not board.connected
    assert board.components == (("a", "b"), ("c", "d"))


@pytest.fixture(scope="module")
def triangle():
    data = make_audit_data(n_pairs=12, n_readers=4, human_p=0.6, judge_p=0.7, matchups=("a vs b", "b vs c", "a vs c"))
    return run_audit(data, AuditSpec(uncertainty=True, readers=False, surface=False, n_boot=30))


def test_leaderboard_json_fields_and_round_trip(triangle):
    from judge_transfer_audit.reports.html import render_html
    from judge_transfer_audit.reports.terminal import render_summary

    text = result_to_json(triangle)
    board = json.loads(text)["leaderboard"]["payload"]
    assert {s["system"] for s in board["systems"]} == {"a", "b", "c"}
    assert set(board["systems"][0]["human"]) == {"estimate", "ci_low", "ci_high"}
    assert set(board["kendall_tau"]) == {"estimate", "ci_low", "ci_high"} and "misplaced" in board
    assert board["n_boot"] == 30
    back = result_from_json(text)
    assert back.leaderboard.payload == triangle.leaderboard.payload
    assert result_to_json(back) == text
    assert "Leaderboard (3 systems): Kendall tau" in render_summary(triangle)
    html = render_html(triangle)
    assert 'id="leaderboard"' in html
    # the diagnostics: in result.json and in the report's leaderboard section
    diag = board["diagnostics"]
    assert [s["system"] for s in diag["systems"]] == [s["system"] for s in board["systems"]]
    assert {"tied_neighbours", "position", "design_effect", "cycles", "tie_tau"} <= set(diag)
    assert "neighbouring pairs are statistically tied" in html and "Leaderboard diagnostics" in html


def test_two_systems_skip_the_leaderboard():
    res = run_audit(make_audit_data(n_pairs=8, n_readers=3), AuditSpec(uncertainty=False, readers=False, surface=False))
    assert res.leaderboard.status is Status.SKIPPED and "three or more" in res.leaderboard.reason


@pytest.mark.slow
def test_leaderboard_bootstrap_on_the_workers_is_the_same_bits():
    """With two workers the leaderboard's bootstrap blocks run on the pool (its step, here, farms them
    out) and the whole result is the one of --jobs 1, bit for bit."""
    from judge_transfer_audit.core.timings import RunTimings
    from judge_transfer_audit.engine.task_graph import fork_available

    if not fork_available():
        pytest.skip("the local pool needs fork")
    data = make_audit_data(n_pairs=12, n_readers=4, human_p=0.6, judge_p=0.7, matchups=("a vs b", "b vs c", "a vs c"))
    options = dict(uncertainty=True, readers=False, surface=False, n_boot=30)
    timings = RunTimings()
    one = run_audit(data, AuditSpec(jobs=1, **options))
    two = run_audit(data, AuditSpec(jobs=2, timings=timings, **options))
    assert result_to_json(two) == result_to_json(one)
    board = one.leaderboard.payload
    assert board.n_boot == 30 and board.n_boot_failed < 30 and math.isfinite(board.kendall_tau.ci_low)
    farmed = [t for t in timings.tasks if t["task"] == "leaderboard bootstrap"]
    assert farmed and farmed[0]["worker"] == "workers" and farmed[0]["n"] >= 2
