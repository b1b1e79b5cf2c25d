"""Property checks of the loader: row order does not change what is loaded, only where it is."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judge_transfer_audit.inputs import load_audit_data

SYSTEMS = ("alpha", "beta")


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**31 - 1), n_pairs=st.integers(1, 4), n_readers=st.integers(1, 4))
@pytest.mark.slow
def test_shuffling_the_human_file_keeps_the_votes(tmp_path, seed, n_pairs, n_readers):
    rng = np.random.default_rng(seed)
    rows = [
        (f"p{i}", f"r{r}", c, str(rng.choice(list(SYSTEMS) + ["tie"])))
        for i in range(n_pairs)
        for r in range(n_readers)
        for c in ("empathy", "overall")
    ]
    humans = pd.DataFrame(rows, columns=["pair_id", "reader_id", "criterion", "choice"])
    judge = pd.DataFrame(
        [(f"p{i}", s, "empathy", int(rng.integers(1, 6))) for i in range(n_pairs) for s in SYSTEMS],
        columns=["pair_id", "system", "criterion", "score"],
    )
    judge.to_csv(tmp_path / "judge.csv", index=False)
    humans.to_csv(tmp_path / "h1.csv", index=False)
    perm = rng.permutation(len(humans))
    humans.iloc[perm].to_csv(tmp_path / "h2.csv", index=False)
    a = load_audit_data(tmp_path / "judge.csv", tmp_path / "h1.csv")
    b = load_audit_data(tmp_path / "judge.csv", tmp_path / "h2.csv")
    key = ["pair_id", "reader_id", "criterion"]
    cols = key + ["choice", "y", "focal", "matchup"]
    pd.testing.assert_frame_equal(
        a.votes[cols].sort_values(key).reset_index(drop=True), b.votes[cols].sort_values(key).reset_index(drop=True)
    )
    # line numbers follow the rows: row k of the shuffled file came from row perm[k]
    assert b.votes["line"].tolist() == list(range(2, len(humans) + 2))
    assert (b.votes["pair_id"].to_numpy() == humans["pair_id"].to_numpy()[perm]).all()
