"""The layout of a dendrogram from a linkage matrix: leaf order and the tree's line segments.

The same coordinates as ``scipy.cluster.hierarchy.dendrogram(Z, no_plot=True)`` (optionally with
``truncate_mode="lastp"``), computed here so that drawing a saved result's trees does not import
SciPy's clustering package (about a third of a second of every ``audit report``).
tests/audit/presentation/figures/test_tree.py compares both on random and tied linkages.

Conventions (SciPy's): leaf ``k`` of the drawing sits at ``10 k + 5``; a link of node ``i``
(row ``i - n`` of ``Z``: left child, right child, height, size) is the path
``(x_left, h_left) -> (x_left, h) -> (x_right, h) -> (x_right, h_right)``, given as
``icoord = [x_left, x_left, x_right, x_right]`` and ``dcoord = [h_left, h, h, h_right]``; the
left child is drawn first; links are listed in post-order (children before their parent). With
``lastp=p`` the tree is cut to its last ``p`` clusters: every node formed before them is a leaf
(height 0) labelled ``"(size)"``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TreeLayout:
    """Node ids of the drawn leaves (left to right), their labels and the link coordinates."""

    leaves: tuple[int, ...]
    labels: tuple[str, ...]
    icoord: tuple[tuple[float, float, float, float], ...]
    dcoord: tuple[tuple[float, float, float, float], ...]


def tree_layout(z: np.ndarray, labels: list[str] | tuple[str, ...], lastp: int | None = None) -> TreeLayout:
    """Lay out linkage ``z`` ((n-1) x 4) with leaf ``labels`` (n), cut to ``lastp`` clusters if given."""
    z = np.asarray(z, dtype=float)
    n = z.shape[0] + 1
    p = n if lastp is None or lastp <= 0 or lastp > n else int(lastp)
    first_kept = 2 * n - p  # nodes below this id (and original observations) are leaves
    leaves: list[int] = []
    names: list[str] = []
    icoord: list[tuple[float, float, float, float]] = []
    dcoord: list[tuple[float, float, float, float]] = []

    def visit(node: int) -> tuple[float, float]:
        """Draw ``node``'s subtree; return its x position and height (a stack, not recursion: trees can be deep)."""
        results: dict[int, tuple[float, float]] = {}
        stack = [node]
        while stack:
            k = stack[-1]
            if k < first_kept:
                stack.pop()
                results[k] = (10.0 * len(leaves) + 5.0, 0.0)
                leaves.append(k)
                names.append(str(labels[k]) if k < n else f"({int(z[k - n, 3])})")
                continue
            left, right = int(z[k - n, 0]), int(z[k - n, 1])
            if left not in results:
                stack.append(left)
                continue
            if right not in results:
                stack.append(right)
                continue
            stack.pop()
            (xl, hl), (xr, hr) = results[left], results[right]
            h = float(z[k - n, 2])
            icoord.append((xl, xl, xr, xr))
            dcoord.append((hl, h, h, hr))
            results[k] = ((xl + xr) / 2.0, h)
        return results[node]

    if n >= 2:
        visit(2 * n - 2)
    elif n == 1:
        leaves.append(0)
        names.append(str(labels[0]))
    return TreeLayout(tuple(leaves), tuple(names), tuple(icoord), tuple(dcoord))
