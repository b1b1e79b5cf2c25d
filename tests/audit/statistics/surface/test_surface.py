"""judge_transfer_audit.statistics.surface: associations against independent computations, planted effects, checks."""

import json

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.core.serialize import from_jsonable, to_jsonable
from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.statistics.surface import POOLED, SurfaceResult, surface_associations, surface_checks
from judge_transfer_audit.statistics.uncertainty.bootstrap import multinomial_weights


def make_data(
    n_pairs=24, n_readers=6, judge_weight=1.0, human_weight=0.0, seed=0, matchups=("f vs o",), premise_effect=0.0
):
    """Feature ``style`` drives the judge (``judge_weight``) and/or the readers (``human_weight``)."""
    rng = np.random.default_rng(seed)
    pairs, feats, scores, votes = [], [], [], []
    for mi, matchup in enumerate(matchups):
        for i in range(n_pairs):
            pid = f"m{mi}p{i}"
            pairs.append(
                {
                    "pair_id": pid,
                    "system_a": "f",
                    "system_b": "o",
                    "focal": "f",
                    "other": "o",
                    "matchup": matchup,
                    "group_id": f"g{i // 2}",
                }
            )
            premise = rng.normal() * premise_effect
            style = {s: rng.normal() + premise for s in ("f", "o")}
            noise = {s: rng.normal() for s in ("f", "o")}
            for s in ("f", "o"):
                feats.append({"pair_id": pid, "system": s, "style": style[s], "noise": noise[s]})
                for crit in ("depth", "engagement"):
                    score = 3 + judge_weight * style[s] + premise + 0.5 * rng.normal()
                    scores.append(
                        {"pair_id": pid, "system": s, "criterion": crit, "judge": "J", "sample": 0, "score": score}
                    )
            eta = human_weight * (style["f"] - style["o"])
            for r in range(n_readers):
                y = float(rng.random() < 1 / (1 + np.exp(-(eta + 0.3 * rng.normal()))))
                votes.append({"pair_id": pid, "reader_id": f"r{r}", "criterion": "overall", "y": y})
    return pd.DataFrame(feats), pd.DataFrame(scores), pd.DataFrame(pairs), pd.DataFrame(votes)


@pytest.fixture(scope="module")
def judge_only():
    feats, scores, pairs, votes = make_data(judge_weight=1.0, human_weight=0.0)
    return (feats, scores, pairs, votes), surface_associations(feats, scores, pairs, votes, n_boot=400, rng=3)


def _diffs(feats, scores, pairs, feature, criterion):
    f = feats.set_index(["pair_id", "system"])[feature]
    s = scores[scores["criterion"] == criterion].set_index(["pair_id", "system"])["score"]
    dF = np.array([f[(p, "f")] - f[(p, "o")] for p in pairs["pair_id"]])
    dS = np.array([s[(p, "f")] - s[(p, "o")] for p in pairs["pair_id"]])
    return dF, dS


def test_beta_equals_statsmodels_ols_on_standardised_differences(judge_only):
    (feats, scores, pairs, _), result = judge_only
    for feature in ("style", "noise"):
        dF, dS = _diffs(feats, scores, pairs, feature, "depth")
        z = lambda a: (a - a.mean()) / a.std(ddof=1)  # noqa: E731
        ols = sm.OLS(z(dS), sm.add_constant(z(dF))).fit()
        raw = sm.OLS(dS, sm.add_constant(dF)).fit()
        row = result.within_pair.query("criterion == 'depth' and feature == @feature").iloc[0]
        assert row["beta"] == pytest.approx(ols.params[1], rel=1e-10)
        assert row["slope"] == pytest.approx(raw.params[1], rel=1e-10)
        assert row["n_pairs"] == len(pairs)


def test_bootstrap_interval_equals_replicate_loop(judge_only):
    (feats, scores, pairs, _), result = judge_only
    dF, dS = _diffs(feats, scores, pairs, "style", "engagement")
    counts = multinomial_weights(np.random.default_rng(3), len(pairs), 400)  # the first (only) scope's draw
    reps = []
    for w in counts:
        idx = np.repeat(np.arange(len(pairs)), w.astype(int))
        reps.append(np.corrcoef(dF[idx], dS[idx])[0, 1])
    lo, hi = np.quantile(reps, [0.025, 0.975])
    row = result.within_pair.query("criterion == 'engagement' and feature == 'style'").iloc[0]
    assert (row["beta_low"], row["beta_high"]) == pytest.approx((lo, hi), rel=1e-10)
    assert row["beta_low"] <= row["beta"] <= row["beta_high"]


