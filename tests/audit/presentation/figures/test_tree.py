"""judge_transfer_audit.presentation.figures._tree lays a dendrogram out exactly as scipy.cluster.hierarchy.dendrogram
does."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.cluster import hierarchy

from judge_transfer_audit.presentation.figures._tree import tree_layout


def _linkage(n: int, seed: int, method: str, ties: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    if ties:
        x = np.round(x)  # repeated points: equal merge heights
    return hierarchy.linkage(x, method=method)


def _scipy(z: np.ndarray, labels: list[str], p: int | None) -> dict:
    extra = {"truncate_mode": "lastp", "p": p} if p else {}
    return hierarchy.dendrogram(z, no_plot=True, labels=labels, **extra)


@pytest.mark.parametrize("n", [2, 3, 7, 31, 200])
@pytest.mark.parametrize("method", ["average", "ward", "single"])
@pytest.mark.parametrize("p", [None, 5, 30])
def test_layout_matches_scipy(n, method, p):
    z = _linkage(n, seed=n, method=method, ties=method == "single")
    labels = [f"r{i}" for i in range(n)]
    ours = tree_layout(z, labels, lastp=p)
    ref = _scipy(z, labels, p)
    assert list(ours.leaves) == ref["leaves"]
    assert list(ours.labels) == ref["ivl"]
    np.testing.assert_allclose(np.array(ours.icoord).reshape(-1, 4), np.array(ref["icoord"]).reshape(-1, 4))
    np.testing.assert_allclose(np.array(ours.dcoord).reshape(-1, 4), np.array(ref["dcoord"]).reshape(-1, 4))


def test_a_deep_chain_does_not_recurse():
    n = 3000  # single linkage on a line: every merge adds one point, depth n - 1
    z = hierarchy.linkage(np.arange(n, dtype=float)[:, None] ** 1.5, method="single")
    ours = tree_layout(z, [str(i) for i in range(n)])
    assert len(ours.leaves) == n and len(ours.icoord) == n - 1


def test_cut_leaves_are_labelled_with_their_sizes():
    z = _linkage(50, seed=3, method="average")
    ours = tree_layout(z, [str(i) for i in range(50)], lastp=4)
    sizes = [int(lab.strip("()")) if lab.startswith("(") else 1 for lab in ours.labels]
    assert len(ours.leaves) == 4 and sum(sizes) == 50
