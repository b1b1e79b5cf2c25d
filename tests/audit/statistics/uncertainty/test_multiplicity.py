"""Significance tally and multiplicity adjustments (Holm, BH vs statsmodels)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests

from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.core.serialize import from_jsonable, to_jsonable
from judge_transfer_audit.statistics.uncertainty import cluster_bootstrap
from judge_transfer_audit.statistics.uncertainty.multiplicity import (
    SignificanceTally,
    benjamini_hochberg,
    holm,
    significance_tally,
)

from .conftest import make_votes

p_lists = st.lists(st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.01, 0.04, 0.5])), min_size=1, max_size=30)


def _compare_with_statsmodels(p):
    p = np.asarray(p)
    np.testing.assert_allclose(holm(p), multipletests(p, method="holm")[1], atol=1e-12)
    np.testing.assert_allclose(benjamini_hochberg(p), multipletests(p, method="fdr_bh")[1], atol=1e-12)


# multipletests costs ~0.1 s per call on this machine: few generated cases, plus fixed ones
@settings(max_examples=10, deadline=None)
@given(p=p_lists)
def test_holm_and_bh_match_statsmodels(p):
    _compare_with_statsmodels(p)


@pytest.mark.parametrize(
    "p", [[0.01, 0.04, 0.03, 0.005, 0.5, 0.04], [0.9], [0.0, 1.0, 0.049, 0.051], list(np.linspace(0.001, 0.2, 18))]
)
def test_holm_and_bh_match_statsmodels_fixed_cases(p):
    _compare_with_statsmodels(p)


def test_nan_p_values_are_left_out_of_m():
    p = np.array([0.01, np.nan, 0.02, 0.04])
    adj = holm(p)
    assert np.isnan(adj[1])
    np.testing.assert_allclose(adj[[0, 2, 3]], multipletests(p[[0, 2, 3]], method="holm")[1])


def _glmm_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "cell": ["a", "b", "c", "d"],
            "estimate": [0.7, 0.3, 0.55, 0.52],
            "ci_low": [0.6, 0.2, 0.49, 0.51],
            "ci_high": [0.8, 0.45, 0.61, 0.53],
            "p_value": [0.0001, 0.002, 0.08, 0.03],
        }
    )


def test_pointwise_tally_counts_intervals_excluding_half():
    t = significance_tally(glmm=_glmm_frame())
    assert t.counts == {"glmm": 3} and t.pointwise
    row = t.tally.iloc[0]
    assert (row["n_favour_focal"], row["n_favour_other"]) == (2, 1)
    assert "pointwise" in t.statement and "unadjusted" in t.statement and "pointwise" in str(t).lower()


def test_adjusted_tallies_are_nested():
    holm_t = significance_tally(glmm=_glmm_frame(), adjust="holm")
    bh_t = significance_tally(glmm=_glmm_frame(), adjust="bh")
    assert holm_t.counts["glmm"] == 2  # 0.0001*4, 0.002*3 < .05; 0.03*2 = .06 not
    assert bh_t.counts["glmm"] == 3  # BH: 0.03 * 4/3 = 0.04 < .05
    assert not holm_t.pointwise and "Holm" in holm_t.statement


def test_tally_from_bootstrap_and_cells_frame_naming():
    v = make_votes(6, n_matchups=2, n_criteria=3, n_pairs=20, n_readers=7, b0=0.5)
    boot = cluster_bootstrap(v, n_boot=500, rng=3)
    cf = pd.DataFrame(
        {
            "matchup": ["m0"],
            "criterion": ["c0"],
            "glmm_estimate": [0.6],
            "glmm_ci_low": [0.55],
            "glmm_ci_high": [0.65],
            "glmm_b0": [0.4],
            "glmm_se": [0.1],
        }
    )
    t = significance_tally(boot, cf)
    assert list(t.tally["method"]) == ["glmm", "pairs", "readers", "two-way", "two-way-cgm"]
    c = boot.cells
    for scheme in ("pairs", "readers", "two-way"):
        s = c[c["scheme"] == scheme]
        expected = int(((s["ci_low_percentile"] > 0.5) | (s["ci_high_percentile"] < 0.5)).sum())
        assert t.counts[scheme] == expected
    glmm_row = t.cells[t.cells["method"] == "glmm"].iloc[0]
    assert glmm_row["cell"] == "m0/c0" and glmm_row["p_value"] < 0.001
    text = json.dumps(to_jsonable(t))
    assert json.dumps(to_jsonable(from_jsonable(SignificanceTally, json.loads(text)))) == text


def test_bad_options_raise_input_error():
    with pytest.raises(InputError, match="unknown adjustment"):
        significance_tally(glmm=_glmm_frame(), adjust="bonferroni")
    with pytest.raises(InputError, match="no method results"):
        significance_tally()
    with pytest.raises(InputError, match="missing column"):
        significance_tally(glmm=_glmm_frame().drop(columns="ci_low"))


def test_product_scheme_is_its_own_method_and_finds_a_subset_of_the_corrected_cells():
    v = make_votes(9, n_matchups=2, n_criteria=3, n_pairs=20, n_readers=7, b0=0.3, sd_reader=0.0)
    boot = cluster_bootstrap(v, schemes=("pairs", "readers", "two-way", "two-way-product"), n_boot=2000, rng=1)
    t = significance_tally(boot)
    assert list(t.tally["method"]) == ["pairs", "readers", "two-way", "two-way-cgm", "two-way-product"]
    # the product interval is the wider one (it counts the vote-level variance three times)
    c = boot.cells.pivot(index="cell", columns="scheme", values="se")
    assert (c["two-way-product"] > c["two-way"]).all()
    sig = t.cells[t.cells["significant"]].groupby("method")["cell"].apply(set)
    assert sig.get("two-way-product", set()) <= sig["two-way"] and t.counts["two-way-product"] < t.counts["two-way"]