def test_story_level_correlations_equal_scipy(judge_only):
    (feats, scores, _, _), result = judge_only
    merged = feats.merge(scores[scores["criterion"] == "depth"], on=["pair_id", "system"])
    row = result.correlations.query("criterion == 'depth' and feature == 'noise'").iloc[0]
    assert row["pearson_r"] == pytest.approx(stats.pearsonr(merged["noise"], merged["score"])[0], rel=1e-10)
    assert row["spearman_rho"] == pytest.approx(stats.spearmanr(merged["noise"], merged["score"])[0], rel=1e-10)
    assert row["n_stories"] == len(merged)


def test_aggregate_criterion_is_mean_of_criteria(judge_only):
    (feats, scores, _, _), result = judge_only
    agg = scores.groupby(["pair_id", "system"])["score"].mean().rename("score").reset_index()
    merged = feats.merge(agg, on=["pair_id", "system"])
    row = result.correlations.query("criterion == 'aggregate' and feature == 'style'").iloc[0]
    assert row["pearson_r"] == pytest.approx(np.corrcoef(merged["style"], merged["score"])[0, 1], rel=1e-10)
    assert result.criteria == ("depth", "engagement", "aggregate")


def test_human_side_matches_direct_glmm_and_vote_share(judge_only):
    from judge_transfer_audit.statistics.glmm import fit_crossed_glmm

    (feats, scores, pairs, votes), result = judge_only
    dF, _ = _diffs(feats, scores, pairs, "style", "depth")
    z = dict(zip(pairs["pair_id"], (dF - dF.mean()) / dF.std(ddof=1)))
    X = np.column_stack([np.ones(len(votes)), votes["pair_id"].map(z)])
    fit = fit_crossed_glmm(votes["y"].to_numpy(), {"pair": votes["pair_id"], "reader": votes["reader_id"]}, X=X)
    row = result.humans.query("feature == 'style'").iloc[0]
    assert row["coef"] == pytest.approx(fit.b[1], rel=1e-8)
    assert (row["coef_low"], row["coef_high"]) == pytest.approx((fit.wald_low[1], fit.wald_high[1]), rel=1e-8)
    share = votes.groupby("pair_id")["y"].mean().reindex(pairs["pair_id"]).to_numpy()
    assert row["pair_share_r"] == pytest.approx(np.corrcoef(dF, share)[0, 1], rel=1e-10)
    assert row["n_votes"] == len(votes) and row["n_readers"] == 6


def test_scatter_points_carry_each_pairs_human_share(judge_only):
    """The report's human panel: each pair's focal vote share (ties left out), from the votes directly."""
    (feats, scores, pairs, votes), result = judge_only
    pts = result.scatter_points.query("feature == 'style'")
    direct = votes.groupby("pair_id")["y"].mean()
    np.testing.assert_allclose(pts["human_share"].to_numpy(), direct.reindex(pts["pair_id"]).to_numpy(), rtol=1e-12)
    dF, _ = _diffs(feats, scores, pairs, "style", "depth")
    assert np.corrcoef(pts["feature_diff"], pts["human_share"])[0, 1] == pytest.approx(
        result.humans.query("feature == 'style'")["pair_share_r"].iloc[0], rel=1e-10
    )
    row = result.humans.query("feature == 'style'").iloc[0]
    share = direct.reindex(pairs["pair_id"]).to_numpy()
    assert row["share_slope"] == pytest.approx(np.polyfit(dF, share, 1)[0], rel=1e-10)
    tied = votes.assign(y=np.where(votes.index % 5 == 0, np.nan, votes["y"]))
    with_ties = surface_associations(feats, scores, pairs, tied, n_boot=0).scatter_points.query("feature == 'style'")
    expected = tied.dropna(subset=["y"]).groupby("pair_id")["y"].mean().reindex(with_ties["pair_id"])
    np.testing.assert_allclose(with_ties["human_share"].to_numpy(), expected.to_numpy(), rtol=1e-12)
    no_votes = surface_associations(feats, scores, pairs, None, n_boot=0).scatter_points
    assert no_votes["human_share"].isna().all()


