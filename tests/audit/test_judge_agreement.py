"""audit.judge_agreement: kappa against R psych, alphas against the krippendorff package,
the bootstrap weights against an explicitly resampled data set, intervals, bad input."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from audit.errors import InputError
from audit.judge_agreement import agreement_statistics, judge_agreement

REF = Path(__file__).resolve().parents[1] / "reference" / "judge_agreement"
_Y = {0: 0.0, 1: 1.0, 2: np.nan}
_YJ = {0: 0.0, 1: 1.0, 2: 0.5, -1: np.nan}


def _case(case: int, matchup: str = "a vs b") -> tuple[pd.DataFrame, pd.DataFrame]:
    v = pd.read_csv(REF / "votes.csv")
    j = pd.read_csv(REF / "judge.csv")
    v, j = v[v.case == case], j[j.case == case]
    votes = pd.DataFrame({"pair_id": v.unit, "reader_id": v.reader, "criterion": "overall", "matchup": matchup,
                          "y": v.category.map(_Y)})
    choice = pd.DataFrame({"pair_id": j.unit, "criterion": "overall", "y_judge": j.judge.map(_YJ)})
    return votes.reset_index(drop=True), choice.reset_index(drop=True)


@pytest.mark.parametrize("case", [0, 1, 2])
def test_kappa_matches_psych(case):
    """R psych::cohen.kappa on the majority computed in R (make_reference.R), tol 1e-12."""
    ref = pd.read_csv(REF / "kappa_psych.csv")
    ref = ref[ref.case == case].set_index("what")
    votes, choice = _case(case)
    res = judge_agreement(votes, choice, n_boot=0)
    row = res.row()
    assert row.n_units_scored == ref.loc["majority", "n"]
    assert row.kappa_majority.estimate == pytest.approx(ref.loc["majority", "kappa"], abs=1e-12)
    readers = res.readers.set_index("reader_id")
    for reader in readers.index:
        assert readers.loc[reader, "n_units"] == ref.loc[reader, "n"]
        assert readers.loc[reader, "kappa"] == pytest.approx(ref.loc[reader, "kappa"], abs=1e-12)
    assert row.kappa_readers.estimate == pytest.approx(ref.drop("majority")["kappa"].mean(), abs=1e-12)


@pytest.mark.parametrize("case", [0, 1, 2])
def test_alpha_and_raw_match_krippendorff_package(case):
    """krippendorff 0.9.0 (make_reference_alpha.py), tol 1e-12."""
    ref = pd.read_csv(REF / "alpha_krippendorff.csv").set_index("case").loc[case]
    votes, choice = _case(case)
    row = judge_agreement(votes, choice, n_boot=0).row()
    for name in ("alpha_human", "alpha_judge_human", "raw_human", "raw_judge_human"):
        assert getattr(row, name).estimate == pytest.approx(ref[name], abs=1e-12), name
    assert row.alpha_difference.estimate == pytest.approx(ref.alpha_judge_human - ref.alpha_human, abs=1e-12)
    assert row.raw_difference.estimate == pytest.approx(ref.raw_judge_human - ref.raw_human, abs=1e-12)


def test_alpha_human_equals_agreement_table():
    from audit.agreement import agreement_table

    votes, choice = _case(0)
    row = judge_agreement(votes, choice, n_boot=0).row()
    table = agreement_table(votes).row()
    assert row.alpha_human.estimate == pytest.approx(table.krippendorff_alpha, abs=1e-12)
    assert row.raw_human.estimate == pytest.approx(table.raw_agreement, abs=1e-12)


def _indicators(votes, choice):
    """Build the (3, U, R) indicators and the judge categories by hand."""
    units = sorted(votes.pair_id.unique())
    readers = sorted(votes.reader_id.unique())
    ind = np.zeros((3, len(units), len(readers)))
    for row in votes.itertuples():
        c = 2 if np.isnan(row.y) else int(row.y)
        ind[c, units.index(row.pair_id), readers.index(row.reader_id)] = 1
    jmap = dict(zip(choice.pair_id, choice.y_judge))
    judge = np.array([-1 if np.isnan(jmap[u]) else (2 if jmap[u] == 0.5 else int(jmap[u])) for u in units])
    return units, readers, ind, judge


def test_resampling_weights_equal_an_explicitly_resampled_data_set():
    """One replicate's weighted statistics == the same statistics on the data with drawn pairs
    and readers copied out (copies of a reader are new readers; judge-side statistics only,
    as copies of one reader pairing with each other is what the weighting excludes)."""
    votes, choice = _case(1)
    units, readers, ind, judge = _indicators(votes, choice)
    rng = np.random.default_rng(3)
    wu = rng.multinomial(len(units), np.ones(len(units)) / len(units))
    wr = rng.multinomial(len(readers), np.ones(len(readers)) / len(readers))
    pairable = ind.sum(axis=(0, 2)) >= 2
    weighted = agreement_statistics(ind, judge, pairable, wu[None, :].astype(float), wr[None, :].astype(float))
    # expand: unit u repeated wu[u] times, reader r repeated wr[r] times
    ui = np.repeat(np.arange(len(units)), wu)
    ri = np.repeat(np.arange(len(readers)), wr)
    big = ind[:, ui][:, :, ri]
    plain = agreement_statistics(big, judge[ui], pairable[ui], np.ones((1, len(ui))), np.ones((1, len(ri))))
    for name in ("kappa_majority", "alpha_judge_human", "raw_judge_human"):
        assert weighted[name][0] == pytest.approx(plain[name][0], abs=1e-12), name


def test_intervals_contain_estimates_and_are_reproducible():
    votes, choice = _case(0)
    a = judge_agreement(votes, choice, n_boot=400, rng=11)
    b = judge_agreement(votes, choice, n_boot=400, rng=11)
    assert a.to_frame().equals(b.to_frame())
    row = a.row()
    assert row.scheme == "two-way" and a.seed == 11
    for name in ("kappa_majority", "alpha_difference", "raw_difference", "kappa_readers"):
        e = getattr(row, name)
        assert e.ci_low < e.estimate < e.ci_high, name
    assert -1 <= row.kappa_majority.ci_low and row.kappa_majority.ci_high <= 1


def test_one_reader_falls_back_to_pairs_resampling():
    votes, choice = _case(2)
    one = votes[votes.reader_id == "r0"]
    row = judge_agreement(one, choice, n_boot=200, rng=1).row()
    assert row.scheme == "pairs"
    assert np.isfinite(row.kappa_readers.ci_low)
    assert np.isnan(row.alpha_human.estimate)  # no unit with two human votes


def test_scopes_cells_criteria_and_all():
    v1, c1 = _case(0, "a vs b")
    v2, c2 = _case(2, "c vs d")
    v2 = v2.assign(pair_id="x" + v2.pair_id)
    c2 = c2.assign(pair_id="x" + c2.pair_id)
    votes = pd.concat([v1, v2, v1.assign(criterion="empathy")], ignore_index=True)
    choice = pd.concat([c1, c2, c1.assign(criterion="empathy")], ignore_index=True)
    res = judge_agreement(votes, choice, n_boot=0)
    scopes = [r.scope for r in res.rows]
    assert scopes == ["a vs b/overall", "c vs d/overall", "a vs b/empathy", "all/overall", "all/empathy", "all/all"]
    # a cell equals the single-cell computation
    alone = judge_agreement(v2, c2, n_boot=0).row()
    assert res.row("c vs d/overall").kappa_majority.estimate == pytest.approx(alone.kappa_majority.estimate)
    frame = res.to_frame()
    assert {"scope", "kappa_majority", "kappa_majority_ci_low", "alpha_difference_ci_high"} <= set(frame.columns)
    assert "kappa vs majority" in str(res)


def test_all_votes_one_way_gives_nan_not_error():
    votes = pd.DataFrame({"pair_id": [f"p{i}" for i in range(6) for _ in range(2)], "reader_id": ["a", "b"] * 6,
                          "criterion": "overall", "matchup": "m", "y": 1.0})
    choice = pd.DataFrame({"pair_id": [f"p{i}" for i in range(6)], "criterion": "overall", "y_judge": 1.0})
    row = judge_agreement(votes, choice, n_boot=50, rng=0).row()
    assert np.isnan(row.kappa_majority.estimate) and np.isnan(row.alpha_human.estimate)
    assert row.raw_difference.estimate == 0.0


def test_bad_verdicts_are_input_errors():
    votes, choice = _case(0)
    with pytest.raises(InputError, match="not in 1, 0, 0.5"):
        judge_agreement(votes, choice.assign(y_judge=2.0), n_boot=0)
    with pytest.raises(InputError, match="missing column"):
        judge_agreement(votes.drop(columns="reader_id"), choice, n_boot=0)


@pytest.mark.r
def test_kappa_reference_rerun_live(tmp_path):
    """Re-run make_reference.R and compare with the stored outputs."""
    if shutil.which("Rscript") is None:
        pytest.skip("Rscript not on PATH")
    for name in ("votes.csv", "judge.csv", "make_reference.R"):
        shutil.copy(REF / name, tmp_path / name)
    subprocess.run(["Rscript", "make_reference.R"], cwd=tmp_path, check=True, capture_output=True)
    np.testing.assert_allclose(pd.read_csv(tmp_path / "kappa_psych.csv")["kappa"],
                               pd.read_csv(REF / "kappa_psych.csv")["kappa"], atol=1e-12)
