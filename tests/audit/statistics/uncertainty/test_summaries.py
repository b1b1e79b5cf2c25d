"""The stacked bootstrap summaries equal the per-row code to the last bit
(judge_transfer_audit.statistics.uncertainty._summaries)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.statistics.uncertainty import _boot_tasks as bt
from judge_transfer_audit.statistics.uncertainty._cells import cell_tables
from judge_transfer_audit.statistics.uncertainty._summaries import (
    accelerations,
    replicate_summaries,
    sorted_quantiles,
    t_calibrated_levels,
    t_calibrated_p_values,
)
from judge_transfer_audit.statistics.uncertainty.bootstrap import _judge_tables, cluster_bootstrap
from judge_transfer_audit.statistics.uncertainty.resampling import (
    TableResampler,
    acceleration,
    bca_interval,
    chunk_rows,
    cluster_weights,
    n_chunks,
)
from judge_transfer_audit.statistics.uncertainty.two_way import t_calibrated_level, t_calibrated_p_value

from .conftest import make_votes


def _same(a, b) -> bool:
    """Equal as floats to the last bit, NaN where NaN."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


def test_sorted_quantiles_are_numpys():
    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 8, 9, 250, 1001):
        rows = rng.random((40, n)) * rng.integers(1, 9, (40, 1))
        rows[::5] = np.round(rows[::5] * 3) / 3  # ties
        q = rng.random((40, 2))
        q[:3] = [[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]]
        got = sorted_quantiles(np.sort(rows, axis=1), q)
        for g in range(40):
            assert _same(got[g], np.quantile(rows[g], q[g])), (n, g)


def test_t_calibration_is_the_scalar_functions():
    rng = np.random.default_rng(1)
    df = np.concatenate([rng.random(50) * 30, [np.inf, np.nan, 0.0, -1.0, 1e-3, 1e6]])
    got = t_calibrated_levels(0.95, df)
    assert _same(got, [t_calibrated_level(0.95, float(d)) for d in df])
    p = np.concatenate([rng.random(df.size - 3), [np.nan, 1.0, 1e-300]])
    got = t_calibrated_p_values(p, df)
    assert _same(got, [t_calibrated_p_value(float(a), float(d)) for a, d in zip(p, df)])


def test_accelerations_are_the_scalar_function():
    rng = np.random.default_rng(2)
    jp, jr = rng.random((30, 12)), rng.random((30, 5))
    jr[4] = 0.25  # no spread: acceleration 0
    jp[4] = 0.5
    got = accelerations([jp, jr])
    assert _same(got, [acceleration([jp[g], jr[g]]) for g in range(30)])
    assert _same(accelerations([jp[:, :1]]), np.zeros(30))


def test_replicate_summaries_are_the_per_row_summary():
    rng = np.random.default_rng(3)
    reps = rng.random((25, 300))
    reps[3] = 0.5  # every replicate on the null and the estimate
    reps[4, :150] = 0.2  # half the replicates tied
    est = reps.mean(axis=1)
    est[5] = reps[5].min() - 1.0  # every replicate above the estimate: z0 infinite, BCa NaN
    jack = [rng.random((25, 9)), rng.random((25, 4))]
    df = rng.random(25) * 20
    df[:4] = np.inf
    cols = replicate_summaries(reps, est, jack, 0.95, ("percentile", "bca"), 0.5, df)
    for g in range(25):
        ref = bt.summary(reps[g], float(est[g]), [j[g] for j in jack], 0.95, ("percentile", "bca"), 0.5, float(df[g]))
        for name, values in cols.items():
            assert _same(values[g], ref[name]), (g, name)


def _study() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Cells of several shapes and pair sets, with the edge cases the stacked path leaves to the
    per-row code: one reader, one pair, a pair with only ties (a NaN jackknife value), a cell of ties
    only, judge credits with invalid outputs and judged pairs that differ from the humans'."""
    parts = [
        make_votes(11, n_matchups=3, n_criteria=4, n_pairs=6, n_readers=3, tie_prob=0.05),
        make_votes(12, n_matchups=2, n_criteria=3, n_pairs=9, n_readers=4).assign(
            matchup=lambda f: "w" + f["matchup"], pair_id=lambda f: "w" + f["pair_id"]
        ),
    ]
    one_reader = make_votes(13, n_pairs=5, n_readers=1).assign(matchup="solo", pair_id=lambda f: "s" + f["pair_id"])
    one_pair = make_votes(14, n_pairs=1, n_readers=4).assign(matchup="single", pair_id=lambda f: "q" + f["pair_id"])
    tied_pair = make_votes(15, n_pairs=4, n_readers=3).assign(matchup="tied", pair_id=lambda f: "t" + f["pair_id"])
    tied_pair.loc[tied_pair["pair_id"] != tied_pair["pair_id"].iloc[0], "y"] = np.nan  # one pair holds every vote
    all_ties = make_votes(16, n_pairs=3, n_readers=3).assign(
        matchup="ties", pair_id=lambda f: "x" + f["pair_id"], y=np.nan
    )
    repeated = make_votes(17, n_pairs=4, n_readers=3).assign(matchup="twice", pair_id=lambda f: "d" + f["pair_id"])
    votes = pd.concat([*parts, one_reader, one_pair, tied_pair, all_ties, repeated, repeated], ignore_index=True)
    rng = np.random.default_rng(18)
    pairs = votes.drop_duplicates(["pair_id", "matchup", "criterion"])[["pair_id", "matchup", "criterion"]]
    credits = pd.concat([pairs.assign(judge="a"), pairs.assign(judge="b")], ignore_index=True)
    credits["credit"] = rng.choice([0.0, 0.5, 1.0], len(credits))
    credits.loc[rng.random(len(credits)) < 0.05, "credit"] = np.nan
    credits = credits[
        ~((credits["matchup"] == "m1") & (credits["judge"] == "b") & (credits["pair_id"].str.endswith("0")))
    ]
    orphan = pd.DataFrame(
        {"pair_id": ["o1", "o2"], "matchup": "orphan", "criterion": "c0", "judge": "a", "credit": [1.0, 0.0]}
    )
    return votes, pd.concat([credits, orphan], ignore_index=True)


