"""judge_transfer_audit.inputs.pairs: the pairs file's own problems are reported once."""

from __future__ import annotations

from .helpers import PAIRS, basic, problems


def test_bad_focal_is_one_problem_not_also_unknown_pair_ids(tmp_path):
    pairs = PAIRS.replace("p2,alpha,beta,alpha,", "p2,alpha,beta,gamma,")
    probs = problems(basic(tmp_path, pairs=pairs))
    assert [(p.column, p.value, p.line) for p in probs] == [("focal", "gamma", 3)]


def test_bad_focal_under_drop_invalid_leaves_the_pair_out_and_counts_it(tmp_path):
    pairs = PAIRS.replace("p2,alpha,beta,alpha,", "p2,alpha,beta,gamma,")
    data = basic(tmp_path, pairs=pairs, drop_invalid=True)()
    assert set(data.votes["pair_id"]) == {"p1"}
    counts = {(e.role, e.reason): e.n_rows for e in data.exclusions}
    assert counts[("pairs", "focal not in the pair")] == 1
    assert counts[("humans", "pair_id missing from the pairs file")] == 2


def test_distinct_rows_number_rows_as_groupby_ngroup_does():
    import numpy as np
    import pandas as pd

    from judge_transfer_audit.inputs.pairs import _distinct_rows

    rng = np.random.default_rng(0)
    values = np.array(["a", "b", "", "c", None, np.nan, "é"], dtype=object)
    for _ in range(300):
        n, k = int(rng.integers(1, 40)), int(rng.integers(1, 4))
        columns = [values[rng.integers(0, int(rng.integers(1, 8)), n)] for _ in range(k)]
        frame = pd.DataFrame({str(j): pd.Series(c, dtype=object) for j, c in enumerate(columns)})
        expected = frame.groupby(list(frame.columns), sort=False, dropna=False).ngroup().to_numpy()
        code, first = _distinct_rows(*columns)
        assert code.tolist() == expected.tolist()
        assert first.tolist() == np.unique(expected, return_index=True)[1].tolist()
