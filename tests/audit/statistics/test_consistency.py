"""Tests of judge_transfer_audit.statistics.consistency and `audit consistency`."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from judge_transfer_audit.cli import main
from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.core.serialize import from_jsonable, to_jsonable
from judge_transfer_audit.statistics.consistency import (
    ConsistencyReport,
    ConsistencySettings,
    cohens_d,
    consistency_report,
    validate_scores,
)
from judge_transfer_audit.statistics.reliability.icc import icc_from_matrix


def simulated(seed=0, n_items=24, rounds=4):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        cat = ["human", "llm", "classic"][i % 3]
        base = {"human": 3.0, "llm": 2.5, "classic": 4.0}[cat]
        for d in ("L1", "L2", "L3"):
            q = base + rng.normal(scale=0.5)
            for judge, offset in (("gpt", 0.0), ("claude", -0.5)):
                for mode, shift in (("content", 0.0), ("title", 0.2)):
                    for r in range(rounds):
                        rows.append(
                            dict(
                                item_id=f"s{i}",
                                dimension=d,
                                model=judge,
                                mode=mode,
                                round=r,
                                category=cat,
                                score=q + offset + shift + rng.normal(scale=0.3 / (r + 1)),
                            )
                        )
    return pd.DataFrame(rows)


def by_hand(rows):
    return validate_scores(pd.DataFrame(rows, columns=["item_id", "criterion", "judge", "round", "score"]))


def test_convergence_uses_last_two_rounds():
    scores = by_hand(
        [
            ("a", "c", "j", 0, 3.0),
            ("a", "c", "j", 1, 3.5),
            ("a", "c", "j", 2, 3.6),
            ("b", "c", "j", 0, 3.0),
            ("b", "c", "j", 1, 3.0),
            ("b", "c", "j", 2, 3.5),
            ("c", "c", "j", 0, 2.0),
        ]
    )
    report = consistency_report(scores)
    row = report.self_consistency.iloc[0]
    assert row["n_items"] == 2 and row["convergence_rate"] == 0.5
    spread = report.item_spread.set_index("item_id")
    assert spread.loc["a", "last_delta"] == pytest.approx(0.1) and spread.loc["a", "range"] == pytest.approx(0.6)
    assert spread.loc["b", "sd"] == pytest.approx(np.std([3.0, 3.0, 3.5], ddof=1))
    assert any("judge agreement" in s for s in report.skipped)


def test_judge_agreement_by_hand():
    data = simulated()
    report = consistency_report(validate_scores(data))
    row = report.judge_agreement.set_index("criterion").loc["L2"]
    final = data[data["round"] == 3]
    wide = final[final.dimension == "L2"].pivot_table(index=["item_id", "mode"], columns="model", values="score")
    diff = wide["claude"] - wide["gpt"]
    assert row["n_items"] == 48
    assert row["mad"] == pytest.approx(diff.abs().mean())
    assert row["mean_offset"] == pytest.approx(diff.mean()) and row["mean_offset"] < -0.3
    assert row["pearson"] == pytest.approx(stats.pearsonr(wide["claude"], wide["gpt"]).statistic)
    assert row["icc_agreement"] == pytest.approx(icc_from_matrix(wide[["claude", "gpt"]].to_numpy()).get("ICC2").icc)
    assert row["icc_consistency"] > row["icc_agreement"]  # the offset costs absolute agreement only
    ttest = stats.ttest_1samp(diff, 0.0).confidence_interval(0.95)
    assert (row["mean_offset_ci_low"], row["mean_offset_ci_high"]) == pytest.approx((ttest.low, ttest.high))
    icc2 = icc_from_matrix(wide[["claude", "gpt"]].to_numpy()).get("ICC2")
    assert (row["icc_agreement_ci_low"], row["icc_agreement_ci_high"]) == pytest.approx((icc2.ci_low, icc2.ci_high))
    assert row["icc_agreement_ci_low"] < row["icc_agreement"] < row["icc_agreement_ci_high"]
    pooled = report.judge_agreement.set_index("criterion").loc["all"]
    all_wide = final.pivot_table(index=["item_id", "dimension", "mode"], columns="model", values="score")
    assert pooled["n_items"] == 144
    assert pooled["pearson"] == pytest.approx(stats.pearsonr(all_wide["claude"], all_wide["gpt"]).statistic)


def test_final_mean_uses_the_mean_of_rounds_downstream(tmp_path, capsys):
    scores = by_hand(
        [
            ("a", "c", "j1", 0, 1.0),
            ("a", "c", "j1", 1, 3.0),
            ("b", "c", "j1", 0, 2.0),
            ("b", "c", "j1", 1, 2.0),
            ("c", "c", "j1", 0, 5.0),
            ("c", "c", "j1", 1, 4.0),
            ("a", "c", "j2", 0, 2.0),
            ("b", "c", "j2", 0, 2.5),
            ("c", "c", "j2", 0, 4.0),
        ]
    )
    last = consistency_report(scores).judge_agreement.iloc[0]
    mean = consistency_report(scores, ConsistencySettings(final="mean")).judge_agreement.iloc[0]
    assert last["mean_offset"] == pytest.approx(np.mean([3 - 2, 2 - 2.5, 4 - 4]))
    assert mean["mean_offset"] == pytest.approx(np.mean([2 - 2, 2 - 2.5, 4.5 - 4]))
    # self-consistency does not depend on the choice
    pd.testing.assert_frame_equal(
        consistency_report(scores).self_consistency,
        consistency_report(scores, ConsistencySettings(final="mean")).self_consistency,
    )
    with pytest.raises(InputError, match="unknown final"):
        consistency_report(scores, ConsistencySettings(final="median"))
    path = tmp_path / "s.csv"
    simulated(n_items=6, rounds=2).to_csv(path, index=False)
    assert main(["consistency", str(path), "--final", "mean"]) == 0
    assert "use the mean over rounds" in capsys.readouterr().out
    assert main(["consistency", str(path), "--final", "median"]) == 3  # a click usage error


def test_mode_invariance_paired_t_and_largest_difference():
    data = simulated()
    report = consistency_report(validate_scores(data))
    row = report.mode_invariance.set_index(["judge", "criterion"]).loc[("gpt", "L1")]
    final = data[(data["round"] == 3) & (data.model == "gpt") & (data.dimension == "L1")]
    wide = final.pivot_table(index="item_id", columns="mode", values="score")
    diff = wide["content"] - wide["title"]
    assert row["p"] == pytest.approx(stats.ttest_rel(wide["content"], wide["title"]).pvalue)
    assert row["largest_difference"] == pytest.approx(diff[diff.abs().idxmax()])
    assert row["largest_item"] == diff.abs().idxmax()


def test_redundancy_flags_duplicated_dimension():
    data = simulated()
    copy = data[data.dimension == "L1"].assign(dimension="L1_copy")
    copy["score"] = copy["score"] * 2 + 1
    report = consistency_report(validate_scores(pd.concat([data, copy])))
    red = report.redundancy
    copies = red[(red.criterion_a == "L1") & (red.criterion_b == "L1_copy")]
    assert len(copies) == 4 and copies["redundant"].all()
    assert copies["pearson"].to_numpy() == pytest.approx(1.0)
    assert (red["redundant"] == (red["pearson"].abs() >= 0.7)).all()


def test_discrimination_bonferroni_and_cohens_d():
    data = simulated()
    report = consistency_report(validate_scores(data))
    pairs = report.discrimination_pairs
    assert len(pairs) == 2 * 2 * 3 * 3  # judges x modes x criteria x category pairs
    row = pairs.iloc[0]
    assert row["p_bonferroni"] == pytest.approx(min(1.0, 3 * row["p"]))
    a, b = np.array([1.0, 2.0, 3.0, 4.0]), np.array([2.0, 4.0, 6.0])
    pooled = np.sqrt((3 * np.var(a, ddof=1) + 2 * np.var(b, ddof=1)) / 5)
    assert cohens_d(a, b) == pytest.approx((2.5 - 4.0) / pooled)
    disc = report.discrimination.iloc[0]
    assert disc["n_items"] == 24 and disc["anova_p"] < 0.05


def test_skips_are_reported_not_crashes():
    scores = by_hand([("a", "c", "j", 0, 3.0), ("b", "c", "j", 0, 4.0)])
    report = consistency_report(scores)
    assert len(report.skipped) == 5 and all(f.empty for f in report.tables().values())


def test_validation_errors():
    data = simulated(n_items=3, rounds=2)
    bad = data.astype({"score": object, "round": object})
    bad.loc[0, "score"] = "high"
    bad.loc[1, "round"] = 1.5
    with pytest.raises(InputError) as info:
        validate_scores(bad)
    assert "non-numeric or infinite score" in str(info.value) and "round is not an integer" in str(info.value)
    infinite = data.astype({"score": object})
    infinite.loc[2, "score"] = "-inf"
    with pytest.raises(InputError, match="line 4.*infinite"):
        validate_scores(infinite)
    with pytest.raises(InputError, match="repeated"):
        validate_scores(pd.concat([data, data.iloc[[0]]]))
    ratings = data.assign(reader_id=np.arange(len(data)) % 2, model="j", round=0)
    with pytest.raises(InputError, match="use `audit reliability`"):
        validate_scores(ratings)
    with pytest.raises(InputError, match="several categories"):
        validate_scores(data.assign(category=np.where(np.arange(len(data)) == 0, "x", data.category)))
    with pytest.raises(InputError, match="missing column"):
        validate_scores(data.drop(columns="score"))
    blank = data.astype({"item_id": object, "dimension": object})
    blank.loc[1, "item_id"] = " "
    blank.loc[2, "dimension"] = np.nan
    with pytest.raises(InputError) as info:
        validate_scores(blank)
    assert "line 3, column 'item_id'" in str(info.value) and "line 4, column 'criterion'" in str(info.value)
    no_category = validate_scores(
        data.assign(category=np.where(data["item_id"] == data["item_id"].iloc[0], np.nan, data["category"]))
    )
    assert set(no_category["category"]) == {"", "llm", "classic"}  # s0 (the one human item) has none


def test_round_trip():
    report = consistency_report(validate_scores(simulated(n_items=9, rounds=2)), ConsistencySettings(0.2))
    back = from_jsonable(ConsistencyReport, json.loads(json.dumps(to_jsonable(report))))
    assert back.settings == report.settings and back.skipped == report.skipped
    for name, frame in report.tables().items():
        pd.testing.assert_frame_equal(back.tables()[name], frame, check_dtype=False)


@pytest.mark.slow
def test_cli_same_as_api_and_bad_input(tmp_path, capsys):
    path = tmp_path / "scores.csv"
    simulated(n_items=9, rounds=3).to_csv(path, index=False)
    assert main(["consistency", str(path), "-o", str(tmp_path / "out"), "--convergence-threshold", "0.1"]) == 0
    assert "Self-consistency" in capsys.readouterr().out
    api = consistency_report(validate_scores(pd.read_csv(path)), ConsistencySettings(convergence_threshold=0.1))
    csv = pd.read_csv(tmp_path / "out" / "consistency_self_consistency.csv")
    assert csv["convergence_rate"].to_numpy() == pytest.approx(api.self_consistency["convergence_rate"].to_numpy())
    assert main(["consistency", str(path), "--redundancy-threshold", "0"]) == 2
    assert main(["consistency", str(path), "-q", "-o", str(path / "out.json")]) == 2  # a file is not a directory
    pd.DataFrame({"x": [1]}).to_csv(tmp_path / "bad.csv", index=False)
    assert main(["consistency", str(tmp_path / "bad.csv")]) == 2
    assert "missing column" in capsys.readouterr().err


@pytest.mark.r
def test_welch_anova_matches_r_oneway_test(tmp_path):
    if shutil.which("Rscript") is None:
        pytest.skip("Rscript not on PATH")
    data = simulated()
    report = consistency_report(validate_scores(data))
    final = data[(data["round"] == 3) & (data.model == "gpt") & (data["mode"] == "content") & (data.dimension == "L1")]
    final[["category", "score"]].to_csv(tmp_path / "d.csv", index=False)
    script = (
        "d <- read.csv('d.csv'); w <- oneway.test(score ~ category, d, var.equal = FALSE); "
        "a <- oneway.test(score ~ category, d, var.equal = TRUE); "
        "cat(sprintf('%.17g', c(w$statistic, w$parameter[2], w$p.value, a$statistic, a$p.value)))"
    )
    out = subprocess.run(["Rscript", "-e", script], cwd=tmp_path, check=True, capture_output=True, text=True).stdout
    welch_f, welch_df2, welch_p, f, p = (float(v) for v in out.split())
    row = report.discrimination.set_index(["judge", "mode", "criterion"]).loc[("gpt", "content", "L1")]
    assert row["welch_f"] == pytest.approx(welch_f, rel=1e-10)
    assert row["welch_df2"] == pytest.approx(welch_df2, rel=1e-10)
    assert row["welch_p"] == pytest.approx(welch_p, rel=1e-8)
    assert row["anova_f"] == pytest.approx(f, rel=1e-10) and row["anova_p"] == pytest.approx(p, rel=1e-8)


@pytest.mark.external
def test_pds_persona_samples_run_end_to_end(tmp_path):
    """PDS Llama-3-70B Mixture-of-Personas file: 5 persona samples per story (97 stories)."""
    from pathlib import Path

    raw_file = (
        Path(__file__).parents[3]
        / ".."
        / "shared"
        / "datasets"
        / "pds"
        / "Meta-Llama-3-70B-Instruct-f16_annotations_mop_t=1.csv"
    )
    if not raw_file.exists():
        pytest.skip("../shared/datasets is absent")
    raw = pd.read_csv(raw_file, encoding="latin-1")
    long = raw.melt(
        id_vars=["study_id", "participant_id", "author_type"],
        value_vars=["authenticity_score", "empathy_score"],
        var_name="criterion",
        value_name="score",
    )
    scores = long.rename(columns={"study_id": "item_id", "participant_id": "sample", "author_type": "category"})
    path = tmp_path / "scores.csv"  # derived data stays in tmp
    scores.to_csv(path, index=False)
    assert main(["consistency", str(path), "-q", "-o", str(tmp_path / "out")]) == 0
    report = consistency_report(validate_scores(pd.read_csv(path)))
    sc = report.self_consistency.set_index("criterion")
    assert (sc["n_items"] == 97).all()
    sd = long[long.criterion == "empathy_score"].groupby("study_id")["score"].std().mean()
    assert sc.loc["empathy_score", "mean_sd"] == pytest.approx(sd)
    assert len(report.discrimination) == 2 and report.redundancy["n"].iloc[0] == 97


DISCRIMINATION_REF = Path(__file__).parents[2] / "reference" / "discrimination"
DISCRIMINATION_TOL = {
    "welch_f": 1e-10,
    "welch_df2": 1e-10,
    "welch_p": 1e-8,
    "anova_f": 1e-10,
    "anova_p": 1e-8,
    "welch_t": 1e-10,
    "p": 1e-8,
    "p_bonferroni": 1e-8,
    "cohens_d": 1e-10,
}


def discrimination_of(dataset):
    d = pd.read_csv(DISCRIMINATION_REF / f"input_{dataset}.csv")
    scores = d.assign(item_id=[f"i{i}" for i in range(len(d))], criterion="c")
    return consistency_report(validate_scores(scores.astype(str)))


@pytest.mark.parametrize("dataset", ["three_unequal", "four_small", "two_likert"])
def test_discrimination_matches_r_oneway_pairwise_t_and_psych_cohen_d(dataset):
    """tests/reference/discrimination: R oneway.test, t.test, pairwise.t.test(pool.sd = FALSE,
    p.adjust.method = "bonferroni") and psych::cohen.d on stored inputs. psych's d pools the
    sum of squares over N; Cohen's d (ours, and pingouin's / effsize's default) over N - 2,
    so the reference is rescaled by sqrt((N - 2) / N)."""
    ref = pd.read_csv(DISCRIMINATION_REF / "reference.csv")
    ref = ref[ref.dataset == dataset]
    report = discrimination_of(dataset)
    counts = pd.read_csv(DISCRIMINATION_REF / f"input_{dataset}.csv")["category"].value_counts()
    row = report.discrimination.iloc[0]
    pairs = report.discrimination_pairs.set_index(["category_a", "category_b"])
    checked = 0
    for quantity, value in zip(ref.quantity, ref.value):
        field, _, key = quantity.partition(":")
        got = row[field] if not key else pairs.loc[tuple(key.split("|")), field]
        if field == "cohens_d":
            # psych divides the pooled sum of squares by N; Cohen's (and ours) by N - 2
            n = counts[key.split("|")].sum()
            value *= np.sqrt((n - 2) / n)
        assert got == pytest.approx(value, rel=DISCRIMINATION_TOL[field], abs=1e-14), (quantity, got, value)
        checked += 1
    assert checked == len(ref) and len(pairs) == sum(q.startswith("p:") for q in ref.quantity)


@pytest.mark.r
def test_discrimination_reference_rerun_live(tmp_path):
    if shutil.which("Rscript") is None:
        pytest.skip("Rscript not on PATH")
    for f in DISCRIMINATION_REF.glob("input_*.csv"):
        shutil.copy(f, tmp_path)
    shutil.copy(DISCRIMINATION_REF / "make_reference.R", tmp_path)
    subprocess.run(["Rscript", "make_reference.R"], cwd=tmp_path, check=True, capture_output=True)
    pd.testing.assert_frame_equal(
        pd.read_csv(tmp_path / "reference.csv"), pd.read_csv(DISCRIMINATION_REF / "reference.csv")
    )


@pytest.mark.parametrize("value", ["1e400", "100000000000000000000000000000000000000000", "inf"])
def test_an_unbounded_round_is_an_input_error_not_a_crash(tmp_path, capsys, value):
    """Regression (hardening): round = 1e400 read as inf, then failed the integer cast: exit 70."""
    from judge_transfer_audit.cli import main

    path = tmp_path / "scores.csv"
    path.write_text(f"item_id,criterion,score,round\ni1,a,3,1\ni1,a,4,{value}\ni2,a,3,1\ni2,a,2,2\n")
    assert main(["consistency", str(path)]) == 2
    err = capsys.readouterr().err
    assert "line 3, column 'round'" in err and "[-1,000,000, 1,000,000]" in err and "Fix:" in err
