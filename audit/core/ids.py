"""Ids as integer codes in the order of their strings, without sorting every row's string."""

from __future__ import annotations

import numpy as np
import pandas as pd


def ranks(ids) -> tuple[np.ndarray, np.ndarray]:
    """``(names, rank)``: the sorted distinct ids as strings and each entry's index among them.

    The same as ``np.unique(np.asarray(ids).astype(str), return_inverse=True)``, but the rows
    are hashed (``pd.factorize``) and only the distinct ids are converted and sorted: at a
    million votes and 50k pairs this is several times faster, and the codes are identical.
    """
    codes, uniques = pd.factorize(np.asarray(ids, dtype=object), sort=False, use_na_sentinel=False)
    names, rank = np.unique(np.asarray(uniques, dtype=object).astype(str), return_inverse=True)
    return names, rank.reshape(-1)[codes]


__all__ = ["ranks"]
