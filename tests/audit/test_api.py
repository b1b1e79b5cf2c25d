"""The public API: audit.run / audit.load_result / audit.write, paths or DataFrames."""

from __future__ import annotations

import runpy
from pathlib import Path

import pandas as pd
import pytest

import judge_transfer_audit as audit
from judge_transfer_audit.core.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures" / "deployment"
FAST = dict(uncertainty=False, readers=False, surface=False, seed=0)


@pytest.fixture(scope="module")
def from_paths():
    return audit.run(FIX / "judge.csv", FIX / "humans.csv", pairs=FIX / "pairs.csv", **FAST)


@pytest.mark.slow
def test_dataframes_give_the_same_result_as_paths(from_paths):
    frames = audit.run(
        pd.read_csv(FIX / "judge.csv"), pd.read_csv(FIX / "humans.csv"), pairs=pd.read_csv(FIX / "pairs.csv"), **FAST
    )
    pd.testing.assert_frame_equal(frames.cells_frame(), from_paths.cells_frame())
    assert frames.status == from_paths.status
    assert [s["path"] for s in frames.provenance.sources] == [
        "judge (DataFrame)",
        "humans (DataFrame)",
        "pairs (DataFrame)",
    ]


def test_a_dataframe_problem_names_the_argument_not_a_temporary_file():
    humans = pd.read_csv(FIX / "humans.csv").drop(columns=["reader_id"])
    with pytest.raises(InputError) as info:
        audit.run(FIX / "judge.csv", humans, **FAST)
    text = str(info.value)
    assert "humans (DataFrame)" in text and "reader_id" in text and "judge-audit-" not in text


def test_unknown_setting_lists_the_known_ones():
    with pytest.raises(InputError, match="unknown setting.*bogus.*tie_rule"):
        audit.run(FIX / "judge.csv", FIX / "humans.csv", bogus=1)


def test_not_a_path_nor_a_frame():
    with pytest.raises(InputError, match="not a file path or a DataFrame"):
        audit.run(42, FIX / "humans.csv")


def test_write_and_load_result_round_trip(from_paths, tmp_path):
    paths = audit.write(from_paths, tmp_path, html=False)
    again = audit.load_result(paths["result"])
    pd.testing.assert_frame_equal(again.cells_frame(), from_paths.cells_frame())


def test_load_result_of_a_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot read the result"):
        audit.load_result(tmp_path / "nope.json")


def test_import_audit_is_cheap_and_lists_the_api():
    assert {"run", "load_result", "write"} <= set(dir(audit))
    with pytest.raises(AttributeError):
        audit.no_such_thing  # noqa: B018


@pytest.mark.slow
def test_the_notebook_example_runs(capsys):
    runpy.run_path(str(ROOT / "docs" / "examples" / "quickstart.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "wrote" in out and "round trip: True" in out


def _docs_progress_example() -> str:
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    section = text[text.index("**Progress.**") :]
    start = section.index("```python\n") + len("```python\n")
    return section[start : section.index("\n```", start)]


@pytest.mark.slow
def test_the_documented_progress_example_draws_stages_and_bars_and_leaves_the_result_alone(
    from_paths, monkeypatch, capsys
):
    from judge_transfer_audit.results.result import result_to_json

    monkeypatch.chdir(ROOT)
    space: dict = {}
    exec(compile(_docs_progress_example(), "docs/api.md", "exec"), space)
    out, err = capsys.readouterr()
    # captured stderr is not a terminal: progress=True draws anyway
    assert "judge verdicts..." in err and "agreement..." in err and "statistics:" in err and "task" in err
    assert out.strip() == from_paths.status.value
    pd.testing.assert_frame_equal(space["result"].cells_frame(), from_paths.cells_frame())
    assert "statistics:" not in result_to_json(space["result"])


def test_a_progress_setting_of_another_type_is_an_input_error():
    with pytest.raises(InputError, match="not a progress setting"):
        audit.run(FIX / "judge.csv", FIX / "humans.csv", progress="yes")
