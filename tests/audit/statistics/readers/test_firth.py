"""Logistic regression (ML and Firth) and the separation check, against R and statsmodels."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judge_transfer_audit.statistics.readers.firth import aliased_columns, detect_separation, fit_logistic

REF = Path(__file__).resolve().parents[3] / "reference" / "firth"


def _design(frame: pd.DataFrame, cols: list[str]) -> np.ndarray:
    return np.column_stack([np.ones(len(frame))] + [frame[c].to_numpy(float) for c in cols])


def test_firth_matches_brglm2_on_endometrial():
    """Heinze & Schemper (2002, Stat. Med. 21:2409), endometrial data, NV separates.
    Published Firth estimates: 3.775, 2.929, -0.035, -2.604 (also the brglm2 vignette);
    reference values from brglm2 0.9 (tests/reference/firth/make_reference.R). Tol 1e-5."""
    data = pd.read_csv(REF / "endometrial.csv")
    ref = pd.read_csv(REF / "endometrial_firth.csv")
    fit = fit_logistic(_design(data, ["NV", "PI", "EH"]), data["HG"].to_numpy(float))
    assert fit.separated and fit.method == "firth" and fit.converged
    np.testing.assert_allclose(fit.coef, ref["estimate"], rtol=0, atol=1e-5)
    np.testing.assert_allclose(fit.std_error, ref["std_error"], rtol=0, atol=1e-5)
    np.testing.assert_allclose(fit.coef, [3.775, 2.929, -0.035, -2.604], atol=1e-3)


@pytest.mark.parametrize("case", ["reader_separated_firth", "reader_overlap_firth"])
def test_firth_matches_brglm2_on_reader_frames(case):
    """Reader-like +1/-1/0 designs, separated and not (brglm2 AS_mean). Tol 1e-5."""
    data = pd.read_csv(REF / (case.rsplit("_", 1)[0] + ".csv"))
    ref = pd.read_csv(REF / f"{case}.csv")
    fit = fit_logistic(_design(data, ["c1", "c2", "c3"]), data["overall"].to_numpy(float), method="firth")
    np.testing.assert_allclose(fit.coef, ref["estimate"], atol=1e-5)
    np.testing.assert_allclose(fit.std_error, ref["std_error"], atol=1e-5)


@pytest.mark.slow
def test_ml_matches_r_glm_and_statsmodels():
    """ML on the non-separated frame: R glm (reference file, tol 1e-6) and statsmodels Logit."""
    import statsmodels.api as sm

    data = pd.read_csv(REF / "reader_overlap.csv")
    ref = pd.read_csv(REF / "reader_overlap_ml.csv")
    X, y = _design(data, ["c1", "c2", "c3"]), data["overall"].to_numpy(float)
    fit = fit_logistic(X, y)
    assert fit.method == "ml" and not fit.separated
    np.testing.assert_allclose(fit.coef, ref["estimate"], atol=1e-6)
    np.testing.assert_allclose(fit.std_error, ref["std_error"], atol=1e-6)
    sm_fit = sm.Logit(y, X).fit(disp=0)
    np.testing.assert_allclose(fit.coef, sm_fit.params, atol=1e-6)
    np.testing.assert_allclose(fit.std_error, sm_fit.bse, atol=1e-6)
    np.testing.assert_allclose(fit.loglik, sm_fit.llf, atol=1e-8)


def test_separation_check():
    X = np.column_stack([np.ones(6), [-1, -1, -1, 1, 1, 1], [1, -1, 1, -1, 1, -1]])
    assert detect_separation(X, np.array([0, 0, 0, 1, 1, 1.0]))  # complete
    assert detect_separation(X[:, :1], np.ones(6))  # all one outcome: the intercept diverges
    assert not detect_separation(X, np.array([0, 1, 0, 1, 1, 0.0]))


def test_aliased_columns_give_nan_like_r():
    X = np.column_stack([np.ones(8), [1, -1] * 4, [1, -1] * 4, [1, 1, -1, -1] * 2])
    assert aliased_columns(X).tolist() == [False, False, True, False]
    y = np.array([1, 0, 1, 1, 0, 0, 1, 0.0])
    fit = fit_logistic(X, y)
    assert np.isnan(fit.coef[2]) and fit.aliased[2]
    assert all(np.isfinite(fit.coef[i]) for i in (0, 1, 3))


def test_unknown_method_is_rejected():
    with pytest.raises(ValueError):
        fit_logistic(np.ones((3, 1)), np.array([0, 1, 0.0]), method="bayes")


@pytest.mark.r
def test_reference_rerun_live(tmp_path):
    """Rerun the R script and compare with the stored outputs."""
    if shutil.which("Rscript") is None:
        pytest.skip("Rscript not on PATH")
    for f in REF.glob("*"):
        shutil.copy(f, tmp_path / f.name)
    subprocess.run(["Rscript", "make_reference.R"], cwd=tmp_path, check=True, capture_output=True)
    for name in ("endometrial_firth.csv", "reader_separated_firth.csv", "reader_overlap_ml.csv"):
        np.testing.assert_allclose(
            pd.read_csv(tmp_path / name)["estimate"], pd.read_csv(REF / name)["estimate"], atol=1e-8
        )


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(4, 30), st.integers(1, 4))
@pytest.mark.slow
def test_separated_flag_agrees_with_the_lp_check(seed, n, p):
    """The interior-maximum shortcut never disagrees with the LP (small, often separated designs)."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.choice([-1.0, 0.0, 1.0], size=(n, p))])
    y = (rng.random(n) < 1 / (1 + np.exp(-X @ rng.normal(0, 2, p + 1)))).astype(float)
    fit = fit_logistic(X, y, method="auto")
    keep = ~np.array(fit.aliased)
    assert fit.separated == detect_separation(X[:, keep], y)
    if fit.separated:
        assert fit.method == "firth" and all(np.isfinite(c) for c, a in zip(fit.coef, fit.aliased) if not a)


