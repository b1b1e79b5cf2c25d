"""Judge rates per configuration and the skew-survival flag."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.core.serialize import from_jsonable, to_jsonable
from judge_transfer_audit.statistics.uncertainty.judge_configs import JudgeConfigRates, judge_configuration_rates


def _credits(rates: dict[str, float], seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for judge, p in rates.items():
        for m in ("m0", "m1"):
            for c in ("c0", "c1", "aggregate"):
                for i in range(20):
                    u = rng.random()
                    credit = 1.0 if u < p - 0.05 else (0.5 if u < p + 0.05 else 0.0)
                    if i == 0 and c == "c0":
                        credit = np.nan
                    rows.append({"pair_id": f"{m}p{i}", "matchup": m, "criterion": c, "judge": judge, "credit": credit})
    return pd.DataFrame(rows)


def test_rates_match_direct_recomputation_and_pool_excludes_aggregate():
    f = _credits({"ens": 0.85, "llama-cot": 0.7})
    res = judge_configuration_rates(f)
    for _, r in res.cells.iterrows():
        g = f[(f["judge"] == r["judge"]) & (f["matchup"] == r["matchup"]) & (f["criterion"] == r["criterion"])]
        assert r["rate"] == pytest.approx(g["credit"].mean())
        assert (r["wins"], r["losses"], r["ties"], r["invalid"]) == (
            int((g["credit"] == 1).sum()),
            int((g["credit"] == 0).sum()),
            int((g["credit"] == 0.5).sum()),
            int(g["credit"].isna().sum()),
        )
    dims = f[f["criterion"] != "aggregate"]
    for _, r in res.pooled.iterrows():
        assert r["rate"] == pytest.approx(dims[dims["judge"] == r["judge"]]["credit"].mean())
    assert res.excluded_criteria == ("aggregate",)
    assert res.skew_direction == "focal" and res.skew_survives_all
    assert res.n_invalid == int(f["credit"].isna().sum()) and res.n_configurations == 2
    assert res.min_rate < res.max_rate


def test_skew_does_not_survive_a_contrary_configuration():
    res = judge_configuration_rates(_credits({"ens": 0.9, "a": 0.8, "contrary": 0.3}))
    assert res.skew_direction == "focal" and not res.skew_survives_all
    assert not res.pooled.set_index("judge").loc["contrary", "same_side"]
    assert "does NOT survive" in str(res)


def test_outcome_column_gives_counts_and_round_trip():
    f = _credits({"ens": 0.8})
    f["outcome"] = np.where(
        f["credit"].isna(), "invalid", np.where(f["credit"] == 1, "win", np.where(f["credit"] == 0, "loss", "tie"))
    )
    f.loc[f["credit"] == 0.5, "credit"] = 1.0  # a 'random' tie rule resolved these ties
    res = judge_configuration_rates(f)
    assert res.pooled["ties"].iloc[0] == int((f["outcome"][f["criterion"] != "aggregate"] == "tie").sum())
    text = json.dumps(to_jsonable(res))
    assert json.dumps(to_jsonable(from_jsonable(JudgeConfigRates, json.loads(text)))) == text


def test_missing_column_is_an_input_error():
    with pytest.raises(InputError, match="missing column 'judge'"):
        judge_configuration_rates(_credits({"ens": 0.8}).drop(columns="judge"))
