"""Pooled heat-map rows and group comparisons only over consistently oriented matchups."""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_transfer_audit.statistics.readers import reader_groups, reader_rates
from judge_transfer_audit.statistics.readers._common import ALL_MATCHUPS


def _votes():
    rng = np.random.default_rng(5)
    rows = []
    for m, (focal, other) in enumerate([("zeta", "alpha"), ("zeta", "beta"), ("alpha", "beta")]):
        for p in range(6):
            for r in range(4):
                rows.append(
                    (
                        f"m{m}p{p}",
                        f"r{r}",
                        "empathy",
                        f"{focal} vs {other}",
                        focal,
                        other,
                        float(rng.random() < 0.7),
                        "g1" if r < 2 else "g2",
                    )
                )
    return pd.DataFrame(
        rows, columns=["pair_id", "reader_id", "criterion", "matchup", "focal", "other", "y", "reader_group"]
    )


def test_default_pools_every_matchup():
    rates = reader_rates(_votes(), fit_glmm_if_missing=False).rates
    assert ALL_MATCHUPS in set(rates["matchup"])


def test_pools_only_matchups_sharing_the_focal_system():
    votes = _votes()
    pools = {"(all matchups, focal zeta)": ("zeta vs alpha", "zeta vs beta")}
    rates = reader_rates(votes, fit_glmm_if_missing=False, pools=pools).rates
    assert set(rates["matchup"]) == {"zeta vs alpha", "zeta vs beta", "alpha vs beta", "(all matchups, focal zeta)"}
    pooled = rates[(rates["matchup"] == "(all matchups, focal zeta)") & (rates["row_kind"] == "human_pooled")]
    expected = votes[votes["matchup"].str.startswith("zeta")]["y"].mean()
    assert pooled["rate"].iloc[0] == expected and pooled["n"].iloc[0] == 48
    groups = reader_groups(votes, rng=0, pools=pools).comparison
    assert set(groups["matchup"]) == set(rates["matchup"])


def test_no_pools_no_pooled_rows():
    rates = reader_rates(_votes(), fit_glmm_if_missing=False, pools={}).rates
    assert not rates["matchup"].str.startswith("(all").any()
    assert "Preference rates for the focal system (zeta vs alpha" in str(
        reader_rates(_votes(), fit_glmm_if_missing=False, pools={})
    )


def test_leave_one_reader_out_pools_only_within_scopes():
    from judge_transfer_audit.statistics.readers.timing import leave_one_reader_out

    votes = _votes()
    pools = {"(all matchups, focal zeta)": ("zeta vs alpha", "zeta vs beta")}
    loo = leave_one_reader_out(votes, pools)
    assert set(loo["scope"]) == {"(all matchups, focal zeta)", "alpha vs beta"}
    row = loo[(loo["reader_id"] == "r0") & (loo["scope"] == "alpha vs beta")].iloc[0]
    cell = votes[votes["matchup"] == "alpha vs beta"]
    assert row["rate_all"] == cell["y"].mean()
    assert row["rate_without"] == cell[cell["reader_id"] != "r0"]["y"].mean()
    assert set(leave_one_reader_out(votes)["scope"]) == {ALL_MATCHUPS}
