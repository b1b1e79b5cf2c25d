"""Heat-map rates and the judge-outside-reader-range comparison."""

from __future__ import annotations

import math
import sys
import types

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.statistics.readers._common import ALL_MATCHUPS, check_judge_credits, check_votes
from judge_transfer_audit.statistics.readers.rates import HUMANS_GLMM, HUMANS_POOLED, reader_rates


def _votes():
    rows = []
    # reader a: 3 focal of 4 on empathy in m1 (one tie counts 0.5); reader b: 1 of 4
    for reader, ys in (("a", [1, 1, 1, np.nan]), ("b", [0, 0, 1, 0])):
        for i, y in enumerate(ys):
            rows.append(dict(pair_id=f"p{i}", reader_id=reader, criterion="empathy", matchup="m1", y=y))
            rows.append(dict(pair_id=f"p{i}", reader_id=reader, criterion="overall", matchup="m1", y=1.0))
        rows.append(dict(pair_id="q0", reader_id=reader, criterion="empathy", matchup="m2", y=0.0))
        rows.append(dict(pair_id="q0", reader_id=reader, criterion="overall", matchup="m2", y=0.0))
    return check_votes(pd.DataFrame(rows))


def _credits(empathy_credit=1.0):
    rows = [
        dict(pair_id=f"p{i}", matchup="m1", criterion="empathy", judge="j", credit=empathy_credit) for i in range(4)
    ]
    rows += [
        dict(pair_id=f"p{i}", matchup="m1", criterion="aggregate", judge="j", credit=c)
        for i, c in enumerate([1.0, 0.5, np.nan, 1.0])
    ]
    rows += [dict(pair_id="q0", matchup="m2", criterion="empathy", judge="j", credit=0.0)]
    return check_judge_credits(pd.DataFrame(rows))


def test_rates_by_hand():
    res = reader_rates(_votes(), _credits(), fit_glmm_if_missing=False)
    r = res.rates.set_index(["row_label", "matchup", "criterion"])
    assert r.loc[("a", "m1", "empathy"), "rate"] == pytest.approx(3.5 / 4)
    assert r.loc[("a", "m1", "empathy"), "n_ties"] == 1
    assert r.loc[("b", "m1", "empathy"), "rate"] == pytest.approx(0.25)
    assert r.loc[("a", ALL_MATCHUPS, "empathy"), "rate"] == pytest.approx(3.5 / 5)
    assert r.loc[(HUMANS_POOLED, "m1", "empathy"), "rate"] == pytest.approx(4.5 / 8)
    # judge "aggregate" stands in for the humans' overall: (1 + 0.5 + 1) / 3 valid, one invalid left out
    assert r.loc[("j", "m1", "overall"), "rate"] == pytest.approx(2.5 / 3)
    assert bool(r.loc[("j", "m1", "overall"), "different_target"])
    assert r.loc[("j", "m1", "overall"), "judge_criterion"] == "aggregate"
    assert res.n_judge_invalid == 1
    assert res.glmm_source.startswith("unavailable")


def test_judge_outside_range():
    res = reader_rates(_votes(), _credits(1.0), fit_glmm_if_missing=False)
    jr = res.judge_range.set_index(["matchup", "criterion"])
    row = jr.loc[("m1", "empathy")]
    assert bool(row["outside"]) and row["distance"] == pytest.approx(1.0 - 0.875)
    assert row["reader_min"] == pytest.approx(0.25) and row["n_readers"] == 2
    inside = (
        reader_rates(_votes(), _credits(0.5), fit_glmm_if_missing=False)
        .judge_range.set_index(["matchup", "criterion"])
        .loc[("m1", "empathy")]
    )
    assert not bool(inside["outside"]) and inside["distance"] == 0.0
    # m2: judge 0, readers both 0 -> on the boundary, not outside
    assert not bool(jr.loc[("m2", "empathy"), "outside"])


def test_given_glmm_estimates_are_used():
    glmm = pd.DataFrame(dict(matchup=["m1"], criterion=["empathy"], estimate=[0.61], lo=[0.4], hi=[0.8]))
    res = reader_rates(_votes(), None, glmm_estimates=glmm)
    row = res.rates[res.rates["row_label"] == HUMANS_GLMM].iloc[0]
    assert row["rate"] == 0.61 and row["lo"] == 0.4 and res.glmm_source == "given"
    assert res.judge_range.empty


