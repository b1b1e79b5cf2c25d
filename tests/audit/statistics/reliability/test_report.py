"""reliability_report, the ratings loader and `audit reliability` (in-process CLI)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.core.serialize import from_jsonable, to_jsonable
from judge_transfer_audit.statistics.reliability.cronbach import cronbach_alpha
from judge_transfer_audit.statistics.reliability.icc import icc
from judge_transfer_audit.statistics.reliability.ratings import load_ratings, validate_ratings
from judge_transfer_audit.statistics.reliability.report import ReliabilityReport, reliability_report

DATASETS = Path(__file__).parents[4] / ".." / "shared" / "datasets"


def make_ratings(seed=0, n_items=6, n_readers=6, n_questions=4, groups=True):
    rng = np.random.default_rng(seed)
    rows = []
    quality = rng.normal(size=n_items)
    for i in range(n_items):
        for r in range(n_readers):
            for q in range(n_questions):
                value = np.clip(np.round(3 + quality[i] + rng.normal(scale=0.8)), 1, 5)
                rows.append(
                    dict(
                        item_id=f"mf{i}",
                        reader_id=f"r{r}",
                        question=f"Q{q + 1}",
                        rating=str(int(value)),
                        reader_group=("expert" if r < n_readers // 2 else "enthusiast") if groups else "",
                    )
                )
    return pd.DataFrame(rows)


def test_report_per_question_matches_the_single_statistics():
    ratings = validate_ratings(make_ratings())
    report = reliability_report(ratings)
    q = report.questions.set_index(["criterion", "reader_group"])
    assert set(q.index.get_level_values(1)) == {"all", "expert", "enthusiast"}
    sub = ratings[ratings.criterion == "Q2"]
    assert q.loc[("Q2", "all"), "icc2k"] == pytest.approx(icc(sub).get("ICC2k").icc)
    experts = sub[sub.reader_group == "expert"]
    assert q.loc[("Q2", "expert"), "icc1"] == pytest.approx(icc(experts).get("ICC1").icc)
    one = ratings[ratings.item_id == "mf3"].pivot(index="reader_id", columns="criterion", values="rating")
    items = report.items.set_index(["item_id", "reader_group"])
    assert items.loc[("mf3", "all"), "cronbach_alpha"] == pytest.approx(cronbach_alpha(one).alpha)
    assert len(report.groups_compared) == 4
    assert report.question_set.set_index("reader_group").loc["all", "n_observations"] == 36


def test_missing_ratings_are_counted_per_method():
    raw = make_ratings(groups=False)
    raw.loc[(raw.item_id == "mf1") & (raw.reader_id == "r2") & (raw.question == "Q1"), "rating"] = ""
    report = reliability_report(validate_ratings(raw))
    row = report.questions.set_index("criterion").loc["Q1"]
    assert row["n_missing"] == 1 and row["n_items_excluded"] == 1 and row["n_items_unpairable"] == 0
    assert list(report.questions["reader_group"].unique()) == ["all"]
    assert "pairwise-complete" in str(report)


def test_sparse_design_says_why_icc_is_missing():
    raw = make_ratings(groups=False, n_items=8, n_readers=6)
    raw = raw[(raw.item_id.str[2:].astype(int) + raw.reader_id.str[1:].astype(int)) % 2 == 0]  # half the readers each
    report = reliability_report(validate_ratings(raw))
    row = report.questions.iloc[0]
    assert np.isnan(row["icc2k"]) and np.isnan(row["kendall_w"]) and not np.isnan(row["alpha_interval"])
    assert "8 of 8 items lack a rating" in row["reason"] and "Krippendorff" in row["reason"]
    assert "8 of 8 items lack a rating" in str(report)


def test_one_named_group_beside_ungrouped_readers_is_reported():
    raw = make_ratings()
    raw["reader_group"] = np.where(raw["reader_group"] == "expert", "expert", "")
    groups = set(reliability_report(validate_ratings(raw)).questions["reader_group"])
    assert groups == {"all", "expert"}
    raw["reader_group"] = "expert"  # everyone in the one group: "all" says it already
    assert set(reliability_report(validate_ratings(raw)).questions["reader_group"]) == {"all"}


def test_group_comparison_detects_an_offset():
    raw = make_ratings(seed=3, n_items=10)
    raw["rating"] = raw["rating"].astype(float) + np.where(raw.reader_group == "expert", 2.0, 0.0)
    compared = reliability_report(validate_ratings(raw)).groups_compared
    assert (compared["mean_difference"] < 0).all()  # enthusiast - expert
    assert (compared["p"] < 0.05).all()


def test_validation_lists_problems():
    raw = make_ratings()
    raw.loc[4, "rating"] = "five"
    raw = pd.concat([raw, raw.iloc[[0]]])
    with pytest.raises(InputError) as info:
        validate_ratings(raw, file="r.csv")
    text = str(info.value)
    assert "line 6" in text and "not a finite number" in text and "repeated" in text
    infinite = make_ratings().astype({"rating": object})
    infinite.loc[2, "rating"] = "inf"
    with pytest.raises(InputError, match="line 4.*not a finite number"):
        validate_ratings(infinite)
    with pytest.raises(InputError, match="missing column"):
        validate_ratings(raw.drop(columns="reader_id"))
    no_id = make_ratings().astype({"reader_id": object})
    no_id.loc[5, "reader_id"] = np.nan  # as JSONL / Parquet deliver a missing id
    with pytest.raises(InputError, match="line 7, column 'reader_id'"):
        validate_ratings(no_id)


def test_round_trip():
    report = reliability_report(validate_ratings(make_ratings()), rng=3, n_boot=200)
    back = from_jsonable(ReliabilityReport, json.loads(json.dumps(to_jsonable(report))))
    assert (back.seed, back.n_boot, back.confidence) == (3, 200, 0.95)
    for name, frame in report.tables().items():
        pd.testing.assert_frame_equal(back.tables()[name], frame, check_dtype=False)


@pytest.mark.slow
def test_cli_prints_and_writes_same_numbers_as_api(tmp_path, capsys):
    path = tmp_path / "ratings.csv"
    make_ratings().to_csv(path, index=False)
    assert main(["reliability", str(path), "-o", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert "Reliability per question" in printed
    api = reliability_report(load_ratings(path))
    csv = pd.read_csv(tmp_path / "out" / "reliability_questions.csv", keep_default_na=False)
    assert csv["icc2k"].to_numpy() == pytest.approx(api.questions["icc2k"].to_numpy(), rel=1e-12)
    saved = json.loads((tmp_path / "out" / "reliability.json").read_text())
    assert saved["kind"] == "reliability"
    assert main(["reliability", str(path), "-q", "-o", str(tmp_path / "r.json")]) == 0
    assert (tmp_path / "r.json").exists()


def test_cli_bad_input_exit_status_2(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    pd.DataFrame({"item_id": ["a"], "rating": ["x"]}).to_csv(path, index=False)
    assert main(["reliability", str(path)]) == 2
    assert "missing column" in capsys.readouterr().err
    assert main(["reliability", str(tmp_path / "absent.csv")]) == 2
    good = tmp_path / "good.csv"
    make_ratings().to_csv(good, index=False)
    assert main(["reliability", str(good), "--confidence", "1.5"]) == 2
    (tmp_path / "a_file").write_text("")
    capsys.readouterr()
    assert main(["reliability", str(good), "-q", "-o", str(tmp_path / "a_file" / "out")]) == 2
    assert "a_file is a file, not a folder" in capsys.readouterr().err  # refused before any work


@pytest.mark.external
def test_pds_round1_agreement_reproduces_published_values(tmp_path):
    """PDS (Harel-Canada et al. 2024) human_study_iaa.csv, round 1, 97 stories x 5 readers:
    unweighted Fleiss kappa authenticity 0.00328, empathy 0.0670; nominal Krippendorff alpha
    authenticity 0.00533, empathy 0.0689 (../shared/datasets/README.md)."""
    raw_file = DATASETS / "pds" / "human_annotations.csv"
    if not raw_file.exists():
        pytest.skip("../shared/datasets is absent")
    raw = pd.read_csv(raw_file)
    long = raw.melt(
        id_vars=["participant_id", "story_id"],
        value_vars=["authenticity_score", "empathy_score"],
        var_name="criterion",
        value_name="rating",
    )
    path = tmp_path / "pds_ratings.csv"  # derived data stays in tmp, never in the repository
    long.assign(
        item_id=long.story_id, reader_id=long.participant_id, criterion=long.criterion.str.removesuffix("_score")
    )[["item_id", "reader_id", "criterion", "rating"]].to_csv(path, index=False)
    ratings = load_ratings(path)
    ratings = ratings[ratings.criterion.isin(["authenticity", "empathy"])]
    q = reliability_report(ratings).questions.set_index("criterion")
    assert q.loc["authenticity", "n_items"] == 97 and q.loc["authenticity", "n_readers"] == 5
    assert q.loc["authenticity", "fleiss_kappa"] == pytest.approx(0.00328, abs=5e-6)
    assert q.loc["empathy", "fleiss_kappa"] == pytest.approx(0.0670, abs=5e-5)
    assert q.loc["authenticity", "alpha_nominal"] == pytest.approx(0.00533, abs=5e-6)
    assert q.loc["empathy", "alpha_nominal"] == pytest.approx(0.0689, abs=5e-5)
