"""Leave-one-reader-out: raw rates against direct recomputation, GLMM refits against cold fits."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.core.serialize import from_jsonable, to_jsonable
from judge_transfer_audit.statistics.uncertainty.loro import ALL_DIMENSIONS, LoroResult, leave_one_reader_out

from .conftest import make_votes


@pytest.fixture
def votes_with_overall() -> pd.DataFrame:
    v = make_votes(8, n_matchups=2, n_criteria=3, n_pairs=10, n_readers=5, tie_prob=0.05)
    return v.assign(criterion=v["criterion"].replace({"c2": "overall"}))


def test_raw_rates_match_direct_recomputation(votes_with_overall):
    res = leave_one_reader_out(votes_with_overall, glmm=False)
    v = votes_with_overall
    assert len(res.shifts) == 2 * 3 * 5
    for _, r in res.shifts.iterrows():
        cell = v[(v["matchup"] == r["matchup"]) & (v["criterion"] == r["criterion"])]
        without = cell[cell["reader_id"] != r["reader"]]["y"].dropna()
        assert r["rate_without"] == pytest.approx(without.mean(), abs=1e-14)
        assert r["rate"] == pytest.approx(cell["y"].dropna().mean(), abs=1e-14)
        assert r["n_votes_without"] == len(without)
        assert r["shift"] == pytest.approx(without.mean() - cell["y"].dropna().mean(), abs=1e-14)
    assert res.shifts["glmm"].isna().all() and res.n_glmm_fits == 0


def test_aggregate_pools_dimensions_without_overall(votes_with_overall):
    res = leave_one_reader_out(votes_with_overall, glmm=False)
    v = votes_with_overall
    dims = v[v["criterion"] != "overall"]
    agg = res.aggregate[res.aggregate["scope"] == ALL_DIMENSIONS].set_index("reader")
    for reader in sorted(v["reader_id"].unique()):
        expected = dims[dims["reader_id"] != reader]["y"].dropna().mean()
        assert agg.loc[reader, "rate_without"] == pytest.approx(expected, abs=1e-14)
    shifts = agg["shift"].abs()
    assert res.aggregate_shift_max == pytest.approx(shifts.max())
    assert res.aggregate_shift_min == pytest.approx(shifts.min())
    assert set(res.aggregate["scope"]) == {ALL_DIMENSIONS, "c0", "c1", "overall"}


def test_a_contrarian_reader_is_the_most_influential():
    v = make_votes(2, n_matchups=1, n_criteria=3, n_pairs=12, n_readers=6, b0=0.0, sd_reader=0.0)
    v.loc[v["reader_id"] == "r4", "y"] = 1.0
    res = leave_one_reader_out(v, glmm=False)
    assert res.most_influential_reader == "r4"
    assert res.largest_shift_reader == "r4" and res.largest_shift < 0
    assert "r4" in str(res)


def test_glmm_refits_match_cold_fits_and_round_trip():
    from judge_transfer_audit.statistics.glmm import fit_crossed_glmm

    v = make_votes(4, n_matchups=1, n_criteria=2, n_pairs=12, n_readers=5, sd_pair=0.8, sd_reader=0.8)
    res = leave_one_reader_out(v)
    assert res.n_glmm_fits == 2 * (1 + 5) and res.n_glmm_failed == 0
    for _, r in res.shifts.iloc[[0, 3, 7]].iterrows():
        cell = v[(v["criterion"] == r["criterion"]) & (v["reader_id"] != r["reader"])]
        cold = fit_crossed_glmm(
            cell["y"].to_numpy(float), {"pair": cell["pair_id"].to_numpy(), "reader": cell["reader_id"].to_numpy()}
        )
        assert r["glmm_without"] == pytest.approx(cold.prob_estimate()[0], abs=2e-3)
    text = json.dumps(to_jsonable(res))
    assert json.dumps(to_jsonable(leave_one_reader_out(v))) == text
    back = from_jsonable(LoroResult, json.loads(text))
    assert json.dumps(to_jsonable(back)) == text
    assert np.isfinite(res.largest_glmm_shift)


def _many_readers(seed=3):
    from .test_one_step import _design

    return _design(150, 24, 6, seed)  # one cell: 150 pairs, 24 readers, 900 votes


def test_exact_refits_everywhere_when_the_analysis_fits_the_budget():
    res = leave_one_reader_out(_many_readers())
    assert set(res.shifts["glmm_method"]) == {"exact"} and res.n_glmm_one_step == 0
    assert res.n_glmm_exact_refits == 24 and np.isnan(res.one_step_max_error)


def test_beyond_the_budget_one_step_for_all_and_exact_refits_for_the_most_influential():
    v = _many_readers()
    exact = leave_one_reader_out(v).shifts.set_index("reader")["glmm_shift"]
    # 24 x (900 + 2000) vote-equivalents do not fit in 20,000; a fifth of it buys one refit
    res = leave_one_reader_out(v, exact_budget=20_000)
    s = res.shifts.set_index("reader")
    assert (s["glmm_method"] == "exact").sum() == 1 == res.n_glmm_exact_refits and res.n_glmm_one_step == 23
    top = s["glmm_shift_one_step"].abs().idxmax()
    assert s.loc[top, "glmm_method"] == "exact"  # the most influential reader is the one refitted
    assert s.loc[top, "glmm_shift"] == pytest.approx(exact[top], abs=1e-6)
    assert res.one_step_max_error == pytest.approx(abs(exact[top] - s.loc[top, "glmm_shift_one_step"]))
    one = s[s["glmm_method"] == "one-step"]
    assert np.max(np.abs(one["glmm_shift"] - exact[one.index])) <= 0.12 * exact.abs().max()
    assert "one Newton step" in str(res)


def test_stochastic_one_step_beyond_the_budget_is_noted_and_checked(monkeypatch):
    """Cells past STOCHASTIC_MIN_READERS (lowered here) take the stochastic one-step: the note gives
    its probes and Monte-Carlo error, the exact refit of the most influential reader checks it."""
    import judge_transfer_audit.statistics.uncertainty.loro as loro
    import judge_transfer_audit.statistics.uncertainty.one_step as one_step

    monkeypatch.setattr(one_step, "STOCHASTIC_MIN_READERS", 5)
    monkeypatch.setattr(loro, "STOCHASTIC_MIN_READERS", 5)
    v = _many_readers()
    exact = leave_one_reader_out(v).shifts.set_index("reader")["glmm_shift"]
    res = leave_one_reader_out(v, exact_budget=20_000)
    s = res.shifts.set_index("reader")
    note = next(n for n in res.notes if "random probes" in n)
    assert note.startswith("1 cells with more than 5 readers sharing pairs") and "Monte-Carlo error" in note
    one = s[s["glmm_method"] == "one-step"]
    assert len(one) == 23 and np.max(np.abs(one["glmm_shift"] - exact[one.index])) <= 0.12 * exact.abs().max()
    assert np.isfinite(res.one_step_max_error) and res.one_step_max_error <= 0.12 * exact.abs().max()


def test_small_cells_beyond_the_budget_get_no_one_step():
    v = make_votes(4, n_matchups=1, n_criteria=2, n_pairs=12, n_readers=5)
    res = leave_one_reader_out(v, exact_budget=2_000)  # no refit fits: 12 x 5 votes + overhead > 400
    assert set(res.shifts["glmm_method"]) == {"not computed"} and res.shifts["glmm_without"].isna().all()
    assert res.shifts["rate_without"].notna().all()  # the raw shifts do not depend on the budget


def test_starting_from_given_full_fits_equals_fitting_them():
    from judge_transfer_audit.statistics.glmm import fit_crossed_glmm

    v = _many_readers(5)
    fitted = leave_one_reader_out(v, exact_budget=0)
    cell = v[v["y"].notna()]
    full = fit_crossed_glmm(
        cell["y"].to_numpy(float), {"pair": cell["pair_id"].to_numpy(), "reader": cell["reader_id"].to_numpy()}
    )
    given = leave_one_reader_out(
        v, exact_budget=0, full_fits={("m", "c"): (full.b[0], full.sd["pair"], full.sd["reader"])}
    )
    assert given.n_glmm_fits == 0 and fitted.n_glmm_fits == 1
    np.testing.assert_allclose(given.shifts["glmm_shift"], fitted.shifts["glmm_shift"], atol=2e-4)


def test_exact_refits_fitted_together_equal_the_refits_one_by_one():
    """The all-exact path fits every cell's readers together (judge_transfer_audit.statistics.glmm.batch); each refit
    equals the per-cell engine's warm-started refit to 1e-6 (the stacked-fit tolerance), flags included."""
    from judge_transfer_audit.statistics.uncertainty._cells import cell_tables
    from judge_transfer_audit.statistics.uncertainty.glmm_cells import fit_vote_arrays
    from judge_transfer_audit.statistics.uncertainty.loro import REFIT_CHUNK, _refit, _RefitJob, _start

    v = make_votes(6, n_matchups=2, n_criteria=5, n_pairs=30, n_readers=7, sd_pair=0.8, sd_reader=0.5, tie_prob=0.1)
    res = leave_one_reader_out(v)
    assert res.n_glmm_exact_refits == 10 * 7 > REFIT_CHUNK  # more than one chunk
    s = res.shifts
    for t in cell_tables(v, ("matchup", "criterion")):
        y, pair, rdr = t.vote_arrays()
        full, _ = fit_vote_arrays(y, pair, rdr)
        rows = s[s["cell"] == t.label].set_index("reader")
        assert set(rows["glmm_method"]) == {"exact"}
        for j, reader in enumerate(t.readers):
            one = _refit(_RefitJob(0, j, y, pair, rdr, _start(full, pair, rdr, rdr != j)))
            assert rows.loc[reader, "glmm_without"] == pytest.approx(one["estimate"], abs=1e-6)
            assert (rows.loc[reader, "glmm_singular"], rows.loc[reader, "glmm_converged"]) == (
                one["singular"],
                one["converged"],
            )


