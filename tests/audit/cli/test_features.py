"""`audit features` in-process: output equals the API, bad input gets exit status 2."""

import pandas as pd
import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.cli.exit_status import ExitStatus
from judge_transfer_audit.detectors import compute_features

TEXTS = [
    "The cat sat on the mat. It was happy! Was it? Yes, very much so.",
    "One two three. Four five six seven eight. Nine.",
]


@pytest.fixture()
def stories_csv(tmp_path):
    path = tmp_path / "stories.csv"
    pd.DataFrame({"item_id": ["p1", "p1"], "system": ["a", "b"], "text": TEXTS, "ppl_70b": ["9.5", ""]}).to_csv(
        path, index=False
    )
    return path


def test_cli_output_equals_api(stories_csv, tmp_path):
    out = tmp_path / "features.csv"
    assert (
        main(["features", str(stories_csv), "-o", str(out), "--cache", str(tmp_path / "cache"), "-q"]) == ExitStatus.OK
    )
    got = pd.read_csv(out, dtype={"pair_id": str, "system": str})
    api = compute_features(
        pd.DataFrame({"pair_id": ["p1", "p1"], "system": ["a", "b"], "text": TEXTS, "ppl_70b": [9.5, float("nan")]})
    ).frame
    pd.testing.assert_frame_equal(got, api, check_exact=False, rtol=1e-15, check_dtype=False)


def test_cli_detector_selection_and_summary(stories_csv, tmp_path, capsys):
    out = tmp_path / "f.csv"
    assert main(["features", str(stories_csv), "-o", str(out), "--detectors", "length"]) == ExitStatus.OK
    assert list(pd.read_csv(out).columns) == ["pair_id", "system", "n_words", "n_chars", "ppl_70b"]
    assert "[PASS] length" in capsys.readouterr().err


def test_cli_perplexity_skipped_message(stories_csv, tmp_path, capsys):
    assert main(["features", str(stories_csv), "-o", str(tmp_path / "f.csv")]) == ExitStatus.OK
    assert "[SKIPPED] perplexity" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args, status",
    [
        (["--detectors", "nope"], ExitStatus.INPUT_ERROR),
        (["--perplexity-url", "http://127.0.0.1:9"], ExitStatus.USAGE_ERROR),
    ],
)
def test_cli_bad_options(stories_csv, tmp_path, args, status):
    assert main(["features", str(stories_csv), "-o", str(tmp_path / "f.csv"), *args]) == status


def test_cli_missing_column_is_input_error(tmp_path, capsys):
    path = tmp_path / "s.csv"
    pd.DataFrame({"pair_id": ["p"], "system": ["a"]}).to_csv(path, index=False)
    assert main(["features", str(path), "-o", str(tmp_path / "f.csv")]) == ExitStatus.INPUT_ERROR
    assert "text" in capsys.readouterr().err
    assert main(["features", str(tmp_path / "none.csv"), "-o", str(tmp_path / "f.csv")]) == ExitStatus.INPUT_ERROR


def test_cli_features_equal_those_of_audit_run_on_the_fixture(tmp_path):
    from pathlib import Path

    from judge_transfer_audit.inputs import load_audit_data

    root = Path(__file__).resolve().parents[3] / "fixtures" / "deployment"
    if not (root / "stories.csv").exists():
        pytest.skip("fixture not present")
    out = tmp_path / "f.csv"
    assert main(["features", str(root / "stories.csv"), "-o", str(out), "--detectors", "length,lexical", "-q"]) == 0
    data = load_audit_data(
        root / "judge.csv", root / "humans.csv", pairs=root / "pairs.csv", stories=root / "stories.csv"
    )
    api = compute_features(data.stories, detectors=["length", "lexical"]).frame
    got = pd.read_csv(out, dtype={"pair_id": str, "system": str})
    pd.testing.assert_frame_equal(got, api, check_dtype=False, check_exact=True)


def test_cli_failed_detector_writes_table_and_exits_6(stories_csv, tmp_path, capsys):
    """A perplexity server that is down: the other features are written, the status says it failed."""
    out = tmp_path / "f.csv"
    status = main(
        [
            "features",
            str(stories_csv),
            "-o",
            str(out),
            "--perplexity-url",
            "http://127.0.0.1:9",
            "--perplexity-server-model",
            "m",
        ]
    )
    assert status == ExitStatus.COMPUTATION_ERROR
    assert "n_words" in pd.read_csv(out).columns
    err = capsys.readouterr().err
    assert "[ERROR] perplexity" in err and "failed" in err


def test_cli_says_which_extra_columns_are_not_features(tmp_path, capsys):
    """A column with one non-numeric value is not a feature, and the summary says so."""
    path = tmp_path / "s.csv"
    pd.DataFrame(
        {"pair_id": ["p1", "p1"], "system": ["a", "b"], "text": TEXTS, "ppl": ["abc", "3"], "ppl_ok": ["1.5", "2"]}
    ).to_csv(path, index=False)
    assert main(["features", str(path), "-o", str(tmp_path / "f.csv"), "--detectors", "length"]) == ExitStatus.OK
    assert list(pd.read_csv(tmp_path / "f.csv").columns) == ["pair_id", "system", "n_words", "n_chars", "ppl_ok"]
    assert "non-numeric extra column(s) ignored: ppl" in capsys.readouterr().err
