"""Average ranks (ties share the mean of their positions), as scipy's ``rankdata`` and pandas'
``rank()`` give them: integers and halves, the same floats whichever computes them."""

from __future__ import annotations

import numpy as np


def average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n of ``x`` (no NaN) with ties given their average rank."""
    n = x.shape[0]
    if n == 0:
        return np.zeros(0)
    order = np.argsort(x, kind="stable")
    y = x[order]
    first = np.concatenate(([True], y[:-1] != y[1:]))
    counts = np.diff(np.flatnonzero(first), append=n)
    ranks = np.empty(n)
    ranks[order] = np.repeat(np.arange(1, n + 1, dtype=float)[first] + (counts - 1) / 2, counts)
    return ranks


__all__ = ["average_ranks"]
