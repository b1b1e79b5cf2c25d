"""Tests of judge_transfer_audit.statistics.agreement: agreement_table and reader_baseline."""

from __future__ import annotations

import json
import math
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.core.serialize import from_jsonable, to_jsonable
from judge_transfer_audit.statistics.agreement import (
    AgreementTable,
    ReaderBaseline,
    agreement_table,
    fleiss_kappa,
    reader_baseline,
)

FLEISS_REF = Path(__file__).parents[2] / "reference" / "fleiss"


def make_votes(
    seed=0, n_pairs=8, n_readers=5, matchups=("a-vs-b", "c-vs-d"), criteria=("empathy", "overall"), p_tie=0.1
):
    rng = np.random.default_rng(seed)
    rows = []
    for m in matchups:
        for p in range(n_pairs):
            lean = rng.uniform(0.2, 0.8)
            for c in criteria:
                for r in range(n_readers):
                    u = rng.random()
                    y = math.nan if u < p_tie else float(rng.random() < lean)
                    rows.append(dict(pair_id=f"{m}:{p}", reader_id=f"r{r}", criterion=c, matchup=m, y=y))
    return pd.DataFrame(rows)


def votes_from(table):
    """Build votes from {(pair, criterion): [y per reader]} (None = no vote)."""
    rows = []
    for (pair, crit), ys in table.items():
        for r, y in enumerate(ys):
            if y is not None:
                rows.append(dict(pair_id=pair, reader_id=f"r{r}", criterion=crit, matchup="m", y=y))
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- Fleiss' kappa
def test_fleiss_matches_published_worked_example():
    """Wikipedia 'Fleiss' kappa' worked example: P-bar 0.378, P_e 0.213, kappa 0.210 (3 d.p.)."""
    counts = pd.read_csv(FLEISS_REF / "wikipedia_example.csv").drop(columns="subject").to_numpy()
    kappa, observed, expected = fleiss_kappa(counts)
    assert kappa == pytest.approx(0.210, abs=5e-4)
    assert observed == pytest.approx(0.378, abs=5e-4)
    assert expected == pytest.approx(0.213, abs=5e-4)


def test_fleiss_matches_statsmodels_reference():
    """statsmodels fleiss_kappa on stored seeded tables; tolerance 1e-12 (same formula)."""
    ref = json.loads((FLEISS_REF / "reference.json").read_text())["values"]
    counts = pd.read_csv(FLEISS_REF / "random_counts.csv")
    assert fleiss_kappa(pd.read_csv(FLEISS_REF / "wikipedia_example.csv").iloc[:, 1:].to_numpy())[0] == pytest.approx(
        ref["wikipedia"], abs=1e-12
    )
    for t, sub in counts.groupby("table"):
        assert fleiss_kappa(sub.filter(like="c").to_numpy())[0] == pytest.approx(ref[f"random_{t}"], abs=1e-12)


def test_fleiss_undefined_when_one_category():
    kappa, observed, expected = fleiss_kappa(np.array([[3, 0], [3, 0]]))
    assert math.isnan(kappa) and observed == 1.0 and expected == 1.0


# ---------------------------------------------------------------- agreement_table
def test_table_has_cells_and_pooled_rows():
    table = agreement_table(make_votes())
    frame = table.to_frame()
    assert list(frame["level"].value_counts().sort_index().items()) == [
        ("all", 1),
        ("cell", 4),
        ("criterion", 2),
        ("matchup", 2),
    ]
    all_row = table.row()
    assert all_row.n_votes == len(make_votes())
    assert all_row.n_pairs == 16 and all_row.n_units == 32 and all_row.n_readers == 5
    assert table.row("all", "empathy").n_pairs == 16
    assert table.row("a-vs-b", "all").n_units == 16


def test_table_matches_krippendorff_package_and_statsmodels_per_cell():
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    votes = make_votes(seed=3)
    table = agreement_table(votes)
    for row in table.rows:
        sub = votes
        if row.matchup != "all":
            sub = sub[sub.matchup == row.matchup]
        if row.criterion != "all":
            sub = sub[sub.criterion == row.criterion]
        cat = sub["y"].fillna(2.0)
        wide = sub.assign(cat=cat, unit=sub.pair_id + sub.criterion).pivot(
            index="reader_id", columns="unit", values="cat"
        )
        expected_alpha = krippendorff.alpha(reliability_data=wide.to_numpy(float), level_of_measurement="nominal")
        assert row.krippendorff_alpha == pytest.approx(expected_alpha, abs=1e-12)
        counts = np.stack([(wide == c).sum(axis=0).to_numpy() for c in (0.0, 1.0, 2.0)], axis=1)
        assert row.fleiss_kappa == pytest.approx(sm_fleiss(counts), abs=1e-12)
        assert row.balanced


