"""Property checks: the reader analyses do not depend on row order or reader labels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judge_transfer_audit.statistics.readers._common import check_votes
from judge_transfer_audit.statistics.readers.clustering import cluster_readers
from judge_transfer_audit.statistics.readers.rates import reader_rates
from judge_transfer_audit.statistics.readers.weights import reader_kappas, reader_weights

from .conftest import make_votes

VOTES = check_votes(make_votes(5, 20, seed=8))


def _sorted(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    return frame.sort_values(keys).reset_index(drop=True)


@settings(max_examples=5, deadline=None)
@given(st.integers(0, 2**31 - 1))
@pytest.mark.slow
def test_row_order_does_not_matter(seed):
    shuffled = VOTES.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    a, b = reader_weights(VOTES), reader_weights(shuffled)
    pd.testing.assert_frame_equal(
        _sorted(a.coefficients, ["reader_id", "term"]),
        _sorted(b.coefficients, ["reader_id", "term"]),
        atol=1e-7,
        check_exact=False,
    )
    ra = reader_rates(VOTES, fit_glmm_if_missing=False).rates
    rb = reader_rates(shuffled, fit_glmm_if_missing=False).rates
    keys = ["row_label", "matchup", "criterion"]
    pd.testing.assert_frame_equal(_sorted(ra, keys), _sorted(rb, keys))


@settings(max_examples=5, deadline=None)
@given(st.permutations(["r0", "r1", "r2", "r3", "r4"]))
@pytest.mark.slow
def test_reader_relabelling_permutes_the_clusters(perm):
    mapping = dict(zip(["r0", "r1", "r2", "r3", "r4"], [f"x{p}" for p in perm]))
    relabelled = VOTES.assign(reader_id=VOTES["reader_id"].map(mapping))
    a = cluster_readers(VOTES, reader_weights(VOTES), reader_kappas(VOTES))
    b = cluster_readers(relabelled, reader_weights(relabelled), reader_kappas(relabelled))
    renamed = {tuple(sorted(mapping[r] for r in c)) for c in a.shared_clusters}
    assert renamed == set(b.shared_clusters)
    assert np.isclose(a.cophenetic_between, b.cophenetic_between)
