"""judge_transfer_audit.statistics.leaderboard.votes: the vote-level Bradley-Terry model against statsmodels
(estimates, the HC0
sandwich, the reader-clustered sandwich) and against LMArena's arena-rank (tests/reference/arena_rank/:
its outputs checked in; a live rerun when arena-rank is installed)."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.statistics.leaderboard.bootstrap import fit_judge
from judge_transfer_audit.statistics.leaderboard.votes import fit_vote_level

REF = Path(__file__).resolve().parents[3] / "reference" / "arena_rank"
CASES = ("plain", "ties_readers", "position")
ALPHA = 400.0 / math.log(10.0)  # arena-rank's scale / ln(base): rating = 1000 + ALPHA * logit


def _codes(case: str):
    df = pd.read_csv(REF / f"{case}.csv")
    systems = sorted(set(df.model_a) | set(df.model_b))
    index = pd.Index(systems)
    y = np.where(df.winner == "tie", np.nan, (df.winner == "model_a").astype(float))
    readers = np.unique(df.reader_id, return_inverse=True)[1]
    pos = np.where(df.shown_first == df.model_a, 1, -1)
    return systems, index.get_indexer(df.model_a), index.get_indexer(df.model_b), y, readers, pos


def _centring(k: int) -> np.ndarray:
    """Reduced (first system left out) -> centred strengths."""
    E = np.vstack([np.zeros(k - 1), np.eye(k - 1)])
    return (np.eye(k) - 1.0 / k) @ E


@pytest.mark.parametrize("case", CASES)
def test_matches_statsmodels_logit_and_its_sandwiches(case):
    """The decisive votes as a logistic regression without intercept (statsmodels Logit): estimates to
    1e-8, the model covariance, HC0 and the reader-clustered sandwich (CR0: no small-sample factor)
    to 1e-8 relative, all carried to the centred strengths."""
    sm = pytest.importorskip("statsmodels.api")
    systems, a, b, y, readers, _ = _codes(case)
    k = len(systems)
    keep = ~np.isnan(y)
    X = np.zeros((keep.sum(), k))
    X[np.arange(keep.sum()), a[keep]] = 1.0
    X[np.arange(keep.sum()), b[keep]] -= 1.0
    X = X[:, 1:]
    T = _centring(k)
    ours = fit_vote_level(a, b, y, k, readers=readers)
    model = sm.Logit(y[keep], X)
    plain = model.fit(disp=0, method="newton", tol=1e-12)
    np.testing.assert_allclose(ours.strengths, T @ plain.params, atol=1e-8)
    np.testing.assert_allclose(ours.cov_model, T @ plain.cov_params() @ T.T, rtol=1e-8, atol=1e-14)
    hc0 = model.fit(disp=0, method="newton", tol=1e-12, cov_type="HC0")
    np.testing.assert_allclose(ours.cov_votes, T @ hc0.cov_params() @ T.T, rtol=1e-8, atol=1e-14)
    cl = model.fit(
        disp=0,
        method="newton",
        tol=1e-12,
        cov_type="cluster",
        cov_kwds={"groups": readers[keep], "use_correction": False},
    )
    np.testing.assert_allclose(ours.cov_readers, T @ cl.cov_params() @ T.T, rtol=1e-8, atol=1e-14)


def test_position_term_matches_statsmodels():
    sm = pytest.importorskip("statsmodels.api")
    systems, a, b, y, readers, pos = _codes("position")
    k = len(systems)
    keep = ~np.isnan(y)
    X = np.zeros((keep.sum(), k + 1))
    X[np.arange(keep.sum()), a[keep]] = 1.0
    X[np.arange(keep.sum()), b[keep]] -= 1.0
    X[:, -1] = pos[keep]
    X = X[:, 1:]
    ours = fit_vote_level(a, b, y, k, position=pos, readers=readers)
    fit = sm.Logit(y[keep], X).fit(
        disp=0,
        method="newton",
        tol=1e-12,
        cov_type="cluster",
        cov_kwds={"groups": readers[keep], "use_correction": False},
    )
    assert ours.position == pytest.approx(fit.params[-1], abs=1e-8)
    assert ours.position_se[2] == pytest.approx(fit.bse[-1], rel=1e-8)
    assert 0.2 < ours.position < 0.4  # simulated 0.3


def test_the_judge_fit_is_the_same_model():
    """The leaderboard's judge fit (ordinary logistic Bradley-Terry) and the vote-level fit agree."""
    systems, a, b, y, _, _ = _codes("plain")
    k = len(systems)
    X = np.zeros((len(y), k))
    X[np.arange(len(y)), a] = 1.0
    X[np.arange(len(y)), b] -= 1.0
    fit, coef, _ = fit_judge(y, X[:, 1:])
    assert not fit.separated
    np.testing.assert_allclose(fit_vote_level(a, b, y, k).strengths, _centring(k) @ coef, atol=1e-7)


def _compare_with_arena(result: dict) -> None:
    for case in CASES:
        ref = result["cases"][case]
        systems, a, b, y, _, _ = _codes(case)
        assert ref["competitors"] == systems and ref["n_votes"] == len(y)
        k = len(systems)
        sandwich = ref["sandwich"]
        theirs = (np.array(sandwich["ratings"]) - np.mean(sandwich["ratings"])) / ALPHA
        ours = fit_vote_level(a, b, y, k, ties="half")
        np.testing.assert_allclose(ours.strengths, theirs, atol=1e-6)
        # its sandwich: the ridge 1e-5 x votes on the Hessian's diagonal reproduces it; the pseudo-inverse
        # (no ridge) differs in the fourth digit
        var = np.array(sandwich["variances"]) / ALPHA**2
        ridged = fit_vote_level(a, b, y, k, ties="half", hessian_ridge=1e-5 * len(y))
        np.testing.assert_allclose(np.diag(ridged.cov_votes), var, rtol=1e-6)
        np.testing.assert_allclose(np.diag(ours.cov_votes), var, rtol=2e-3)
        lower = (np.array(sandwich["rating_lower"]) - np.mean(sandwich["ratings"])) / ALPHA
        np.testing.assert_allclose(ours.strengths - 1.959963984540054 * np.sqrt(var), lower, atol=1e-6)


def test_matches_arena_rank_reference():
    """Checked-in arena-rank 0.1.1 outputs (run_arena_rank.py): centred strengths to 1e-6 on the logit
    scale, its sandwich variances to 1e-6 relative once its Hessian ridge is applied."""
    _compare_with_arena(json.loads((REF / "arena_rank.json").read_text()))


@pytest.mark.slow
def test_arena_rank_rerun_live(tmp_path):
    """Reruns arena-rank on the same inputs when it is installed (extra ``arena``)."""
    pytest.importorskip("arena_rank")
    for name in (*(f"{c}.csv" for c in CASES), "run_arena_rank.py"):
        shutil.copy(REF / name, tmp_path / name)
    subprocess.run([sys.executable, "run_arena_rank.py"], cwd=tmp_path, check=True, timeout=1800)
    _compare_with_arena(json.loads((tmp_path / "arena_rank.json").read_text()))
