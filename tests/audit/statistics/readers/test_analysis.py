"""analyse_readers end to end: degradation, missing columns, serialisation, checks, fixture."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.core.serialize import from_jsonable, to_jsonable
from judge_transfer_audit.model.checks import Check, Status
from judge_transfer_audit.model.tie_rules import EVEN_SPLIT
from judge_transfer_audit.statistics.readers import ReaderAnalysis, ReaderThresholds, analyse_readers, reader_checks
from judge_transfer_audit.statistics.readers.analysis import SUB_RESULTS

from .conftest import make_judge_credits, make_votes

FIXTURE = Path(__file__).resolve().parents[4] / "fixtures" / "deployment"


@pytest.fixture(scope="module")
def full() -> tuple[pd.DataFrame, pd.DataFrame, ReaderAnalysis]:
    votes = make_votes(6, 40, seed=0, separated_reader="r5", fast_reader="r2")
    credits = make_judge_credits(votes)
    return votes, credits, analyse_readers(votes, credits, rng=11, fit_glmm_if_missing=False)


def test_everything_computed_on_a_full_frame(full):
    _, _, res = full
    assert all(status is Status.PASS for status, _ in res.statuses().values()), res.statuses()
    assert res.seed == 11 and res.n_readers == 6 and res.n_pairs == 40
    assert res.weights.separated_readers == ("r5",)
    assert res.timing.fast_readers == ("r2",)
    assert len(res.to_frame()) == len(SUB_RESULTS)
    text = str(res)
    for heading in ("Reader weights", "kappa", "clustering", "rates", "Divergent", "timing", "Position", "groups"):
        assert heading.lower() in text.lower()


def test_round_trip_through_serialize(full):
    _, _, res = full
    data = json.loads(json.dumps(to_jsonable(res)))
    back = from_jsonable(ReaderAnalysis, data)
    assert back.seed == res.seed and back.linkage == res.linkage
    for name in SUB_RESULTS:
        a, b = getattr(res, name), getattr(back, name)
        assert a.status is b.status and a.reason == b.reason
        pd.testing.assert_frame_equal(
            a.to_frame().reset_index(drop=True), b.to_frame().reset_index(drop=True), check_dtype=False
        )
    assert back.clustering.weights.linkage_matrix == res.clustering.weights.linkage_matrix
    assert back.clustering.shared_clusters == res.clustering.shared_clusters
    assert back.divergent_pairs.top[0].comments == res.divergent_pairs.top[0].comments
    pd.testing.assert_frame_equal(back.rates.judge_range, res.rates.judge_range, check_dtype=False)
    assert str(back) == str(res)


@pytest.mark.parametrize("n_readers", [2, 3])
def test_degrades_cleanly_with_few_readers(n_readers):
    votes = make_votes(n_readers, 12, seed=4)
    res = analyse_readers(votes, make_judge_credits(votes), rng=0, fit_glmm_if_missing=False)
    assert res.clustering.status is Status.SKIPPED and "readers" in res.clustering.reason
    assert res.weights.status is Status.PASS and res.rates.status is Status.PASS
    assert res.timing.status is Status.PASS
    checks = reader_checks(res)
    assert all(isinstance(c, Check) for c in checks)
    from_jsonable(ReaderAnalysis, json.loads(json.dumps(to_jsonable(res))))


def test_single_reader_does_not_crash():
    votes = make_votes(1, 8, seed=4)
    res = analyse_readers(votes, None, rng=0, fit_glmm_if_missing=False)
    assert res.clustering.status is Status.SKIPPED
    assert res.groups.status is Status.SKIPPED
    assert res.timing.leave_one_out.empty
    reader_checks(res)


def test_missing_optional_columns_are_skipped_with_reasons():
    votes = make_votes(4, 10, seed=1).drop(
        columns=["seconds", "comment", "shown_first", "reader_group", "order", "focal", "other", "choice", "line"]
    )
    res = analyse_readers(votes, None, rng=0, fit_glmm_if_missing=False)
    st = res.statuses()
    assert st["timing"][0] is Status.SKIPPED and "seconds" in st["timing"][1]
    assert st["position_bias"][0] is Status.SKIPPED and "shown_first" in st["position_bias"][1]
    assert st["groups"][0] is Status.SKIPPED and "reader_group" in st["groups"][1]
    assert st["divergent_pairs"][0] is Status.SKIPPED and "judge" in st["divergent_pairs"][1]
    assert st["clustering"][0] is Status.PASS
    names = {c.name: c for c in reader_checks(res)}
    assert names["readers.judge_outside_reader_range"].status is Status.SKIPPED
    assert names["readers.fatigue"].status is Status.SKIPPED


def test_bad_input_is_an_input_error():
    votes = make_votes(3, 4)
    with pytest.raises(InputError, match="reader_id"):
        analyse_readers(votes.drop(columns="reader_id"), None, rng=0)
    with pytest.raises(InputError, match="y must be"):
        analyse_readers(votes.assign(y=2.0), None, rng=0)
    with pytest.raises(InputError, match="credit"):
        analyse_readers(votes, make_judge_credits(votes).assign(credit=0.3), rng=0)
    with pytest.raises(InputError, match="linkage"):
        analyse_readers(votes, None, linkage="upgma", rng=0)


def test_reader_checks_names_and_thresholds(full):
    _, _, res = full
    checks = reader_checks(res)
    names = {c.name for c in checks}
    assert names == {
        "readers.judge_outside_reader_range",
        "readers.separation",
        "readers.fast_reader",
        "readers.fatigue",
        "readers.position_bias",
        "readers.group_difference",
    }
    outside = [c for c in checks if c.name == "readers.judge_outside_reader_range"]
    assert len(outside) == len(res.rates.judge_range)
    # outside the range, and not behaving like one more reader: over all cells (one test per
    # judge), or in this cell after Holm across the judge's cells
    from statsmodels.stats.multitest import multipletests

    jr = res.rates.judge_range
    overall = dict(zip(res.rates.judge_deviation["judge"], res.rates.judge_deviation["p_value"]))
    holm = np.ones(len(jr))
    for judge in jr["judge"].unique():
        m = (jr["judge"] == judge).to_numpy()
        holm[m] = multipletests(jr.loc[m, "p_value"], method="holm")[1]
    significant = (jr["judge"].map(overall).to_numpy() < 0.05) | (holm < 0.05)
    flagged = int((jr["outside"].to_numpy(bool) & significant).sum())
    assert sum(c.status is Status.WARN for c in outside) == flagged and flagged > 0
    pointwise = reader_checks(res, {"readers.adjust": "none"})
    n_pointwise = int((jr["outside"].to_numpy(bool) & (jr["p_value"].to_numpy() < 0.05)).sum())
    assert (
        sum(c.status is Status.WARN for c in pointwise if c.name == "readers.judge_outside_reader_range") == n_pointwise
    )
    sep = next(c for c in checks if c.name == "readers.separation")
    assert sep.status is Status.WARN and sep.value == 1.0
    fast = {c.scope: c for c in checks if c.name == "readers.fast_reader"}
    assert fast["r2"].status is Status.WARN and fast["r0"].status is Status.PASS
    # a huge margin clears every outside-range flag; a strict policy turns flags into FAIL
    relaxed = reader_checks(res, {"readers.outside_range_margin": 1.0})
    assert all(c.status is Status.PASS for c in relaxed if c.name == "readers.judge_outside_reader_range")
    strict = reader_checks(res, severity={"readers.separation": "FAIL"})
    assert next(c for c in strict if c.name == "readers.separation").status is Status.FAIL
    # thresholds given as a mapping go through the policy loader: same keys, ranges and messages
    with pytest.raises(InputError, match=r"unknown key 'nonsense' in \[readers\]"):
        reader_checks(res, {"readers.nonsense": 1})
    with pytest.raises(InputError, match=r"'readers.alpha' must lie in \(0.0, 1.0\)"):
        reader_checks(res, {"alpha": 2.0})
    with pytest.raises(InputError, match="readers.adjust"):
        reader_checks(res, {"adjust": "bonferroni"})


def test_reader_thresholds_are_the_policy_section():
    from judge_transfer_audit.model.policy import Policy, ReadersPolicy

    assert ReaderThresholds is ReadersPolicy
    assert Policy().readers == ReaderThresholds()


def test_rng_is_recorded_and_reproducible():
    votes = make_votes(4, 8, seed=2)
    a = analyse_readers(votes, None, rng=None, fit_glmm_if_missing=False)
    assert isinstance(a.seed, int)
    b = analyse_readers(votes, None, rng=a.seed, fit_glmm_if_missing=False)
    pd.testing.assert_frame_equal(a.groups.comparison, b.groups.comparison)


@pytest.mark.skipif(not (FIXTURE / "humans.csv").exists(), reason="fixture not generated")
def test_on_the_deployment_fixture():
    """fixtures/deployment: 7 readers, two clusters (enthusiasts reader1-4, experts reader5-7),
    reader6 fast and weighting nothing, a judge that prefers the reasoning model.

    Like the motivating paper's Appendix A (Fig. 2), the tree of per-reader regression weights
    and the tree of criterion-to-overall kappas share the same inner sub-clusters: here the
    two weighting schemes the fixture simulates (fixtures/simulate.py, W_ENTHUSIAST and
    W_EXPERT), among the non-random readers."""
    from judge_transfer_audit.inputs import load_audit_data
    from judge_transfer_audit.verdict.judge_side import judge_pair_outcomes

    data = load_audit_data(FIXTURE / "judge.csv", FIXTURE / "humans.csv", pairs=FIXTURE / "pairs.csv")
    credits = judge_pair_outcomes(data, EVEN_SPLIT, np.random.default_rng(0))
    res = analyse_readers(data.votes, credits, rng=0, fit_glmm_if_missing=False)
    assert all(s is Status.PASS for s, _ in res.statuses().values()), res.statuses()
    assert res.n_readers == 7 and res.timing.fast_readers == ("reader6",)
    assert res.groups.readers_per_group == {"enthusiast": 4, "expert": 3}
    enthusiasts, experts = ("reader1", "reader2", "reader3", "reader4"), ("reader5", "reader7")
    clustering = res.clustering
    assert set(clustering.weights.labels) == set(clustering.kappas.labels) == {f"reader{i}" for i in range(1, 8)}
    # Both trees recover the two weighting schemes as sub-clusters, and share them.
    assert enthusiasts in clustering.shared_clusters and experts in clustering.shared_clusters
    for tree in (clustering.weights, clustering.kappas):
        heights = {members: row[2] for members, row in zip(tree.clusters, tree.linkage_matrix)}
        root = tree.linkage_matrix[-1][2]
        # clear clusters: each forms well below the height at which the tree is joined up
        assert heights[enthusiasts] < 0.6 * root and heights[experts] < 0.6 * root, str(tree)
        # the fast random reader may sit apart, but joins neither scheme before it has formed
        formed = max(tree.clusters.index(enthusiasts), tree.clusters.index(experts))
        assert all("reader6" not in c for c in tree.clusters[: formed + 1]), str(tree)
    assert clustering.cophenetic_between > 0.5 and clustering.kappa_weight_spearman > 0.5
    # ... and the clusters are the weighting schemes: enthusiasts lean on authenticity and
    # empathy, experts on engagement, emotion provocation and narrative complexity.
    prof = res.weights.profile()
    lean = prof[["authenticity", "empathy"]].mean(axis=1) - prof[
        ["engagement", "emotion_provocation", "narrative_complexity"]
    ].mean(axis=1)
    assert (lean[list(enthusiasts)] > 0.5).all() and (lean[list(experts)] < -0.5).all(), prof
    assert res.clustering.criteria.labels[-1] == "overall"
    assert res.rates.judge_range["outside"].any()
    assert res.divergent_pairs.status is Status.PASS
    json.dumps(to_jsonable(res))
