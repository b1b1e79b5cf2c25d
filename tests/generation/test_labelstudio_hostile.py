"""`audit labelstudio import` on malformed exports: exit 2 naming the file, the key and the fix.

Regression cases of the hardening issue (each was an exit 70 or a silent last-wins).
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.generation.labelstudio import import_export

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "labelstudio"
PAIRS = FIXTURE / "out" / "pairs.csv"


@pytest.fixture(scope="module")
def export():
    return json.loads((FIXTURE / "sample_export.json").read_text())


def _run(tmp_path, tasks, capsys, raw: str | None = None):
    path = tmp_path / "export.json"
    path.write_text(raw if raw is not None else json.dumps(tasks))
    code = main(["labelstudio", "import", str(path), "--pairs", str(PAIRS), "-o", str(tmp_path / "humans.csv")])
    err = capsys.readouterr().err
    return code, err, path


def _first_annotation(tasks):
    return tasks[0]["annotations"][0]


CASES = {
    "lead_time as text": (lambda t: _first_annotation(t).update(lead_time="5 min"), "lead_time", "'5 min'", "seconds"),
    "data as a string": (lambda t: t[0].update(data="pair p1"), "data", "'data' is not an object", "Fix:"),
    "annotation not an object": (
        lambda t: t[0]["annotations"].insert(0, "annotation"),
        "annotations[0]",
        "is not an object",
        "Fix:",
    ),
    "result item not an object": (
        lambda t: _first_annotation(t)["result"].insert(0, 42),
        "result[0]",
        "not an object",
        "Fix:",
    ),
    "value as a list": (
        lambda t: _first_annotation(t)["result"][0].update(value=["left"]),
        "result[0].value",
        "is not an object",
        "Fix:",
    ),
    "choices not strings": (
        lambda t: _first_annotation(t)["result"][0]["value"].update(choices=[{"x": 1}]),
        "value.choices",
        "not a list of strings",
        "Fix:",
    ),
    "annotations not a list": (
        lambda t: t[0].update(annotations={"id": 1}),
        "annotations",
        "'annotations' is not a list",
        "Fix:",
    ),
    "result not a list": (
        lambda t: _first_annotation(t).update(result="left"),
        "result",
        "'result' is not a list",
        "Fix:",
    ),
    "negative lead_time": (
        lambda t: _first_annotation(t).update(lead_time=-3),
        "lead_time",
        "not a number of seconds",
        "Fix:",
    ),
    "two choices at once": (
        lambda t: _first_annotation(t)["result"][0]["value"].update(choices=["left", "right"]),
        "value.choices",
        "more than one choice",
        "single choice",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_export_is_an_input_error(tmp_path, export, capsys, case):
    mutate, key, text, fix = CASES[case]
    tasks = copy.deepcopy(export)
    mutate(tasks)
    code, err, path = _run(tmp_path, tasks, capsys)
    assert code == 2, err
    assert str(path) in err
    assert re.search(r"column '([^']*)'", err).group(1).endswith(key)
    assert text in err and fix in err
    assert "Internal error" not in err and "Traceback" not in err
    assert not (tmp_path / "humans.csv").exists()


def test_two_different_answers_to_one_question_are_an_input_problem(tmp_path, export, capsys):
    tasks = copy.deepcopy(export)
    result = _first_annotation(tasks)["result"]
    first = result[0]
    other = "right" if first["value"]["choices"][0] == "left" else "left"
    result.append({**copy.deepcopy(first), "value": {"choices": [other]}})
    code, err, _ = _run(tmp_path, tasks, capsys)
    assert code == 2
    assert f"two different answers to '{first['from_name']}' in one annotation" in err
    assert "task 1, annotation 1001" in err and "keep one answer per question" in err


def test_the_same_answer_twice_is_accepted(export):
    tasks = copy.deepcopy(export)
    result = _first_annotation(tasks)["result"]
    result.append(copy.deepcopy(result[0]))
    pairs = pd.read_csv(PAIRS, dtype=str)
    assert len(import_export(tasks, pairs).humans) == len(import_export(copy.deepcopy(export), pairs).humans)


def test_deeply_nested_json(tmp_path, capsys):
    code, err, _ = _run(tmp_path, None, capsys, raw="[" * 100_000 + "]" * 100_000)
    assert code == 2 and "nested too deeply" in err


def test_a_huge_integer(tmp_path, capsys):
    code, err, _ = _run(tmp_path, None, capsys, raw='[{"annotations": [], "data": {"pair_id": ' + "9" * 5000 + "}}]")
    assert code == 2 and "Internal error" not in err


def test_numeric_text_lead_time_and_pairwise_results(export):
    """A lead_time written as "12.5" is read; a Pairwise control's ``selected`` is a choice."""
    tasks = copy.deepcopy(export)[:1]
    annotation = _first_annotation(tasks)
    annotation["lead_time"] = "12.5"
    annotation["result"] = [
        {"type": "pairwise", "from_name": "overall", "to_name": "premise", "value": {"selected": "right"}}
    ]
    pairs = pd.read_csv(PAIRS, dtype=str)
    humans = import_export(tasks, pairs).humans
    pair = pairs.set_index("pair_id").loc[tasks[0]["data"]["pair_id"]]
    mine = humans[humans["reader_id"] == str(annotation["completed_by"])]
    assert mine["seconds"].tolist() == [12.5] and mine["choice"].tolist() == [pair["system_b"]]


def test_a_flipped_task_maps_sides_through_story_ids(export):
    """A per-reader task showing system_b's story on the left: left = system_b, shown_first too."""
    tasks = copy.deepcopy(export)[:1]
    data = tasks[0]["data"]
    data["story_left"], data["story_right"] = data["story_right"], data["story_left"]
    data["story_left_id"], data["story_right_id"] = data["story_right_id"], data["story_left_id"]
    pairs = pd.read_csv(PAIRS, dtype=str)
    pair = pairs.set_index("pair_id").loc[data["pair_id"]]
    flipped = import_export(tasks, pairs).humans
    plain = import_export(copy.deepcopy(export)[:1], pairs).humans
    assert set(flipped["shown_first"]) == {pair["system_b"]} and set(plain["shown_first"]) == {pair["system_a"]}
    swap = {pair["system_a"]: pair["system_b"], pair["system_b"]: pair["system_a"]}
    assert flipped["choice"].tolist() == plain["choice"].map(swap).tolist()  # same clicks, other systems