def test_planted_judge_only_feature_is_flagged(judge_only):
    _, result = judge_only
    style = result.side_by_side.query("feature == 'style'")
    assert (style["pattern"] == "judge only").all()
    assert style["judge_beta"].min() > 0.5
    checks = {c.name: c for c in surface_checks(result)}
    assert checks["surface.judge_only_feature"].status is Status.WARN
    assert checks["surface.judge_feature_r"].status is Status.WARN
    assert "style" in checks["surface.judge_only_feature"].reason


def test_shared_feature_is_not_flagged():
    feats, scores, pairs, votes = make_data(judge_weight=1.0, human_weight=2.5, n_readers=8, seed=1)
    result = surface_associations(feats, scores, pairs, votes, n_boot=300, rng=1)
    style = result.side_by_side.query("feature == 'style'")
    assert (style["pattern"] == "both, same direction").all()
    checks = {c.name: c for c in surface_checks(result, {"surface.max_abs_judge_feature_r": 0.99})}
    assert checks["surface.judge_only_feature"].status is Status.PASS
    assert checks["surface.judge_feature_r"].status is Status.PASS


def test_premise_effects_are_removed_within_pairs():
    base = make_data(premise_effect=0.0, seed=5)
    shifted = make_data(premise_effect=3.0, seed=5)  # same draws plus a per-pair shift of features and scores
    a = surface_associations(*base[:3], None, n_boot=0)
    b = surface_associations(*shifted[:3], None, n_boot=0)
    pd.testing.assert_series_equal(a.within_pair["beta"], b.within_pair["beta"], rtol=1e-9)
    assert not np.allclose(a.correlations["pearson_r"], b.correlations["pearson_r"])


def test_swapping_focal_and_other_keeps_beta():
    feats, scores, pairs, _ = make_data(seed=2)
    swapped = pairs.assign(focal=pairs["other"], other=pairs["focal"])
    a = surface_associations(feats, scores, pairs, None, n_boot=0).within_pair
    b = surface_associations(feats, scores, swapped, None, n_boot=0).within_pair
    np.testing.assert_allclose(a["beta"], b["beta"], rtol=1e-12)
    np.testing.assert_allclose(a["slope"], b["slope"], rtol=1e-12)


def test_scopes_and_group_cluster():
    feats, scores, pairs, _ = make_data(n_pairs=10, matchups=("a vs b", "c vs d"))
    result = surface_associations(feats, scores, pairs, None, n_boot=200, rng=0, cluster="group")
    assert result.scopes == ("a vs b", "c vs d", POOLED)
    assert set(result.within_pair["scope"]) == {"a vs b", "c vs d", POOLED}
    assert result.within_pair[result.within_pair["scope"] == POOLED]["n_pairs"].iloc[0] == 20
    assert set(result.scatter_points["matchup"]) == {"a vs b", "c vs d"}
    assert set(result.scatter_points["criterion"]) == {"aggregate"}


def test_missing_group_ids_are_their_own_clusters():
    """NaN group_id (a hand-built pairs frame) means "no group": each pair is its own cluster,
    exactly as with cluster="pair", never one shared "nan" cluster."""
    feats, scores, pairs, _ = make_data(n_pairs=12)
    by_pair = surface_associations(feats, scores, pairs, None, n_boot=200, rng=5, cluster="pair")
    no_groups = surface_associations(
        feats, scores, pairs.assign(group_id=np.nan), None, n_boot=200, rng=5, cluster="group"
    )
    pd.testing.assert_frame_equal(by_pair.within_pair, no_groups.within_pair)


def test_without_votes_the_human_check_is_skipped():
    feats, scores, pairs, _ = make_data(n_pairs=8)
    result = surface_associations(feats, scores, pairs, None, n_boot=50, rng=0)
    assert (result.side_by_side["pattern"] == "humans not analysed").all()
    checks = {c.name: c for c in surface_checks(result)}
    assert checks["surface.judge_only_feature"].status is Status.SKIPPED


def test_ties_and_nan_scores_are_counted_not_dropped_silently():
    feats, scores, pairs, votes = make_data(n_pairs=8)
    votes.loc[:4, "y"] = np.nan
    scores.loc[:2, "score"] = np.nan
    result = surface_associations(feats, scores, pairs, votes, n_boot=0)
    assert result.exclusions["human votes that are ties (y NaN)"] == 5
    assert result.exclusions["judge scores that are NaN (unparsable)"] == 3


