"""Agreement rows pooled over matchups: chance agreement within each matchup when the
matchups are not oriented consistently."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.statistics.agreement import POOLED_WITHIN, agreement_table


def _votes(seed=0, n_pairs=12, n_readers=5, shares=(0.8, 0.3)):
    rng = np.random.default_rng(seed)
    rows = []
    for m, share in enumerate(shares):
        for p in range(n_pairs):
            for r in range(n_readers):
                u = rng.random()
                y = 1.0 if u < share * 0.9 else (np.nan if u < share * 0.9 + 0.1 else 0.0)
                rows.append((f"m{m}p{p}", f"r{r}", "empathy", f"M{m}", y))
    return pd.DataFrame(rows, columns=["pair_id", "reader_id", "criterion", "matchup", "y"])


def _flip(votes, matchup):
    v = votes.copy()
    m = v["matchup"] == matchup
    v.loc[m, "y"] = 1.0 - v.loc[m, "y"]
    return v


def _all(table):
    f = table.to_frame()
    return f[f["level"] == "all"].iloc[0]


def test_orientation_free_pooling_does_not_depend_on_which_system_is_focal():
    votes = _votes()
    flipped = _flip(votes, "M1")
    a, b = (
        _all(agreement_table(votes, pooling="within matchup")),
        _all(agreement_table(flipped, pooling="within matchup")),
    )
    for col in ("fleiss_kappa", "krippendorff_alpha", "observed_agreement", "expected_agreement", "raw_agreement"):
        assert a[col] == pytest.approx(b[col], abs=1e-12), col
    assert a["matchup"] == POOLED_WITHIN
    # the usual pooling averages opposite directions: flipping one matchup moves it
    x, y = _all(agreement_table(votes)), _all(agreement_table(flipped))
    assert abs(x["fleiss_kappa"] - y["fleiss_kappa"]) > 0.05 and x["matchup"] == "all"


def test_within_matchup_pooling_is_de_vries_pooled_kappa_by_hand():
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    votes = _votes(seed=3)
    cat = np.where(votes["y"].isna(), 2, votes["y"]).astype(int)
    p_o, p_e, n = [], [], []
    for _, v in votes.assign(cat=cat).groupby("matchup"):
        counts, _ = aggregate_raters(v.pivot(index="pair_id", columns="reader_id", values="cat").to_numpy(), n_cat=3)
        share = counts.sum(0) / counts.sum()
        k = fleiss_kappa(counts)
        e = float((share**2).sum())
        p_o.append(k * (1 - e) + e)
        p_e.append(e)
        n.append(len(counts))
    po, pe = np.average(p_o, weights=n), np.average(p_e, weights=n)
    row = _all(agreement_table(votes, pooling="within matchup"))
    assert row["fleiss_kappa"] == pytest.approx((po - pe) / (1 - pe), abs=1e-12)


def test_with_one_matchup_or_equal_shares_both_poolings_agree():
    votes = _votes(shares=(0.7,))
    a, b = _all(agreement_table(votes)), _all(agreement_table(votes, pooling="within matchup"))
    assert a["fleiss_kappa"] == pytest.approx(b["fleiss_kappa"]) and a["matchup"] == b["matchup"] == "all"
    cells = agreement_table(_votes(), pooling="within matchup").to_frame()
    plain = agreement_table(_votes()).to_frame()
    same = cells["level"].isin(["cell", "matchup"])
    pd.testing.assert_frame_equal(cells[same], plain[same])
    assert set(cells.loc[cells["level"] == "criterion", "matchup"]) == {POOLED_WITHIN}
    assert not math.isnan(cells.loc[cells["level"] == "criterion", "krippendorff_alpha"].iloc[0])


def test_unknown_pooling_is_an_input_error():
    with pytest.raises(InputError, match="unknown pooling"):
        agreement_table(_votes(), pooling="sideways")


def test_vectorised_within_matchup_rows_equal_the_stratified_summary_per_group():
    # ragged design: three matchups, two criteria, readers skip votes, one unit with a single vote
    from judge_transfer_audit.statistics.agreement import _stratified_summary

    rng = np.random.default_rng(11)
    rows = []
    for m, share in enumerate((0.85, 0.25, 0.55)):
        for p in range(9):
            for crit in ("empathy", "surprise"):
                for r in range(6):
                    if rng.random() < 0.3:
                        continue
                    u = rng.random()
                    y = 1.0 if u < share * 0.9 else (np.nan if u < share * 0.9 + 0.1 else 0.0)
                    rows.append((f"m{m}p{p}", f"r{r}", crit, f"M{m}", y))
    votes = pd.DataFrame(rows, columns=["pair_id", "reader_id", "criterion", "matchup", "y"])
    frame = agreement_table(votes, pooling="within matchup").to_frame()
    pooled = frame[frame["matchup"] == POOLED_WITHIN]
    assert set(pooled["level"]) == {"criterion", "all"} and len(pooled) == 3
    cat = np.where(votes["y"].isna(), 2, votes["y"]).astype(int)
    unit = (votes["pair_id"] + "|" + votes["criterion"]).to_numpy()
    for row in pooled.itertuples():
        m = np.ones(len(votes), bool) if row.criterion == "all" else (votes["criterion"] == row.criterion).to_numpy()
        want = _stratified_summary(unit[m], cat[m], votes["matchup"].to_numpy(dtype=object)[m])
        for col in ("fleiss_kappa", "krippendorff_alpha", "expected_agreement", "observed_agreement"):
            assert getattr(row, col) == pytest.approx(want[col], abs=1e-12), (row.level, row.criterion, col)
    # cells (one matchup each) keep the usual statistics and label
    assert (frame.loc[frame["level"] == "cell", "matchup"] != POOLED_WITHIN).all()