def test_raw_agreement_by_hand_and_ties_agree():
    # unit A: 1,1,0 -> agreeing pairs 1 of 3; unit B: tie,tie,1 -> 1 of 3; unit C: 0,0,0 -> 3 of 3
    votes = votes_from(
        {("A", "c"): [1.0, 1.0, 0.0], ("B", "c"): [math.nan, math.nan, 1.0], ("C", "c"): [0.0, 0.0, 0.0]}
    )
    row = agreement_table(votes).row("m", "c")
    assert row.raw_agreement == pytest.approx(5 / 9)
    assert row.n_ties == 2
    # Fleiss by hand: P-bar = 5/9; shares other 4/9, focal 3/9, tie 2/9
    pe = (16 + 9 + 4) / 81
    assert row.fleiss_kappa == pytest.approx((5 / 9 - pe) / (1 - pe))


def test_single_vote_units_counted_and_left_out():
    votes = votes_from({("A", "c"): [1.0, 1.0, 0.0], ("B", "c"): [1.0, None, None], ("C", "c"): [0.0, 0.0, None]})
    row = agreement_table(votes).row("m", "c")
    assert row.n_units_single_vote == 1 and row.n_units == 3 and not row.balanced
    # only A and C pairable: agreeing pairs 2 + 2 of 6 + 2 reader pairs
    assert row.raw_agreement == pytest.approx(4 / 8)


@pytest.mark.parametrize(
    "by, levels", [(("criterion",), {"criterion", "all"}), ((), {"all"}), (("matchup",), {"matchup", "all"})]
)
def test_other_groupings(by, levels):
    frame = agreement_table(make_votes(), by=by).to_frame()
    assert set(frame["level"]) == levels


def test_bad_input_raises_input_error():
    votes = make_votes()
    with pytest.raises(InputError, match="missing column"):
        agreement_table(votes.drop(columns="reader_id"))
    with pytest.raises(InputError, match="not 1"):
        agreement_table(votes.assign(y=2.0))
    with pytest.raises(InputError, match="not 1"):
        agreement_table(votes.assign(y=votes["y"].astype(object).where(votes.index != 3, "yes")))
    with pytest.raises(InputError, match="repeated"):
        agreement_table(pd.concat([votes, votes.iloc[:1]]))
    with pytest.raises(InputError, match="cannot group"):
        agreement_table(votes, by=("reader_id",))


def test_agreement_table_round_trips_through_json():
    table = agreement_table(make_votes())
    back = from_jsonable(AgreementTable, json.loads(json.dumps(to_jsonable(table))))
    assert back == table
    assert "fleiss_kappa" in str(table)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), perm_seed=st.integers(0, 10_000))
@pytest.mark.slow
def test_agreement_invariant_to_reader_and_item_order(seed, perm_seed):
    votes = make_votes(seed=seed, n_pairs=4, n_readers=4)
    rng = np.random.default_rng(perm_seed)
    shuffled = votes.iloc[rng.permutation(len(votes))].reset_index(drop=True)
    readers = votes["reader_id"].unique()
    renamed = dict(zip(readers, rng.permutation([f"x{i}" for i in range(len(readers))])))
    shuffled["reader_id"] = shuffled["reader_id"].map(renamed)
    key = ["matchup", "criterion"]
    a = agreement_table(votes).to_frame().sort_values(key).reset_index(drop=True)
    b = agreement_table(shuffled).to_frame().sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=1e-12)
    ra = reader_baseline(votes).to_frame().drop(columns=["reader_min_id", "reader_max_id"]).sort_values(key)
    rb = reader_baseline(shuffled).to_frame().drop(columns=["reader_min_id", "reader_max_id"]).sort_values(key)
    pd.testing.assert_frame_equal(ra.reset_index(drop=True), rb.reset_index(drop=True), check_exact=False, rtol=1e-12)


