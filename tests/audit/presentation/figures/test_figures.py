"""Figure functions: valid, inline-safe, byte-stable SVG; empty or malformed input gives a note."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.presentation.figures import (
    ClusterPanel,
    DendrogramPanel,
    UnsafeSvgError,
    bootstrap_comparison_svg,
    cluster_heatmap_svg,
    dendrogram_svg,
    feature_scatter_svg,
    loro_shift_svg,
    preference_svg,
    reader_heatmap_svg,
    timing_svg,
    verify_svg,
)

NS = "{http://www.w3.org/2000/svg}"


def _human():
    return pd.DataFrame(
        [
            {"matchup": "a vs b", "criterion": "empathy", "estimate": 0.6, "ci_low": 0.5, "ci_high": 0.7},
            {"matchup": "c vs d", "criterion": "empathy", "estimate": 0.4, "ci_low": 0.3, "ci_high": 0.52},
        ]
    )


def _judge():
    return pd.DataFrame(
        [
            {"matchup": "a vs b", "criterion": "empathy", "wins": 15, "losses": 2, "ties": 3, "n_pairs": 20},
            {"matchup": "c vs d", "criterion": "empathy", "wins": 10, "losses": 10, "ties": 0, "n_pairs": 20},
        ]
    )


CASES = {
    "preference": lambda: preference_svg(_human(), _judge(), focal_label="a", fig_id="f1"),
    "heatmap": lambda: reader_heatmap_svg(
        pd.DataFrame(
            [
                {"row": "r1", "kind": "reader", "criterion": "empathy", "rate": 0.2},
                {"row": "r2", "kind": "reader", "criterion": "empathy", "rate": np.nan},
                {"row": "GLMM", "kind": "glmm", "criterion": "empathy", "rate": 0.5},
                {"row": "judge", "kind": "judge", "criterion": "empathy", "rate": 0.9},
            ]
        ),
        fig_id="f2",
    ),
    "loro": lambda: loro_shift_svg(
        pd.DataFrame({"reader_id": ["r1", "r2"], "criterion": ["e", "e"], "shift": [0.02, -0.03]}), fig_id="f3"
    ),
    "bootstrap": lambda: bootstrap_comparison_svg(_human().assign(method="GLMM"), fig_id="f4"),
    "dendrogram": lambda: dendrogram_svg(
        [DendrogramPanel("coef", np.array([[0, 1, 0.5, 2], [2, 3, 1.0, 3]]), ("r1", "r2", "r3"))], fig_id="f5"
    ),
    "surface": lambda: feature_scatter_svg(
        pd.DataFrame({"feature": ["len"] * 3, "x": [1.0, 2.0, 3.0], "y": [0.5, 0.1, -0.2], "group": ["g", "g", "h"]}),
        fig_id="f6",
    ),
    "clusters": lambda: cluster_heatmap_svg(
        [
            ClusterPanel(
                "weights",
                np.array([[0, 1, 0.5, 2], [2, 3, 1.0, 3]]),
                ("r1", "r2", "r3"),
                pd.DataFrame({"label": ["r1", "r2", "r3"], "a": [0.5, -1.0, 0.2], "b": [1.2, 0.0, -0.4]}),
            )
        ],
        fig_id="f8",
    ),
    "timing": lambda: timing_svg(
        pd.DataFrame(
            {"reader_id": ["r1"] * 3 + ["r2"] * 3, "seconds": [100, 200, 900, 50, 60, 70], "order": [0, 1, 2] * 2}
        ),
        fig_id="f7",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_figure_is_valid_inline_svg_and_stable(name):
    svg = CASES[name]()
    root = ET.fromstring(svg)
    assert root.tag == NS + "svg"
    assert not svg.startswith("<?xml") and "<!DOCTYPE" not in svg and "<metadata>" not in svg
    fig_id = root.get("id")
    ids = [el.get("id") for el in root.iter() if el.get("id")]
    assert all(i == fig_id or i.startswith(fig_id + "-") for i in ids)
    for ref in re.findall(r"url\(#([^)]+)\)", svg) + re.findall(r'href="#([^"]+)"', svg):
        assert ref in ids  # every internal reference resolves to a prefixed id
    assert CASES[name]() == svg  # byte-stable
    verify_svg(svg)


def test_preference_draws_ties_hatched_and_labels_even_split():
    svg = CASES["preference"]()
    assert "82.5% (3)" in svg  # (15 + 0.5 * 3) / 20 with the raw tie count
    assert "50.0% (0)" in svg
    assert 'id="f1-h' in svg or "pattern" in svg  # hatch pattern for tie segments


def test_heatmap_marks_missing_cells():
    assert "n/a" in CASES["heatmap"]()


def test_timing_counts_capped_times():
    assert "1 capped" in CASES["timing"]()


@pytest.mark.parametrize(
    "fn",
    [preference_svg, reader_heatmap_svg, loro_shift_svg, bootstrap_comparison_svg, feature_scatter_svg, timing_svg],
)
def test_empty_or_malformed_input_gives_a_note(fn):
    svg = fn(pd.DataFrame({"unrelated": [1]}))
    assert "missing" in svg and "<svg" in svg


def test_malformed_linkage_is_a_note_not_a_crash():
    svg = dendrogram_svg([DendrogramPanel("bad", np.zeros((5, 4)), ("a", "b"))])
    assert "malformed" in svg


def test_different_ids_do_not_collide():
    a = preference_svg(_human(), fig_id="one")
    b = preference_svg(_human(), fig_id="two")
    ids_a = set(re.findall(r'id="([^"]+)"', a))
    ids_b = set(re.findall(r'id="([^"]+)"', b))
    assert ids_a and not ids_a & ids_b


@pytest.mark.parametrize(
    "bad",
    [
        '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg"><g onload="alert(1)"/></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><use xlink:href="http://x/y#z"/></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg"><foreignObject/></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg"><g><g><g ONMouseOver="x"/></g></g></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg"><a href="#ok"/><g><a href="https://x.example/"/></g></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg"><image href="data:text/html;base64,PHNjcmlwdD4="/></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg"><g><g><SCRIPT/></g></g></svg>',
    ],
)
def test_verify_svg_rejects_active_content(bad):
    with pytest.raises(UnsafeSvgError):
        verify_svg(bad)


def test_verify_svg_accepts_internal_references_and_png_data():
    verify_svg(
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><defs><path id="p"/></defs>'
        '<use xlink:href="#p"/><image href="data:image/png;base64,iVBORw0KGgo="/><text x="1">on top</text></svg>'
    )


def test_figure_id_must_be_simple():
    from judge_transfer_audit.presentation.figures import figure_to_svg
    from judge_transfer_audit.presentation.figures._svg import new_figure

    with pytest.raises(ValueError):
        figure_to_svg(new_figure(1, 1), 'x" onload="y')


def test_preference_with_many_matchups_colours_criteria_instead():
    """More matchups than colours: matchups become the blocks, the criteria the colours."""
    rows = [
        {"matchup": f"m{i}", "criterion": c, "estimate": 0.5, "ci_low": 0.4, "ci_high": 0.6}
        for i in range(12)
        for c in ("empathy", "engagement")
    ]
    svg = preference_svg(pd.DataFrame(rows), fig_id="many")
    ticks = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert "m11" in ticks and ticks.count("empathy") == 1  # one legend entry per criterion


def test_loro_with_every_shift_undefined_says_why_without_a_warning():
    # one reader: leaving them out leaves nothing, every shift is NaN
    import warnings

    shifts = pd.DataFrame({"reader_id": ["r1", "r1"], "criterion": ["e", "o"], "shift": [np.nan, np.nan]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        svg = loro_shift_svg(shifts)
    assert "No shift computable (a single reader" in svg
    verify_svg(svg)


def test_preference_rate_is_over_valid_pairs_and_invalid_outputs_are_shown():
    # 1 win, 1 loss, 1 tie, 1 invalid: the even-split rate is 1.5 / 3 = 50%, not 1.5 / 4
    judge = pd.DataFrame(
        [{"matchup": "a vs b", "criterion": "empathy", "wins": 1, "losses": 1, "ties": 1, "n_pairs": 4, "invalid": 1}]
    )
    svg = preference_svg(_human().head(1), judge, focal_label="a")
    assert "50.0% (1) +1 invalid" in svg and "37.5%" not in svg
