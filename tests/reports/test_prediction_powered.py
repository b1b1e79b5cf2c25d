"""The report section "What the readers would say" and its terminal lines, on a seeded study
whose judge covers four times the voted pairs (judge_transfer_audit.statistics.prediction_powered.simulate)."""

from __future__ import annotations

import pytest

from judge_transfer_audit.reports.html import render_html
from judge_transfer_audit.reports.terminal import render_summary


@pytest.fixture(scope="module")
def ppi_result(tmp_path_factory):
    from judge_transfer_audit.api import run
    from judge_transfer_audit.statistics.prediction_powered.simulate import crossed_study

    d = tmp_path_factory.mktemp("ppi_report")
    votes, judge, pairs, _ = crossed_study(
        n_voted=20,
        fraction=0.25,
        n_readers=5,
        readers_per_pair=3,
        quality=0.9,
        matchups=(("alpha", "beta"), ("alpha", "gamma"), ("beta", "gamma")),
        rng=2,
    )
    votes.to_csv(d / "h.csv", index=False)
    judge.to_csv(d / "j.csv", index=False)
    pairs.to_csv(d / "p.csv", index=False)
    return run(d / "j.csv", d / "h.csv", pairs=d / "p.csv", uncertainty=False, readers=False, seed=1)


def test_section_follows_the_decision_and_states_its_validity_condition(ppi_result):
    html = render_html(ppi_result)
    at = html.index("What the readers would say")
    assert "prediction-powered" in html
    assert "valid only when which pairs got human votes does not" in html[at:]
    # first of the sections: before the judge-agreement section the fixture reports first
    assert at < html.index("Judge against humans: chance-corrected agreement")


def test_terminal_lines_name_the_judge_only_pairs(ppi_result):
    text = render_summary(ppi_result)
    assert "What the readers would say (180 judge-only pairs, 60 voted" in text
    assert "corrected leaderboard (overall)" in text


def test_no_section_without_judge_only_pairs(result):
    assert "What the readers would say" not in render_html(result)
    assert "What the readers would say" not in render_summary(result)
