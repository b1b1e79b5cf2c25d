"""Votes written A/B without a pairs file: nothing says which system is A, so they are an input error
naming the fix, whatever the judge kind (the judge file's row order must never decide a verdict)."""

from __future__ import annotations

import csv

import pandas as pd
import pytest

from tests.hostile.conftest import FAST, run_cli


def _as_ab(files, column="choice") -> None:
    humans = pd.read_csv(files["humans"], dtype=str, keep_default_na=False)
    if column == "shown_first":
        humans["shown_first"] = "A"
    else:
        humans["choice"] = "A"
    humans.to_csv(files["humans"], index=False, quoting=csv.QUOTE_MINIMAL)


def _pairwise_judge(files) -> None:
    """The study's scalar judge turned into a pairwise one (pair_id, criterion, choice: a system name)."""
    judge = pd.read_csv(files["judge"], dtype=str, keep_default_na=False)
    judge["score"] = judge["score"].astype(int)
    wide = judge.pivot_table(index=["pair_id", "criterion"], columns="system", values="score").reset_index()
    systems = [c for c in wide.columns if c not in ("pair_id", "criterion")]
    wide["choice"] = [
        systems[0] if a > b else systems[1] if b > a else "tie" for a, b in zip(wide[systems[0]], wide[systems[1]])
    ]
    wide[["pair_id", "criterion", "choice"]].to_csv(files["judge"], index=False)


@pytest.mark.parametrize("kind", ["scalar", "pairwise"])
@pytest.mark.parametrize("column", ["choice", "shown_first"])
def test_ab_votes_without_a_pairs_file_are_an_input_error(study, tmp_path, capsys, kind, column):
    if kind == "pairwise":
        _pairwise_judge(study)
    _as_ab(study, column)
    argv = ["run", str(study["judge"]), str(study["humans"]), "--out", str(tmp_path / "out"), *FAST]
    status, _, err = run_cli(argv, capsys, protect=study.values())
    assert status == 2, err
    assert f"{column} A/B needs a pairs file" in err and "pass --pairs FILE" in err and str(study["humans"]) in err
    assert not (tmp_path / "out").exists()


def test_ab_votes_with_a_pairs_file_are_read(study, tmp_path, capsys):
    _as_ab(study)
    argv = ["run", str(study["judge"]), str(study["humans"]), "--pairs", str(study["pairs"])]
    status, _, err = run_cli([*argv, "--out", str(tmp_path / "out"), *FAST], capsys, protect=study.values())
    assert status in (0, 1), err