def test_glmm_fallback_fits_each_cell(monkeypatch):
    calls = []

    class FakeResult:
        def __init__(self, y):
            self.y = y

        def prob_estimate(self):
            return float(np.mean(self.y)), 0.0, 1.0

    def fake_fit(y, factors):
        calls.append((len(y), sorted(factors)))
        return FakeResult(y)

    fake = types.ModuleType("judge_transfer_audit.statistics.glmm")
    fake.fit_crossed_glmm = fake_fit
    monkeypatch.setitem(sys.modules, "judge_transfer_audit.statistics.glmm", fake)
    res = reader_rates(_votes(), None)
    assert res.glmm_source == "fitted"
    assert len(calls) == 4 and all(f == ["pair", "reader"] for _, f in calls)
    glmm = res.rates[res.rates["row_kind"] == "human_glmm"].set_index(["matchup", "criterion"])
    assert glmm.loc[("m1", "empathy"), "rate"] == pytest.approx(4 / 7)  # the tie is left out of the GLMM


def test_real_glmm_fallback_runs():
    """The fallback through the real judge_transfer_audit.statistics.glmm engine gives a probability in (0, 1) per
    cell."""
    pytest.importorskip("judge_transfer_audit.statistics.glmm")
    from .conftest import make_votes

    votes = check_votes(make_votes(4, 12, seed=5))
    res = reader_rates(votes[votes["criterion"].isin(["empathy", "overall"])], None)
    glmm = res.rates[res.rates["row_kind"] == "human_glmm"]
    assert len(glmm) == 4 and glmm["rate"].between(0, 1).all()


def test_skipped_without_matchup():
    votes = _votes().drop(columns="matchup")
    res = reader_rates(votes, None)
    assert res.status is Status.SKIPPED and "matchup" in str(res)


def test_heatmap_layout():
    res = reader_rates(_votes(), _credits(), fit_glmm_if_missing=False)
    hm = res.heatmap("m1")
    assert list(hm.index) == ["a", "b", HUMANS_POOLED, "j"]
    assert list(hm.columns) == ["empathy", "overall"]


def test_judge_credits_without_matchup_take_it_from_the_votes():
    credits = _credits().drop(columns="matchup")
    res = reader_rates(_votes(), credits, fit_glmm_if_missing=False)
    judge = res.rates[res.rates["row_kind"] == "judge"]
    assert set(judge["matchup"]) == {"m1", "m2", ALL_MATCHUPS}


def test_glmm_frame_missing_a_column_is_an_input_error():
    from judge_transfer_audit.core.errors import InputError

    with pytest.raises(InputError, match="estimate"):
        reader_rates(_votes(), None, glmm_estimates=pd.DataFrame(dict(matchup=["m1"], criterion=["empathy"])))


def test_judge_as_reader_p_value_is_the_pooled_two_sample_t_test_with_the_judge_as_one_sample():
    from scipy import stats

    from judge_transfer_audit.statistics.readers.rates import judge_as_reader_p_value

    readers = np.array([0.55, 0.61, 0.48, 0.70, 0.52, 0.66, 0.58])
    for judge in (0.2, 0.6, 0.91):
        expected = stats.ttest_ind(readers, [judge], equal_var=True).pvalue
        assert judge_as_reader_p_value(judge, readers) == pytest.approx(expected, rel=1e-12)
    assert judge_as_reader_p_value(0.5, np.array([0.5, 0.5])) == 1.0
    assert judge_as_reader_p_value(0.6, np.array([0.5, 0.5])) == 0.0
    assert np.isnan(judge_as_reader_p_value(0.6, np.array([0.5])))


