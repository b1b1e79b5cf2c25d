"""A pair whose every vote is blank is reported as that, not as a pair missing from the human file."""

from __future__ import annotations

import pandas as pd

from tests.hostile.conftest import fast_args, run_cli


def _blank_pair(files, pair_id: str) -> int:
    humans = pd.read_csv(files["humans"], dtype=str, keep_default_na=False)
    humans.loc[humans["pair_id"] == pair_id, "choice"] = ""
    humans.to_csv(files["humans"], index=False)
    return int((humans["pair_id"] == pair_id).sum())


def test_every_vote_of_a_pair_blank_says_so(study, tmp_path, capsys):
    n = _blank_pair(study, "p01")
    status, _, err = run_cli(fast_args(study, tmp_path / "out"), capsys, protect=study.values())
    assert status == 2, err
    assert f"every human row of this pair_id is blank ({n} row(s) with an empty choice)" in err
    assert "'p01'" in err and str(study["humans"]) in err and "not found in the human file" not in err


def test_with_drop_invalid_the_pair_is_left_out_and_counted(study, tmp_path, capsys):
    _blank_pair(study, "p01")
    status, out, err = run_cli(
        [a for a in fast_args(study, tmp_path / "out", "--drop-invalid") if a != "-q"], capsys, protect=study.values()
    )
    assert status == 0, err
    n_judge = int((pd.read_csv(study["judge"], dtype=str)["pair_id"] == "p01").sum())
    assert f"judge: {n_judge} pair_id whose every human row is blank" in out
