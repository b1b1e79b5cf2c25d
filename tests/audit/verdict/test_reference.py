"""The verdict's estimands and adjustment against an independent R implementation (tests/reference/verdict/)."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.statistics.estimands import estimands
from judge_transfer_audit.verdict.decision import adjust_p

REF = Path(__file__).resolve().parents[2] / "reference" / "verdict"


@pytest.mark.parametrize("cell", ["balanced", "unbalanced", "ties", "spread"])
def test_estimands_match_r(cell):
    votes = pd.read_csv(REF / "inputs" / "votes.csv")
    ref = pd.read_csv(REF / "outputs" / "estimands.csv").set_index("cell").loc[cell]
    v = votes[votes["cell"] == cell]
    g = v.groupby("pair_id")["credit"]
    c, n = g.sum().to_numpy(), g.size().to_numpy(float)
    q = v.assign(sq=v["credit"] ** 2).groupby("pair_id")["sq"].sum().to_numpy()
    e = estimands(c, q, n, np.ones_like(c), np.zeros_like(c))
    assert float(e.vote_share) == pytest.approx(ref["vote_share"], abs=1e-12)
    assert float(e.share_var) == pytest.approx(ref["share_var"], abs=1e-12)
    assert float(e.within_var) == pytest.approx(ref["within_var"], abs=1e-12)
    assert float(e.between_pair_var) == pytest.approx(ref["between_pair_var"], abs=1e-12)
    if not np.isnan(ref["between_pair_var_aov"]):
        assert float(e.between_pair_var) == pytest.approx(ref["between_pair_var_aov"], abs=1e-12)
    assert float(e.majority_rate) == pytest.approx(ref["majority_rate"], abs=1e-12)


def test_holm_and_bonferroni_match_p_adjust():
    ref = pd.read_csv(REF / "outputs" / "holm.csv")
    p = pd.read_csv(REF / "inputs" / "p_values.csv")["p"].to_numpy()
    assert np.allclose(adjust_p(p, "holm"), ref["holm"], atol=1e-15)
    assert np.allclose(adjust_p(p, "bonferroni"), ref["bonferroni"], atol=1e-15)
