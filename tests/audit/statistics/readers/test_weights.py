"""Per-reader weights and within-reader kappas."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.statistics.readers._common import check_votes
from judge_transfer_audit.statistics.readers.weights import INTERCEPT, cohens_kappa, reader_kappas, reader_weights

from .conftest import make_votes

REF = Path(__file__).resolve().parents[3] / "reference" / "cohens_kappa"


def test_kappa_matches_psych_reference():
    """R psych::cohen.kappa (tests/reference/cohens_kappa/make_reference.R), tol 1e-12."""
    labels = pd.read_csv(REF / "labels.csv")
    ref = pd.read_csv(REF / "kappa_psych.csv")
    for case, grp in labels.groupby("case"):
        k, _, _ = cohens_kappa(grp["criterion"].to_numpy(), grp["overall"].to_numpy())
        assert k == pytest.approx(float(ref.loc[ref["case"] == case, "kappa"].iloc[0]), abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("fot"), st.sampled_from("fot")), min_size=2, max_size=40))
def test_kappa_matches_statsmodels(pairs):
    """statsmodels.stats.inter_rater.cohens_kappa on the contingency table."""
    from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa

    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    k, po, pe = cohens_kappa(a, b)
    labels = sorted(set(a) | set(b))
    table = np.array([[np.sum((a == x) & (b == y)) for y in labels] for x in labels])
    if np.isclose(pe, 1.0):
        assert np.isnan(k)
        return
    assert k == pytest.approx(float(sm_kappa(table, return_results=False)), abs=1e-10)
    assert po == pytest.approx(np.trace(table) / len(a))


def test_kappa_is_symmetric_and_one_when_identical():
    a = np.array(["f", "o", "f", "t", "o"])
    b = np.array(["f", "o", "o", "t", "f"])
    assert cohens_kappa(a, b)[0] == pytest.approx(cohens_kappa(b, a)[0])
    assert cohens_kappa(a, a)[0] == pytest.approx(1.0)


def test_separated_reader_is_flagged_and_fitted_by_firth():
    votes = check_votes(make_votes(6, 60, separated_reader="r5"))
    w = reader_weights(votes)
    assert w.status is Status.PASS
    assert w.separated_readers == ("r5",)
    fits = w.fits.set_index("reader_id")
    assert fits.loc["r5", "method"] == "firth" and fits.loc["r0", "method"] == "ml"
    coef = w.coefficients.set_index(["reader_id", "term"])["estimate"]
    assert np.isfinite(coef.loc["r5"]).all()
    # The separating criterion carries the reader's largest weight.
    assert coef.loc["r5"].drop(INTERCEPT).idxmax() == "empathy"
    assert "Firth" in w.reason and "*" in str(w)


def test_weights_recover_the_two_weighting_schemes():
    votes = check_votes(make_votes(6, 60, seed=0))
    prof = reader_weights(votes).profile()
    first = prof.loc[["r0", "r1", "r2"]]
    second = prof.loc[["r3", "r4", "r5"]]
    assert (first["authenticity"] > first["empathy"]).all()
    assert (second["empathy"] > second["authenticity"]).all()


def test_swapping_focal_flips_intercept_only():
    """The +1/-1/0 coding makes slopes invariant to which system is focal."""
    votes = check_votes(make_votes(4, 40, seed=3, tie_share=0.1))
    swapped = votes.assign(y=1.0 - votes["y"])
    a = reader_weights(votes).coefficients.set_index(["reader_id", "term"])["estimate"]
    b = reader_weights(swapped).coefficients.set_index(["reader_id", "term"])["estimate"]
    slopes = [t for t in a.index if t[1] != INTERCEPT]
    intercepts = [t for t in a.index if t[1] == INTERCEPT]
    np.testing.assert_allclose(a.loc[slopes], b.loc[slopes], atol=1e-7)
    np.testing.assert_allclose(a.loc[intercepts], -b.loc[intercepts], atol=1e-7)


def test_tied_overall_and_missing_votes_are_counted():
    votes = check_votes(make_votes(3, 20, seed=1))
    tie_rows = (votes["reader_id"] == "r0") & (votes["criterion"] == "overall") & votes["pair_id"].isin(["p00", "p01"])
    votes.loc[tie_rows, "y"] = np.nan
    drop = (votes["reader_id"] == "r0") & (votes["criterion"] == "empathy") & (votes["pair_id"] == "p02")
    votes = votes[~drop]
    fits = reader_weights(votes).fits.set_index("reader_id")
    assert fits.loc["r0", "n_tie_overall"] == 2
    assert fits.loc["r0", "n_incomplete"] == 1
    assert fits.loc["r0", "n_obs"] == 20 - 3
    assert fits.loc["r1", "n_obs"] == 20


def test_kappas_by_hand():
    rows = []
    overall = [1, 1, 0, 0, 1, 0]
    crit = [1, 0, 0, 0, 1, np.nan]
    for i, (o, c) in enumerate(zip(overall, crit)):
        rows += [
            dict(pair_id=f"p{i}", reader_id="a", criterion="overall", y=float(o)),
            dict(pair_id=f"p{i}", reader_id="a", criterion="empathy", y=c),
        ]
    k = reader_kappas(check_votes(pd.DataFrame(rows))).kappas.iloc[0]
    # table crit x overall: focal/focal 2, other/focal 1, other/other 2, tie/other 1
    po = 4 / 6
    pe = (2 / 6) * (3 / 6) + (3 / 6) * (3 / 6) + (1 / 6) * 0
    assert k["observed_agreement"] == pytest.approx(po)
    assert k["kappa"] == pytest.approx((po - pe) / (1 - pe))
    assert k["n_pairs"] == 6


def test_skipped_without_overall():
    votes = check_votes(make_votes(3, 10).query("criterion != 'overall'"))
    assert reader_weights(votes).status is Status.SKIPPED
    assert "overall" in reader_kappas(votes).reason


@pytest.mark.r
def test_kappa_reference_rerun_live(tmp_path):
    """Rerun the psych script and compare with the stored outputs."""
    import shutil
    import subprocess

    if shutil.which("Rscript") is None:
        pytest.skip("Rscript not on PATH")
    for f in REF.glob("*"):
        shutil.copy(f, tmp_path / f.name)
    subprocess.run(["Rscript", "make_reference.R"], cwd=tmp_path, check=True, capture_output=True)
    np.testing.assert_allclose(
        pd.read_csv(tmp_path / "kappa_psych.csv")["kappa"], pd.read_csv(REF / "kappa_psych.csv")["kappa"], atol=1e-12
    )


def test_reader_without_a_usable_overall_vote_is_left_out_and_counted():
    from judge_transfer_audit.statistics.readers.clustering import cluster_readers

    votes = check_votes(make_votes(5, 20, seed=6))
    votes.loc[(votes["reader_id"] == "r4") & (votes["criterion"] == "overall"), "y"] = np.nan
    w = reader_weights(votes)
    fits = w.fits.set_index("reader_id")
    assert fits.loc["r4", "n_obs"] == 0 and fits.loc["r4", "n_tie_overall"] == 20
    assert "r4" not in set(w.coefficients["reader_id"])
    res = cluster_readers(votes, w, reader_kappas(votes))
    assert res.status is Status.PASS and res.n_readers_left_out == 1 and "r4" not in res.weights.labels


@pytest.mark.parametrize("seed", range(5))
def test_kappas_equal_cohens_kappa_of_each_reader_and_criterion_bit_for_bit(seed):
    """reader_kappas counts labels for every criterion of a reader at once: each row equals
    cohens_kappa on that reader's label vectors (ties, missing votes, constant votes, no pair)."""
    rng = np.random.default_rng(seed)
    rows = []
    for r in range(4):
        for p in range(int(rng.integers(0, 12))):
            for c in ("overall", "a", "b", "c"):
                if rng.random() < 0.15:
                    continue
                y = 1.0 if c == "c" and r == 0 else rng.choice([0.0, 1.0, np.nan], p=[0.45, 0.45, 0.1])
                rows.append(dict(pair_id=f"p{p}", reader_id=f"r{r}", criterion=c, y=y))
    rows.append(dict(pair_id="q", reader_id="r9", criterion="a", y=1.0))
    rows.append(dict(pair_id="q", reader_id="r9", criterion="overall", y=0.0))
    votes = check_votes(pd.DataFrame(rows))
    got = reader_kappas(votes).kappas

    def label(v):
        return "tie" if np.isnan(v) else ("focal" if v == 1 else "other")

    for rec in got.itertuples(index=False):
        mine = votes[votes.reader_id == rec.reader_id]
        crit = mine[mine.criterion == rec.criterion].set_index("pair_id")["y"]
        overall = mine[mine.criterion == "overall"].set_index("pair_id")["y"]
        both = crit.index.intersection(overall.index, sort=False)
        want = cohens_kappa(
            np.array([label(v) for v in crit.loc[both]]), np.array([label(v) for v in overall.loc[both]])
        )
        np.testing.assert_array_equal([rec.kappa, rec.observed_agreement, rec.expected_agreement], want)
        assert rec.n_pairs == len(both)
