"""The matchup x criterion distance map: one cell per matchup x criterion, its distance and decision."""

from __future__ import annotations

import math

import pandas as pd

from judge_transfer_audit.presentation.figures import distance_map_svg, verify_svg
from judge_transfer_audit.presentation.figures.distance_map import MAX_ROWS, _fill


def _frame(rows):
    return pd.DataFrame(rows, columns=["matchup", "criterion", "distance", "status"])


def test_each_cell_prints_its_distance_and_decision():
    svg = distance_map_svg(
        _frame(
            [
                ("a vs b", "empathy", 0.5012, "FAIL"),
                ("a vs b", "overall", 0.0, "PASS"),
                ("c vs d", "empathy", -0.213, "INCONCLUSIVE"),
                ("c vs d", "overall", math.nan, "INSUFFICIENT"),
            ]
        ),
        margin=0.1,
    )
    verify_svg(svg)
    for text in (">+50.1</text>", ">FAIL</text>", ">+0.0</text>", ">pass</text>", ">-21.3</text>", ">undecided</text>"):
        assert text in svg, text
    assert ">too few</text>" in svg and ">–</text>" in svg
    assert "(margin 10)" in svg
    assert svg.count('stroke="#c62828"') == 2 and svg.count('stroke="#1a7f37"') == 2  # the two frames of each


def test_colour_is_signed_and_saturates():
    assert _fill(0.0) == _fill(-0.0)
    assert _fill(0.3) != _fill(-0.3)
    assert _fill(0.5) == _fill(0.9) and _fill(-0.5) == _fill(-2.0)


def test_names_are_escaped_and_rows_capped():
    rows = [(f"<m{i}> & x", "c", 0.1, "INCONCLUSIVE") for i in range(MAX_ROWS + 5)]
    svg = distance_map_svg(_frame(rows))
    verify_svg(svg)
    assert "<m0>" not in svg and "&lt;m0&gt; &amp; x" in svg
    assert f"first {MAX_ROWS} of {MAX_ROWS + 5} matchups" in svg


def test_nothing_to_draw_says_so():
    assert "No cells to draw" in distance_map_svg(pd.DataFrame())