def test_raw_and_pooled_rates_are_exact_over_many_criteria():
    """Every raw rate is a ratio of vote counts: the whole-column computation gives a direct
    recomputation's bits, in every scope (many criteria, an overall, readers missing from some
    cells, ties, a cell of ties only)."""
    v = make_votes(9, n_matchups=2, n_criteria=7, n_pairs=6, n_readers=4, tie_prob=0.1)
    v = v.assign(criterion=v["criterion"].replace({"c6": "overall"}))
    v = v[~((v["criterion"] == "c2") & (v["reader_id"] == "r1"))].copy()
    v.loc[(v["criterion"] == "c3") & (v["matchup"] == "m0"), "y"] = np.nan
    res = leave_one_reader_out(v, glmm=False)
    for _, r in res.shifts.iterrows():
        cell = v[(v["matchup"] == r["matchup"]) & (v["criterion"] == r["criterion"])]
        without = cell[cell["reader_id"] != r["reader"]]["y"].dropna()
        want = without.sum() / len(without) if len(without) else np.nan
        assert r["rate_without"] == want or (np.isnan(want) and np.isnan(r["rate_without"]))
    agg = res.aggregate
    scopes = {ALL_DIMENSIONS: v[v["criterion"] != "overall"], **{c: g for c, g in v.groupby("criterion")}}
    assert list(agg["scope"].drop_duplicates()) == [ALL_DIMENSIONS, *sorted(v["criterion"].unique())]
    for scope, votes in scopes.items():
        rows = agg[agg["scope"] == scope]
        assert list(rows["reader"]) == sorted(votes["reader_id"].unique())
        decisive = votes["y"].dropna()
        for _, r in rows.iterrows():
            rest = votes[votes["reader_id"] != r["reader"]]["y"].dropna()
            assert r["rate"] == decisive.sum() / len(decisive)
            assert r["rate_without"] == rest.sum() / len(rest) and r["n_votes_without"] == len(rest)


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.slow
def test_leave_one_reader_out_refits_in_lockstep_equal_the_refits_one_by_one(seed):
    from judge_transfer_audit.statistics.uncertainty._cells import cell_tables
    from judge_transfer_audit.statistics.uncertainty.glmm_cells import fit_vote_arrays
    from judge_transfer_audit.statistics.uncertainty.loro import _refit, _refit_exactly, _RefitJob, _start

    v = make_votes(seed, n_matchups=2, n_criteria=6, n_pairs=6, n_readers=3, sd_pair=0.8, sd_reader=0.6, tie_prob=0.05)
    jobs = []
    for i, t in enumerate(cell_tables(v, ("matchup", "criterion"))):
        y, pair, rdr = t.vote_arrays()
        full, _ = fit_vote_arrays(y, pair, rdr)
        jobs.extend(_RefitJob(i, j, y, pair, rdr, _start(full, pair, rdr, rdr != j)) for j in range(t.n_readers))
    got = _refit_exactly(jobs)
    for job, row in zip(jobs, got):
        want = _refit(job)
        for key in ("estimate", "b0", "sd_pair", "sd_reader", "converged", "singular", "error"):
            assert row[key] == want[key] or (np.isnan(row[key]) and np.isnan(want[key])), key
