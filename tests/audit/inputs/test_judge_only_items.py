"""Scalar ratings with a scalar judge on more items than the readers rated: the judge's items
that carry a group_id in the judge file form judge-only pairs (prompt-matched as the rated
ones), counted, and enter the prediction-powered estimates only."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.inputs import load_audit_data

SYSTEMS = {"alpha": 0.5, "beta": 0.0, "gamma": -0.3}


def write_study(folder, *, groups=40, rated_groups=12, readers=5, seed=3, judge_group=True):
    """A seeded Likert study: every group has one output per system; the judge scores every
    group, the readers the first ``rated_groups``."""
    rng = np.random.default_rng(seed)
    judge, humans = [], []
    for g in range(groups):
        for system, shift in SYSTEMS.items():
            quality = shift + rng.normal(0, 1)
            item = f"g{g}-{system}"
            score = int(np.clip(np.round(3 + quality + rng.normal(0, 0.7)), 1, 5))
            judge.append((item, system, "overall", score, f"g{g}"))
            if g < rated_groups:
                for r in range(readers):
                    rating = int(np.clip(np.round(3 + quality + rng.normal(0, 1)), 1, 5))
                    humans.append((item, f"r{r}", "overall", rating, f"g{g}"))
    j = pd.DataFrame(judge, columns=["item_id", "system", "criterion", "score", "group_id"])
    if not judge_group:
        j = j.drop(columns="group_id")
    h = pd.DataFrame(humans, columns=["item_id", "reader_id", "criterion", "rating", "group_id"])
    j.to_csv(folder / "judge.csv", index=False)
    h.to_csv(folder / "humans.csv", index=False)
    return j, h


def test_unrated_groups_form_judge_only_pairs(tmp_path):
    write_study(tmp_path)
    d = load_audit_data(tmp_path / "judge.csv", tmp_path / "humans.csv")
    assert len(d.pairs) == 12 * 3 and d.n_judge_only_pairs == 28 * 3
    only = d.judge_only_pairs
    assert set(only["group_id"]) == {f"g{g}" for g in range(12, 40)}
    assert set(only["pair_id"]).isdisjoint(d.pairs["pair_id"])
    # oriented as the voted pairs of the matchup, items kept
    focal = dict(zip(d.pairs["matchup"], d.pairs["focal"]))
    assert all(focal[m] == f for m, f in zip(only["matchup"], only["focal"]))
    assert (only["item_a"] == only["pair_id"].str.split("~").str[0]).all()
    assert set(d.judge_only_scores["pair_id"]) == set(only["pair_id"])
    assert set(d.judge_scores["pair_id"]) == set(d.pairs["pair_id"])
    judge = next(r for r in d.rows if r.role == "judge")
    humans = next(r for r in d.rows if r.role == "humans")
    assert (judge.read, judge.used, judge.n_excluded) == (120, 120, 0)
    assert (humans.read, humans.used) == (12 * 3 * 5, 12 * 3 * 5)
    assert any("84 pair(s) carry only the judge" in n for n in d.notes)


def test_an_unrated_item_in_a_rated_group_pairs_with_the_rated_ones(tmp_path):
    j, h = write_study(tmp_path, groups=3, rated_groups=3)
    h = h[h["item_id"] != "g0-gamma"]  # nobody rated g0's gamma output: its two pairs are judge-only
    h.to_csv(tmp_path / "humans.csv", index=False)
    d = load_audit_data(tmp_path / "judge.csv", tmp_path / "humans.csv")
    assert set(d.judge_only_pairs["pair_id"]) == {"g0-alpha~g0-gamma", "g0-beta~g0-gamma"}
    assert "g0-alpha~g0-beta" in set(d.pairs["pair_id"])
    # g0-alpha's score serves a voted and a judge-only pair: one record, used once
    judge = next(r for r in d.rows if r.role == "judge")
    assert (judge.read, judge.used, judge.n_excluded) == (9, 9, 0)


def test_an_unparsable_score_shared_by_voted_and_judge_only_pairs_counts_once(tmp_path):
    j, h = write_study(tmp_path, groups=3, rated_groups=3)
    h[h["item_id"] != "g0-gamma"].to_csv(tmp_path / "humans.csv", index=False)
    j["score"] = j["score"].astype(object)
    j.loc[j["item_id"] == "g0-alpha", "score"] = ""
    j.to_csv(tmp_path / "judge.csv", index=False)
    d = load_audit_data(tmp_path / "judge.csv", tmp_path / "humans.csv", drop_invalid=True)
    judge = next(r for r in d.rows if r.role == "judge")
    assert judge.read == judge.used + judge.n_excluded == 9
    assert dict(judge.excluded) == {"unparsable judge output (empty score), removed (--drop-invalid)": 1}


def test_judge_only_items_alone_or_in_an_unvoted_matchup_are_counted(tmp_path):
    j, h = write_study(tmp_path, groups=4, rated_groups=2)
    extra = pd.DataFrame(
        [
            ("lonely", "alpha", "overall", 3, "g9"),  # alone in its group: no pair
            ("d1", "delta", "overall", 3, "g3"),  # delta vs the others: matchups nobody voted on
        ],
        columns=j.columns,
    )
    pd.concat([j, extra]).to_csv(tmp_path / "judge.csv", index=False)
    d = load_audit_data(tmp_path / "judge.csv", tmp_path / "humans.csv")
    judge = next(r for r in d.rows if r.role == "judge")
    assert judge.read == judge.used + judge.n_excluded == 14
    reasons = dict(judge.excluded)
    assert (
        reasons[
            "judge score of an output in no pair (alone in its group, or compared only with outputs of its own system)"
        ]
        == 1
    )
    assert reasons["judge output on a pair of a matchup without any human vote"] == 1
    assert d.n_judge_only_pairs == 2 * 3
    assert "d1" not in set(d.judge_only_pairs["item_a"]) | set(d.judge_only_pairs["item_b"])


def test_unrated_items_without_a_group_are_a_problem_naming_the_fix(tmp_path):
    write_study(tmp_path, groups=3, rated_groups=2, judge_group=False)
    with pytest.raises(InputError) as e:
        load_audit_data(tmp_path / "judge.csv", tmp_path / "humans.csv")
    msg = str(e.value)
    assert "item_id not found in the human file" in msg and "g2-alpha" in msg
    assert "give the items' group_id in the judge file" in msg


def test_a_judge_group_other_than_the_humans_is_a_problem(tmp_path):
    j, _ = write_study(tmp_path, groups=3, rated_groups=2)
    j.loc[j["item_id"] == "g0-beta", "group_id"] = "g1"
    j.to_csv(tmp_path / "judge.csv", index=False)
    with pytest.raises(InputError, match="another group_id than the human file.*g0-beta: g1 \\(judge\\), g0"):
        load_audit_data(tmp_path / "judge.csv", tmp_path / "humans.csv")


@pytest.mark.slow
def test_audit_run_end_to_end(tmp_path, capsys):
    from judge_transfer_audit.cli import main

    write_study(tmp_path)
    out = tmp_path / "out"
    status = main(["run", str(tmp_path / "judge.csv"), str(tmp_path / "humans.csv"), "--out", str(out), "--no-html"])
    printed = capsys.readouterr()
    assert status in (0, 1) and "Traceback" not in printed.out + printed.err
    assert "What the readers would say (84 judge-only pairs, 36 voted" in printed.out
    assert "judge: 120 outputs read, 120 used" in printed.out
    result = json.loads((out / "result.json").read_text())
    section = result["prediction_powered"]
    assert section["status"] == "PASS", section["reason"]
    rows = section["payload"]["rows"]
    assert {r["matchup"] for r in rows} == {"alpha vs beta", "alpha vs gamma", "beta vs gamma"}
    assert all(r["n_pairs_judge_only"] == 28 and r["n_pairs_voted"] == 12 for r in rows)
    assert any("84 pair(s) carry only the judge" in n for n in result["provenance"]["notes"])