def test_judge_deviation_test_by_hand():
    from scipy import stats

    from judge_transfer_audit.statistics.readers.rates import judge_deviation_test

    rows = []
    reader_rates = {"r1": [0.5, 0.6], "r2": [0.4, 0.7], "r3": [0.6, 0.5], "r4": [0.5, 0.5]}
    for label, rs in reader_rates.items():
        for (m, c), r in zip([("M", "a"), ("M", "b")], rs):
            rows.append(["reader", label, m, c, r, 20, 0, np.nan, np.nan, "", False])
    for (m, c), r in zip([("M", "a"), ("M", "b")], [0.9, 0.95]):
        rows.append(["judge", "J", m, c, r, 20, 0, np.nan, np.nan, "a", False])
    rows.append(["judge", "J", "(all matchups)", "a", 0.9, 20, 0, np.nan, np.nan, "a", False])  # not a cell
    rates = pd.DataFrame(
        rows,
        columns=[
            "row_kind",
            "row_label",
            "matchup",
            "criterion",
            "rate",
            "n",
            "n_ties",
            "lo",
            "hi",
            "judge_criterion",
            "different_target",
        ],
    )
    out = judge_deviation_test(rates, {("M", "a"), ("M", "b")}).iloc[0]
    cells = {"a": [0.5, 0.4, 0.6, 0.5, 0.9], "b": [0.6, 0.7, 0.5, 0.5, 0.95]}  # readers r1..r4, then J
    dist = [np.mean([abs(cells[c][k] - np.mean(np.delete(cells[c], k))) for c in "ab"]) for k in range(5)]
    x = np.log(dist[:4])
    t = (np.log(dist[4]) - x.mean()) / (x.std(ddof=1) * np.sqrt(1 + 1 / 4))
    assert out["n_cells"] == 2 and out["judge_deviation"] == pytest.approx(dist[4])
    assert out["reader_mean"] == pytest.approx(np.mean(dist[:4]))
    assert out["p_value"] == pytest.approx(stats.t.sf(t, 3), rel=1e-12)


def _rates_by_string_groupby(frame, pools, kind, label_col, label, credit, ties):
    """The rows the rates had before they were grouped on integer codes: a pandas group-by on the
    strings of the frame with its pooled copies appended (the reference for the coded path)."""
    from judge_transfer_audit.statistics.readers._common import with_pooled_scopes

    both = with_pooled_scopes(frame.assign(_credit=credit, _tie=ties), pools)
    keys = ([label_col] if label_col else []) + ["matchup", "criterion"]
    agg = (
        both.groupby(keys, sort=False)
        .agg(rate=("_credit", "mean"), n=("_credit", "count"), n_ties=("_tie", "sum"))
        .reset_index()
    )
    labels = agg[label_col].astype(str) if label_col else [str(label)] * len(agg)
    return [
        [kind, lab, m, c, float(r), int(n), int(t)]
        for lab, m, c, r, n, t in zip(labels, agg["matchup"], agg["criterion"], agg["rate"], agg["n"], agg["n_ties"])
    ]


@pytest.mark.parametrize(
    "pools",
    [None, {}, {"(all matchups, focal a)": ("a vs b", "a vs c")}, {"a vs b": ("a vs b", "c vs d"), "all": ("c vs d",)}],
)
def test_coded_rates_equal_a_string_group_by(pools):
    """Integer-coded groups give the same rows, order and sums as grouping the strings (pools, ties, NaN credit)."""
    from judge_transfer_audit.statistics.readers.rates import RATE_COLUMNS, _rate_rows, _scoped_rows

    rng = np.random.default_rng(5)
    n = 3_000
    frame = pd.DataFrame(
        {
            "reader_id": pd.array(rng.choice([f"r{i}" for i in range(40)], n), dtype="string"),
            "matchup": pd.array(rng.choice(["c vs d", "a vs b", "a vs c"], n), dtype="string"),
            "criterion": pd.array(rng.choice(["overall", "style", "plot"], n), dtype="string"),
        }
    )
    credit = rng.choice([0.0, 1.0, 0.5, np.nan], n)
    ties = rng.random(n) < 0.2
    scoped = _scoped_rows(frame, pools)
    for kind, col, label in (("reader", "reader_id", None), ("human_pooled", None, "humans")):
        part = _rate_rows(frame, scoped, kind, col, label, credit, ties)
        got = [list(r) for r in zip(*(part[c] for c in RATE_COLUMNS[:7]))]
        expected = _rates_by_string_groupby(frame, pools, kind, col, label, credit, ties)
        assert len(got) == len(expected) > 0
        for g, e in zip(got, expected):
            assert g[:4] == e[:4] and g[5:] == e[5:]
            assert g[4] == e[4] or (np.isnan(g[4]) and np.isnan(e[4]))