@pytest.mark.parametrize(
    "schemes", [("pairs", "readers", "two-way"), ("pairs", "readers", "two-way", "two-way-product")]
)
def test_stacked_block_equals_the_per_row_code(schemes):
    votes, credits = _study()
    by = ("matchup", "criterion")
    tables = cell_tables(votes, by)
    judges = _judge_tables(credits, by)
    st = bt.BootstrapSettings(by, schemes, ("percentile", "bca", "cgm"), 600, 0.95, 0.5, 7, 7)
    need = bt.raw_needed(schemes)
    chunks = tuple(range(n_chunks(st.n_boot)))
    reps, judge_reps = bt._replicates(tables, judges, chunks, st, need, st.n_boot)
    # the shared-cluster products give every cell the per-cell resampler's rates
    for i, t in enumerate(tables):
        rs = TableResampler(t)
        for kind in need:
            per_cell = np.concatenate(
                [
                    rs.rates(
                        kind,
                        cluster_weights(7, "pair", t.pairs, 600, c),
                        cluster_weights(7, "reader", t.readers, 600, c),
                    )
                    for c in chunks
                ]
            )
            assert _same(reps[kind][i], per_cell), (t.label, kind)
    cols, judge_cols = bt.summarise(tables, reps, judges, judge_reps, st)
    rows, pair_reps = bt._cell_rows(tables, [{k: v[i] for k, v in reps.items()} for i in range(len(tables))], st)
    assert len(rows) == len(cols["cell"])
    for r, row in enumerate(rows):
        for name in bt.cell_columns(st):
            want = row.get(name, False) if name == "degenerate" else row[name]
            got = cols[name][r]
            assert _same(got, want) if isinstance(want, float) else got == want, (row["cell"], row["scheme"], name)
    human_rate = {t.key: t.rate for t in tables}
    for j, jt in enumerate(judges):
        row = bt._judge_row(jt, judge_reps[j], pair_reps, human_rate, st)
        for name in bt.judge_columns(st):
            got = judge_cols[name][j]
            assert _same(got, row[name]) if isinstance(row[name], float) else got == row[name], (jt.key, name)
    stacked = bt._StackedCells(tables, reps, st)
    assert 0 < stacked.rows.size < len(tables)  # both paths ran


def test_cluster_bootstrap_does_not_depend_on_slicing(monkeypatch):
    votes, credits = _study()
    whole = cluster_bootstrap(votes, n_boot=300, judge_credits=credits, rng=3)
    monkeypatch.setattr(bt, "SLICE_NUMBERS", 1)  # one cell per slice
    sliced = cluster_bootstrap(votes, n_boot=300, judge_credits=credits, rng=3)
    pd.testing.assert_frame_equal(whole.cells, sliced.cells)
    pd.testing.assert_frame_equal(whole.judge, sliced.judge)


def test_bca_interval_reference_unchanged():
    reps = np.linspace(0.1, 0.9, 101)
    lo, hi, z0 = bca_interval(reps, 0.5, 0.0, 0.95)
    assert _same([lo, hi, z0], [*np.quantile(reps, [0.025, 0.975]), 0.0])
    assert chunk_rows(600, 2) == 100


def _judge_tables_by_groupby(credits: pd.DataFrame, by: tuple[str, ...]) -> list[tuple]:
    """Reference: one pandas group per cell x judge (the former implementation)."""
    frame = pd.DataFrame(
        {
            "pair_id": credits["pair_id"].astype(str).to_numpy(),
            "judge": credits["judge"].astype(str).to_numpy(),
            "credit": pd.to_numeric(credits["credit"], errors="coerce").to_numpy(float),
            **{f"_by{k}": credits[c].astype(str).to_numpy() for k, c in enumerate(by)},
        }
    )
    out = []
    for key, g in frame.groupby([*[f"_by{k}" for k in range(len(by))], "judge"], sort=True):
        pairs, pi = np.unique(g["pair_id"].to_numpy(dtype=object), return_inverse=True)
        c = g["credit"].to_numpy()
        ok = ~np.isnan(c)
        out.append(
            (
                tuple(str(k) for k in key[:-1]),
                str(key[-1]),
                tuple(str(p) for p in pairs),
                np.bincount(pi[ok], weights=c[ok], minlength=len(pairs)),
                np.bincount(pi[ok], minlength=len(pairs)).astype(float),
                int((~ok).sum()),
                len(out),
            )
        )
    return out


def test_judge_tables_equal_a_groupby():
    _, credits = _study()
    credits = pd.concat([credits, credits.iloc[::7]], ignore_index=True)  # repeated pairs
    credits = credits.sample(frac=1.0, random_state=4)  # any row order
    got = _judge_tables(credits, ("matchup", "criterion"))
    want = _judge_tables_by_groupby(credits, ("matchup", "criterion"))
    assert len(got) == len(want)
    for jt, ref in zip(got, want):
        assert (jt.key, jt.judge, jt.pairs, jt.n_invalid, jt.order) == (ref[0], ref[1], ref[2], ref[5], ref[6])
        assert _same(jt.credit_sum, ref[3]) and _same(jt.credit_count, ref[4])
