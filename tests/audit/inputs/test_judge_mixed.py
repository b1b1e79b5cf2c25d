"""A judge file mixing scalar scores and pairwise verdicts: one problem naming the judges of each kind."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.inputs import load_audit_data

FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "deployment"


def _mixed(tmp_path, with_judge_column=True) -> Path:
    scores = pd.read_csv(FIXTURE / "judge.csv")
    scores = scores[scores["judge"] == "ensemble"].assign(choice="")
    humans = pd.read_csv(FIXTURE / "humans.csv", keep_default_na=False)
    verdicts = humans[humans["reader_id"] == "reader1"][["pair_id", "criterion", "choice"]]
    verdicts = verdicts.assign(judge="pairwise-gpt", system="", score="")
    mixed = pd.concat([scores, verdicts])[["pair_id", "system", "criterion", "judge", "score", "choice"]]
    if not with_judge_column:
        mixed = mixed.drop(columns="judge")
    path = tmp_path / "judge.csv"
    mixed.to_csv(path, index=False)
    return path


def test_mixed_file_is_one_problem_naming_both_judges(tmp_path):
    path = _mixed(tmp_path)
    with pytest.raises(InputError) as e:
        load_audit_data(path, FIXTURE / "humans.csv", pairs=FIXTURE / "pairs.csv")
    (problem,) = e.value.problems
    assert "this file mixes scores (judge ensemble) and verdicts (judge pairwise-gpt)" in problem.message
    assert "split it" in problem.fix and problem.file == str(path)


def test_mixed_file_without_judge_column_names_lines(tmp_path, capsys):
    path = _mixed(tmp_path, with_judge_column=False)
    code = main(["run", str(path), str(FIXTURE / "humans.csv"), "--out", str(tmp_path / "o"), "-q"])
    assert code == 2
    err = capsys.readouterr().err
    assert "Input error (1 problem(s))" in err
    assert "mixes scores (" in err and "first on line 2" in err


def test_scores_with_an_empty_choice_column_are_scores(tmp_path):
    scores = pd.read_csv(FIXTURE / "judge.csv").assign(choice="")
    path = tmp_path / "judge.csv"
    scores.to_csv(path, index=False)
    data = load_audit_data(path, FIXTURE / "humans.csv", pairs=FIXTURE / "pairs.csv")
    assert data.judge_scores is not None and len(data.judge_scores) == len(scores)
