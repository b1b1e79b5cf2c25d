"""Cluster bootstrap: agreement with a slow loop and with scipy, invariances, reproducibility."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.core.serialize import from_jsonable, to_jsonable
from judge_transfer_audit.statistics.uncertainty.bootstrap import BootstrapResult, cluster_bootstrap
from judge_transfer_audit.statistics.uncertainty.resampling import REPLICATE_CHUNK, chunk_seed, resample_indices

from .conftest import make_votes


def _draws(seed: int, kind: str, ids: list[str], n_boot: int) -> np.ndarray:
    """The resampled cluster indices the driver uses: one seeded draw per chunk of replicates."""
    chunks = range(-(-n_boot // REPLICATE_CHUNK))
    return np.vstack([resample_indices(seed, kind, tuple(ids), n_boot, c) for c in chunks])


def _loop_bootstrap(votes: pd.DataFrame, scheme: str, n_boot: int, seed: int, draw_both: bool = False) -> np.ndarray:
    """Obviously-correct reference: rebuild every resampled data set vote by vote.

    Uses the same resampled indices as the vectorised code (:func:`resample_indices`, chunk
    by chunk, for the cell's sorted pair ids and reader ids); ``draw_both`` is kept for the
    callers that compare schemes on the same draws (the draws never depend on the scheme).
    """
    votes = votes[votes["y"].notna()]
    pairs = sorted(votes["pair_id"].unique())
    readers = sorted(votes["reader_id"].unique())
    ip = _draws(seed, "pair", pairs, n_boot)
    ir = _draws(seed, "reader", readers, n_boot)
    by_pair = {p: g for p, g in votes.groupby("pair_id")}
    by_reader = {r: g for r, g in votes.groupby("reader_id")}
    by_both = {k: g["y"].to_numpy() for k, g in votes.groupby(["pair_id", "reader_id"])}
    out = np.empty(n_boot)
    for b in range(n_boot):
        ys = []
        if scheme == "pairs":
            for i in ip[b]:
                ys.extend(by_pair[pairs[i]]["y"])
        elif scheme == "readers":
            for r in ir[b]:
                ys.extend(by_reader[readers[r]]["y"])
        else:
            for i in ip[b]:
                for r in ir[b]:
                    ys.extend(by_both.get((pairs[i], readers[r]), []))
        out[b] = np.mean(ys)
    return out


@pytest.mark.parametrize("scheme", ["pairs", "readers", "two-way-product"])
def test_vectorised_equals_loop_with_same_draws(scheme):
    votes = make_votes(11, n_pairs=6, n_readers=4, tie_prob=0.1)
    n_boot = 600  # three chunks of replicates, the last one partial
    reps = _loop_bootstrap(votes, scheme, n_boot, seed=42)
    res = cluster_bootstrap(votes, schemes=(scheme,), n_boot=n_boot, intervals=("percentile",), rng=42)
    row = res.cells.iloc[0]
    lo, hi = np.quantile(reps, [0.025, 0.975])
    assert row["ci_low_percentile"] == pytest.approx(lo, abs=1e-12)
    assert row["ci_high_percentile"] == pytest.approx(hi, abs=1e-12)
    assert row["se"] == pytest.approx(reps.std(ddof=1), abs=1e-12)
    assert row["n_ties"] == int(votes["y"].isna().sum())


@pytest.mark.parametrize("scheme", ["pairs", "readers"])
def test_bca_and_percentile_match_scipy_when_one_vote_per_cluster(scheme):
    """One chunk of replicates is ``rng.integers(0, n, (B, n))`` from the chunk's own seed: the
    stream scipy draws, so scipy given a generator on that seed resamples the same clusters."""
    rng = np.random.default_rng(7)
    n = 35
    y = (rng.random(n) < 0.62).astype(float)
    ids = [f"i{i:03d}" for i in range(n)]
    votes = pd.DataFrame({"pair_id": ids, "reader_id": ids, "matchup": "m", "criterion": "c", "y": y})
    res = cluster_bootstrap(votes, schemes=(scheme,), n_boot=REPLICATE_CHUNK, rng=123)
    row = res.cells.iloc[0]
    kind = "pair" if scheme == "pairs" else "reader"
    for method, cols in (
        ("BCa", ("ci_low_bca", "ci_high_bca")),
        ("percentile", ("ci_low_percentile", "ci_high_percentile")),
    ):
        ref = scipy.stats.bootstrap(
            (y,),
            np.mean,
            n_resamples=REPLICATE_CHUNK,
            method=method,
            confidence_level=0.95,
            rng=np.random.default_rng(chunk_seed(123, kind, tuple(ids), 0)),
        )
        assert row[cols[0]] == pytest.approx(ref.confidence_interval.low, abs=1e-10)
        assert row[cols[1]] == pytest.approx(ref.confidence_interval.high, abs=1e-10)
        assert row["se"] == pytest.approx(ref.standard_error, rel=1e-10)


def test_result_is_invariant_to_row_order(votes_grid):
    a = cluster_bootstrap(votes_grid, n_boot=300, rng=5)
    b = cluster_bootstrap(votes_grid.sample(frac=1.0, random_state=1), n_boot=300, rng=5)
    pd.testing.assert_frame_equal(a.cells, b.cells)


def test_same_seed_gives_byte_identical_json_and_round_trips(votes_grid):
    credits = _credits(votes_grid)
    runs = [cluster_bootstrap(votes_grid, n_boot=300, judge_credits=credits, rng=9) for _ in range(2)]
    texts = [json.dumps(to_jsonable(r)) for r in runs]
    assert texts[0] == texts[1]
    back = from_jsonable(BootstrapResult, json.loads(texts[0]))
    assert json.dumps(to_jsonable(back)) == texts[0]
    assert isinstance(back, BootstrapResult) and back.seed == 9
    other = cluster_bootstrap(votes_grid, n_boot=300, judge_credits=credits, rng=10)
    assert json.dumps(to_jsonable(other)) != texts[0]


def _credits(votes: pd.DataFrame, nan_every: int = 0) -> pd.DataFrame:
    pairs = votes.drop_duplicates(["pair_id", "matchup", "criterion"])[["pair_id", "matchup", "criterion"]]
    credit = np.tile([1.0, 1.0, 0.5, 0.0, 1.0], len(pairs) // 5 + 1)[: len(pairs)]
    if nan_every:
        credit[::nan_every] = np.nan
    return pairs.assign(judge="ens", credit=credit).reset_index(drop=True)


def test_judge_rate_uses_human_pair_draws_and_counts_invalid(votes_grid):
    credits = _credits(votes_grid, nan_every=7)
    res = cluster_bootstrap(votes_grid, n_boot=400, judge_credits=credits, rng=2)
    j = res.judge
    assert len(j) == votes_grid.groupby(["matchup", "criterion"]).ngroups
    assert res.n_judge_invalid == int(credits["credit"].isna().sum()) == int(j["n_invalid"].sum())
    expected = credits.groupby(["matchup", "criterion"])["credit"].mean()
    for _, r in j.iterrows():
        assert r["rate"] == pytest.approx(expected[(r["matchup"], r["criterion"])])
        assert r["paired"]
        assert r["gap_ci_low"] <= r["gap"] <= r["gap_ci_high"]
        human = res.cells[(res.cells["cell"] == r["cell"]) & (res.cells["scheme"] == "pairs")]["rate"].iloc[0]
        assert r["human_rate"] == pytest.approx(human)


def test_two_way_is_wider_than_either_one_way_scheme():
    votes = make_votes(4, n_matchups=1, n_criteria=4, n_pairs=20, n_readers=7, sd_pair=0.6, sd_reader=0.6)
    res = cluster_bootstrap(votes, n_boot=2000, rng=1)
    se = res.cells.pivot(index="cell", columns="scheme", values="se")
    assert (se["two-way"] > se["pairs"]).all() and (se["two-way"] > se["readers"]).all()


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), b0=st.floats(-1.0, 1.0))
def test_percentile_interval_contains_estimate_in_typical_data(seed, b0):
    votes = make_votes(seed, n_pairs=15, n_readers=6, b0=b0)
    res = cluster_bootstrap(votes, n_boot=499, rng=seed)
    c = res.cells
    assert (c["ci_low_percentile"] <= c["rate"]).all() and (c["rate"] <= c["ci_high_percentile"]).all()
    assert (c["ci_low_bca"] <= c["ci_high_bca"]).all()


def test_all_votes_one_way_gives_degenerate_but_finite_percentile():
    votes = make_votes(1, n_pairs=5, n_readers=3).assign(y=1.0)
    res = cluster_bootstrap(votes, n_boot=100, rng=0)
    assert (res.cells["ci_low_percentile"] == 1.0).all() and (res.cells["p_value"] < 0.05).all()


def test_bad_input_raises_actionable_input_error(votes_small):
    with pytest.raises(InputError, match="missing column 'reader_id'"):
        cluster_bootstrap(votes_small.drop(columns="reader_id"), n_boot=10)
    with pytest.raises(InputError, match="not 1 \\(focal\\)"):
        cluster_bootstrap(votes_small.assign(y=2.0), n_boot=10)
    with pytest.raises(InputError, match="unknown scheme"):
        cluster_bootstrap(votes_small, schemes=("bogus",), n_boot=10)
    with pytest.raises(InputError, match="n_boot"):
        cluster_bootstrap(votes_small, n_boot=1)
    with pytest.raises(InputError, match="credit"):
        cluster_bootstrap(votes_small, n_boot=10, judge_credits=_credits(votes_small).assign(credit=3.0))


def test_str_and_frame(votes_small):
    res = cluster_bootstrap(votes_small, n_boot=50, rng=0)
    assert "pointwise" in str(res) and "m0/c0" in str(res)
    assert list(res.to_frame()["scheme"]) == ["pairs", "readers", "two-way"]
    assert res.interval("m0/c0", "pairs")[0] <= res.interval("m0/c0", "pairs")[1]


def test_cgm_two_way_se_matches_statsmodels_with_analytic_one_way_variances():
    """With linearised one-way variances, cgm_interval's SE is the CGM (2011) two-way
    cluster-robust SE of a mean, as statsmodels computes it (OLS on a constant,
    cov_type="cluster" with two group columns)."""
    import statsmodels.api as sm

    from judge_transfer_audit.statistics.uncertainty._cells import cell_tables
    from judge_transfer_audit.statistics.uncertainty.bootstrap import cgm_interval

    v = make_votes(3, n_pairs=15, n_readers=6, sd_pair=0.8, sd_reader=0.8)
    t = cell_tables(v, ("matchup", "criterion"))[0]
    y = v["y"].to_numpy(float)
    groups = np.column_stack([v["pair_id"].astype("category").cat.codes, v["reader_id"].astype("category").cat.codes])
    ref = sm.OLS(y, np.ones_like(y)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    p = t.rate
    vp = np.sum((t.S.sum(1) - p * t.N.sum(1)) ** 2) / t.N.sum() ** 2
    vr = np.sum((t.S.sum(0) - p * t.N.sum(0)) ** 2) / t.N.sum() ** 2
    lo, hi, se, pval = cgm_interval(p, vp, vr, t.S, t.N, 0.95)
    assert se == pytest.approx(float(ref.bse[0]), rel=1e-10)
    q = scipy.stats.t.ppf(0.975, 5)
    assert (lo, hi) == pytest.approx((p - q * se, p + q * se))


def test_cgm_interval_is_reported_on_two_way_rows_only(votes_small):
    c = cluster_bootstrap(votes_small, n_boot=300, rng=0).cells
    assert c.loc[c["scheme"] == "two-way", "ci_low_cgm"].notna().all()
    assert c.loc[c["scheme"] != "two-way", "ci_low_cgm"].isna().all()


def test_pooled_scope_keeps_each_pairs_votes_across_criteria_together(votes_grid):
    pooled = votes_grid.assign(scope="all dimensions")
    res = cluster_bootstrap(pooled, by=("scope",), n_boot=200, rng=0)
    row = res.cells[res.cells["scheme"] == "pairs"].iloc[0]
    assert row["rate"] == pytest.approx(votes_grid["y"].mean())
    assert row["n_pairs"] == votes_grid["pair_id"].nunique() and row["n_readers"] == votes_grid["reader_id"].nunique()


def test_single_reader_cell_gets_no_reader_interval_and_all_tie_cell_is_nan():
    v = make_votes(1, n_criteria=2, n_pairs=6, n_readers=3)
    v = v[~((v["criterion"] == "c1") & (v["reader_id"] != "r0"))]
    v.loc[v["criterion"] == "c0", "y"] = np.nan
    res = cluster_bootstrap(v, n_boot=100, rng=0)
    c = res.cells.set_index(["cell", "scheme"])
    assert np.isnan(c.loc[("m0/c1", "readers"), "ci_low_percentile"])
    assert np.isnan(c.loc[("m0/c1", "two-way"), "ci_low_percentile"])
    assert np.isfinite(c.loc[("m0/c1", "pairs"), "ci_low_percentile"])
    assert np.isnan(c.loc[("m0/c0", "pairs"), "rate"]) and c.loc[("m0/c0", "pairs"), "n_invalid"] == 100
    assert c.loc[("m0/c0", "pairs"), "n_ties"] == 18
    assert any("single cluster" in n for n in res.notes)


def _one_vote_per_pair(seed: int, n_matchups: int, n_pairs: int, n_readers: int) -> pd.DataFrame:
    """Arena-shaped votes: one vote per pair, every matchup's readers drawn from one pool."""
    rng = np.random.default_rng(seed)
    rows = []
    for m in range(n_matchups):
        for i in range(n_pairs):
            y = float(rng.random() < 0.6)
            rows.append(
                {
                    "pair_id": f"m{m}-p{i:03d}",
                    "reader_id": f"r{rng.integers(n_readers):03d}",
                    "matchup": f"m{m}",
                    "criterion": "overall",
                    "focal": "F",
                    "other": "O",
                    "choice": "F" if y else "O",
                    "y": y,
                }
            )
    return pd.DataFrame(rows)


def test_cells_of_many_matchups_equal_each_matchup_bootstrapped_alone():
    # cells of 300 pairs x ~190 readers are above the dense size: each is resampled on its own, the
    # weights of its pair set and reader set drawn once per chunk and dropped after their last use
    votes = _one_vote_per_pair(3, n_matchups=3, n_pairs=300, n_readers=200)
    credits = _credits(votes, nan_every=9)
    kwargs = dict(schemes=("pairs", "readers", "two-way"), n_boot=300, intervals=("percentile",), rng=4)
    together = cluster_bootstrap(votes, judge_credits=credits, **kwargs)
    for m, part in votes.groupby("matchup"):
        alone = cluster_bootstrap(part, judge_credits=credits[credits["matchup"] == m], **kwargs)
        for frame in ("cells", "judge"):
            got = getattr(together, frame)
            got = got[got["matchup"] == m].reset_index(drop=True)
            pd.testing.assert_frame_equal(got, getattr(alone, frame).reset_index(drop=True), check_exact=True)