# ---------------------------------------------------------------- reader_baseline
def test_leave_one_reader_out_by_hand():
    # unit A: 1,1,1,0 -> r0..r2 agree with others' majority (1), r3 does not.
    # unit B: 1,1,tie,0 -> r0: others (1, tie, 0) split -> unscored; r1 same; r2 tie vs others (1,1,0) -> 0.5;
    #         r3: others (1,1,tie) -> majority 1, vote 0 -> 0.
    votes = votes_from({("A", "c"): [1.0, 1.0, 1.0, 0.0], ("B", "c"): [1.0, 1.0, math.nan, 0.0]})
    base = reader_baseline(votes)
    readers = base.readers[base.readers.level == "cell"].set_index("reader_id")
    assert readers.loc["r0", "agreement"] == 1.0 and readers.loc["r0", "n_split"] == 1
    assert readers.loc["r2", "agreement"] == pytest.approx(0.75)
    assert readers.loc["r3", "agreement"] == 0.0 and readers.loc["r3", "n_units"] == 2
    row = base.row("m", "c")
    assert row.reader_mean == pytest.approx((1 + 1 + 0.75 + 0) / 4)
    assert (row.reader_min, row.reader_min_id, row.reader_max) == (0.0, "r3", 1.0)
    assert math.isnan(row.judge_agreement) and not base.has_judge


def test_judge_against_majority_with_tie_credit_and_missing():
    votes = votes_from(
        {
            ("A", "c"): [1.0, 1.0, 0.0],
            ("B", "c"): [0.0, 0.0, 1.0],
            ("C", "c"): [1.0, 0.0, math.nan],
            ("D", "c"): [1.0, 1.0, 1.0],
        }
    )
    judge = pd.DataFrame(
        {"pair_id": ["A", "B", "C", "D", "Z"], "criterion": "c", "y_judge": [1.0, 0.5, 1.0, math.nan, 1.0]}
    )
    base = reader_baseline(votes, judge)
    row = base.row("m", "c")
    # A: judge 1 vs majority 1 -> 1; B: tie vs 0 -> 0.5; C split -> unscored; D no verdict
    assert row.judge_agreement == pytest.approx(0.75)
    assert row.judge_n_units == 2 and row.judge_n_missing == 1 and row.n_units_split == 1
    assert base.n_judge_unmatched == 1
    units = base.units.set_index("pair_id")
    assert units.loc["B", "judge_score"] == 0.5 and math.isnan(units.loc["C", "majority"])


def test_judge_loo_is_like_for_like():
    # The judge always votes with the full majority; against leave-one-out majorities it
    # also scores 1 whenever that majority exists, unlike the dissenting reader.
    votes = votes_from({("A", "c"): [1.0, 1.0, 1.0, 0.0]})
    judge = pd.DataFrame({"pair_id": ["A"], "criterion": ["c"], "y_judge": [1.0]})
    row = reader_baseline(votes, judge).row("m", "c")
    assert row.judge_agreement == 1.0 and row.judge_agreement_loo == 1.0
    assert row.reader_mean == 0.75


def test_judge_choice_validation():
    votes = make_votes()
    with pytest.raises(InputError, match="not in 1, 0, 0.5"):
        reader_baseline(votes, pd.DataFrame({"pair_id": ["a-vs-b:0"], "criterion": ["empathy"], "y_judge": [0.7]}))
    with pytest.raises(InputError, match="missing column"):
        reader_baseline(votes, pd.DataFrame({"pair_id": ["a-vs-b:0"]}))
    two = pd.DataFrame({"pair_id": ["x", "y"], "criterion": "c", "y_judge": 1.0, "judge": ["j1", "j2"]})
    with pytest.raises(InputError, match="several judge"):
        reader_baseline(votes, two)


def test_reader_baseline_round_trips_through_json():
    votes = make_votes()
    judge = votes[["pair_id", "criterion"]].drop_duplicates().assign(y_judge=1.0)
    base = reader_baseline(votes, judge)
    back = from_jsonable(ReaderBaseline, json.loads(json.dumps(to_jsonable(base))))
    pd.testing.assert_frame_equal(back.to_frame(), base.to_frame())
    pd.testing.assert_frame_equal(back.readers, base.readers)
    pd.testing.assert_frame_equal(back.units, base.units)
    assert "judge_agreement" in str(base)
