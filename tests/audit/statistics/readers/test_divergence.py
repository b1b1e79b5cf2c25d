"""Pair-level divergence between a unanimous judge and the readers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.statistics.readers._common import check_judge_credits, check_votes
from judge_transfer_audit.statistics.readers.divergence import divergent_pairs


def _frames():
    votes, credits = [], []
    # (pair, criterion): reader votes (1 focal) and the judge credits of two configurations
    spec = {
        ("p1", "empathy"): ([0, 0, 1], [1, 1]),  # unanimous 1, readers against (rate 1/3)
        ("p1", "overall"): ([0, 0, 0], None),  # judge aggregate below
        ("p2", "empathy"): ([1, 1, 0], [1, 1]),  # unanimous, readers agree
        ("p3", "empathy"): ([0, 0, 0], [1, 0.5]),  # not unanimous (a tie)
        ("p4", "empathy"): ([1, np.nan, 1], [0, 0]),  # unanimous 0, readers against (rate 2.5/3)
    }
    for (pair, crit), (ys, judge) in spec.items():
        for r, y in zip("abc", ys):
            votes.append(
                dict(
                    pair_id=pair,
                    reader_id=r,
                    criterion=crit,
                    matchup="m",
                    y=y,
                    comment="too slow" if (pair, r) == ("p1", "b") else "",
                )
            )
        for j, c in zip(("ens", "cfg"), judge or []):
            credits.append(dict(pair_id=pair, matchup="m", criterion=crit, judge=j, credit=c))
    credits += [dict(pair_id="p1", matchup="m", criterion="aggregate", judge=j, credit=1.0) for j in ("ens", "cfg")]
    return check_votes(pd.DataFrame(votes)), check_judge_credits(pd.DataFrame(credits))


def test_ranking_and_cells():
    votes, credits = _frames()
    res = divergent_pairs(votes, credits, top_k=2)
    assert res.status is Status.PASS
    assert res.n_not_unanimous == 1
    cells = res.cells.set_index(["pair_id", "criterion"])
    assert cells.loc[("p1", "empathy"), "divergence"] == pytest.approx(2 / 3)
    assert (
        bool(cells.loc[("p1", "overall"), "against"]) and cells.loc[("p1", "overall"), "judge_criterion"] == "aggregate"
    )
    assert cells.loc[("p4", "empathy"), "reader_rate"] == pytest.approx(2.5 / 3)
    assert bool(cells.loc[("p4", "empathy"), "against"])
    assert not bool(cells.loc[("p2", "empathy"), "against"])
    ranking = res.ranking
    assert list(ranking["pair_id"]) == ["p1", "p4", "p2"]
    assert list(ranking["rank"]) == [1, 2, 3]
    assert ranking.iloc[0]["n_against"] == 2 and ranking.iloc[0]["against_criteria"] == "empathy,overall"


def test_top_pairs_carry_vote_table_and_comments():
    votes, credits = _frames()
    top = divergent_pairs(votes, credits, top_k=1).top
    assert len(top) == 1 and top[0].pair_id == "p1"
    assert [c.text for c in top[0].comments] == ["too slow"] and top[0].comments[0].reader_id == "b"
    table = top[0].votes.set_index("reader_id")
    assert table.loc["c", "empathy"] == "focal" and table.loc["a", "overall"] == "other"


def test_skipped_without_judge_or_unanimity():
    votes, credits = _frames()
    assert divergent_pairs(votes, None).status is Status.SKIPPED
    only_split = credits[credits["pair_id"] == "p3"]
    res = divergent_pairs(votes, only_split)
    assert res.status is Status.SKIPPED and res.n_not_unanimous == 1


def test_top_pairs_carry_story_excerpts_cut_at_a_word():
    votes, credits = _frames()
    stories = pd.DataFrame(
        {"pair_id": ["p1", "p1", "p4"], "system": ["x", "y", "x"], "text": ["short story", "word " * 300, "other pair"]}
    )
    top = divergent_pairs(votes, credits, top_k=1, stories=stories, excerpt_chars=50).top[0]
    assert [(e.system, e.truncated) for e in top.excerpts] == [("x", False), ("y", True)]
    assert top.excerpts[0].text == "short story"
    assert len(top.excerpts[1].text) <= 50 and top.excerpts[1].text.endswith("word")
    assert divergent_pairs(votes, credits, top_k=1).top[0].excerpts == ()
    text = str(top)
    assert "b on " in text and "too slow" in text and "[x] short story" in text and "[y] word word" in text


def test_cells_and_ranking_equal_their_row_by_row_definitions():
    """The cells' columns and the ranking's joined criteria, computed on whole columns, equal the same
    figures made one cell and one pair at a time (values and dtypes)."""
    votes, credits = _frames()
    res = divergent_pairs(votes, credits, top_k=0)
    rows = []
    for c in res.cells.itertuples(index=False):
        direction = int(c.judge_direction)
        rate = float(c.reader_rate)
        against = bool(rate < 0.5) if direction == 1 else bool(rate > 0.5)
        rows.append(
            [c.pair_id, c.matchup, c.criterion, c.judge_criterion, direction, int(c.n_configs), rate, int(c.n_votes)]
            + [abs(direction - rate), against]
        )
    pd.testing.assert_frame_equal(res.cells, pd.DataFrame(rows, columns=list(res.cells.columns)), check_exact=True)
    joined = res.cells[res.cells["against"]].groupby("pair_id")["criterion"].agg(",".join)
    expected = [joined.get(p, "") for p in res.ranking["pair_id"]]
    assert list(res.ranking["against_criteria"]) == expected == ["empathy,overall", "empathy", ""]
    assert list(res.ranking["n_comments"]) == [1, 0, 0]