def test_severity_and_threshold_options(judge_only):
    _, result = judge_only
    checks = surface_checks(
        result,
        {"max_abs_judge_feature_r": 0.99, "min_abs_within_pair_beta": 0.99},
        severity={"surface.judge_only_feature": "FAIL"},
    )
    by_name = {c.name: c for c in checks}
    assert by_name["surface.judge_feature_r"].status is Status.PASS
    assert by_name["surface.judge_only_feature"].status is Status.PASS
    fail = {c.name: c for c in surface_checks(result, severity={"surface.judge_only_feature": "FAIL"})}
    assert fail["surface.judge_only_feature"].status is Status.FAIL
    off = surface_checks(result, severity={"surface.judge_feature_r": "OFF"})
    assert [c.name for c in off] == ["surface.judge_only_feature"]


def test_feature_table_input_and_bad_options():
    from judge_transfer_audit.detectors import compute_features

    feats, scores, pairs, _ = make_data(n_pairs=6)
    texts = pd.DataFrame(
        {
            "pair_id": feats["pair_id"],
            "system": feats["system"],
            "text": [f"Story {i}. " + "word " * (i % 7 + 1) + "end." for i in range(len(feats))],
        }
    )
    table = compute_features(texts, detectors=["length"])
    result = surface_associations(table, scores, pairs, None, n_boot=20, rng=0)
    assert result.features == ("n_words", "n_chars")
    assert [d.name for d in result.feature_detectors] == ["length"]
    with pytest.raises(InputError):
        surface_associations(feats, scores, pairs, None, judge="nope")
    with pytest.raises(InputError):
        surface_associations(feats, scores, pairs, None, cluster="reader")
    # every bad option is reported at once, each with its column, value and fix
    with pytest.raises(InputError) as bad:
        surface_associations(feats, scores, pairs, None, cluster="reader", level=1.5)
    assert [(p.column, p.value, p.message, p.fix) for p in bad.value.problems] == [
        ("cluster", "reader", "unknown bootstrap cluster", "use 'pair' or 'group'"),
        ("level", "1.5", "interval level must be in (0, 1)", "e.g. 0.95"),
    ]


def test_result_round_trips_through_json(judge_only):
    _, result = judge_only
    back = from_jsonable(SurfaceResult, json.loads(json.dumps(to_jsonable(result))))
    pd.testing.assert_frame_equal(back.side_by_side, result.side_by_side)
    pd.testing.assert_frame_equal(back.humans, result.humans)
    pd.testing.assert_frame_equal(back.scatter_points, result.scatter_points)
    assert "human_share" in back.scatter_points.columns
    assert back.seed == 3 and back.exclusions == result.exclusions
    assert back.feature_detectors == ()
    assert "style" in str(back)


def test_result_with_detector_records_round_trips():
    from judge_transfer_audit.detectors import compute_features

    feats, scores, pairs, _ = make_data(n_pairs=5)
    texts = pd.DataFrame(
        {
            "pair_id": feats["pair_id"],
            "system": feats["system"],
            "text": [f"Tale {i}. " + "so " * i + "Done." for i in range(len(feats))],
        }
    )
    result = surface_associations(compute_features(texts), scores, pairs, None, n_boot=10, rng=0)
    back = from_jsonable(SurfaceResult, json.loads(json.dumps(to_jsonable(result))))
    assert back.feature_detectors == result.feature_detectors
    assert "perplexity" in str(back) and "--perplexity-model" in str(back)


def test_a_failed_glmm_fit_is_recorded_not_raised(monkeypatch):
    import judge_transfer_audit.statistics.glmm
    import judge_transfer_audit.statistics.glmm.batch
    from judge_transfer_audit.core.errors import ConvergenceError

    def broken(*args, **kwargs):
        raise ConvergenceError("no optimum")

    monkeypatch.setattr(judge_transfer_audit.statistics.glmm, "fit_crossed_glmm", broken)
    # the features' fits run together (judge_transfer_audit.statistics.glmm.batch.fit_many); when that raises, each is
    # fitted on its own, so that each failure is recorded on its own row
    monkeypatch.setattr(judge_transfer_audit.statistics.glmm.batch, "fit_many", broken)
    feats, scores, pairs, votes = make_data(n_pairs=6)
    result = surface_associations(feats, scores, pairs, votes, n_boot=20, rng=0)
    assert result.humans["note"].str.contains("GLMM failed: no optimum").all()
    assert result.humans["coef"].isna().all() and result.humans["pair_share_r"].notna().all()
    # Without the GLMM, the readers' side falls back on the vote-share interval.
    assert (result.side_by_side["pattern"] != "humans not analysed").all()