def test_fit_result_has_a_tidy_frame_and_a_readable_summary():
    X = np.column_stack([np.ones(6), [-1, -1, -1, 1, 1, 1]])
    fit = fit_logistic(X, np.array([0, 0, 0, 1, 1, 1.0]))
    frame = fit.to_frame(["intercept", "authenticity"])
    assert frame["term"].tolist() == ["intercept", "authenticity"]
    assert frame["estimate"].tolist() == list(fit.coef) and frame["std_error"].tolist() == list(fit.std_error)
    assert fit.method == "firth" and frame["separated"].all() and "separated" in str(fit)
    assert fit.to_frame()["term"].tolist() == ["x0", "x1"]
    with pytest.raises(ValueError):
        fit.to_frame(["only one"])


@pytest.mark.parametrize("method", ["ml", "firth", "auto"])
def test_frequency_weights_fit_the_repeated_rows(method):
    """A row of weight w is w identical rows (weight 0: left out), for ML and Firth, on data the
    separation check passes (endometrial, NV separates) and on data it does not."""
    data = pd.read_csv(REF / "endometrial.csv")
    X, y = _design(data, ["NV", "PI", "EH"]), data["HG"].to_numpy(float)
    rng = np.random.default_rng(7)
    for X_, y_ in ((X, y), (X[:, [0, 2, 3]], y)):
        w = rng.integers(0, 4, len(y_))
        rows = np.repeat(np.arange(len(y_)), w)
        repeated = fit_logistic(X_[rows], y_[rows], method=method)
        weighted = fit_logistic(X_, y_, method=method, weights=w.astype(float))
        assert (weighted.method, weighted.separated) == (repeated.method, repeated.separated)
        np.testing.assert_allclose(weighted.coef, repeated.coef, rtol=1e-8, atol=1e-9)
        np.testing.assert_allclose(weighted.std_error, repeated.std_error, rtol=1e-8)
        assert weighted.loglik == pytest.approx(repeated.loglik, rel=1e-10)


def test_bad_weights_are_refused():
    X, y = np.column_stack([np.ones(6), np.arange(6.0)]), np.array([0, 1, 0, 1, 1, 0.0])
    with pytest.raises(ValueError, match="weights"):
        fit_logistic(X, y, weights=np.array([1, 1, -1, 1, 1, 1.0]))
