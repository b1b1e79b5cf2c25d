"""Comparing reader groups' reliability: vectorised ICC2k and its item-bootstrap interval."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.core.serialize import from_jsonable, to_jsonable
from judge_transfer_audit.statistics.reliability.groups import ICCDifference, icc2k_batch, icc2k_difference
from judge_transfer_audit.statistics.reliability.icc import icc_from_matrix
from judge_transfer_audit.statistics.reliability.ratings import load_ratings, validate_ratings
from judge_transfer_audit.statistics.reliability.report import reliability_report

REF = Path(__file__).parents[3] / "reference" / "icc"


@pytest.mark.parametrize("dataset", ["likert_20x5", "continuous_40x3", "weak_12x7", "shrout_fleiss"])
def test_batched_icc2k_equals_the_psych_validated_formula(dataset):
    x = pd.read_csv(REF / f"input_{dataset}.csv").to_numpy(float)
    rng = np.random.default_rng(0)
    stack = np.stack([x, x[rng.integers(0, len(x), len(x))], x[::-1]])
    expected = [icc_from_matrix(m).get("ICC2k").icc for m in stack]
    np.testing.assert_allclose(icc2k_batch(stack), expected, rtol=1e-12)


def test_undefined_icc_is_nan():
    assert np.isnan(icc2k_batch(np.ones((1, 5, 3))))[0]


def simulate_group(rng, quality, noise_sd, n_readers):
    return quality[:, None] + rng.normal(scale=noise_sd, size=(len(quality), n_readers))


def test_interval_covers_the_true_difference():
    """Population ICC2k = 1 / (1 + sigma_e^2 / k) with unit item variance and no rater
    effects: 0.941 (sd 0.5, k 4) - 0.640 (sd 1.5, k 4) = 0.301."""
    truth = 1 / (1 + 0.25 / 4) - 1 / (1 + 2.25 / 4)
    rng = np.random.default_rng(11)
    covered, sims = 0, 150
    for _ in range(sims):
        quality = rng.normal(size=40)
        result = icc2k_difference(
            simulate_group(rng, quality, 0.5, 4), simulate_group(rng, quality, 1.5, 4), generator=rng, n_boot=400
        )
        covered += result.ci_low <= truth <= result.ci_high
    assert 0.85 <= covered / sims <= 0.99


def test_interval_excludes_zero_for_a_clear_difference_and_is_reproducible():
    rng = np.random.default_rng(5)
    quality = rng.normal(size=60)
    a, b = simulate_group(rng, quality, 0.3, 5), simulate_group(rng, quality, 2.0, 5)
    one = icc2k_difference(a, b, generator=np.random.default_rng(1))
    two = icc2k_difference(a, b, generator=np.random.default_rng(1))
    assert one == two and one.ci_low > 0 and one.ci_low <= one.difference <= one.ci_high
    assert one.difference == pytest.approx(icc_from_matrix(a).get("ICC2k").icc - icc_from_matrix(b).get("ICC2k").icc)
    back = from_jsonable(ICCDifference, json.loads(json.dumps(to_jsonable(one))))
    assert back == one and "item bootstrap" in str(one)


def test_too_few_items_or_readers_is_a_reason_not_a_crash():
    rng = np.random.default_rng(0)
    assert "3 or more items" in icc2k_difference(np.ones((2, 3)), np.ones((2, 3)), generator=rng).reason
    assert np.isnan(icc2k_difference(rng.normal(size=(9, 1)), rng.normal(size=(9, 3)), generator=rng).ci_low)


def grouped_ratings(seed=2, n_items=20):
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=n_items)
    rows = []
    for group, sd in (("expert", 0.3), ("enthusiast", 2.0)):
        for r in range(4):
            for i in range(n_items):
                for q in ("Q1", "Q2"):
                    rows.append(
                        dict(
                            item_id=f"t{i}",
                            reader_id=f"{group}{r}",
                            criterion=q,
                            reader_group=group,
                            rating=float(quality[i] + rng.normal(scale=sd)),
                        )
                    )
    return pd.DataFrame(rows)


@pytest.mark.slow
def test_report_compares_group_reliability_with_a_recorded_seed(tmp_path, capsys):
    ratings = validate_ratings(grouped_ratings())
    report = reliability_report(ratings, rng=7, n_boot=500)
    compared = report.groups_compared.set_index("criterion")
    assert report.seed == 7 and report.n_boot == 500
    # group_a = enthusiast (noisy), so its ICC2k is lower and the whole interval is below 0
    assert (compared["icc2k_difference_ci_high"] < 0).all()
    assert (compared["n_items_complete"] == 20).all()
    again = reliability_report(ratings, rng=7, n_boot=500)
    pd.testing.assert_frame_equal(again.groups_compared, report.groups_compared)
    path = tmp_path / "ratings.csv"
    grouped_ratings().to_csv(path, index=False)
    assert main(["reliability", str(path), "--seed", "7", "--n-boot", "500", "-o", str(tmp_path / "out")]) == 0
    assert "seed 7" in capsys.readouterr().out
    csv = pd.read_csv(tmp_path / "out" / "reliability_groups_compared.csv")
    api = reliability_report(load_ratings(path), rng=7, n_boot=500).groups_compared
    np.testing.assert_allclose(csv["icc2k_difference_ci_low"], api["icc2k_difference_ci_low"], rtol=1e-12)
    assert main(["reliability", str(path), "--n-boot", "10"]) == 2