def test_the_scope_replicate_moments_equal_the_direct_computation_bit_for_bit():
    from judge_transfer_audit.statistics.surface.associations import _boot_summary, _cluster_weights

    rng = np.random.default_rng(12)
    pairs = pd.DataFrame({"pair_id": [f"p{i}" for i in range(40)], "group_id": ""})
    W = _cluster_weights(pairs, "pair", 300, rng)
    from judge_transfer_audit.statistics.surface.associations import _Replicates

    reps = _Replicates(W)
    xs = [rng.normal(size=40) for _ in range(3)]
    ys = [rng.normal(size=40) for _ in range(3)]
    xs[1][[3, 7]] = np.nan  # other usable pairs: other kept weights
    for m, x in enumerate(xs):
        for k, y in enumerate(ys):
            direct = _boot_summary(W, x, y, 0.95)
            shared = _boot_summary(reps, x, y, 0.95, (("feature", m), ("score", k)))
            assert repr(shared) == repr(direct)
    assert len(reps._moments) == 2 * 3 + 3  # every variable once per set of usable pairs


def test_the_prepared_intervals_equal_one_quantile_at_a_time_bit_for_bit():
    """The scope's intervals computed together (np.quantile of the replicate vectors of one length
    stacked) give _boot_summary's one-at-a-time numbers exactly, with NaN pairs, a constant
    variable (no valid replicate) and too few pairs."""
    from judge_transfer_audit.statistics.surface.associations import _boot_summary, _cluster_weights, _Replicates

    rng = np.random.default_rng(13)
    pairs = pd.DataFrame({"pair_id": [f"p{i}" for i in range(30)], "group_id": ""})
    W = _cluster_weights(pairs, "pair", 400, rng)
    xs = [rng.normal(size=30) for _ in range(4)]
    ys = [rng.normal(size=30) for _ in range(3)]
    xs[1][[2, 9, 11]] = np.nan
    xs[2][:] = 1.0
    ys[2][3:] = np.nan  # 3 usable pairs
    ys[1][[0, 1]] = rng.normal(size=2) * 1e-9  # some replicates without spread
    items = [(("feature", m), x, ("score", k), y) for m, x in enumerate(xs) for k, y in enumerate(ys)]
    reps = _Replicates(W)
    reps.prepare_intervals(0.9, items)
    for name_x, x, name_y, y in items:
        prepared = _boot_summary(reps, x, y, 0.9, (name_x, name_y))
        direct = _boot_summary(W, x, y, 0.9)
        assert repr(prepared) == repr(direct)
        assert list(prepared) == list(direct)


@pytest.mark.parametrize("seed", [1, 6])
def test_readers_who_share_the_feature_without_power_are_not_called_judge_only(seed):
    """The readers follow ``style`` too, but 3 votes per pair on 24 pairs leave their own test without
    power: the judge's and the readers' associations do not differ significantly, so the row is not
    "judge only" and the check does not say the judge may be scoring style."""
    feats, scores, pairs, votes = make_data(judge_weight=0.5, human_weight=0.35, n_readers=3, seed=seed)
    result = surface_associations(feats, scores, pairs, votes, n_boot=300, rng=seed)
    row = result.side_by_side.query("feature == 'style' and criterion == 'depth'").iloc[0]
    assert row["judge_tracks"] and not row["humans_track"]
    assert row["difference_p_adjusted"] >= 0.05
    assert row["pattern"] == "judge; readers not distinguishable"
    if seed == 6:  # there no row differs significantly: the check passes
        assert not (result.side_by_side["pattern"] == "judge only").any()
        checks = {c.name: c for c in surface_checks(result)}
        assert checks["surface.judge_only_feature"].status is Status.PASS


def test_a_judge_only_row_has_a_significant_difference(judge_only):
    _, result = judge_only
    style = result.side_by_side.query("feature == 'style'")
    assert (style["difference_p_adjusted"] < 0.05).all()
