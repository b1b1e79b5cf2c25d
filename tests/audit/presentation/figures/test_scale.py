"""Figures stay legible at scale: thousands of readers, thousands of criteria, tens of thousands of pairs.

Each figure past its cap draws a summary plus a bounded number of rows, and says so in the figure.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from scipy.cluster import hierarchy

from judge_transfer_audit.presentation.figures import (
    ClusterPanel,
    bootstrap_comparison_svg,
    cluster_heatmap_svg,
    feature_scatter_svg,
    loro_shift_svg,
    preference_svg,
    reader_heatmap_svg,
    timing_svg,
)
from judge_transfer_audit.presentation.figures import clusters as clusters_module
from judge_transfer_audit.presentation.figures import heatmap as heatmap_module
from judge_transfer_audit.presentation.figures import loro as loro_module
from judge_transfer_audit.presentation.figures import timing as timing_module

RNG = np.random.default_rng(4)


def _texts(svg: str) -> list[str]:
    return re.findall(r"<text[^>]*>([^<]*)</text>", svg)


def _rates(n_readers: int, criteria=("a", "b")) -> pd.DataFrame:
    rows = [
        {"row": f"r{i}", "kind": "reader", "criterion": c, "rate": RNG.uniform(), "n": 1 + i % 5}
        for i in range(n_readers)
        for c in criteria
    ]
    rows += [{"row": "humans (pooled)", "kind": "human", "criterion": c, "rate": 0.5} for c in criteria]
    rows += [{"row": "judge", "kind": "judge", "criterion": c, "rate": 0.9} for c in criteria]
    return pd.DataFrame(rows)


def test_heatmap_draws_every_reader_up_to_its_cap():
    svg = reader_heatmap_svg(_rates(heatmap_module.MAX_READERS))
    assert {f"r{i}" for i in range(heatmap_module.MAX_READERS)} <= set(_texts(svg))
    assert "readers' median" not in svg


def test_heatmap_past_the_cap_shows_distribution_and_most_influential():
    rates = _rates(2000)
    far = rates["row"].isin(["r7", "r1500"])  # planted: far from the pooled rate with many votes
    rates.loc[far, "rate"] = 1.0
    rates.loc[far, "n"] = 50
    svg = reader_heatmap_svg(rates)
    labels = set(_texts(svg))
    readers = {t for t in labels if re.fullmatch(r"r\d+", t)}
    assert len(readers) == heatmap_module.MAX_READERS
    assert {"r7", "r1500"} <= readers
    assert {"readers' 10th percentile", "readers' median", "readers' 90th percentile"} <= labels
    assert any("2,000 readers" in t for t in labels)


def test_heatmap_caps_criteria_columns():
    crits = tuple(f"c{k}" for k in range(100))
    svg = reader_heatmap_svg(_rates(3, crits))
    labels = set(_texts(svg))
    assert f"c{heatmap_module.MAX_CRITERIA - 1}" in labels and f"c{heatmap_module.MAX_CRITERIA}" not in labels
    assert any("of 100 criteria" in t for t in labels)


def test_cluster_tree_is_cut_to_its_cap_with_cluster_sizes():
    n = 500
    profile = pd.DataFrame({"label": [f"r{i}" for i in range(n)], "a": RNG.normal(size=n), "b": RNG.normal(size=n)})
    z = hierarchy.linkage(profile[["a", "b"]].to_numpy(), "average")
    svg = cluster_heatmap_svg([ClusterPanel("weights", z, tuple(profile["label"]), profile)])
    labels = _texts(svg)
    rows = [t for t in labels if re.fullmatch(r"r\d+|[\d,]+ readers", t)]
    assert len(rows) == clusters_module.MAX_LEAVES
    sizes = [int(t.split()[0].replace(",", "")) for t in rows if t.endswith("readers")]
    assert sum(sizes) + sum(1 for t in rows if t.startswith("r")) == n  # every reader in exactly one row
    assert any("cut to 30 clusters" in t for t in labels)


def test_loro_keeps_the_most_influential_readers_and_the_others_range():
    readers = [f"r{i}" for i in range(300)]
    shifts = pd.DataFrame({"reader_id": readers, "criterion": "a", "shift": RNG.normal(0, 0.001, 300)})
    shifts.loc[shifts["reader_id"] == "r123", "shift"] = 0.05
    svg = loro_shift_svg(shifts)
    labels = _texts(svg)
    rows = [t for t in labels if t.startswith("without ")]
    assert len(rows) == loro_module.MAX_READERS and rows[0] == "without r123"
    assert "280 other readers (range)" in labels


def test_timing_summary_past_the_cap():
    n = 1000
    summary = pd.DataFrame(
        {
            "reader_id": [f"r{i}" for i in range(n)],
            "median_seconds": RNG.uniform(20, 400, n),
            "fast_reader": [i == 17 for i in range(n)],
        }
    )
    svg = timing_svg(summary)
    labels = _texts(svg)
    rows = [t for t in labels if re.match(r"r\d+", t)]
    assert len(rows) == timing_module.MAX_READERS
    assert "r17 (fast)" in rows
    assert "all 1,000 readers' medians" in labels


def test_preference_and_intervals_cap_criteria():
    crits = [f"c{k}" for k in range(1000)]
    human = pd.DataFrame({"matchup": "a vs b", "criterion": crits, "estimate": 0.6, "ci_low": 0.5, "ci_high": 0.7})
    svg = preference_svg(human)
    assert any("first 160 of 1000 criteria" in t for t in _texts(svg))
    assert len(svg) < 100_000
    svg = bootstrap_comparison_svg(human.assign(method="GLMM"))
    assert any("first 30 of 1,000 criteria" in t for t in _texts(svg))


@pytest.mark.parametrize("n_pairs", [50, 20_000])
def test_surface_draws_humans_beside_judge_and_thins_points(n_pairs):
    x = RNG.normal(size=n_pairs)
    points = pd.DataFrame({"feature": "len", "x": x, "y": -x, "h": 0.5 - 0.1 * x})
    panels = pd.DataFrame({"feature": ["len"], "r": [-0.7], "slope": [-1.0], "r_human": [-0.59], "slope_human": [-0.1]})
    svg = feature_scatter_svg(points, panels=panels)
    labels = _texts(svg)
    assert "judge r -0.70" in labels and "humans r -0.59" in labels
    drawn = svg.count("<circle")
    assert drawn == 2 * min(n_pairs, 400)  # both panels, thinned alike
    assert any("at most 400 pairs drawn" in t for t in labels) == (n_pairs > 400)
    assert svg.count('stroke="#C00000"') == 2  # a fit line in each panel
