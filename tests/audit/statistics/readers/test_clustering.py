"""Reader and criteria clustering, and the comparison of the two reader trees."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.statistics.readers._common import check_votes
from judge_transfer_audit.statistics.readers.clustering import (
    MAX_CRITERIA_FOR_CLUSTERING,
    cluster_profile,
    cluster_readers,
    cophenetic_between,
    criteria_dendrogram,
    shared_clusters,
    standardise_profile,
)
from judge_transfer_audit.statistics.readers.weights import reader_kappas, reader_weights

from .conftest import make_votes


def _profile(rows: dict[str, list[float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, index=["c1", "c2", "c3"]).T


def test_shared_subclusters_of_a_known_configuration():
    """((a, b), c) and (d, e) built into both profiles; f differs between them."""
    w = _profile(
        {"a": [2, 0, 0], "b": [2.1, 0, 0.1], "c": [1.6, 0.3, 0], "d": [0, 2, 2], "e": [0.1, 2, 2.1], "f": [1, 1, -2]}
    )
    k = _profile(
        {
            "a": [0.6, 0.1, 0.0],
            "b": [0.62, 0.1, 0.02],
            "c": [0.5, 0.2, 0.1],
            "d": [0, 0.5, 0.5],
            "e": [0.02, 0.52, 0.5],
            "f": [-0.5, 0.3, 0.4],
        }
    )
    wd = cluster_profile(w)
    kd = cluster_profile(k)
    common = shared_clusters(wd, kd)
    assert ("a", "b") in common and ("d", "e") in common and ("a", "b", "c") in common
    assert all(2 <= len(c) < 6 for c in common)
    assert wd.cophenetic_correlation > 0.7
    assert cophenetic_between(wd, kd) > 0.5
    # A tree compared with itself: every cluster shared, correlation 1.
    assert cophenetic_between(wd, wd) == pytest.approx(1.0)
    assert len(shared_clusters(wd, wd)) == 4  # n - 2 non-trivial merges


def test_dendrogram_matches_scipy_and_is_drawable():
    from scipy.cluster.hierarchy import dendrogram, linkage
    from scipy.spatial.distance import pdist

    prof = _profile({"a": [1, 0, 3], "b": [2, 1, 0], "c": [0, 5, 1], "d": [4, 4, 4], "e": [1, 1, 1]})
    dend = cluster_profile(prof, method="complete")
    z, _ = standardise_profile(prof)
    np.testing.assert_allclose(dend.z(), linkage(pdist(z.to_numpy()), method="complete"))
    drawn = dendrogram(dend.z(), labels=list(dend.labels), no_plot=True)
    assert tuple(drawn["ivl"]) == dend.leaf_order
    assert len(dend.to_frame()) == 4


def test_standardise_handles_constant_and_missing():
    prof = pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": [5.0, 5.0, 5.0], "z": [1.0, np.nan, 3.0]}, index=list("abc"))
    z, n_missing = standardise_profile(prof)
    assert n_missing == 1
    assert (z["y"] == 0).all() and z.loc["b", "z"] == 0.0
    assert z["x"].std(ddof=1) == pytest.approx(1.0)


def test_cluster_readers_on_votes_finds_the_built_in_groups():
    votes = check_votes(make_votes(6, 60, seed=0, separated_reader="r5"))
    res = cluster_readers(votes, reader_weights(votes), reader_kappas(votes))
    assert res.status is Status.PASS
    assert ("r0", "r1", "r2") in res.shared_clusters and ("r3", "r4", "r5") in res.shared_clusters
    assert res.kappa_weight_spearman > 0.5
    assert res.criteria is not None and res.criteria.labels[-1] == "overall"
    assert set(res.to_frame()["tree"]) == {"weights", "kappas", "criteria"}
    table = res.comparison.set_index("measure")
    assert table.loc["cophenetic_correlation_between_trees", "value"] == res.cophenetic_between
    assert table.loc["cophenetic_correlation_weights", "value"] == res.weights.cophenetic_correlation
    assert table.loc["spearman_kappa_weight", "value"] == res.kappa_weight_spearman
    shared = res.comparison[res.comparison["measure"] == "shared_sub_cluster"]["members"].tolist()
    assert shared == [", ".join(c) for c in res.shared_clusters]


def test_criteria_that_move_together_merge_first():
    votes = check_votes(make_votes(4, 40, seed=2))
    pairs = votes["criterion"] == "emotion"
    emp = votes[votes["criterion"] == "empathy"].set_index(["reader_id", "pair_id"])["y"]
    votes.loc[pairs, "y"] = [emp[(r, p)] for r, p in zip(votes.loc[pairs, "reader_id"], votes.loc[pairs, "pair_id"])]
    res = cluster_readers(votes, reader_weights(votes), reader_kappas(votes))
    assert res.criteria.clusters[0] == ("emotion", "empathy")


def test_criteria_tree_up_to_the_cap_and_skipped_with_a_reason_beyond_it():
    # a criteria x criteria profile grows as the square of the criteria (10k criteria)
    rng = np.random.default_rng(3)

    def votes(n_criteria: int) -> pd.DataFrame:
        rows = [(f"p{p}", f"r{r}", f"c{c:04d}") for c in range(n_criteria) for p in range(4) for r in range(3)]
        frame = pd.DataFrame(rows, columns=["pair_id", "reader_id", "criterion"])
        return frame.assign(y=rng.integers(0, 2, len(frame)).astype(float))

    at_cap, reason = criteria_dendrogram(votes(MAX_CRITERIA_FOR_CLUSTERING))
    assert at_cap is not None and reason == "" and len(at_cap.labels) == MAX_CRITERIA_FOR_CLUSTERING
    beyond, reason = criteria_dendrogram(votes(MAX_CRITERIA_FOR_CLUSTERING + 1))
    assert beyond is None
    assert f"at most {MAX_CRITERIA_FOR_CLUSTERING} criteria, found {MAX_CRITERIA_FOR_CLUSTERING + 1}" in reason


@pytest.mark.parametrize("n_readers", [2, 3])
def test_few_readers_skip_reader_trees_but_keep_criteria(n_readers):
    votes = check_votes(make_votes(n_readers, 20))
    res = cluster_readers(votes, reader_weights(votes), reader_kappas(votes))
    assert res.status is Status.SKIPPED and ">= 4 readers" in res.reason
    assert res.weights is None and res.criteria is not None and res.comparison.empty
    assert "SKIPPED" in str(res)


def test_unknown_linkage_lists_the_known_ones():
    votes = check_votes(make_votes(4, 10))
    with pytest.raises(InputError, match="average"):
        cluster_readers(votes, reader_weights(votes), reader_kappas(votes), linkage="upgma")


@pytest.mark.parametrize("method", ["single", "ward", "weighted"])
def test_linkage_is_configurable(method):
    votes = check_votes(make_votes(5, 30))
    res = cluster_readers(votes, reader_weights(votes), reader_kappas(votes), linkage=method)
    assert res.weights.method == method and res.linkage == method


REF = Path(__file__).parents[3] / "reference" / "cophenetic"


@pytest.mark.parametrize("dataset", ["seven", "nine"])
@pytest.mark.parametrize("method", ["average", "complete", "single", "weighted"])
def test_trees_and_their_comparison_match_base_r_hclust(dataset, method):
    """tests/reference/cophenetic: R hclust on dist(scale(profile)) (``weighted`` is R's
    ``mcquitty``), cor(cophenetic(h), d) per tree and between the two trees."""
    ref = pd.read_csv(REF / "reference.csv")
    ref = ref[(ref.dataset == dataset) & ref.quantity.str.startswith(f"{method}:")]
    values = dict(zip(ref.quantity.str.split(":").str[1], ref.value))
    w = pd.read_csv(REF / f"input_{dataset}_weights.csv", index_col=0)
    k = pd.read_csv(REF / f"input_{dataset}_kappas.csv", index_col=0)
    wd, kd = cluster_profile(w, method=method), cluster_profile(k, method=method)
    assert wd.cophenetic_correlation == pytest.approx(values["cophenetic_weights"], abs=1e-12)
    assert kd.cophenetic_correlation == pytest.approx(values["cophenetic_kappas"], abs=1e-12)
    assert cophenetic_between(wd, kd) == pytest.approx(values["cophenetic_between"], abs=1e-12)
    heights = sorted(row[2] for row in wd.linkage_matrix)
    expected = [values[f"height_weights_{i + 1}"] for i in range(len(w) - 1)]
    np.testing.assert_allclose(heights, expected, atol=1e-12)


@pytest.mark.r
def test_cophenetic_reference_rerun_live(tmp_path):
    if shutil.which("Rscript") is None:
        pytest.skip("Rscript not on PATH")
    for f in REF.glob("input_*.csv"):
        shutil.copy(f, tmp_path)
    shutil.copy(REF / "make_reference.R", tmp_path)
    subprocess.run(["Rscript", "make_reference.R"], cwd=tmp_path, check=True, capture_output=True)
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "reference.csv"), pd.read_csv(REF / "reference.csv"))
