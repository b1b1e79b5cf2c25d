"""judge_transfer_audit.core.ids: integer codes of ids in the order of their strings."""

from __future__ import annotations

import numpy as np

from judge_transfer_audit.core.ids import ranks


def test_ranks_are_numpy_unique_of_the_strings():
    rng = np.random.default_rng(3)
    for _ in range(200):
        ids = np.array([f"r{int(i)}" for i in rng.integers(0, 30, int(rng.integers(0, 80)))], dtype=object)
        names, rank = ranks(ids)
        want_names, want_rank = np.unique(ids.astype(str), return_inverse=True)
        assert names.tolist() == want_names.tolist()
        assert rank.tolist() == want_rank.tolist()


def test_ranks_compare_ids_as_strings():
    names, rank = ranks(np.array([10, "10", 9, "a"], dtype=object))
    assert names.tolist() == ["10", "9", "a"]  # 10 and "10" are one id; "10" sorts before "9"
    assert rank.tolist() == [0, 0, 1, 2]