@pytest.mark.parametrize("sizes", [(3, 0, 2), (0, 0, 0), (1, 4, 0)])
def test_rate_frame_equals_the_frame_of_its_rows(sizes):
    """The rate rows joined column by column give the frame (values and dtypes) of the same rows one by one."""
    from judge_transfer_audit.statistics.readers.rates import RATE_COLUMNS, _columns, _rate_frame

    def row(i, kind):
        return [kind, f"r{i}", "a vs b", "overall", 0.25 * i, i, i % 2, math.nan, 0.5, "", i % 3 == 0]

    parts = [[row(i, kind) for i in range(n)] for kind, n in zip(("reader", "human_glmm", "judge"), sizes)]
    expected = pd.DataFrame([r for part in parts for r in part], columns=RATE_COLUMNS)
    pd.testing.assert_frame_equal(_rate_frame([_columns(p) for p in parts]), expected, check_exact=True)


def _range_by_cell(rates: pd.DataFrame) -> pd.DataFrame:
    """The judge-range table cell by cell (the loop the whole-column version replaced): the reference."""
    from judge_transfer_audit.statistics.readers.rates import RANGE_COLUMNS, judge_as_reader_p_value

    readers = rates[rates["row_kind"] == "reader"]
    per_cell = {k: c["rate"].to_numpy(float) for k, c in readers.groupby(["matchup", "criterion"], sort=False)}
    rows = []
    for rec in rates[rates["row_kind"] == "judge"].itertuples(index=False):
        if (rec.matchup, rec.criterion) not in per_cell:
            continue
        v = per_cell[(rec.matchup, rec.criterion)]
        lo, hi, n = float(np.min(v)), float(np.max(v)), len(v)
        rows.append(
            [rec.row_label, rec.matchup, rec.criterion, rec.judge_criterion, bool(rec.different_target)]
            + [float(rec.rate), lo, hi, int(n), bool(rec.rate < lo or rec.rate > hi)]
            + [float(max(lo - rec.rate, rec.rate - hi, 0.0)), float(np.mean(v))]
            + [float(np.std(v, ddof=1)) if n > 1 else np.nan, judge_as_reader_p_value(rec.rate, v)]
        )
    return pd.DataFrame(rows, columns=RANGE_COLUMNS)


@pytest.mark.parametrize("seed", range(4))
def test_judge_range_on_whole_columns_equals_the_cell_by_cell_loop(seed):
    """Cells of 1-9 readers (equal rates, a missing rate), judges with a missing rate, a judge
    cell without readers: every figure equal to the per-cell computation, bit for bit."""
    from judge_transfer_audit.statistics.readers.rates import RATE_COLUMNS, _judge_range

    rng = np.random.default_rng(seed)
    rows = []
    for cell in range(40):
        m, c = f"m{cell % 3}", f"c{cell}"
        n = int(rng.integers(1, 10))
        rates = np.round(rng.uniform(0, 1, n), 1) if cell % 5 else np.full(n, 0.5)
        if cell % 7 == 3:
            rates[0] = np.nan
        for r, x in enumerate(rates):
            rows.append(["reader", f"r{r}", m, c, x, 4, 0, np.nan, np.nan, "", False])
        for j in ("j1", "j2"):
            x = np.nan if cell % 11 == 4 and j == "j2" else (0.5 if cell % 5 == 0 else rng.uniform(0, 1))
            rows.append(["judge", j, m, c, x, 4, 0, np.nan, np.nan, c, bool(cell % 2)])
    rows.append(["judge", "j1", "m9", "c-alone", 0.3, 4, 0, np.nan, np.nan, "c-alone", False])
    rates = pd.DataFrame(rows, columns=RATE_COLUMNS)
    got, want = _judge_range(rates), _range_by_cell(rates)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert len(got) == 80 and got["p_value"].isna().any() and (got["p_value"] == 1.0).any()
